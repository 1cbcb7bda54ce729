use crate::cli::exit::Exit;
use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;

use super::args::TimingArgs;
use super::libraries::LibraryArgs;
use super::Global;
use crate::build::builds;
use crate::build::prefix::Prefix;
use crate::cache::Cache;
use crate::measure::engine::{Reuse, Session, Side, Subject};
use crate::measure::kernel::Registry;
use crate::measure::kernel::ToolSpec;
use crate::measure::metric::Metric;
use crate::measure::perftools::{self, Counterpart, Perftools};
use crate::report::parity::{ParityFormat, ParityReport, ParityRow, RowNotApplicable};

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
/// round by round, so that a difference between the two is the programs', not the machine's.
pub fn run(g: &Global, a: ParityArgs) -> Result<Exit> {
    let metric = a.timing.metric.metric;
    let (rounds, threads) = rounds_and_threads(&a)?;
    Perftools::source_of(&a.perftools)?;
    let reg = Registry::load(g.kernels_dir.as_deref())?;
    let wanted = if a.tools.is_empty() {
        perftools::default_specs()
    } else {
        a.tools.clone()
    };
    let specs = reg.parse_specs(&wanted)?;
    let counterparts = counterparts_of(&specs)?;
    let cache = Cache::open(&g.cache())?;
    let repo = a.libraries.open_repo()?;
    let libs = a.libraries.libraries(repo.as_ref().map(|(r, _)| r))?;
    let mut session = Session::new(&cache, a.timing.timing(), Reuse::Nothing);
    if let Some((repo, recipe)) = &repo {
        session = session.with_repo(repo, a.libraries.build.options(recipe));
    }
    let jobs = a.libraries.build.jobs.unwrap_or_else(builds::default_jobs);
    let mut rows = Vec::new();
    let mut builds = Vec::new();
    for lib in libs {
        let (l, label) = session.add_ready_library(lib)?;
        let prefix = session
            .target(l)
            .map(|t| t.prefix.clone())
            .ok_or_else(|| anyhow::anyhow!("{label} has no prefix after preparing it"))?;
        let pt = Perftools::build(&cache, &a.perftools, &prefix, jobs, !g.quiet)?;
        let build = builds.len();
        builds.push((pt, prefix));
        for (s, t) in super::cells(specs.len(), &threads, None) {
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
        if !g.quiet {
            eprintln!("round {}/{} (load {:.2})", round + 1, rounds, loads[round]);
        }
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
    let report = ParityReport {
        metric,
        band: a.band / 100.0,
        rounds,
        load: load_range(&loads),
        rows: rows.into_iter().map(|p| p.row).collect(),
    };
    print!("{}", a.format.render(&report)?);
    Ok(Exit::Done)
}

/// The rounds and thread counts asked for, or their defaults for the metric.
fn rounds_and_threads(a: &ParityArgs) -> Result<(usize, Vec<usize>)> {
    // Counts of instructions barely move from run to run (see metric.rs): two rounds show that
    // they did not.
    let metric = a.timing.metric.metric;
    let rounds = a.rounds.unwrap_or(if metric.is_time() { 6 } else { 2 });
    let threads = match &a.threads {
        Some(t) => t.0.clone(),
        None if metric.is_time() => vec![1, 2],
        None => vec![1],
    };
    for &t in &threads {
        metric.check_threads(t)?;
    }
    if rounds < 2 {
        bail!("--rounds must be at least 2 (a paired interval needs two rounds)");
    }
    if !(a.band > 0.0 && a.band < 100.0) {
        bail!("--band must be a percentage between 0 and 100");
    }
    Ok((rounds, threads))
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
