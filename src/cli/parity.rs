use crate::cli::exit::Exit;
use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;

use super::args::{LibraryArgs, TimingArgs};
use crate::build::builds;
use crate::cache::Cache;
use crate::measure::engine::{Reuse, Session, Side, Subject};
use crate::measure::kernel::Registry;
use crate::measure::perftools::{self, Perftools};
use crate::report::parity::{ParityFormat, ParityReport, ParityRow};
use crate::Global;

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
    Perftools::source_of(&a.perftools)?;
    let reg = Registry::load(g.kernels_dir.as_deref())?;
    let wanted = if a.tools.is_empty() {
        perftools::default_specs()
    } else {
        a.tools.clone()
    };
    let specs = reg.parse_specs(&wanted)?;
    let mut counterparts = Vec::new();
    for s in &specs {
        match perftools::counterpart(s) {
            Some(c) => counterparts.push(c),
            None => bail!(
                "{} has no perftools counterpart that times the same operation",
                s.short()
            ),
        }
    }
    let cache = Cache::open(g.cache.as_deref())?;
    let repo = a.libraries.open_repo()?;
    let libs = a.libraries.libraries(repo.as_ref().map(|(r, _)| r))?;
    let mut session = Session::new(&cache, a.timing.timing(), Reuse::Nothing);
    if let Some((repo, recipe)) = &repo {
        session = session.with_repo(repo, a.libraries.build.options(recipe));
    }
    let jobs = a.libraries.build.jobs.unwrap_or_else(builds::default_jobs);

    // One entry per row: (row, perfbisect subject, perftools build, counterpart index).
    let mut rows = Vec::new();
    let mut builds = Vec::new();
    for lib in libs {
        let (l, label) = session.add_ready_library(lib)?;
        let prefix = session
            .target(l)
            .map(|t| t.prefix.clone())
            .ok_or_else(|| anyhow::anyhow!("{label} has no prefix after preparing it"))?;
        let pt = Perftools::build(&cache, &a.perftools, &prefix, jobs, !g.quiet)?;
        let b = builds.len();
        builds.push((pt, prefix));
        for (s, t) in super::cells(specs.len(), &threads, None) {
            let cp = &counterparts[s];
            let i = session.add_subject(Subject {
                lib: l,
                spec: specs[s].clone(),
                threads: t,
                side: Side::Only,
            })?;
            let mut row = ParityRow {
                openssl: label.clone(),
                spec: specs[s].short(),
                perftools: format!("{} -t {} {t}", cp.program, cp.options.join(" "))
                    .replace("  ", " "),
                threads: t,
                perftools_us: Vec::new(),
                perfbisect_us: Vec::new(),
                differs: cp.differs.map(str::to_string),
                not_applicable: None,
            };
            if !builds[b].0.has(cp) {
                row.not_applicable = Some(format!("perftools has no {} for {label}", cp.program));
            } else if let Some(why) = cp.not_applicable_on(builds[b].1.version().as_ref()) {
                row.not_applicable = Some(why);
            }
            rows.push((row, i, b, s));
        }
    }

    let mut loads = Vec::new();
    for round in 0..rounds {
        loads.push(load_average());
        if !g.quiet {
            eprintln!("round {}/{} (load {:.2})", round + 1, rounds, loads[round]);
        }
        for (row, i, b, s) in rows.iter_mut() {
            if row.not_applicable.is_some() {
                continue;
            }
            let (pt, prefix) = &builds[*b];
            let cp = &counterparts[*s];
            // Alternate which program goes first, so that a drift within a round is shared.
            for first in [round % 2 == 0, round % 2 != 0] {
                if first {
                    row.perftools_us.push(if metric.is_time() {
                        pt.run(cp, row.threads, prefix, &cache)?
                    } else {
                        pt.count(cp, row.threads, prefix, &cache)?
                    });
                } else {
                    session.ensure(&[(*i, round + 1)])?;
                    match session.values(*i) {
                        Ok(v) => row.perfbisect_us = v,
                        Err(why) if why.is_not_applicable() => {
                            row.not_applicable = Some(why.reason());
                            break;
                        }
                        Err(why) => bail!("{} on {}: {why}", row.spec, row.openssl),
                    }
                }
            }
        }
    }
    let n = loads.len() as f64;
    let report = ParityReport {
        metric,
        band: a.band / 100.0,
        rounds,
        load: (
            loads.iter().cloned().fold(f64::INFINITY, f64::min),
            loads.iter().sum::<f64>() / n,
            loads.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        ),
        rows: rows.into_iter().map(|(r, ..)| r).collect(),
    };
    print!("{}", a.format.render(&report)?);
    Ok(Exit::Done)
}

fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|w| w.parse().ok()))
        .unwrap_or(f64::NAN)
}
