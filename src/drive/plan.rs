//! What a search is asked to do, as the library takes it: no command-line types. A plan is
//! checked once ([`RangePlan::validate`] and the searches' own) before anything is opened,
//! and it writes the command that reproduces it.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Result};

use crate::analysis::bisect::Config;
use crate::build::repo;
use crate::build::sources::Sources;
use crate::measure::exec::slurm::SlurmConfig;
use crate::measure::exec::Timing;
use crate::measure::metric::Metric;

/// `--locate`: when a search's change points are located by a count and confirmed by the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locate {
    /// `--locate METRIC`: always, by this counting metric.
    By(Metric),
    /// `--locate auto`: by instructions when the noise at the range's ends says the clock cannot
    /// resolve `--min-effect` at the sample cap (and valgrind is here); else on the clock alone.
    Auto,
}

impl Locate {
    /// The metric that locates when the counts do.
    pub fn metric(self) -> Metric {
        match self {
            Locate::By(m) => m,
            Locate::Auto => Metric::Instructions,
        }
    }

    /// As `--locate` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Locate::By(m) => m.name(),
            Locate::Auto => "auto",
        }
    }
}

/// A search of GOOD..BAD: what every search of a range shares.
#[derive(Debug, Clone)]
pub struct RangePlan {
    /// `GOOD..BAD` as the user wrote it.
    pub range: String,
    /// The tool spec as given (`NAME[:key=value,...]`).
    pub tool: String,
    /// Thread counts, in the order given.
    pub threads: Vec<usize>,
    pub timing: Timing,
    pub cfg: Config,
    /// Locate by a counting metric, confirm by the clock: always, or when the clock cannot
    /// resolve `--min-effect` here.
    pub locate: Option<Locate>,
    /// The count search's `--min-effect` when locating (`--count-min-effect`): below the
    /// clock's, since a commit may move time by more than it moves the instructions executed.
    pub count_min_effect: f64,
    /// Seconds each count sample measures for when locating: a count needs more of a slow
    /// operation than a time sample does (see [`Metric::default_duration`]).
    pub count_duration: f64,
    pub sources: Sources,
    /// `None`: builds and samples are made here.
    pub slurm: Option<SlurmConfig>,
    /// The cache (None: `$PERFBISECT_CACHE`, else `~/.cache/perfbisect`).
    pub cache: crate::cache::Location,
    /// Extra kernels beside the built-in ones.
    pub kernels_dir: Option<PathBuf>,
}

/// A bisect: every change point of the range, largest share first.
#[derive(Debug, Clone)]
pub struct BisectPlan {
    pub range: RangePlan,
    /// Stop exploring smaller changes after this long (after a first change point).
    pub budget: Option<Duration>,
    /// Profile every confirmed culprit against its parent under callgrind.
    pub explain: bool,
    /// Where the flame graphs of `explain` go (None: the current directory).
    pub explain_dir: Option<PathBuf>,
}

/// A scan: a grid of the range, a step fit, a search of every interval that moved.
#[derive(Debug, Clone)]
pub struct ScanPlan {
    pub range: RangePlan,
    /// Grid points, ends included.
    pub grid: usize,
}

impl RangePlan {
    /// The count search's threshold unless `--count-min-effect` says otherwise: below the
    /// clock's 3%, since a commit may move time more than its instructions (docs/commands.md).
    pub const DEFAULT_COUNT_MIN_EFFECT: f64 = 0.01;

    /// A search of `range` (`GOOD..BAD`) of the repository at `repo` with `tool`, with the
    /// command line's defaults: one thread, quarter-second time samples (a crashed one taken
    /// again twice; 1-second counts when locating), alpha 0.01, a minimum effect of 3%, 5 to 40
    /// samples per commit, the default recipe, builds here, the default cache. (`cli::search`'s test holds the two equal.)
    pub fn new(repo: impl Into<PathBuf>, range: &str, tool: &str) -> RangePlan {
        RangePlan {
            range: range.to_string(),
            tool: tool.to_string(),
            threads: vec![1],
            timing: Timing::of(Metric::Time),
            cfg: Config::default(),
            locate: None,
            count_min_effect: Self::DEFAULT_COUNT_MIN_EFFECT,
            count_duration: Metric::Instructions.default_duration(),
            sources: Sources::new(repo),
            slurm: None,
            cache: Default::default(),
            kernels_dir: None,
        }
    }

