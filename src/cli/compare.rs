//! `perfbisect compare A B` and `perfbisect verify REV`: their arguments, made into the
//! library's plan; each thread count's report rendered in the format asked for.

use anyhow::Result;
use clap::Args;

use super::args::{LinkArgs, SequentialArgs, StatsArgs, ToolArg};
use super::build::BuildArgs;
use super::exit::Exit;
use super::Global;
use crate::drive::compare::{compare, ComparePlan};
use crate::report::compare::CompareFormat;

#[derive(Args)]
pub struct CompareArgs {
    /// The baseline revision
    #[arg(value_name = "A")]
    a: String,
    /// The revision compared with A
    #[arg(value_name = "B")]
    b: String,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Args)]
pub struct VerifyArgs {
    /// The commit to check against its parent (REV^ vs REV)
    #[arg(value_name = "REV")]
    rev: String,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Args)]
pub struct CommonArgs {
    #[command(flatten)]
    tool: ToolArg,
    #[command(flatten)]
    sampling: SequentialArgs,
    #[command(flatten)]
    stats: StatsArgs,
    #[command(flatten)]
    build: BuildArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: CompareFormat,
    #[command(flatten)]
    links: LinkArgs,
}

pub fn run_compare(g: &Global, a: CompareArgs) -> Result<Exit> {
    let plan = a.common.plan(g, (&a.a, &a.b));
    run(&a.common, &plan)
}

pub fn run_verify(g: &Global, a: VerifyArgs) -> Result<Exit> {
    let plan = ComparePlan::verify(&a.rev, a.common.plan(g, ("", "")))?;
    run(&a.common, &plan)
}

impl CommonArgs {
    /// The plan of comparing `a` with `b`.
    fn plan(&self, g: &Global, (a, b): (&str, &str)) -> ComparePlan {
        ComparePlan {
            a: a.to_string(),
            b: b.to_string(),
            tool: self.tool.tool.clone(),
            threads: self.tool.thread_counts(),
            timing: self.sampling.timing.timing(),
            schedule: self.sampling.schedule(),
            alpha: self.stats.alpha.alpha,
            min_effect: self.stats.min_effect,
            sources: self.build.sources(),
            cache: g.cache(),
            kernels_dir: g.kernels_dir.clone(),
        }
    }
}

/// Compares, and prints one report per thread count, one after the other (JSON: one object
/// each).
fn run(o: &CommonArgs, plan: &ComparePlan) -> Result<Exit> {
    let links = o.links.links()?;
    plan.validate()?;
    let mut out = String::new();
    for report in compare(plan)? {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&o.format.render_linked(&report, &links)?);
    }
    print!("{out}");
    Ok(Exit::Done)
}
