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

    /// " at 2 thread(s)" when several were measured (the figures are the primary count's),
    /// else nothing.
    pub(super) fn at_threads(&self) -> String {
        if self.thread_counts.len() > 1 {
            format!(" at {} thread(s)", self.threads)
        } else {
            String::new()
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

    /// The thread counts a plot is drawn for, each with its index among the series (`None`:
    /// one thread count, the steps' own figures).
    fn plotted(&self) -> Vec<(usize, Option<usize>)> {
        if self.thread_counts.len() > 1 {
            self.thread_counts
                .iter()
                .copied()
                .zip((0..).map(Some))
                .collect()
        } else {
            vec![(self.threads, None)]
        }
    }

    /// The profile at the primary thread count.
    pub fn profile(&self) -> Profile {
        let series = self.thread_counts.iter().position(|&t| t == self.threads);
        self.profile_at(
            self.threads,
            series.filter(|_| self.thread_counts.len() > 1),
        )
    }

    /// The profile at `threads`, whose figures are series `series` of each step and change point
    /// (`None`: their own, one thread count).
    fn profile_at(&self, threads: usize, series: Option<usize>) -> Profile {
        let (tested, commits) = self.tested();
        let at = |id: &str| {
            tested
                .iter()
                .find(|(_, s)| s.info.commit == id)
                .map(|t| t.0)
        };
        let ratio = |c: &ChangePointJson| match series {
            Some(i) => c.per_threads.get(i).map_or(c.ratio, |e| e.ratio),
            None => c.ratio,
        };
        // Change points, and where the search located a change it could not size: both drawn,
        // told apart (a refuted candidate or an identical pair is no mark at all).
        let changes = self
            .changes
            .iter()
            .filter(|c| matches!(c.standing(), Standing::Confirmed | Standing::Unresolved))
            .filter_map(|c| {
                Some(Mark {
                    parent: at(&c.parent)?,
                    culprit: at(&c.info.commit)?,
                    label: format!(
                        "{}{} {} {:+.1}%{}",
                        if c.unresolved { "unresolved: " } else { "" },
                        c.info.short,
                        truncate(&c.info.subject, 40),
                        (ratio(c) - 1.0) * 100.0,
                        if c.range { " (range)" } else { "" }
                    ),
                    unresolved: c.standing() == Standing::Unresolved,
                })
            })
            .collect();
        let end = |which: &str, c: &CommitJson| {
            format!("{which} end {} ({})", c.short, truncate(&c.subject, 30))
        };
        let figures = |s: &StepJson| match series.and_then(|i| s.per_threads.get(i)) {
            Some(p) => (p.mean_us, p.ci95_us),
            None => (s.mean_us, s.ci95_us),
        };
        Profile {
            axis: self.steps_metric().axis(),
            title: format!("{} at {threads} thread(s): {}", self.tool, self.range),
            commits,
            points: tested
                .iter()
                .map(|(x, s)| ProfilePoint {
                    x: *x,
                    mean: figures(s).0,
                    ci: figures(s).1,
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

    /// One profile per thread count: (threads, SVG).
    pub fn profile_svgs(&self) -> Result<Vec<(usize, String)>> {
        (self.plotted().into_iter())
            .map(|(t, i)| Ok((t, plot::profile_svg(&self.profile_at(t, i))?)))
            .collect()
    }

    /// `bisect --plot DIR`: DIR/profile-TOOL-tN.svg, one per thread count.
    pub fn write_plots(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        (self.profile_svgs()?.into_iter())
            .map(|(t, svg)| plot::write_svg(dir, "profile", &self.tool, t, &svg))
            .collect()
    }
}
