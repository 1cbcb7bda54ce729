//! `matrix` as a library call: every (target, tool, thread count) cell of this shard
//! measured a fixed number of times (samples cached per cell), as the version × thread-count
//! table.

use std::path::PathBuf;

use anyhow::{bail, Result};

use super::libraries::unique;
use super::shard::{cells, sharded, Shard};
use crate::analysis::stats;
use crate::build::prefix::Prefix;
use crate::build::repo::Repo;
use crate::build::sources::Sources;
use crate::cache::Cache;
use crate::host::Host;
use crate::measure::engine::{Library, Reuse, Session, Side, Subject, Target};
use crate::measure::exec::Timing;
use crate::measure::kernel::{Registry, ToolSpec};
use crate::progress;
use crate::report::matrix::{MatrixCell, MatrixReport, MATRIX_KIND};

/// The targets, tools and thread counts of a table.
#[derive(Debug, Clone)]
pub struct MatrixPlan {
    /// Revisions of the sources' repository, then installed prefixes: the table's columns.
    pub revs: Vec<String>,
    pub openssl_dirs: Vec<PathBuf>,
    /// Tool specs as given (`all` for every kernel).
    pub tools: Vec<String>,
    /// None: 1, 2 and 4 in time, 1 in a count (a one-thread metric).
    pub threads: Option<Vec<usize>>,
    /// Samples per cell.
    pub samples: usize,
    pub timing: Timing,
    pub shard: Option<Shard>,
    pub sources: Sources,
    pub cache: crate::cache::Location,
    pub kernels_dir: Option<PathBuf>,
}

impl MatrixPlan {
    /// The thread counts asked for, else the metric's default.
    fn thread_counts(&self) -> Vec<usize> {
        match &self.threads {
            Some(t) => t.clone(),
            None if self.timing.metric.is_time() => vec![1, 2, 4],
            None => vec![1],
        }
    }
}

/// Measures the plan's cells; the report holds them in the plan's order.
pub fn matrix(a: &MatrixPlan) -> Result<MatrixReport> {
    check_targets(a)?;
    let reg = Registry::load(a.kernels_dir.as_deref())?;
    let specs = reg.parse_specs(&a.tools)?;
    let threads = a.thread_counts();
    for &t in &threads {
        a.timing.metric.check_threads(t)?;
    }
    let labels: Vec<String> = (a.revs.iter().cloned())
        .chain(a.openssl_dirs.iter().map(|d| d.display().to_string()))
        .collect();
    let plan = cell_plan(labels.len(), specs.len(), &threads, a.shard.as_ref());
    let cache = Cache::open(&a.cache)?;
    let repo = if a.revs.is_empty() {
        None
    } else {
        Some(a.sources.open()?)
    };
    let mut session = Session::new(&cache, a.timing, Reuse::Context("matrix".into()));
    if let Some((repo, recipe)) = &repo {
        session = session.with_repo(repo, a.sources.options(recipe));
    }
    session.progress_bar = true;
    let repo = repo.as_ref().map(|(r, _)| r);
    let libs = prepare_libraries(&mut session, a, repo, &labels, &plan)?;
    let subjects = add_subjects(&mut session, &plan, &libs, &specs)?;
    let n = a.samples;
    say_what_is_measured(&session, &subjects, n);
    let wants: Vec<(usize, usize)> = subjects.iter().map(|&i| (i, n)).collect();
    session.ensure(&wants)?;
    let cells = (plan.iter().zip(&subjects))
        .map(|(&(t, s, threads), &i)| {
            let lib = libs[t].expect("prepared");
            cell(&session, (lib, &labels[t]), &specs[s], threads, i, n)
        })
        .collect();
    Ok(MatrixReport {
        kind: MATRIX_KIND.into(),
        host: Host::current(),
        duration: a.timing.duration,
        samples: n,
        targets: labels,
        shard: a.shard.as_ref().map(|s| s.to_string()),
        cells,
        metric: session.metric(),
    })
}

/// At least one target, none given twice.
fn check_targets(a: &MatrixPlan) -> Result<()> {
    if a.revs.is_empty() && a.openssl_dirs.is_empty() {
        bail!("matrix needs --revs REV,REV,... or --openssl-dir PREFIX");
    }
    unique("revision", &a.revs)?;
    let dirs: Vec<String> = a
        .openssl_dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    unique("--openssl-dir", &dirs)
}

