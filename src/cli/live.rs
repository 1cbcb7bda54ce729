//! A search's view of a measurement session, with live output: the adapter that shows a
//! session's subjects to the pure search as commits (one per thread count series), prints
//! each decided step and confirmed change point as it happens, keeps the status line and the
//! clock of `--budget`. Shared by `bisect` and `scan`, so neither command is a library for the
//! other.

use std::time::Instant;

use anyhow::Result;

use super::args::{LinkArgs, LocateBy};
use super::build::BuildArgs;
use super::exec::ExecArgs;
use crate::analysis::bisect::{self, Config, Measurer, Probe, Step, StepVerdict};
use crate::analysis::resolution::Forecast;
use crate::build::recipe::Recipe;
use crate::build::repo;
use crate::cache::Cache;
use crate::measure::engine::{Library, Reuse, Session, Side, Subject};
use crate::measure::exec::{Executor, Timing};
use crate::measure::kernel::{Registry, ToolSpec};
use crate::progress;
use crate::report::bisect::{
    change_point_json, confirmed_line, forecast_line, located_line, step_line, BisectFormat,
    ForecastEvent, StepJson,
};
use crate::report::export::Jsonl;
use crate::report::export::Links;
use crate::Global;

/// The session seen by the search, with live output: each decided step and
/// each confirmed change point as a line (stdout in text format, one JSON
/// event per line in jsonl, else stderr) and, on a terminal, the status
/// line; and the clock of `--budget`.
pub struct Live<'s, 'a> {
    pub session: &'s mut Session<'a>,
    pub commits: &'s [repo::CommitInfo],
    /// The thread counts: commit c at the t-th is the session's subject c·k + t.
    pub threads: &'s [usize],
    pub format: BisectFormat,
    pub status: progress::SearchStatus,
    pub started: Instant,
    pub deadline: Option<Instant>,
    /// The counts that locate for a clock that confirms (`--locate`): their change points are
    /// announced as located, not as the run's culprits.
    pub locating: bool,
}

impl Live<'_, '_> {
    /// A line of live output where the format puts it.
    fn emit(&self, line: &str, event: &str, data: &impl serde::Serialize) {
        match self.format {
            BisectFormat::Text => progress::above_status(|| println!("{line}")),
            BisectFormat::Jsonl => match Jsonl::event(event, data) {
                Ok(l) => progress::above_status(|| {
                    use std::io::Write;
                    print!("{l}");
                    let _ = std::io::stdout().flush();
                }),
                Err(e) => progress::info(&format!("cannot write a {event} event: {e}")),
            },
            _ => progress::info(line),
        }
    }

    /// What would resolve more on this machine, given the forecast: more samples, and more
    /// shorter ones in the same time, when the cap falls short of --min-effect, and counting
    /// instructions for one thread.
    fn better(&self, f: &Forecast) -> Vec<String> {
        let r = &f.resolution;
        let mut v = Vec::new();
        let time = self.session.metric().is_time();
        // Past ten times the cap a larger cap is no advice: each decision would take hours.
        if r.short() && r.needed <= 10 * r.cap {
            v.push(format!(
                "--max-samples {} (resolves {:.1}%)",
                r.needed,
                r.min_effect * 100.0
            ));
        }
        // Longer samples did not pay where measured: on a 2-core VM a quarter-second sample was
        // barely noisier than a 1-second one and a 2-second one no quieter, so the same machine
        // time resolved about twice as much in 0.25 s samples, at 2 threads too; on a host in
        // waves no duration was safe (docs/how-a-number-is-made.md). Half the duration at twice
        // the cap costs what the cap costs now.
        let half = self.session.duration() / 2.0;
        if time && r.short() && half >= 0.25 {
            v.push(format!(
                "--duration {half} --max-samples {} (twice the samples in the same sampling time; scripts/bench-sampling says which duration resolves most on this machine)",
                2 * r.cap
            ));
        }
        // Counting pays when the clock alone cannot resolve --min-effect at the cap: on one
        // release-history range with -25%..-80% steps at 11-18% noise the clock alone took 350 s
        // and locating 397 s; at 15-21% noise with +-5-30% steps locating finds what the clock
        // cannot (docs/commands.md).
        if time && self.threads == [1] && r.short() && !self.locating {
            v.push(
                "--locate instructions (counts locate, the clock confirms; 1 thread, about 5 s per count sample)"
                    .into(),
            );
        }
        v
    }

