//! What a search tells as it goes, typed: each decided step, each located and each confirmed
//! change point, the forecast, the grid of a scan, what is sampled now. A search sends
//! [`Event`]s to the [`Sink`] its command chose; [`Lines`] is the one the commands use — one
//! JSON object per event on stdout with `--format jsonl`, else lines on stderr, so stdout holds
//! the result alone — and keeps the terminal's status line. By default the lines are what a
//! user waits for (what is searched, builds, each change point as it is confirmed); `-v` adds
//! every decided commit, the forecast, located points and grid points; `-q` none.

use std::io::Write;
use std::sync::Mutex;

use serde::Serialize;

use super::bisect::{
    auto_locate_line, confirmed_line, located_line, step_line, ChangePointJson, ForecastEvent,
    StepJson,
};
use super::export::Jsonl;
use crate::analysis::bisect::{Step, StepVerdict};
use crate::analysis::locate::AutoChoice;
use crate::analysis::scan::GridPoint;
use crate::build::builds::{BuildNotice, Tell};
use crate::build::repo::CommitInfo;
use crate::measure::engine::{TellWave, WaveDone};
use crate::measure::metric::Metric;
use crate::progress::{self, BuildCounts, SearchStatus};

/// One thing a search tells as it happens.
pub enum Event<'a> {
    /// A search of `commits` commits begins: the status line starts counting.
    Started {
        commits: usize,
    },
    /// What the command says on its way: what it searches, where the merge base lies.
    Said(&'a str),
    /// The commits sampled now.
    Sampling(&'a [&'a str]),
    /// Samples of these commits that an earlier run of the same search left in the cache:
    /// a resumed run takes them up instead of sampling again.
    Reused {
        commits: &'a [&'a str],
        samples: usize,
    },
    Forecast(ForecastEvent<'a>),
    /// A commit's verdict.
    Decided(Decided<'a>),
    /// A build is done (or failed), or waits for another process's build.
    Build(BuildNotice<'a>),
    /// A wave of samples is answered.
    Wave(&'a WaveDone),
    /// What `--locate auto` chose for the range, and from what, before the search.
    LocateChosen(&'a AutoChoice),
    /// A change point the counts located (`--locate`), before the clock confirms it.
    Located {
        point: &'a ChangePointJson,
        metric: Metric,
    },
    /// A change point once its confirmation block decided, with what the search spent so far.
    Confirmed {
        point: &'a ChangePointJson,
        spent: Spent,
    },
    /// A scan's grid is measured and fitted.
    GridMeasured {
        samples_per_point: usize,
        levels: usize,
    },
    /// One grid point with its level (`moved`: commits it was moved to one already built).
    GridPoint {
        point: &'a GridPoint,
        moved: isize,
        commit: &'a CommitInfo,
        metric: Metric,
        threads: &'a [usize],
    },
    /// The grid intervals a scan enters, of all of them.
    Entering {
        entered: usize,
        intervals: usize,
    },
    /// The search is over: the status line goes.
    Finished,
}

/// A decided step, with what its line and the status line show.
pub struct Decided<'a> {
    pub step: &'a Step,
    /// The range's commits: the step's index is into these.
    pub commits: &'a [CommitInfo],
    pub metric: Metric,
    pub threads: &'a [usize],
    pub builds: BuildCounts,
}

/// What a search had spent when a change point was confirmed.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Spent {
    pub seconds: f64,
    pub builds: usize,
    pub samples_taken: usize,
}

/// Where a search's events go. Shared by the searches of one run (the counts' and the
/// clock's) and by builds made side by side, so it takes `&self` and is `Sync`.
pub trait Sink: Sync {
    fn send(&self, event: Event);
}

/// A search's builds and waves tell their news to its sink.
impl Tell for &dyn Sink {
    fn tell(&self, n: BuildNotice) {
        self.send(Event::Build(n));
    }
}

impl TellWave for &dyn Sink {
    fn wave(&self, w: &WaveDone) {
        self.send(Event::Wave(w));
    }
}

/// A sink that drops everything (a library caller that only wants the result).
pub struct Quiet;

impl Sink for Quiet {
    fn send(&self, _: Event) {}
}

/// Where [`Lines`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinesTo {
    /// One JSON object per event on stdout (`--format jsonl`); prose on stderr.
    Jsonl,
    /// On stderr: the result owns stdout.
    Stderr,
}

/// Who a line is for: everyone but `-q`, or only `-v`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    /// What a user waits for: what is searched, each change point as it is confirmed.
    Answer,
    /// How the search goes: every decided commit, the forecast, grid points.
    Detail,
}

