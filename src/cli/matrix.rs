use crate::cli::exit::Exit;
use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;

use super::args::{FixedSamplingArgs, ToolsArgs};
use super::build::BuildArgs;
use super::Global;
use super::Shard;
use crate::analysis::stats;
use crate::build::prefix::Prefix;
use crate::build::repo::Repo;
use crate::cache::Cache;
use crate::host::Host;
use crate::measure::engine::{Library, Reuse, Session, Side, Subject, Target};
use crate::measure::kernel::{Registry, ToolSpec};
use crate::progress;
use crate::report::matrix::{write_plots, MatrixCell, MatrixFormat, MatrixReport, MATRIX_KIND};

#[derive(Args)]
pub struct MatrixArgs {
    /// Revisions of --repo to build and measure, comma-separated
    #[arg(long, value_delimiter = ',', value_name = "REV,REV,...")]
    revs: Vec<String>,
    /// Installed OpenSSL prefixes to measure (instead of, or beside, --revs)
    #[arg(long = "openssl-dir", value_name = "PREFIX")]
    openssl_dirs: Vec<PathBuf>,
    #[command(flatten)]
    tools: ToolsArgs,
    /// Samples are cached per cell: a re-run only measures what is missing
    #[command(flatten)]
    sampling: FixedSamplingArgs,
    /// Write one SVG per tool (µs/op against threads) into this directory
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Measure only shard I of N of the (revision, tool, threads) cells
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    #[command(flatten)]
    build: BuildArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: MatrixFormat,
}

pub fn run(g: &Global, a: MatrixArgs) -> Result<Exit> {
    check_targets(&a)?;
    let reg = Registry::load(g.kernels_dir.as_deref())?;
    let specs = reg.parse_specs(&a.tools.tools)?;
    // Instructions are a one-thread metric: its table is one column by default.
    let threads = if a.sampling.timing.metric.metric.is_time() {
        a.tools.threads_or(&[1, 2, 4])
    } else {
        a.tools.threads_or(&[1])
    };
    a.sampling.timing.check_threads(&threads)?;
    let labels: Vec<String> = a
        .revs
        .iter()
        .cloned()
        .chain(a.openssl_dirs.iter().map(|d| d.display().to_string()))
        .collect();
    let plan = cell_plan(labels.len(), specs.len(), &threads, a.shard.as_ref());
    let cache = Cache::open(g.cache.as_deref())?;
    let repo = if a.revs.is_empty() {
        None
    } else {
        Some(a.build.open()?)
    };
    let mut session = Session::new(
        &cache,
        a.sampling.timing.timing(),
        Reuse::Context("matrix".into()),
    );
    if let Some((repo, recipe)) = &repo {
        session = session.with_repo(repo, a.build.options(recipe));
    }
    session.progress_bar = true;
    let repo = repo.as_ref().map(|(r, _)| r);
    let libs = prepare_libraries(&mut session, &a, repo, &labels, &plan)?;
    let subjects = add_subjects(&mut session, &plan, &libs, &specs)?;
    let n = a.sampling.samples();
    say_what_is_measured(&session, &subjects, n);
    let wants: Vec<(usize, usize)> = subjects.iter().map(|&i| (i, n)).collect();
    session.ensure(&wants)?;
    let cells = plan
        .iter()
        .zip(&subjects)
        .map(|(&(t, s, threads), &i)| {
            let lib = libs[t].expect("prepared");
            cell(&session, (lib, &labels[t]), &specs[s], threads, i, n)
        })
        .collect();
    let report = MatrixReport {
        kind: MATRIX_KIND.into(),
        host: Host::current(),
        duration: a.sampling.timing.duration,
        samples: n,
        targets: labels,
        shard: a.shard.as_ref().map(|s| s.to_string()),
        cells,
        metric: session.metric(),
    };
    if let Some(dir) = &a.plot {
        write_plots(dir, &report)?;
    }
    print!("{}", a.format.render(&report)?);
    Ok(Exit::Done)
}

/// At least one target, none given twice.
fn check_targets(a: &MatrixArgs) -> Result<()> {
    if a.revs.is_empty() && a.openssl_dirs.is_empty() {
        bail!("matrix needs --revs REV,REV,... or --openssl-dir PREFIX");
    }
    super::args::unique("revision", &a.revs).map_err(anyhow::Error::msg)?;
    let dirs: Vec<String> = a
        .openssl_dirs
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    super::args::unique("--openssl-dir", &dirs).map_err(anyhow::Error::msg)
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
            super::cells(specs, threads, None)
                .into_iter()
                .map(move |(s, th)| (t, s, th))
        })
        .collect();
    super::sharded(all, shard)
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
    a: &MatrixArgs,
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
