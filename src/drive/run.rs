//! `run` as a library call: every (OpenSSL, tool, thread count) cell sampled a fixed number of
//! times, interleaved, fresh (nothing reused or kept), as one table.

use std::path::PathBuf;

use anyhow::{bail, Result};

use super::libraries::LibraryPlan;
use super::shard::cells;
use crate::cache::Cache;
use crate::measure::engine::{Session, Side, Subject, Timing};
use crate::measure::kernel::Registry;
use crate::measure::metric::Metric;
use crate::report::run::{RunReport, RunResult};

/// The cells of a `run` and how each is sampled.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// Tool specs as given (`all` for every kernel).
    pub tools: Vec<String>,
    pub threads: Vec<usize>,
    /// Samples per cell.
    pub samples: usize,
    pub timing: Timing,
    pub libraries: LibraryPlan,
    pub cache: crate::cache::Location,
    pub kernels_dir: Option<PathBuf>,
}

impl RunPlan {
    /// `tools` at one thread on the system's OpenSSL, with the command line's defaults.
    pub fn new(tools: &[&str]) -> RunPlan {
        let metric = Metric::Time;
        RunPlan {
            tools: tools.iter().map(|t| t.to_string()).collect(),
            threads: vec![1],
            samples: metric.default_fixed_samples(),
            timing: Timing::of(metric),
            libraries: LibraryPlan::system(),
            cache: Default::default(),
            kernels_dir: None,
        }
    }
}

/// The plan's cells measured; the report holds them library by library, in the plan's order.
pub fn run(plan: &RunPlan) -> Result<RunReport> {
    let reg = Registry::load(plan.kernels_dir.as_deref())?;
    let specs = reg.parse_specs(&plan.tools)?;
    for &t in &plan.threads {
        plan.timing.metric.check_threads(t)?;
    }
    let cache = Cache::open(&plan.cache)?;
    let repo = plan.libraries.open()?;
    let libs = plan.libraries.libraries(repo.as_ref().map(|(r, _)| r))?;
    let mut session = plan.libraries.session(&cache, plan.timing, repo.as_ref());
    session.progress_bar = true;
    let mut subjects = Vec::new();
    for lib in libs {
        let (l, label) = session.add_ready_library(lib)?;
        for (s, t) in cells(specs.len(), &plan.threads, None) {
            let i = session.add_subject(Subject {
                lib: l,
                spec: specs[s].clone(),
                threads: t,
                side: Side::Only,
            })?;
            subjects.push((label.clone(), i));
        }
    }
    let wants: Vec<(usize, usize)> = subjects.iter().map(|&(_, i)| (i, plan.samples)).collect();
    session.ensure(&wants)?;
    let results = (subjects.into_iter())
        .map(|(label, i)| result(&session, &label, i))
        .collect::<Result<_>>()?;
    Ok(RunReport::new(session.metric(), results))
}

/// One cell's samples, or why its kernel does not apply to this library. A kernel that fails
/// is an error for `run`: there is no number to show.
fn result(session: &Session, label: &str, i: usize) -> Result<RunResult> {
    let sub = session.subject(i);
    let (samples, na) = match session.samples(i) {
        Ok(s) => (s.to_vec(), None),
        Err(why) if why.is_not_applicable() => (Vec::new(), Some(why)),
        Err(why) => bail!(
            "{} on {label} with {} threads: {why}",
            sub.spec.short(),
            sub.threads
        ),
    };
    Ok(RunResult::new(
        label,
        &sub.spec,
        sub.threads,
        samples,
        na,
        session.metric(),
    ))
}
