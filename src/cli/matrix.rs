//! `perfbisect matrix`: its arguments, made into the library's plan; the table rendered in
//! the format asked for, with one plot per tool.

use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

use super::args::{FixedSamplingArgs, ToolsArgs};
use super::build::BuildArgs;
use super::exit::Exit;
use super::{Global, Shard};
use crate::drive::matrix::{matrix, MatrixPlan};
use crate::report::matrix::{write_plots, MatrixFormat};

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
    let plan = MatrixPlan {
        revs: a.revs.clone(),
        openssl_dirs: a.openssl_dirs.clone(),
        tools: a.tools.tools.clone(),
        threads: a.tools.threads.as_ref().map(|t| t.0.clone()),
        samples: a.sampling.samples(),
        timing: a.sampling.timing.timing(),
        shard: a.shard.clone(),
        sources: a.build.sources(),
        cache: g.cache(),
        kernels_dir: g.kernels_dir.clone(),
    };
    let report = matrix(&plan)?;
    if let Some(dir) = &a.plot {
        write_plots(dir, &report)?;
    }
    print!("{}", a.format.render(&report)?);
    Ok(Exit::Done)
}