    /// GOOD and BAD as written.
    pub fn ends(&self) -> Result<(String, String)> {
        repo::split_range(&self.range)
    }

    /// `1`, or `1,8,32` as given.
    pub fn threads_text(&self) -> String {
        let v: Vec<String> = self.threads.iter().map(|t| t.to_string()).collect();
        v.join(",")
    }

    /// Whether a bisect given no `--locate` locates with `auto` (since 2026-12-07): at one
    /// thread in time, without --tail. On this machine's recorded noise (15-30% per sample) the
    /// clock alone found a 10% step in 1-5% of simulated searches and `auto` in 82-93%; where
    /// the clock resolves --min-effect at the cap, `auto` leaves it to the clock and costs what
    /// the clock costs (docs/commands.md). Counts are one thread's work, so more threads keep
    /// the clock; so does a run through Slurm, where counting was not measured (a two-bisect
    /// executor test that locates took over 300 s where the clock takes 37 s).
    pub fn locates_by_default(&self) -> bool {
        self.threads == [1]
            && self.timing.metric.is_time()
            && !self.cfg.tail
            && self.slurm.is_none()
    }

    /// This plan as a bisect given no `--locate` runs it: `auto` where
    /// [`Self::locates_by_default`], else as it is.
    pub fn with_default_locate(mut self) -> RangePlan {
        if self.locate.is_none() && self.locates_by_default() {
            self.locate = Some(Locate::Auto);
        }
        self
    }

    /// Refuses what no search of two commits could mean: an empty or repeated thread list,
    /// thread counts the metric cannot measure, `--locate` with a counting metric or threads.
    pub fn validate(&self) -> Result<()> {
        self.cfg.validate(2)?;
        if self.threads.is_empty() {
            bail!("no thread count given");
        }
        if let Some((i, t)) =
            (self.threads.iter().enumerate()).find(|(i, t)| self.threads[..*i].contains(t))
        {
            bail!("thread count {t} is listed twice (at position {})", i + 1);
        }
        for &t in &self.threads {
            self.timing.metric.check_threads(t)?;
        }
        if let Some(locate) = self.locate {
            if locate.metric().is_time() {
                bail!("--locate takes a metric that counts, such as instructions");
            }
            if !self.timing.metric.is_time() {
                bail!(
                    "--locate {} confirms every change point in time: it does not go with --metric {}",
                    locate.name(),
                    self.timing.metric.name()
                );
            }
            if let Some(t) = self.threads.iter().find(|&&t| t != 1) {
                bail!(
                    "--locate {} counts instructions, one thread's work: it does not go with {t} threads (use --threads 1)",
                    locate.name()
                );
            }
        }
        Ok(())
    }

    /// The counts' search configuration when locating: the clock's, on the count's own
    /// schedule and spread (a count decides in a few samples).
    pub fn count_config(&self) -> Config {
        match self.locate {
            None => self.cfg.clone(),
            Some(l) => Config {
                schedule: l.metric().default_schedule(),
                spread: l.metric().spread(),
                min_effect: self.count_min_effect,
                ..self.cfg.clone()
            },
        }
    }

