//! The lists `log`, `cache ls` and `kernels` write with `--format json`: each under a named key
//! of an object, so that they carry `schema` as every other result does (a bare array has no
//! place for it).

use serde::Serialize;

use super::bisect::SavedBisect;
use crate::build::builds::BuildMeta;
use crate::measure::kernel::Kernel;
use crate::measure::perftools;

/// `log`: the bisects recorded in the cache, newest first.
#[derive(Serialize, schemars::JsonSchema)]
pub struct BisectLog {
    pub bisects: Vec<SavedBisect>,
}

/// `cache ls`: the cached builds' records, newest first.
#[derive(Serialize, schemars::JsonSchema)]
pub struct BuildList<'a> {
    pub builds: Vec<&'a BuildMeta>,
}

/// `kernels`: every kernel the registry holds.
#[derive(Serialize, schemars::JsonSchema)]
pub struct KernelList<'a> {
    pub kernels: Vec<ListedKernel<'a>>,
}

/// A kernel as `kernels` lists it: its metadata and its perftools pairing.
#[derive(Serialize, schemars::JsonSchema)]
pub struct ListedKernel<'a> {
    #[serde(flatten)]
    pub kernel: &'a Kernel,
    /// The perftools program and flags its specs pair with ("-": none).
    pub perftools: &'static str,
}

impl<'a> KernelList<'a> {
    pub fn of(kernels: impl Iterator<Item = &'a Kernel>) -> KernelList<'a> {
        KernelList {
            kernels: kernels
                .map(|kernel| ListedKernel {
                    kernel,
                    perftools: perftools::pairing(&kernel.name),
                })
                .collect(),
        }
    }
}
