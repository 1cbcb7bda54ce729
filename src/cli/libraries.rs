//! `--openssl-dir` or `--rev`: which OpenSSL libraries `run` and `parity` measure.

use clap::Args;

use super::build::BuildArgs;
use crate::drive::libraries::LibraryPlan;

/// Which OpenSSL libraries a command measures: installed prefixes (default: the system's) or
/// cached builds of revisions of a repository.
#[derive(Args)]
pub struct LibraryArgs {
    /// Installed OpenSSL prefix(es) holding include/ and lib/; `system` is the system's (the
    /// default)
    #[arg(long = "openssl-dir", value_name = "PREFIX")]
    pub openssl_dirs: Vec<std::path::PathBuf>,
    /// Build these revisions of --repo (cached) and measure them
    #[arg(long = "rev", value_name = "REV", conflicts_with = "openssl_dirs")]
    pub revs: Vec<String>,
    #[command(flatten)]
    pub build: BuildArgs,
}

impl LibraryArgs {
    /// The library's plan of these libraries.
    pub fn plan(&self) -> LibraryPlan {
        LibraryPlan {
            revs: self.revs.clone(),
            openssl_dirs: self.openssl_dirs.clone(),
            sources: self.build.sources(),
        }
    }
}
