//! perfbisect as a library: the pipeline from a revision range to a typed result — git and
//! builds (`build`), kernels, samples and the measurement engine (`measure`), statistics and
//! the pure search (`analysis`), results and their renderers (`report`) — and the commands
//! that drive it (`cli`). The `perfbisect` binary only parses the command line and calls
//! these.

pub mod analysis;
pub mod build;
pub mod cache;
pub mod cli;
pub mod hashing;
pub mod host;
pub mod interrupt;
pub mod measure;
pub mod progress;
pub mod report;
pub mod unavailable;

use clap::Args;
use std::path::PathBuf;

/// Options every command takes.
#[derive(Args, Clone)]
pub struct Global {
    /// Cache directory (default: $PERFBISECT_CACHE, else ~/.cache/perfbisect)
    #[arg(long, global = true, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Extra kernels (*.c) to use beside the built-in ones
    #[arg(long, global = true, value_name = "DIR")]
    pub kernels_dir: Option<PathBuf>,
    /// Print only results
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Print every sample and build step
    #[arg(short, long, global = true)]
    pub verbose: bool,
}
