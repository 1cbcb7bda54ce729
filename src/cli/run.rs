use crate::cli::exit::Exit;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

use super::args::{FixedSamplingArgs, ToolsArgs};
use super::libraries::LibraryArgs;
use super::Global;
use crate::drive::{self, run::RunPlan};
use crate::measure::runner;
use crate::report::run::RunFormat;

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
    print!("{}", a.format.render(&drive::run::run(&a.plan(g))?)?);
    Ok(Exit::Done)
}

impl RunArgs {
    /// The library's plan of this command line.
    fn plan(&self, g: &Global) -> RunPlan {
        RunPlan {
            tools: self.tools.tools.clone(),
            threads: self.tools.threads_or(&[1]),
            samples: self.sampling.samples(),
            timing: self.sampling.timing.timing(),
            libraries: self.libraries.plan(),
            cache: g.cache(),
            kernels_dir: g.kernels_dir.clone(),
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Line {
        #[command(flatten)]
        run: RunArgs,
    }

    /// `RunPlan::new` is what `perfbisect run --tool T` asks for.
    #[test]
    fn the_library_defaults_are_the_command_lines() {
        let line = Line::try_parse_from(["perfbisect", "--tool", "noop"]).unwrap();
        let g = Global::default();
        assert_eq!(
            format!("{:?}", line.run.plan(&g)),
            format!("{:?}", RunPlan::new(&["noop"]))
        );
    }
}
