//! What a search of a range opens before it measures anything, and the sessions it measures
//! in: the clock's and, when locating, the counts'.

use anyhow::Result;

use super::plan::{Locate, RangePlan};
use crate::build::builds::BuildOptions;
use crate::build::recipe::Recipe;
use crate::build::repo;
use crate::cache::Cache;
use crate::measure::engine::{Library, Reuse, Session, Side, Subject};
use crate::measure::exec::slurm::Slurm;
use crate::measure::exec::{Executor, Timing};
use crate::measure::kernel::{Registry, ToolSpec};
use crate::report::events::{Event, Sink};

/// The tool, the repository and its recipe, the range and the cache, opened in the order a
/// command reports their errors.
pub struct RangeSetup {
    pub spec: ToolSpec,
    pub repo: repo::Repo,
    pub recipe: Recipe,
    pub range: repo::Range,
    pub cache: Cache,
}

impl RangeSetup {
    /// The setup of the plan's range; the plan is refused once the range is known where it
    /// cannot search it (before an executor is connected, which leaves a job directory in the
    /// cache).
    pub fn open(plan: &RangePlan) -> Result<RangeSetup> {
        let (good, bad) = plan.ends()?;
        let reg = Registry::load(plan.kernels_dir.as_deref())?;
        let spec = reg.parse_spec(&plan.tool)?;
        let (repo, recipe) = plan.sources.open()?;
        let range = repo.range(&good, &bad)?;
        let cache = Cache::open(&plan.cache)?;
        plan.cfg.validate(range.commits.len())?;
        Ok(RangeSetup {
            spec,
            repo,
            recipe,
            range,
            cache,
        })
    }

    /// The executor the plan asks for, on the range's cache, repository and recipe (None:
    /// local).
    pub fn executor<'s>(
        &'s self,
        plan: &RangePlan,
        tell: Tell<'s>,
    ) -> Result<Option<Box<dyn Executor + 's>>> {
        let Some(cfg) = &plan.slurm else {
            return Ok(None);
        };
        let options = self.options(plan, tell);
        let forward = plan.sources.forward()?;
        let slurm = Slurm::connect(&self.cache, &self.repo, options, forward, cfg.clone())?;
        Ok(Some(Box::new(slurm)))
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

    /// The plan's build options, telling each build's news to `tell`.
    fn options<'s>(&'s self, plan: &RangePlan, tell: Tell<'s>) -> BuildOptions<'s> {
        BuildOptions {
            tell: Some(tell),
            ..plan.sources.options(&self.recipe)
        }
    }

    /// A session of the range's repository and recipe measuring `commits` at every thread
    /// count (see [`add_revisions`]), built and sampled by `exec` when given. Its samples
    /// belong to `context`: a re-run of it resumes with them, another run takes its own.
    fn session<'s>(
        &'s self,
        plan: &RangePlan,
        (timing, context): (Timing, String),
        (exec, tell): (Option<Box<dyn Executor + 's>>, Tell<'s>),
        commits: &[repo::CommitInfo],
    ) -> Result<Session<'s>> {
        let mut session = Session::new(&self.cache, timing, Reuse::Context(context))
            .with_repo(&self.repo, self.options(plan, tell))
            .with_executor(exec);
        session.on_wave = Some(tell);
        add_revisions(&mut session, commits, &self.spec, &plan.threads)?;
        Ok(session)
    }

    /// The clock's session and, when locating, the counts' (on their metric, on an executor
    /// of their own, with samples of their own context).
    pub fn sessions<'s>(
        &'s self,
        plan: &RangePlan,
        context: String,
        commits: &[repo::CommitInfo],
        tell: Tell<'s>,
    ) -> Result<(Session<'s>, Option<Session<'s>>)> {
        let exec = self.executor(plan, tell)?;
        let counting = match plan.locate.filter(|&l| counts_here(l, tell)) {
            Some(by) => {
                let timing = plan.count_timing(by);
                let context = format!("{context} count");
                let exec = self.executor(plan, tell)?;
                Some(self.session(plan, (timing, context), (exec, tell), commits)?)
            }
            None => None,
        };
        let session = self.session(plan, (plan.timing, context), (exec, tell), commits)?;
        Ok((session, counting))
    }
}

/// Whether the counts of `--locate` can be taken here: `auto` leaves them to the clock when
/// valgrind is missing, and says so; `--locate METRIC` insists (its samples fail, one line).
fn counts_here(locate: Locate, tell: Tell) -> bool {
    if locate != Locate::Auto {
        return true;
    }
    match crate::measure::metric::valgrind_version() {
        Ok(_) => true,
        Err(e) => {
            tell.send(Event::Said(&format!(
                "--locate auto: the counts cannot be taken here ({e:#}); the clock alone searches"
            )));
            false
        }
    }
}

/// Where a search's builds and waves of samples tell their news: its sink.
pub type Tell<'s> = &'s &'s dyn Sink;

/// Each commit as a library of the session, measured at every thread count: subject c·k + t
/// is commit c at the t-th of the k thread counts (the layout [`super::live::Live`] reads).
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

/// The repository as a resume key names it: its canonical path, so that two spellings of
/// one checkout share their samples.
pub fn repo_key(repo: &repo::Repo) -> String {
    repo.path
        .canonicalize()
        .unwrap_or(repo.path.clone())
        .to_string_lossy()
        .into_owned()
}
