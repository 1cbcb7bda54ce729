//! `perfbisect gate`: its arguments, made into the library's plan; the report rendered (and
//! added to GitHub's step summary) and its exit code returned.

use anyhow::Result;
use clap::Args;

use super::args::{parse_effect, AlphaArg, SequentialArgs, ToolsArgs};
use super::build::BuildArgs;
use super::exit::Exit;
use super::{Global, Shard};
use crate::drive::gate::{gate, GatePlan};
use crate::report::gate::{GateFormat, UndecidedPolicy};

#[derive(Args)]
pub struct GateArgs {
    /// The revision a pull request is compared against (e.g. its merge base)
    #[arg(long, value_name = "REV")]
    base: String,
    /// The pull request's revision
    #[arg(long, value_name = "REV")]
    head: String,
    #[command(flatten)]
    tools: ToolsArgs,
    /// Fail only on a significant slowdown at least this large
    #[arg(long, default_value = "5%", value_parser = parse_effect, allow_hyphen_values = true)]
    max_regression: f64,
    /// What an undecided comparison (at the sample cap) does to the exit code
    #[arg(long, value_enum, default_value = "pass")]
    undecided: UndecidedPolicy,
    #[command(flatten)]
    alpha: AlphaArg,
    #[command(flatten)]
    sampling: SequentialArgs,
    /// Check only shard I of N of the (tool, threads) comparisons
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    #[command(flatten)]
    build: BuildArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: GateFormat,
}

pub fn run(g: &Global, a: GateArgs) -> Result<Exit> {
    let plan = GatePlan {
        base: a.base.clone(),
        head: a.head.clone(),
        tools: a.tools.tools.clone(),
        threads: a.tools.threads_or(&[1]),
        max_regression: a.max_regression,
        undecided: a.undecided,
        alpha: a.alpha.alpha,
        timing: a.sampling.timing.timing(),
        schedule: a.sampling.schedule(),
        shard: a.shard.clone(),
        sources: a.build.sources(),
        cache: g.cache(),
        kernels_dir: g.kernels_dir.clone(),
    };
    let report = gate(&plan)?;
    report.emit(a.format)?;
    Ok(Exit::of_gate(report.exit_code))
}