    /// `--repo … --min-effect …`: the options every search's reproduce line starts with.
    fn reproduce_common(&self, grid: Option<usize>) -> String {
        let mut s = format!(
            "--repo {} --recipe {} --tool '{}' --threads {}",
            self.sources.repo.display(),
            self.sources.recipe,
            self.tool,
            self.threads_text()
        );
        if let Some(g) = grid {
            s.push_str(&format!(" --grid {g}"));
        }
        s.push_str(&format!(
            " --samples {} --max-samples {}",
            self.cfg.schedule.initial, self.cfg.schedule.max
        ));
        // One --duration serves the clock and the counts; where they differ, each took its
        // metric's default, which the rerun takes again.
        if self.locate.is_none() || self.count_duration == self.timing.duration {
            s.push_str(&format!(" --duration {}", self.timing.duration));
        }
        s.push_str(&format!(
            " --alpha {} --min-effect {}",
            self.cfg.alpha, self.cfg.min_effect
        ));
        // Always said: the default changed once (family until 2026-12-07) and may again.
        s.push_str(&format!(" --routing-level {}", self.cfg.routing));
        s
    }

    /// How each count sample is taken when locating.
    pub fn count_timing(&self, locate: Locate) -> Timing {
        Timing {
            metric: locate.metric(),
            duration: self.count_duration,
            ..self.timing
        }
    }
}

impl BisectPlan {
    /// A bisect of `range` with the command line's defaults: no budget, no explain, and
    /// `--locate auto` where a bisect given no `--locate` locates.
    pub fn new(range: RangePlan) -> BisectPlan {
        BisectPlan {
            range: range.with_default_locate(),
            budget: None,
            explain: false,
            explain_dir: None,
        }
    }

    pub fn validate(&self) -> Result<()> {
        self.range.validate()
    }

    /// The command that runs this bisect again (and resumes it from the cache).
    pub fn reproduce(&self) -> String {
        let r = &self.range;
        let mut s = format!("perfbisect bisect {}", r.reproduce_common(None));
        if !r.timing.metric.is_time() {
            s.push_str(&format!(" --metric {}", r.timing.metric.name()));
        }
        if let Some(by) = r.locate {
            s.push_str(&format!(" --locate {}", by.name()));
            s.push_str(&format!(
                " --count-min-effect {}%",
                r.count_min_effect * 100.0
            ));
        } else if r.locates_by_default() {
            // The clock alone where the default would locate: asked for, so said.
            s.push_str(" --locate time");
        }
        if let Some(m) = r.cfg.max_changes {
            s.push_str(&format!(" --max-changes {m}"));
        }
        if let Some(m) = r.cfg.min_share {
            s.push_str(&format!(" --min-share {}%", m * 100.0));
        }
        if let Some(b) = self.budget {
            s.push_str(&format!(" --budget {}", humantime::format_duration(b)));
        }
        s.push(' ');
        s.push_str(&r.range);
        s
    }

    /// The same bisect over another range (the merge base's branch, say).
    pub fn over(&self, range: String) -> BisectPlan {
        BisectPlan {
            range: RangePlan {
                range,
                ..self.range.clone()
            },
            ..self.clone()
        }
    }
}

impl ScanPlan {
    /// A scan measures one thread count and reports every change: refuses the rest.
    pub fn validate(&self) -> Result<()> {
        let r = &self.range;
        if r.threads.len() != 1 {
            bail!("a scan measures one thread count (--threads N); bisect takes several");
        }
        if r.cfg.max_changes.is_some() {
            bail!("--scan reports every change of the range: it takes no --first-change-only or --max-changes");
        }
        if !(3..=1000).contains(&self.grid) {
            bail!("a scan's grid has 3 to 1000 points, not {}", self.grid);
        }
        r.validate()
    }

    /// The scan's one thread count.
    pub fn threads(&self) -> usize {
        self.range.threads[0]
    }

    /// The command that runs this scan again (and resumes it from the cache).
    pub fn reproduce(&self) -> String {
        let r = &self.range;
        let locate = r
            .locate
            .map(|by| {
                let effect = r.count_min_effect * 100.0;
                format!("--locate {} --count-min-effect {effect}% ", by.name())
            })
            .unwrap_or_default();
        format!(
            "perfbisect scan {} {locate}{}",
            r.reproduce_common(Some(self.grid)),
            r.range
        )
    }
}
