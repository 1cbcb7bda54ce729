//! A bisect's profile plot, and what its renderers share of the report.

use super::*;

impl BisectReport {
    /// "1" or "1,8,32".
    pub fn threads_label(&self) -> String {
        if self.thread_counts.len() > 1 {
            let v: Vec<String> = self.thread_counts.iter().map(|t| t.to_string()).collect();
            v.join(",")
        } else {
            self.threads.to_string()
        }
    }

    /// Builds made by this run, and builds that failed.
    pub(super) fn build_counts(&self) -> (usize, usize) {
        let fresh = self.builds.iter().filter(|b| b.fresh).count();
        let failed = self.builds.iter().filter(|b| !b.ok).count();
        (fresh, failed)
    }

    /// Each tested commit once (its last verdict), with its position in the
    /// range and the range's length. Results written before positions were
    /// recorded are laid out by date, one tested commit per position.
    pub fn tested(&self) -> (Vec<(usize, &StepJson)>, usize) {
        let mut last: Vec<&StepJson> = Vec::new();
        for s in &self.steps {
            last.retain(|p| p.info.commit != s.info.commit);
            last.push(s);
        }
        if self.commits > 0 {
            let mut v: Vec<(usize, &StepJson)> = last.into_iter().map(|s| (s.index, s)).collect();
            v.sort_by_key(|(i, _)| *i);
            (v, self.commits)
        } else {
            last.sort_by(|a, b| a.info.date.cmp(&b.info.date));
            let n = last.len();
            (last.into_iter().enumerate().collect(), n)
        }
    }

    pub fn profile(&self) -> Profile {
        let (tested, commits) = self.tested();
        let at = |id: &str| {
            tested
                .iter()
                .find(|(_, s)| s.info.commit == id)
                .map(|t| t.0)
        };
        let changes = self
            .changes
            .iter()
            .filter_map(|c| {
                Some(Mark {
                    parent: at(&c.parent)?,
                    culprit: at(&c.info.commit)?,
                    label: format!(
                        "{} {} {:+.1}%{}",
                        c.info.short,
                        truncate(&c.info.subject, 40),
                        (c.ratio - 1.0) * 100.0,
                        if c.range { " (range)" } else { "" }
                    ),
                })
            })
            .collect();
        let end = |which: &str, c: &CommitJson| {
            format!("{which} end {} ({})", c.short, truncate(&c.subject, 30))
        };
        Profile {
            axis: self.steps_metric().axis(),
            title: format!(
                "{} at {} thread(s): {}",
                self.tool, self.threads, self.range
            ),
            commits,
            points: tested
                .iter()
                .map(|(x, s)| ProfilePoint {
                    x: *x,
                    mean: s.mean_us,
                    ci: s.ci95_us,
                    kind: s.point_kind(),
                    date: s.info.date.clone(),
                })
                .collect(),
            ends: (
                end("old", self.merge_base.as_ref().unwrap_or(&self.good)),
                end("new", &self.bad),
            ),
            changes,
            levels: Vec::new(),
        }
    }

    pub fn profile_svg(&self) -> Result<String> {
        plot::profile_svg(&self.profile())
    }

    /// `bisect --plot DIR`: DIR/profile-TOOL-tN.svg.
    pub fn write_plot(&self, dir: &Path) -> Result<PathBuf> {
        plot::write_svg(
            dir,
            "profile",
            &self.tool,
            self.threads,
            &self.profile_svg()?,
        )
    }
}