/// The (target, tool, threads) cells this runner measures, in a fixed order, so --shard I/N
/// splits them the same way on every runner.
fn cell_plan(
    targets: usize,
    specs: usize,
    threads: &[usize],
    shard: Option<&Shard>,
) -> Vec<(usize, usize, usize)> {
    let all = (0..targets)
        .flat_map(|t| {
            cells(specs, threads, None)
                .into_iter()
                .map(move |(s, th)| (t, s, th))
        })
        .collect();
    sharded(all, shard)
}

/// One prepared subject per cell of `plan`, on the libraries `libs` of its target.
fn add_subjects(
    session: &mut Session,
    plan: &[(usize, usize, usize)],
    libs: &[Option<usize>],
    specs: &[ToolSpec],
) -> Result<Vec<usize>> {
    let subjects: Vec<usize> = plan
        .iter()
        .map(|&(t, s, threads)| {
            session.add_subject(Subject {
                lib: libs[t].expect("prepared above"),
                spec: specs[s].clone(),
                threads,
                side: Side::Only,
            })
        })
        .collect::<Result<_>>()?;
    for &i in &subjects {
        session.prepare(i)?;
    }
    Ok(subjects)
}

/// The session's library for each target (`labels`, revisions first) that a cell of `plan`
/// measures, built or taken as installed: only what this shard needs is built.
fn prepare_libraries(
    session: &mut Session,
    a: &MatrixPlan,
    repo: Option<&Repo>,
    labels: &[String],
    plan: &[(usize, usize, usize)],
) -> Result<Vec<Option<usize>>> {
    let mut libs: Vec<Option<usize>> = vec![None; labels.len()];
    for &(t, _, _) in plan {
        if libs[t].is_some() {
            continue;
        }
        let lib = if let (Some(rev), Some(repo)) = (a.revs.get(t), repo) {
            Library::Revision {
                label: rev.clone(),
                commit: repo.resolve_subject(rev)?,
            }
        } else {
            let d = &a.openssl_dirs[t - a.revs.len()];
            Library::Installed(Target::installed(Prefix::from_dir(d, &labels[t])?))
        };
        let l = session.add_library(lib);
        if let Err(why) = session.prepare_library(l)? {
            bail!("cannot measure {}: {why}", labels[t]);
        }
        libs[t] = Some(l);
    }
    Ok(libs)
}

/// One line before measuring: how many cells, and how many of their samples are cached.
fn say_what_is_measured(session: &Session, subjects: &[usize], n: usize) {
    let cached: usize = subjects
        .iter()
        .filter_map(|&i| session.samples(i).ok().map(|s| s.len().min(n)))
        .sum();
    let measurable = subjects
        .iter()
        .filter(|&&i| session.samples(i).is_ok())
        .count();
    progress::info(&format!(
        "matrix: {} cells, {} samples to take, {cached} from the cache",
        subjects.len(),
        measurable * n - cached
    ));
}

/// The table's cell of `subject` (the first `n` of its samples), measured on the library
/// `lib` named `label`.
fn cell(
    session: &Session,
    (lib, label): (usize, &str),
    spec: &ToolSpec,
    threads: usize,
    subject: usize,
    n: usize,
) -> MatrixCell {
    let target = session.target(lib).expect("ready");
    let (samples, why) = match session.values(subject) {
        Ok(mut v) => {
            v.truncate(n);
            (v, None)
        }
        Err(why) => (Vec::new(), Some(why)),
    };
    let sum = (!samples.is_empty()).then(|| stats::summarize(&samples));
    MatrixCell {
        target: label.to_string(),
        commit: target.commit.clone(),
        openssl_version: target.prefix.version().map(|v| v.to_string()),
        tool: spec.kernel.name.clone(),
        spec: spec.short(),
        args: spec.args.clone(),
        threads,
        n: samples.len(),
        mean_us: sum.as_ref().map(|s| s.mean),
        stddev_us: sum.as_ref().map(|s| s.sd),
        ci95_us: sum.as_ref().map(|s| s.ci95),
        not_applicable: why.clone().filter(|w| w.is_not_applicable()),
        failure: why.filter(|w| !w.is_not_applicable()),
        samples_us: samples,
    }
}
