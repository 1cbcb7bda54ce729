//! Taking samples of many (OpenSSL, tool, threads) cells, interleaved round
//! by round (A B C A B C …) so that a drifting machine affects every cell
//! alike.

use anyhow::Result;
use serde::Serialize;

use crate::build::version::OpenSslVersion;
use crate::cache::Cache;
use crate::measure::compile::{self, CompiledKernel};
use crate::measure::kernel::ToolSpec;
use crate::measure::prefix::Prefix;
use crate::measure::runner::{self, Outcome, Sample, SampleRequest};
use crate::progress;

/// One OpenSSL to measure: an installed prefix, the system's, or a build.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    pub label: String,
    pub prefix: Prefix,
    /// For builds: the commit, so samples can be checked against its version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// For builds: the version the source tree declares ("3.2.1").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect_version: Option<OpenSslVersion>,
}

#[derive(Debug, Clone)]
pub struct Cell {
    pub target: usize,
    pub spec: usize,
    pub threads: usize,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct CellResult {
    pub samples: Vec<Sample>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

pub struct Plan<'a> {
    pub cache: &'a Cache,
    pub targets: &'a [Target],
    pub specs: &'a [ToolSpec],
    pub cells: Vec<Cell>,
    pub samples: usize,
    pub duration: f64,
    pub timeout: Option<f64>,
}

/// Compile what is needed, then take `samples` rounds over all cells.
/// A cell that fails or is not applicable stops being sampled; the caller
/// decides whether that is an error.
pub fn run(plan: &Plan) -> Result<Vec<CellResult>> {
    let mut compiled: Vec<Vec<Option<CompiledKernel>>> =
        vec![vec![None; plan.specs.len()]; plan.targets.len()];
    let mut results = vec![CellResult::default(); plan.cells.len()];
    for (ci, cell) in plan.cells.iter().enumerate() {
        let target = &plan.targets[cell.target];
        let spec = &plan.specs[cell.spec];
        if compiled[cell.target][cell.spec].is_some() {
            continue;
        }
        if let Some(v) = target.prefix.version() {
            if v < spec.kernel.min_version {
                results[ci].not_applicable = Some(format!(
                    "{} needs OpenSSL {} or later, {} is {v}",
                    spec.kernel.name, spec.kernel.min_version, target.label
                ));
                continue;
            }
        }
        let sp = progress::spinner(&format!(
            "compiling {} for {}",
            spec.kernel.name, target.label
        ));
        let k = compile::compile(plan.cache, &spec.kernel, &target.prefix)?;
        sp.finish_and_clear();
        compiled[cell.target][cell.spec] = Some(k);
    }
    // Cells sharing a (target, spec) that was found not applicable inherit it.
    for ci in 0..plan.cells.len() {
        let c = &plan.cells[ci];
        if compiled[c.target][c.spec].is_none() && results[ci].not_applicable.is_none() {
            let reason = plan
                .cells
                .iter()
                .zip(&results)
                .find(|(o, r)| {
                    o.target == c.target && o.spec == c.spec && r.not_applicable.is_some()
                })
                .and_then(|(_, r)| r.not_applicable.clone());
            results[ci].not_applicable = reason;
        }
    }
    let total = (plan.cells.len() * plan.samples) as u64;
    let bar = progress::bar(total, "sampling");
    for round in 0..plan.samples {
        for (ci, cell) in plan.cells.iter().enumerate() {
            bar.inc(1);
            if results[ci].not_applicable.is_some() || results[ci].failure.is_some() {
                continue;
            }
            let Some(kernel) = &compiled[cell.target][cell.spec] else {
                continue;
            };
            let target = &plan.targets[cell.target];
            let spec = &plan.specs[cell.spec];
            bar.set_message(format!(
                "{} {} t={} #{}",
                target.label,
                spec.short(),
                cell.threads,
                round + 1
            ));
            let req = SampleRequest {
                cache: plan.cache,
                kernel,
                spec,
                prefix: &target.prefix,
                threads: cell.threads,
                duration: plan.duration,
                timeout: plan.timeout,
            };
            match runner::take_sample(&req)? {
                Outcome::Sample(s) => {
                    check_version(target, &s)?;
                    progress::detail(&format!(
                        "{} {} threads={} sample {}: {:.4} us/op",
                        target.label,
                        spec.short(),
                        cell.threads,
                        round + 1,
                        s.us_per_op
                    ));
                    results[ci].samples.push(s);
                }
                Outcome::NotApplicable(m) => results[ci].not_applicable = Some(m),
                Outcome::Failed(m) => results[ci].failure = Some(m),
            }
        }
    }
    bar.finish_and_clear();
    Ok(results)
}

/// A build's samples must come from that build's version of OpenSSL.
pub fn check_version(target: &Target, s: &Sample) -> Result<()> {
    if let Some(want) = &target.expect_version {
        if OpenSslVersion::from_version_text(&s.openssl_version).as_ref() != Some(want) {
            anyhow::bail!(
                "{}: the loaded library reports '{}' but the build is of {want}: refusing this sample",
                target.label,
                s.openssl_version
            );
        }
    }
    Ok(())
}
