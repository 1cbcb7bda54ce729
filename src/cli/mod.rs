//! One module per command: parse arguments (shared groups in [`args`]),
//! declare subjects to the measurement engine, hand the samples to the
//! analysis, and render the typed result with the format asked for. A
//! command does not sample, split alpha or format numbers itself, and no
//! command is a library for another. `bisect` and `scan` only make a plan
//! ([`search`]) for the library's searches ([`crate::drive`]) and render
//! what they return.

pub mod args;
pub mod bisect;
pub mod build;
pub mod cache;
pub mod compare;
pub mod exec;
pub mod exit;
pub mod explain;
pub mod gate;
pub mod kernels;
pub mod libraries;
pub mod log;
pub mod matrix;
pub mod parity;
pub mod plan;
pub mod recipes;
pub mod report;
pub mod run;
pub mod scan;
pub mod search;
pub mod simulate;

use clap::Args;
use std::path::PathBuf;

/// Options every command takes.
#[derive(Args, Clone, Default)]
pub struct Global {
    /// Cache directory (default: $PERFBISECT_CACHE, else ~/.cache/perfbisect)
    #[arg(long, global = true, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// The cache is shared with other users on purpose: use it though others can write it
    /// (refused otherwise); only your own stored samples are read from it
    #[arg(long, global = true, env = "PERFBISECT_SHARED_CACHE", value_parser = clap::builder::FalseyValueParser::new())]
    pub shared_cache: bool,
    /// Extra kernels (*.c) to use beside the built-in ones
    #[arg(long, global = true, value_name = "DIR")]
    pub kernels_dir: Option<PathBuf>,
    /// Print only results: no progress on stderr
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Print how a search goes (every tested commit, the forecast) and each result's method and figures
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

impl Global {
    /// Where the cache is, as `--cache` and `--shared-cache` say.
    pub fn cache(&self) -> crate::cache::Location {
        crate::cache::Location {
            dir: self.cache.clone(),
            shared: self.shared_cache,
        }
    }
}

pub use crate::drive::shard::Shard;
