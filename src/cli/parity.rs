//! `perfbisect parity`: its arguments, made into the library's plan; the table rendered in the
//! format asked for.

use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

use super::args::TimingArgs;
use super::libraries::LibraryArgs;
use super::Global;
use crate::cli::exit::Exit;
use crate::drive::parity::{parity, ParityPlan};
use crate::report::parity::ParityFormat;

#[derive(Args)]
pub struct ParityArgs {
    /// A checkout of openssl/perftools (read only; built into the cache against each OpenSSL)
    #[arg(long, value_name = "DIR")]
    pub perftools: PathBuf,
    /// Kernel spec(s) to compare (default: every kernel with a perftools counterpart)
    #[arg(long = "tool", value_name = "SPEC")]
    pub tools: Vec<String>,
    /// Thread counts, comma-separated [default: 1,2; --metric instructions: 1]
    #[arg(long, value_parser = super::args::parse_thread_list)]
    pub threads: Option<super::args::ThreadList>,
    /// Rounds: in each, every row gets one perftools run and one perfbisect sample, back to back [default: 6; --metric instructions: 2]
    #[arg(long, value_parser = super::args::parse_count)]
    pub rounds: Option<usize>,
    /// A row is "within" when the means differ by at most this many percent
    #[arg(long, default_value_t = 5.0)]
    pub band: f64,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub libraries: LibraryArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    pub format: ParityFormat,
}

/// perfbisect's kernels next to perftools' programs on the same OpenSSL builds, interleaved
/// round by round ([`parity`]).
pub fn run(g: &Global, a: ParityArgs) -> Result<Exit> {
    let plan = ParityPlan {
        perftools: a.perftools.clone(),
        tools: a.tools.clone(),
        threads: a.threads.as_ref().map(|t| t.0.clone()),
        rounds: a.rounds,
        band: a.band,
        timing: a.timing.timing(),
        libraries: a.libraries.plan(),
        cache: g.cache(),
        kernels_dir: g.kernels_dir.clone(),
    };
    print!("{}", a.format.render(&parity(&plan)?)?);
    Ok(Exit::Done)
}
