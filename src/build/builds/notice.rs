//! What a build tells as it happens — done (or failed), or waiting for another process's
//! build of the same entry — and where it tells it.

use std::path::Path;

use super::{BuildOptions, Built};
use crate::progress;

/// What a build tells as it happens: it is done (or failed), or it waits for another
/// process's build of the same entry.
#[derive(Debug)]
pub enum BuildNotice<'a> {
    Built {
        short: &'a str,
        built: &'a Built,
        /// Where it was built, when not here (a Slurm job on a node).
        on: Option<&'a str>,
    },
    Waiting {
        short: &'a str,
        /// The cache's builds directory the other process builds into.
        into: &'a Path,
    },
}

impl BuildNotice<'_> {
    /// The notice as one line.
    pub fn line(&self) -> String {
        match self {
            BuildNotice::Built { short, built, on } => match on {
                Some(on) => format!("{} on {on}", built_line(built, short)),
                None => built_line(built, short),
            },
            BuildNotice::Waiting { short, into } => format!(
                "  waiting for {short}: another perfbisect process is building it into {}",
                into.display()
            ),
        }
    }
}

/// Where builds tell their news; `Sync`, as builds made side by side tell from their threads.
pub trait Tell: Sync {
    fn tell(&self, n: BuildNotice);
}

impl BuildOptions<'_> {
    /// Tells `n` where these options send a build's news.
    pub fn tell(&self, n: BuildNotice) {
        match self.tell {
            Some(t) => t.tell(n),
            None => progress::info(&n.line()),
        }
    }
}

/// `  built 6fb327f5aa (OpenSSL 3.2.1) in 96 s, ccache 84%`, or `… FAILED …` with the log.
pub fn built_line(b: &Built, short: &str) -> String {
    let cc = b
        .meta
        .ccache_hit_rate
        .map(|r| format!(", ccache {:.0}%", r * 100.0))
        .unwrap_or_default();
    match b.meta.ok {
        true => format!(
            "  built {short} (OpenSSL {}) in {:.0} s{cc}",
            b.meta.version, b.meta.duration_s
        ),
        false => format!(
            "  build of {short} (OpenSSL {}) FAILED after {:.0} s (log: {})",
            b.meta.version,
            b.meta.duration_s,
            b.log_path().display()
        ),
    }
}
