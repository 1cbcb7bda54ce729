//! `parity` as a library call: perfbisect's kernels next to openssl/perftools' programs on the
//! same OpenSSL builds, interleaved round by round, so that a difference between the two is the
//! programs', not the machine's.

use std::path::PathBuf;

use anyhow::{bail, Result};

use super::libraries::LibraryPlan;
use super::shard::cells;
use crate::build::builds;
use crate::build::prefix::Prefix;
use crate::cache::Cache;
use crate::measure::engine::{Session, Side, Subject, Timing};
use crate::measure::kernel::{Registry, ToolSpec};
use crate::measure::metric::Metric;
use crate::measure::perftools::{self, Counterpart, Perftools};
use crate::progress;
use crate::report::parity::{ParityReport, ParityRow, RowNotApplicable};

/// The rows of a parity table and how they are measured.
#[derive(Debug, Clone)]
pub struct ParityPlan {
    /// A checkout of openssl/perftools (read only; built into the cache against each OpenSSL).
    pub perftools: PathBuf,
    /// Kernel specs (empty: every kernel with a perftools counterpart).
    pub tools: Vec<String>,
    /// None: 1 and 2 in time, 1 in a count.
    pub threads: Option<Vec<usize>>,
    /// Rounds, each one perftools run and one perfbisect sample per row (None: 6 in time, 2 in
    /// a count).
    pub rounds: Option<usize>,
    /// A row is "within" when the means differ by at most this many percent.
    pub band: f64,
    pub timing: Timing,
    pub libraries: LibraryPlan,
    pub cache: crate::cache::Location,
    pub kernels_dir: Option<PathBuf>,
}

impl ParityPlan {
    /// The rounds and thread counts asked for, or their defaults for the metric; refuses what
    /// cannot make a table.
    fn rounds_and_threads(&self) -> Result<(usize, Vec<usize>)> {
        // Counts of instructions barely move from run to run (see metric.rs): two rounds show
        // that they did not.
        let metric = self.timing.metric;
        let rounds = self.rounds.unwrap_or(if metric.is_time() { 6 } else { 2 });
        let threads = match &self.threads {
            Some(t) => t.clone(),
            None if metric.is_time() => vec![1, 2],
            None => vec![1],
        };
        for &t in &threads {
            metric.check_threads(t)?;
        }
        if rounds < 2 {
            bail!("--rounds must be at least 2 (a paired interval needs two rounds)");
        }
        if !(self.band > 0.0 && self.band < 100.0) {
            bail!("--band must be a percentage between 0 and 100");
        }
        Ok((rounds, threads))
    }
}

/// Every row measured over the plan's rounds.
pub fn parity(plan: &ParityPlan) -> Result<ParityReport> {
    let metric = plan.timing.metric;
    let (rounds, threads) = plan.rounds_and_threads()?;
    Perftools::source_of(&plan.perftools)?;
    let reg = Registry::load(plan.kernels_dir.as_deref())?;
    let wanted = if plan.tools.is_empty() {
        perftools::default_specs()
    } else {
        plan.tools.clone()
    };
    let specs = reg.parse_specs(&wanted)?;
    let counterparts = counterparts_of(&specs)?;
    let cache = Cache::open(&plan.cache)?;
    let repo = plan.libraries.open()?;
    let libs = plan.libraries.libraries(repo.as_ref().map(|(r, _)| r))?;
    let mut session = plan.libraries.session(&cache, plan.timing, repo.as_ref());
    let jobs = (plan.libraries.sources.jobs).unwrap_or_else(builds::default_jobs);
    let mut rows = Vec::new();
    let mut builds = Vec::new();
    for lib in libs {
        let (l, label) = session.add_ready_library(lib)?;
        let prefix = session
            .target(l)
            .map(|t| t.prefix.clone())
            .ok_or_else(|| anyhow::anyhow!("{label} has no prefix after preparing it"))?;
        let pt = Perftools::build(&cache, &plan.perftools, &prefix, jobs, !progress::quiet())?;
        let build = builds.len();
        builds.push((pt, prefix));
        for (s, t) in cells(specs.len(), &threads, None) {
            let subject = session.add_subject(Subject {
                lib: l,
                spec: specs[s].clone(),
                threads: t,
                side: Side::Only,
            })?;
            let (pt, prefix) = &builds[build];
            let row = parity_row(&label, &specs[s], t, &counterparts[s], pt, prefix);
            rows.push(Pending {
                row,
                subject,
                build,
                counterpart: s,
            });
        }
    }
    let mut loads = Vec::new();
    for round in 0..rounds {
        loads.push(load_average());
        progress::info(&format!(
            "round {}/{} (load {:.2})",
            round + 1,
            rounds,
            loads[round]
        ));
        for p in rows.iter_mut() {
            let (pt, prefix) = &builds[p.build];
            let programs = Programs {
                perftools: pt,
                prefix,
                counterpart: &counterparts[p.counterpart],
                cache: &cache,
            };
            measure_row(&mut session, &programs, p, round, metric)?;
        }
    }
    Ok(ParityReport {
        metric,
        band: plan.band / 100.0,
        rounds,
        load: load_range(&loads),
        rows: rows.into_iter().map(|p| p.row).collect(),
    })
}

