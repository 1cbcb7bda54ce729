//! openssl/perftools as a reference: which of its programs times the same operation as one of
//! our kernels, how to build a user's perftools checkout against the OpenSSL under test, and how
//! to run one of its programs and read its number. `perfbisect parity` puts the two side by side
//! (docs/parity.md says what was found with it).
//!
//! perftools is the user's checkout, read only: CMake's configure step writes `config.h` into
//! the source directory, so the sources are copied into the cache and built there, one build per
//! (checkout contents, OpenSSL prefix).

use std::path::PathBuf;

use crate::build::version::OpenSslVersion;

mod build;
mod pairing;
mod run;
mod specs;

pub use pairing::{counterpart, pairing};
pub use specs::{default_specs, perftools_mode_specs};

/// The perftools program that times the same operation as a kernel spec.
#[derive(Debug, Clone, PartialEq)]
pub struct Counterpart {
    pub program: &'static str,
    /// Options before the positional arguments (`-t`, terse, is added by [`Perftools::run`]).
    pub options: Vec<String>,
    /// Whether the program takes the certificates directory before the thread count.
    pub certs: bool,
    /// perftools' number divided by this is per our operation (rwlocks counts lock and unlock as
    /// two calls; ours is the pair).
    pub calls_per_op: f64,
    /// Which number of the terse output line is ours (rwlocks prints the writers' and then the
    /// readers').
    pub column: usize,
    /// Where the two cannot agree by construction, why (shown next to the row).
    pub differs: Option<&'static str>,
    /// The oldest OpenSSL this program and these options run on, where it is newer than the
    /// program itself (newrawkey -a ml-kem-*: 3.5); older builds make the row not applicable.
    pub since: Option<&'static str>,
}

impl Counterpart {
    /// The OpenSSL this counterpart needs, when `version` is older (the row is then not
    /// applicable).
    pub fn needs_newer_than(&self, version: Option<&OpenSslVersion>) -> Option<OpenSslVersion> {
        let since: OpenSslVersion = self.since?.parse().ok()?;
        (version? < &since).then_some(since)
    }
}

/// perftools built against one OpenSSL prefix.
pub struct Perftools {
    pub bin_dir: PathBuf,
    /// servercert.pem and serverkey.pem: our own fixtures, so both programs handshake with the
    /// same certificate.
    certs: PathBuf,
    /// An empty directory for SSL_CERT_DIR (x509storeissuer's README asks for an empty default
    /// certificate directory): `/tmp/pbcerts-XXXXXX`, a path as long as the one our
    /// x509storeissuer kernel searches, since every lookup's cost grows with the path's length
    /// (in the cache, 41 characters longer: 4% more instructions per call on 3.0.8).
    empty_certs: tempfile::TempDir,
}

#[cfg(test)]
mod tests;