/// A line per event, and the terminal's status line.
pub struct Lines {
    to: LinesTo,
    status: Mutex<Option<SearchStatus>>,
    /// Every change point confirmed so far: what a run stopped by a signal still reports.
    confirmed: Mutex<Vec<ChangePointJson>>,
}

impl Lines {
    pub fn new(to: LinesTo) -> Lines {
        Lines {
            to,
            status: Mutex::new(None),
            confirmed: Mutex::new(Vec::new()),
        }
    }

    /// The change points confirmed so far, in the order they were.
    pub fn confirmed_so_far(&self) -> Vec<ChangePointJson> {
        let held = self.confirmed.lock().unwrap_or_else(|p| p.into_inner());
        held.clone()
    }

    /// `line` on stderr, for those `level` is for.
    fn emit(&self, line: &str, level: Level) {
        match level {
            Level::Answer => progress::info(line),
            Level::Detail => progress::detail(line),
        }
    }

    /// `line`, or with `--format jsonl` `data` as the JSON event `name`.
    fn emit_event<T: Serialize + ?Sized>(&self, line: &str, level: Level, name: &str, data: &T) {
        if self.to != LinesTo::Jsonl {
            return self.emit(line, level);
        }
        match Jsonl::event(name, data) {
            Ok(l) => progress::above_status(|| {
                print!("{l}");
                let _ = std::io::stdout().flush();
            }),
            Err(e) => progress::info(&format!("cannot write a {name} event: {e}")),
        }
    }

    fn status(&self, f: impl FnOnce(&mut SearchStatus)) {
        if let Some(s) = self.lock_status().as_mut() {
            f(s);
        }
    }

    /// The status line; one a panicking thread left behind is still a status line.
    fn lock_status(&self) -> std::sync::MutexGuard<'_, Option<SearchStatus>> {
        self.status.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Sink for Lines {
    fn send(&self, event: Event) {
        match event {
            Event::Started { commits } => {
                let old = self.lock_status().replace(SearchStatus::new(commits));
                if let Some(old) = old {
                    old.finish();
                }
            }
            // Builds are progress, not part of a text result: on stderr (and quiet with -q)
            // unless they are jsonl events.
            Event::Build(n) if self.to == LinesTo::Jsonl => {
                self.emit_event(&n.line(), Level::Answer, "build", &BuildJson::new(&n))
            }
            Event::Build(n) => progress::info(&n.line()),
            Event::Wave(w) if self.to == LinesTo::Jsonl => {
                self.emit_event("", Level::Detail, "wave", w)
            }
            Event::Wave(w) => progress::detail(&format!(
                "  sampled {} sample(s) of {} subject(s) in {} round(s) on {} in {:.1} s",
                w.samples,
                w.subjects,
                w.rounds,
                w.hosts.join(", "),
                w.seconds
            )),
            Event::Said(s) => self.emit(s, Level::Answer),
            Event::Sampling(shorts) => self.status(|s| s.doing(format!("sampling {}", shorts.join(" ")))),
            Event::Reused { commits, samples } => self.emit(
                &format!(
                    "  reused {samples} sample(s) of {} from the cache (an earlier run of this search)",
                    commits.join(" ")
                ),
                Level::Detail,
            ),
            Event::Forecast(f) => {
                let line = super::bisect::forecast_line(f.forecast, f.seconds_per_sample, f.better);
                self.emit_event(&line, Level::Detail, "forecast", &f);
            }
            Event::Decided(d) => self.decided(&d),
            Event::LocateChosen(c) => {
                self.emit_event(&auto_locate_line(c), Level::Answer, "locate_chosen", c)
            }
            Event::Located { point, metric } => {
                let line = located_line(point, metric);
                self.emit_event(&line, Level::Detail, "located", point)
            }
            Event::Confirmed { point, spent } => self.confirmed(point, spent),
            Event::GridMeasured {
                samples_per_point,
                levels,
            } => self.emit(
                &format!("grid measured ({samples_per_point} samples per point): {levels} fitted level(s)"),
                Level::Detail,
            ),
            Event::GridPoint {
                point,
                moved,
                commit,
                metric,
                threads,
            } => self.emit(
                &grid_point_line(point, moved, commit, metric, threads),
                Level::Detail,
            ),
            Event::Entering { entered, intervals } => self.emit(
                &format!("searching {entered} of {intervals} grid intervals whose ends lie on different levels"),
                Level::Answer,
            ),
            Event::Finished => {
                let status = self.lock_status().take();
                if let Some(s) = status {
                    s.finish();
                }
            }
        }
    }
}

impl Lines {
    fn confirmed(&self, point: &ChangePointJson, spent: Spent) {
        if point.is_change_point() {
            let mut held = self.confirmed.lock().unwrap_or_else(|p| p.into_inner());
            held.push(point.clone());
        }
        let spent = format!(
            "after {:.0} s, {} builds, {} samples taken now",
            spent.seconds, spent.builds, spent.samples_taken
        );
        let line = confirmed_line(point, &spent);
        self.emit_event(&line, Level::Answer, "confirmed", point);
    }