/// Each spec's perftools counterpart, or which spec has none.
fn counterparts_of(specs: &[ToolSpec]) -> Result<Vec<Counterpart>> {
    specs
        .iter()
        .map(|s| match perftools::counterpart(s) {
            Some(c) => Ok(c),
            None => bail!(
                "{} has no perftools counterpart that times the same operation",
                s.short()
            ),
        })
        .collect()
}

/// A row being measured: its perfbisect subject, its perftools build and counterpart (indices).
struct Pending {
    row: ParityRow,
    subject: usize,
    build: usize,
    counterpart: usize,
}

/// The perftools side of one row.
struct Programs<'a> {
    perftools: &'a Perftools,
    prefix: &'a Prefix,
    counterpart: &'a Counterpart,
    cache: &'a Cache,
}

/// A row with no values yet; not applicable where this perftools build lacks the program or
/// the OpenSSL is older than its options need.
fn parity_row(
    label: &str,
    spec: &ToolSpec,
    t: usize,
    cp: &Counterpart,
    pt: &Perftools,
    prefix: &Prefix,
) -> ParityRow {
    ParityRow {
        openssl: label.to_string(),
        spec: spec.short(),
        perftools: format!("{} -t {} {t}", cp.program, cp.options.join(" ")).replace("  ", " "),
        threads: t,
        perftools_us: Vec::new(),
        perfbisect_us: Vec::new(),
        differs: cp.differs.map(str::to_string),
        not_applicable: RowNotApplicable::of_counterpart(
            cp,
            pt.has(cp),
            label,
            prefix.version().as_ref(),
        ),
    }
}

/// One round of one row: a perftools run and a perfbisect sample, back to back.
fn measure_row(
    session: &mut Session,
    programs: &Programs,
    p: &mut Pending,
    round: usize,
    metric: Metric,
) -> Result<()> {
    let row = &mut p.row;
    if row.not_applicable.is_some() {
        return Ok(());
    }
    let Programs {
        perftools: pt,
        prefix,
        counterpart: cp,
        cache,
    } = *programs;
    // Alternate which program goes first, so that a drift within a round is shared.
    for first in [round.is_multiple_of(2), !round.is_multiple_of(2)] {
        if first {
            row.perftools_us.push(if metric.is_time() {
                pt.run(cp, row.threads, prefix, cache)?
            } else {
                pt.count(cp, row.threads, prefix, cache)?
            });
        } else {
            session.ensure(&[(p.subject, round + 1)])?;
            match session.values(p.subject) {
                Ok(v) => row.perfbisect_us = v,
                Err(why) if why.is_not_applicable() => {
                    row.not_applicable = Some(RowNotApplicable::Kernel { why });
                    break;
                }
                Err(why) => bail!("{} on {}: {why}", row.spec, row.openssl),
            }
        }
    }
    Ok(())
}

/// The load average's (min, mean, max) over the rounds.
fn load_range(loads: &[f64]) -> (f64, f64, f64) {
    let n = loads.len() as f64;
    (
        loads.iter().cloned().fold(f64::INFINITY, f64::min),
        loads.iter().sum::<f64>() / n,
        loads.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
    )
}

fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|w| w.parse().ok()))
        .unwrap_or(f64::NAN)
}
