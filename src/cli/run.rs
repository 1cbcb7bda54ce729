use crate::cli::exit::Exit;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

use super::args::{FixedSamplingArgs, ToolsArgs};
use super::libraries::LibraryArgs;
use super::Global;
use crate::cache::Cache;
use crate::measure::engine::{Reuse, Session, Side, Subject};
use crate::measure::kernel::Registry;
use crate::measure::runner;
use crate::report::run::{RunFormat, RunReport, RunResult};

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub tools: ToolsArgs,
    #[command(flatten)]
    pub sampling: FixedSamplingArgs,
    #[command(flatten)]
    pub libraries: LibraryArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    pub format: RunFormat,
}

/// Measure every (OpenSSL, tool, threads) cell, interleaved, with fresh
/// samples (nothing is reused or kept), and print the table.
pub fn run(g: &Global, a: RunArgs) -> Result<Exit> {
    let reg = Registry::load(g.kernels_dir.as_deref())?;
    let specs = reg.parse_specs(&a.tools.tools)?;
    let threads = a.tools.threads_or(&[1]);
    a.sampling.timing.check_threads(&threads)?;
    let cache = Cache::open(&g.cache())?;
    let repo = a.libraries.open_repo()?;
    let libs = a.libraries.libraries(repo.as_ref().map(|(r, _)| r))?;
    let mut session = Session::new(&cache, a.sampling.timing.timing(), Reuse::Nothing);
    if let Some((repo, recipe)) = &repo {
        session = session.with_repo(repo, a.libraries.build.options(recipe));
    }
    session.progress_bar = true;
    let mut subjects = Vec::new();
    for lib in libs {
        let (l, label) = session.add_ready_library(lib)?;
        for (s, t) in super::cells(specs.len(), &threads, None) {
            let i = session.add_subject(Subject {
                lib: l,
                spec: specs[s].clone(),
                threads: t,
                side: Side::Only,
            })?;
            subjects.push((label.clone(), i));
        }
    }
    let wants: Vec<(usize, usize)> = subjects
        .iter()
        .map(|&(_, i)| (i, a.sampling.samples()))
        .collect();
    session.ensure(&wants)?;
    let mut results = Vec::new();
    for (label, i) in subjects {
        let sub = session.subject(i);
        let (samples, na) = match session.samples(i) {
            Ok(s) => (s.to_vec(), None),
            Err(why) if why.is_not_applicable() => (Vec::new(), Some(why)),
            // A kernel that fails is an error for `run`: there is no number to show.
            Err(why) => anyhow::bail!(
                "{} on {label} with {} threads: {why}",
                sub.spec.short(),
                sub.threads
            ),
        };
        results.push(RunResult::new(
            &label,
            &sub.spec,
            sub.threads,
            samples,
            na,
            session.metric(),
        ));
    }
    print!(
        "{}",
        a.format
            .render(&RunReport::new(session.metric(), results))?
    );
    Ok(Exit::Done)
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
    #[arg(long)]
    warmup: bool,
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
        warmup: a.warmup,
    })
}
