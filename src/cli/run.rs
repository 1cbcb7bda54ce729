use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

use super::build::BuildArgs;
use super::{parse_duration, parse_samples, parse_threads};
use crate::build::builds;
use crate::cache::Cache;
use crate::measure::cells::{self as measure, Cell, Target};
use crate::measure::kernel::Registry;
use crate::measure::prefix::Prefix;
use crate::measure::runner;
use crate::progress;
use crate::report::{self, Format, RunResult};
use crate::Global;

#[derive(Args)]
pub struct RunArgs {
    /// Tool spec NAME[:key=value,...]; repeatable; `all` for every kernel (see `perfbisect kernels`)
    #[arg(long = "tool", required = true, value_name = "SPEC")]
    pub tools: Vec<String>,
    /// Thread counts, comma-separated
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = parse_threads, value_name = "LIST")]
    pub threads: Vec<usize>,
    /// Samples (fresh processes) per tool and thread count
    #[arg(long, default_value = "10", value_parser = parse_samples)]
    pub samples: usize,
    /// Seconds each sample measures for
    #[arg(long, default_value = "1", value_parser = parse_duration, allow_negative_numbers = true, value_name = "SECONDS")]
    pub duration: f64,
    /// Kill a sample after this many seconds (default: 30 + 4 x duration)
    #[arg(long, value_parser = parse_duration, allow_negative_numbers = true, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Installed OpenSSL prefix(es) holding include/ and lib/ (default: the system's)
    #[arg(long = "openssl-dir", value_name = "PREFIX")]
    pub openssl_dirs: Vec<PathBuf>,
    /// Build these revisions of --repo (cached) and measure them
    #[arg(long = "rev", value_name = "REV", conflicts_with = "openssl_dirs")]
    pub revs: Vec<String>,
    #[command(flatten)]
    pub build: BuildArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}

#[derive(Serialize)]
struct RunJson<'a> {
    results: &'a [RunResult],
}

pub fn run(g: &Global, a: RunArgs) -> Result<ExitCode> {
    let reg = Registry::load(g.kernels_dir.as_deref())?;
    let specs = reg.parse_specs(&a.tools)?;
    let cache_dir = g.cache.as_deref();
    let targets: Vec<Target> = if !a.revs.is_empty() {
        let cache = Cache::open(cache_dir)?;
        targets_for_revs(&cache, &a.build, &a.revs)?
    } else if a.openssl_dirs.is_empty() {
        vec![Target {
            label: "system".into(),
            prefix: Prefix::system()?,
            commit: None,
            expect_version: None,
        }]
    } else {
        a.openssl_dirs
            .iter()
            .map(|d| {
                Ok(Target {
                    label: d.display().to_string(),
                    prefix: Prefix::from_dir(d, &d.display().to_string())?,
                    commit: None,
                    expect_version: None,
                })
            })
            .collect::<Result<_>>()?
    };
    let cache = Cache::open(g.cache.as_deref())?;
    measure_and_print(&cache, &targets, &specs, &a)
}

/// Build (or take from the cache) each revision and make it a target whose
/// samples must come from that build.
pub fn targets_for_revs(cache: &Cache, b: &BuildArgs, revs: &[String]) -> Result<Vec<Target>> {
    let (repo, recipe) = b.open()?;
    let commits = revs
        .iter()
        .map(|r| repo.resolve(r))
        .collect::<Result<Vec<_>>>()?;
    let opts = b.options(&recipe);
    let mut out = Vec::new();
    for (rev, c) in revs.iter().zip(&commits) {
        let built = builds::ensure(cache, &repo, c, &opts)?;
        progress::info(&super::build::describe(rev, c, &built));
        let Some(prefix) = built.prefix else {
            anyhow::bail!(
                "cannot measure {rev}: its build failed (log: {})",
                built.log_path().display()
            );
        };
        out.push(Target {
            label: rev.clone(),
            prefix,
            commit: Some(c.id.clone()),
            expect_version: Some(built.meta.version.clone()),
        });
    }
    Ok(out)
}

/// Shared by `run --openssl-dir` and `run --rev`: measure every (target,
/// tool, threads) cell interleaved and print the table.
pub fn measure_and_print(
    cache: &Cache,
    targets: &[Target],
    specs: &[crate::measure::kernel::ToolSpec],
    a: &RunArgs,
) -> Result<ExitCode> {
    let mut cells = Vec::new();
    for t in 0..targets.len() {
        for s in 0..specs.len() {
            for &threads in &a.threads {
                cells.push(Cell {
                    target: t,
                    spec: s,
                    threads,
                });
            }
        }
    }
    let plan = measure::Plan {
        cache,
        targets,
        specs,
        cells: cells.clone(),
        samples: a.samples,
        duration: a.duration,
        timeout: a.timeout,
    };
    let results = measure::run(&plan)?;
    // A kernel that fails is an error for `run`: there is no number to show.
    if let Some((cell, r)) = cells
        .iter()
        .zip(&results)
        .find(|(_, r)| r.failure.is_some())
    {
        anyhow::bail!(
            "{} on {} with {} threads: {}",
            specs[cell.spec].short(),
            targets[cell.target].label,
            cell.threads,
            r.failure.as_deref().unwrap_or_default()
        );
    }
    let rows: Vec<RunResult> = cells
        .iter()
        .zip(results)
        .map(|(c, r)| {
            RunResult::new(
                &targets[c.target].label,
                &specs[c.spec],
                c.threads,
                r.samples,
                r.not_applicable,
            )
        })
        .collect();
    match a.format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&RunJson { results: &rows })?
        ),
        f => print!("{}", report::run_table(&rows).render(f)?),
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct SampleArgs {
    #[arg(long)]
    so: PathBuf,
    #[arg(long)]
    threads: usize,
    #[arg(long)]
    duration: f64,
    #[arg(long)]
    fixtures: PathBuf,
    #[arg(long = "arg")]
    args: Vec<String>,
    #[arg(long = "counter")]
    counters: Vec<String>,
    #[arg(long)]
    bytes_per_op: Option<f64>,
}

pub fn sample_child(a: SampleArgs) -> i32 {
    let args = a
        .args
        .iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .with_context(|| format!("bad --arg {kv}"))
        })
        .collect::<Result<Vec<_>>>();
    let args = match args {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    runner::child_main(runner::ChildArgs {
        so: a.so,
        threads: a.threads,
        duration: a.duration,
        fixtures: a.fixtures,
        args,
        counters: a.counters,
        bytes_per_op: a.bytes_per_op,
    })
}
