//! A scan's profile plot.

use super::*;

impl ScanReport {
    /// The scan's picture: every grid point and every commit a search tested, the fitted
    /// levels under them, and the change points.
    pub fn profile(&self) -> Profile {
        let probes = self.search_probes();
        let mut points: Vec<ProfilePoint> = self
            .grid
            .iter()
            .map(|g| ProfilePoint {
                x: g.index,
                mean: g.mean_us.unwrap_or(f64::NAN),
                ci: g.ci95_us.unwrap_or((f64::NAN, f64::NAN)),
                kind: if g.mean_us.is_some() {
                    PointKind::Grid
                } else {
                    PointKind::Skipped
                },
                date: g.info.date.clone(),
            })
            .collect();
        points.extend(probes.iter().map(|st| ProfilePoint {
            x: st.index,
            mean: st.mean_us,
            ci: st.ci95_us,
            kind: st.point_kind(),
            date: st.info.date.clone(),
        }));
        points.sort_by_key(|q| q.x);
        let end = |which: &str, c: &CommitJson| {
            format!("{which} end {} ({})", c.short, truncate(&c.subject, 30))
        };
        Profile {
            title: format!(
                "scan of {} at {} thread(s): {}",
                self.tool, self.threads, self.range
            ),
            commits: self.commits,
            points,
            ends: (
                end("old", self.merge_base.as_ref().unwrap_or(&self.good)),
                end("new", &self.bad),
            ),
            changes: self.change_marks(&probes),
            axis: self.grid_metric().axis(),
            levels: self
                .segments
                .iter()
                .map(|sg| Level {
                    first: sg.first,
                    last: sg.last,
                    value: sg.level_us,
                })
                .collect(),
        }
    }

    /// The commits the searches tested besides the grid, each once with its last verdict
    /// (a grid point keeps its grid samples).
    pub(super) fn search_probes(&self) -> Vec<&StepJson> {
        let mut probes: Vec<&StepJson> = Vec::new();
        for st in self.intervals.iter().flat_map(|iv| &iv.steps) {
            if self.grid.iter().any(|g| g.info.commit == st.info.commit) {
                continue;
            }
            probes.retain(|p| p.info.commit != st.info.commit);
            probes.push(st);
        }
        probes
    }

    /// The confirmed change points as the plot marks them, from parent to culprit, and the
    /// located-unresolved ones apart.
    pub(super) fn change_marks(&self, probes: &[&StepJson]) -> Vec<Mark> {
        let position = |id: &str| {
            self.grid
                .iter()
                .find(|g| g.info.commit == id)
                .map(|g| g.index)
                .or_else(|| probes.iter().find(|p| p.info.commit == id).map(|p| p.index))
        };
        self.changes
            .iter()
            .filter(|c| {
                matches!(
                    c.point.standing(),
                    Standing::Confirmed | Standing::Unresolved
                )
            })
            .map(|c| {
                let p = &c.point;
                Mark {
                    parent: position(&p.parent).unwrap_or(c.index.saturating_sub(1)),
                    culprit: c.index,
                    unresolved: p.standing() == Standing::Unresolved,
                    label: format!(
                        "{}{} {} {}{}",
                        if p.unresolved { "unresolved: " } else { "" },
                        p.info.short,
                        truncate(&p.info.subject, 40),
                        ratio_pct(p.ratio),
                        if p.range { " (range)" } else { "" }
                    ),
                }
            })
            .collect()
    }

    pub fn profile_svg(&self) -> Result<String> {
        plot::profile_svg(&self.profile())
    }

    /// `scan --plot DIR`: DIR/scan-TOOL-tN.svg.
    pub fn write_plot(&self, dir: &Path) -> Result<PathBuf> {
        plot::write_svg(dir, "scan", &self.tool, self.threads, &self.profile_svg()?)
    }
}

impl ScanReport {
    /// The full id of the grid commit at a range position (for links).
    pub(super) fn grid_commit(&self, index: usize) -> String {
        self.grid
            .iter()
            .find(|g| g.index == index)
            .map(|g| g.info.commit.clone())
            .unwrap_or_default()
    }
}