    fn decided(&self, d: &Decided) {
        let line = step_line(d.step, &d.commits[d.step.commit], d.metric, d.threads);
        let json = StepJson::new(d.step, d.commits, d.threads);
        self.emit_event(&line, Level::Detail, "step", &json);
        let side = match d.step.verdict {
            StepVerdict::Old => progress::Side::Old,
            StepVerdict::New => progress::Side::New,
            StepVerdict::Skipped(_) => progress::Side::Skipped,
            StepVerdict::Between | StepVerdict::Ambiguous => progress::Side::Both,
        };
        self.status(|s| s.step(d.step.commit, side, d.builds));
    }
}

/// A grid point in a bisect step's line, with its fitted level where a step has its verdict.
pub fn grid_point_line(
    p: &GridPoint,
    moved: isize,
    commit: &CommitInfo,
    metric: Metric,
    threads: &[usize],
) -> String {
    let step = Step {
        commit: p.commit,
        n: p.n,
        mean: p.mean,
        ci95: p.ci95,
        verdict: StepVerdict::Ambiguous,
        position: None,
        series: Vec::new(),
    };
    let mut l = step_line(&step, commit, metric, threads).replacen(
        "ambiguous",
        &match p.segment {
            Some(s) => format!("level {}", s + 1),
            None => "skipped".into(),
        },
        1,
    );
    if moved != 0 {
        l.push_str(&format!(" (moved {moved:+})"));
    }
    l
}

/// A build notice as a jsonl event.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum BuildJson<'a> {
    Built {
        commit: &'a str,
        ok: bool,
        version: String,
        seconds: f64,
        #[serde(skip_serializing_if = "Option::is_none")]
        ccache_hit_rate: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        on: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        log: Option<String>,
    },
    Waiting {
        commit: &'a str,
        into: String,
    },
}

impl<'a> BuildJson<'a> {
    fn new(n: &BuildNotice<'a>) -> BuildJson<'a> {
        match *n {
            BuildNotice::Built { short, built, on } => BuildJson::Built {
                commit: short,
                ok: built.meta.ok,
                version: built.meta.version.to_string(),
                seconds: built.meta.duration_s,
                ccache_hit_rate: built.meta.ccache_hit_rate,
                on,
                log: (!built.meta.ok).then(|| built.log_path().display().to_string()),
            },
            BuildNotice::Waiting { short, into } => BuildJson::Waiting {
                commit: short,
                into: into.display().to_string(),
            },
        }
    }
}
