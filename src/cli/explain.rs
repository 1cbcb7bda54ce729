//! `perfbisect explain`: its arguments, made into the library's plan; the report rendered in
//! the format asked for.

use crate::cli::exit::Exit;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

use super::args::parse_duration;
use super::build::BuildArgs;
use super::Global;
use crate::drive::explain::{explain, ExplainPlan};
use crate::report::explain::ExplainFormat;

#[derive(Args)]
pub struct ExplainArgs {
    /// REV (compared with REV^), or A B
    #[arg(value_name = "REV", required = true, num_args = 1..=2)]
    revs: Vec<String>,
    /// Tool spec NAME[:key=value,...] (profiled at one thread)
    #[arg(long, value_name = "SPEC")]
    tool: String,
    /// Seconds of operations each profile covers (under callgrind)
    #[arg(long, default_value = "1", value_parser = parse_duration, value_name = "SECONDS")]
    duration: f64,
    /// Functions to list
    #[arg(long, default_value = "20", value_parser = super::args::parse_count, value_name = "N")]
    top: usize,
    /// Write the differential flame graph here [default: explain-TOOL-A-B.svg]
    #[arg(long, value_name = "FILE")]
    flamegraph: Option<PathBuf>,
    #[command(flatten)]
    build: BuildArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: ExplainFormat,
}

/// Profile the tool's operation under callgrind on both builds and show the
/// functions whose instructions per operation changed most.
pub fn run(g: &Global, a: ExplainArgs) -> Result<Exit> {
    let plan = ExplainPlan {
        revs: a.revs.clone(),
        tool: a.tool.clone(),
        duration: a.duration,
        top: a.top,
        flamegraph: a.flamegraph.clone(),
        sources: a.build.sources(),
        cache: g.cache(),
        kernels_dir: g.kernels_dir.clone(),
    };
    print!("{}", a.format.render(&explain(&plan)?)?);
    Ok(Exit::Done)
}