    fn builds(&self) -> progress::BuildCounts {
        let b = self.session.builds.values();
        progress::BuildCounts {
            built: b.clone().filter(|b| b.fresh && b.ok).count(),
            cached: b.clone().filter(|b| !b.fresh && b.ok).count(),
            failed: b.filter(|b| !b.ok).count(),
        }
    }
}

impl Measurer for Live<'_, '_> {
    fn prepare(&mut self, c: usize) -> Result<()> {
        let k = self.threads.len();
        for t in 0..k {
            Measurer::prepare(self.session, c * k + t)?;
        }
        Ok(())
    }

    fn identical(&self, a: usize, b: usize) -> bool {
        let k = self.threads.len();
        self.session.identical(a * k, b * k)
    }

    fn name(&self, i: usize) -> String {
        self.session.name(i * self.threads.len())
    }

    fn series(&self) -> usize {
        self.threads.len()
    }

    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        Ok(self
            .ensure_series(wants)?
            .into_iter()
            .map(|mut p| p.swap_remove(0))
            .collect())
    }

    /// Every listed commit at every thread count, in the engine's interleaved rounds.
    fn ensure_series(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Vec<Probe>>> {
        let shorts: Vec<&str> = wants
            .iter()
            .filter_map(|(i, _)| self.commits.get(*i).map(|c| c.short.as_str()))
            .collect();
        self.status.doing(format!("sampling {}", shorts.join(" ")));
        let k = self.threads.len();
        let subjects: Vec<(usize, usize)> = wants
            .iter()
            .flat_map(|&(c, n)| (0..k).map(move |t| (c * k + t, n)))
            .collect();
        let mut probes = Measurer::ensure(&mut *self.session, &subjects)?.into_iter();
        Ok(wants
            .iter()
            .map(|_| probes.by_ref().take(k).collect())
            .collect())
    }

    fn prefetch(&mut self, commits: &[usize]) {
        let k = self.threads.len();
        let subjects: Vec<usize> = commits.iter().map(|c| c * k).collect();
        self.session.prefetch(&subjects);
    }

    fn should_stop(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    fn forecast(&mut self, f: &Forecast) {
        let per_sample = self.session.seconds_per_sample();
        let better = self.better(f);
        let line = forecast_line(f, per_sample, &better);
        let event = ForecastEvent {
            forecast: f,
            seconds_per_sample: per_sample,
            better: &better,
        };
        self.emit(&line, "forecast", &event);
    }

    fn confirmed(&mut self, cp: &bisect::ChangePoint) {
        let c = change_point_json(cp, self.commits, self.threads);
        if self.locating {
            let line = located_line(&c, self.session.metric());
            self.emit(&line, "located", &c);
            return;
        }
        let spent = format!(
            "after {:.0} s, {} builds, {} samples taken now",
            self.started.elapsed().as_secs_f64(),
            self.session.builds.len(),
            self.session.samples_taken
        );
        self.emit(&confirmed_line(&c, &spent), "confirmed", &c);
    }

    fn decided(&mut self, s: &Step) {
        let line = step_line(
            s,
            &self.commits[s.commit],
            self.session.metric(),
            self.threads,
        );
        self.emit(&line, "step", &StepJson::new(s, self.commits, self.threads));
        let builds = self.builds();
        let side = match s.verdict {
            StepVerdict::Old => progress::Side::Old,
            StepVerdict::New => progress::Side::New,
            StepVerdict::Skipped(_) => progress::Side::Skipped,
            StepVerdict::Between | StepVerdict::Ambiguous => progress::Side::Both,
        };
        self.status.step(s.commit, side, builds);
    }
}

/// A command's own progress line: on stdout beside a text result, else on stderr (a JSON or
/// HTML result keeps stdout to itself).
pub fn say(text: bool, s: &str) {
    if text {
        println!("{s}");
    } else {
        progress::info(s);
    }
}

/// The repository as a resume key names it: its canonical path, so that two spellings of
/// one checkout share their samples.
pub fn repo_key(repo: &repo::Repo) -> String {
    repo.path
        .canonicalize()
        .unwrap_or(repo.path.clone())
        .to_string_lossy()
        .into_owned()
}

/// Each commit as a library of the session, measured at every thread count: subject c·k + t
/// is commit c at the t-th of the k thread counts (the layout [`Live`] reads).
pub fn add_revisions(
    session: &mut Session,
    commits: &[repo::CommitInfo],
    spec: &ToolSpec,
    threads: &[usize],
) -> Result<()> {
    for c in commits {
        let lib = session.add_library(Library::Revision {
            label: c.short.clone(),
            commit: c.clone(),
        });
        for &t in threads {
            session.add_subject(Subject {
                lib,
                spec: spec.clone(),
                threads: t,
                side: Side::Only,
            })?;
        }
    }
    Ok(())
}

/// What a search of a range opens before it measures anything, in the order a command
/// reports their errors: the commit links, the tool, the repository and its recipe, the
/// range, the cache.
pub struct RangeSetup {
    pub links: Links,
    pub spec: ToolSpec,
    pub repo: repo::Repo,
    pub recipe: Recipe,
    pub range: repo::Range,
    pub cache: Cache,
}

impl RangeSetup {
    /// The setup of GOOD..BAD for a search with `cfg`: `cfg` is refused before anything is
    /// opened where it could not search two commits, and once the range is known where it
    /// cannot search the range's (before an executor is connected, which leaves a job
    /// directory in the cache).
    pub fn open(
        g: &Global,
        links: &LinkArgs,
        tool: &str,
        build: &BuildArgs,
        (good, bad): (&str, &str),
        cfg: &Config,
    ) -> Result<RangeSetup> {
        cfg.validate(2)?;
        let links = links.links()?;
        let reg = Registry::load(g.kernels_dir.as_deref())?;
        let spec = reg.parse_spec(tool)?;
        let (repo, recipe) = build.open()?;
        let range = repo.range(good, bad)?;
        let cache = Cache::open(g.cache.as_deref())?;
        cfg.validate(range.commits.len())?;
        Ok(RangeSetup {
            links,
            spec,
            repo,
            recipe,
            range,
            cache,
        })
    }

    /// The executor `exec` asks for, on the range's cache, repository and recipe (None: local).
    pub fn executor(
        &self,
        exec: &ExecArgs,
        build: &BuildArgs,
    ) -> Result<Option<Box<dyn Executor + '_>>> {
        exec.executor((&self.cache, &self.repo), build, &self.recipe)
    }

    /// What a search of the range announces it measures: `TOOL at THREADS thread(s) over N
    /// commits (GOOD..BAD), recipe R`.
    pub fn describe(&self, threads: &str) -> String {
        format!(
            "{} at {threads} thread(s) over {} commits ({}..{}), recipe {}",
            self.spec.short(),
            self.range.commits.len(),
            self.range.good.short,
            self.range.bad.short,
            self.recipe.name
        )
    }

    /// A session of the range's repository and recipe measuring `commits` at every thread
    /// count (see [`add_revisions`]), built and sampled by `exec` when given. Its samples
    /// belong to `context`: a re-run of it resumes with them, another run takes its own.
    pub fn session<'s>(
        &'s self,
        build: &BuildArgs,
        timing: Timing,
        context: String,
        exec: Option<Box<dyn Executor + 's>>,
        commits: &[repo::CommitInfo],
        threads: &[usize],
    ) -> Result<Session<'s>> {
        let mut session = Session::new(&self.cache, timing, Reuse::Context(context))
            .with_repo(&self.repo, build.options(&self.recipe))
            .with_executor(exec);
        add_revisions(&mut session, commits, &self.spec, threads)?;
        Ok(session)
    }

    /// The clock's session and, with `--locate`, the counts' (on their metric, on an executor
    /// of their own, with samples of their own context).
    pub fn sessions<'s>(
        &'s self,
        (build, exec_args): (&BuildArgs, &ExecArgs),
        (timing, context, locate): (Timing, String, Option<LocateBy>),
        exec: Option<Box<dyn Executor + 's>>,
        commits: &[repo::CommitInfo],
        threads: &[usize],
    ) -> Result<(Session<'s>, Option<Session<'s>>)> {
        let counting = match locate {
            Some(by) => {
                let exec = self.executor(exec_args, build)?;
                let timing = Timing {
                    metric: by.metric(),
                    ..timing
                };
                let context = format!("{context} count");
                Some(self.session(build, timing, context, exec, commits, threads)?)
            }
            None => None,
        };
        let session = self.session(build, timing, context, exec, commits, threads)?;
        Ok((session, counting))
    }
}
