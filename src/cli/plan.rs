//! `perfbisect plan`: what a fleet buys. Reads this machine's build records, shapes each search by
//! running the real search on simulated commits, plays it on fleets of N build and M measurement
//! nodes (analysis::fleet) and prints the prediction with every assumption it rests on.

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use std::collections::btree_map::{BTreeMap, Entry};
use std::path::{Path, PathBuf};

use super::args::StatsArgs;
use super::args::{parse_count, parse_duration, parse_effect, unique, GridArg, ScheduleArgs};
use super::Global;
use crate::analysis::bisect::{self, Config};
use crate::analysis::fleet::shape::{self, Search, ShapeConfig};
use crate::analysis::fleet::{
    self, BuildClass, BuildRecord, Ccache, Costs, Fleet, Intervals, Machines, Probes, Spread, Trace,
};
use crate::analysis::simulate::noise::{self, NoiseModel};
use crate::analysis::simulate::SimStep;
use crate::build::builds::BuildMeta;
use crate::cache::Cache;
use crate::cli::exit::Exit;
use crate::measure::metric::Metric;
use crate::report::plan::{
    Figure, Figures, Goal, PlanFormat, Planned, RecordsRead, SearchPlan, ShapeSummary, Simulated,
    Source,
};

/// Seconds a sample costs beyond its `--duration`: a fresh process, its kernel's setup, the
/// parent's bookkeeping. Measured here (2-core AMD EPYC VM, load 1.4–2.2): `run --samples 25`
/// against `--samples 5` at `--duration 0.1` took 9–14 ms more per sample for randbytes,
/// rsasign, pkeyread and handshake, and 10 ms at `--duration 1` for pkeyread.
const SAMPLE_OVERHEAD_S: f64 = 0.015;
const SAMPLE_OVERHEAD_WHY: &str = "measured here: 9-14 ms per sample, `run` of 25 against 5 samples, load 1.4-2.2; see docs/fleet.md";

/// A Slurm job from `sbatch` until it runs, on the one-node test cluster here.
const JOB_OVERHEAD_S: f64 = 1.0;
const JOB_OVERHEAD_WHY: &str = "Slurm submit to start 0-1 s on the one-node cluster here, jobs polled every 200 ms (docs/slurm.md); a whole Slurm bisect there cost about 0.4 s per job (docs/executors.md)";

/// The goal the table is measured against.
const GOAL_COMMITS: usize = 4000;
const GOAL_NODES: usize = 16;
const GOAL_MINUTES: f64 = 45.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum SearchArg {
    Scan,
    Bisect,
}

impl std::fmt::Display for SearchArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SearchArg::Scan => "scan",
            SearchArg::Bisect => "bisect",
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum CcacheArg {
    /// The nodes share one ccache, warm for this history
    Shared,
    /// Each node has its own
    None,
    /// Both, one row each
    Both,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum MachinesArg {
    /// The build nodes are the measurement nodes: one job at a time per machine
    Shared,
    /// Build nodes and measurement nodes are different machines: builds run ahead
    Separate,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum IntervalsArg {
    /// A scan's intervals searched at once, each on its own measurement node
    Concurrent,
    /// One after another, as `scan` does on one measurement node (`--slurm-lanes 1`)
    Sequential,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ProbesArg {
    /// One per measurement node (at most 4), as a bisect through Slurm probes
    PerNode,
    /// One at a time: a binary search (`--slurm-lanes 1`, the local executor)
    One,
}

/// `--nodes 1,4,16`: counts of at least 1, each once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeList(Vec<usize>);

fn parse_node_list(s: &str) -> Result<NodeList, String> {
    let v = parse_per_row(s)?;
    unique("node count", &v.0)?;
    Ok(v)
}

/// `--build-nodes 4,4,4`: one count per row, repeats allowed (the rows differ in the other
/// list; a row given twice is refused once the lists are paired).
fn parse_per_row(s: &str) -> Result<NodeList, String> {
    s.split(',')
        .map(|x| match parse_count(x)? {
            n if n > 4096 => Err(format!("{n} nodes is more than plan models (4096)")),
            n => Ok(n),
        })
        .collect::<Result<Vec<usize>, String>>()
        .map(NodeList)
}

/// Seconds, 0 allowed (an overhead that is not there).
fn parse_overhead(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=3600.0).contains(&v) => Ok(v),
        _ => Err(format!("'{s}' is not a number of seconds from 0 to 3600")),
    }
}

/// The recorded trace a plan's noise is fitted to unless told otherwise: 1,000 rounds of an A/A
/// `compare` on this project's 2-core VM, nothing else running (scripts/traces/README.md).
const DEFAULT_TRACE: (&str, &str) = (
    "scripts/traces/randbytes-3.0.0-aa-2026-12-06-quiet.json",
    include_str!("../../scripts/traces/randbytes-3.0.0-aa-2026-12-06-quiet.json"),
);

#[derive(Args)]
pub struct PlanArgs {
    /// Searches to predict, comma-separated: scan (a grid, then a bisect of every grid interval that moved) and bisect [default: scan,bisect]
    #[arg(long, value_enum, value_delimiter = ',', value_name = "SEARCH")]
    search: Vec<SearchArg>,
    /// Commits in the range [default: 4000 for a scan, 775 for a bisect]
    #[arg(long, value_parser = parse_count)]
    commits: Option<usize>,
    #[command(flatten)]
    grid: GridArg,
    /// Fleets, comma-separated: N build nodes and as many measurement nodes per row
    #[arg(long, default_value = "1,4,16", value_parser = parse_node_list, value_name = "LIST")]
    nodes: NodeList,
    /// Build nodes per row instead of --nodes' (one count per row)
    #[arg(long, value_parser = parse_per_row, value_name = "LIST")]
    build_nodes: Option<NodeList>,
    /// Measurement nodes per row instead of --nodes' (one count per row)
    #[arg(long, value_parser = parse_per_row, value_name = "LIST")]
    measure_nodes: Option<NodeList>,
    /// Whether the build nodes are also the measurement nodes
    #[arg(long, value_enum, default_value = "shared")]
    machines: MachinesArg,
    /// With a ccache all nodes share, without, or both (one row each)
    #[arg(long, value_enum, default_value = "both")]
    ccache: CcacheArg,
    /// How a scan's intervals are searched
    #[arg(long, value_enum, default_value = "concurrent")]
    intervals: IntervalsArg,
    /// Commits a bisect probes per wave
    #[arg(long, value_enum, default_value = "per-node")]
    bisect_probes: ProbesArg,
    /// Work trees each build node keeps (as `build --work-trees`)
    #[arg(long, default_value = "2", value_parser = parse_count, value_name = "N")]
    work_trees: usize,
    /// Seconds of a clean build with a cold ccache [default: the median of the records]
    #[arg(long, value_parser = parse_duration, value_name = "SECONDS")]
    cold_build: Option<f64>,
    /// Seconds of a clean build with a warm ccache [default: the median of the records]
    #[arg(long, value_parser = parse_duration, value_name = "SECONDS")]
    warm_build: Option<f64>,
    /// Seconds of a build within 64 commits of a work tree [default: the median of the records]
    #[arg(long, value_parser = parse_duration, value_name = "SECONDS")]
    near_build: Option<f64>,
    /// Seconds each sample measures for
    #[arg(long, default_value_t = Metric::Time.default_duration(), value_parser = parse_duration, value_name = "SECONDS")]
    duration: f64,
    /// Seconds a sample costs beyond --duration (a fresh process) [default: 0.015, measured here]
    #[arg(long, value_parser = parse_overhead, value_name = "SECONDS")]
    sample_overhead: Option<f64>,
    /// Seconds one sample costs in all, instead of --duration plus --sample-overhead
    #[arg(long, value_parser = parse_duration, value_name = "SECONDS")]
    sample: Option<f64>,
    /// Seconds from submitting a job (a build or a block) until it runs [default: 1]
    #[arg(long, value_parser = parse_overhead, value_name = "SECONDS")]
    job_overhead: Option<f64>,
    /// A step of the simulated history: EFFECT[@COMMIT][/SPREAD], as simulate's; repeatable [default: one +10% step per 1,000 commits, at random places]
    #[arg(long = "step", value_name = "EFFECT[@COMMIT][/SPREAD]", value_parser = super::simulate::parse_step, allow_hyphen_values = true)]
    steps: Vec<SimStep>,
    /// Simulated samples with iid log-normal noise of this sigma, instead of noise fitted to a recorded trace of this machine
    #[arg(long, value_parser = parse_effect, conflicts_with = "noise_from")]
    noise: Option<f64>,
    /// Fit the simulated samples' noise to this recorded trace (as simulate --noise-from takes) [default: a quiet trace of the machine perfbisect was developed on, kept in the binary]
    #[arg(long, value_name = "FILE")]
    noise_from: Option<PathBuf>,
    /// Simulated searches per search kind
    #[arg(long, default_value = "40", value_parser = parse_count)]
    trials: usize,
    /// Seed of the simulation: the same seed gives the same prediction
    #[arg(long, default_value = "1")]
    seed: u64,
    #[command(flatten)]
    schedule: ScheduleArgs,
    #[command(flatten)]
    stats: StatsArgs,
    #[command(flatten)]
    routing: super::args::RoutingArg,
    /// Read build records from these caches' builds/*/meta.json instead of --cache's; repeatable
    #[arg(long = "records", value_name = "CACHE_DIR")]
    records: Vec<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: PlanFormat,
}

impl PlanArgs {
    /// The searches asked for, each once, with their commits.
    fn searches(&self) -> Result<Vec<(Search, usize)>> {
        let asked = if self.search.is_empty() {
            vec![SearchArg::Scan, SearchArg::Bisect]
        } else {
            self.search.clone()
        };
        unique("search", &asked).map_err(anyhow::Error::msg)?;
        asked
            .into_iter()
            .map(|s| {
                let (search, default) = match s {
                    SearchArg::Scan => (
                        Search::Scan {
                            grid: self.grid.grid,
                        },
                        GOAL_COMMITS,
                    ),
                    SearchArg::Bisect => (Search::Bisect, 775),
                };
                let n = self.commits.unwrap_or(default);
                if matches!(search, Search::Scan { .. }) && n < self.grid.grid {
                    bail!(
                        "a scan of {n} commits cannot hold a grid of {}",
                        self.grid.grid
                    );
                }
                if n < 2 {
                    bail!("a bisect needs at least 2 commits, got {n}");
                }
                Ok((search, n))
            })
            .collect()
    }

    /// (build nodes, measurement nodes) of every row.
    fn fleets(&self) -> Result<Vec<(usize, usize)>> {
        let rows = self.nodes.0.len();
        let pick = |l: &Option<NodeList>, flag: &str| -> Result<Vec<usize>> {
            match l {
                None => Ok(self.nodes.0.clone()),
                Some(v) if v.0.len() == rows => Ok(v.0.clone()),
                Some(v) => bail!(
                    "{flag} lists {} count(s) for {rows} row(s) of --nodes: give one count per row",
                    v.0.len()
                ),
            }
        };
        let b = pick(&self.build_nodes, "--build-nodes")?;
        let m = pick(&self.measure_nodes, "--measure-nodes")?;
        let pairs: Vec<(usize, usize)> = b.into_iter().zip(m).collect();
        let shown: Vec<String> = pairs.iter().map(|(b, m)| format!("{b}+{m}")).collect();
        unique("fleet (build+measurement nodes)", &shown).map_err(anyhow::Error::msg)?;
        Ok(pairs)
    }

    fn ccaches(&self) -> Vec<Ccache> {
        match self.ccache {
            CcacheArg::Shared => vec![Ccache::Shared],
            CcacheArg::None => vec![Ccache::Local],
            CcacheArg::Both => vec![Ccache::Shared, Ccache::Local],
        }
    }

    fn machines(&self) -> Machines {
        match self.machines {
            MachinesArg::Shared => Machines::Shared,
            MachinesArg::Separate => Machines::Separate,
        }
    }

    /// Commits `search` probes per wave on `measure_nodes` nodes: a bisect's waves depend on
    /// the row.
    fn width(&self, search: Search, measure_nodes: usize) -> usize {
        match search {
            Search::Bisect => self.probes().width(measure_nodes),
            Search::Scan { .. } => 1,
        }
    }

    fn probes(&self) -> Probes {
        match self.bisect_probes {
            ProbesArg::PerNode => Probes::PerNode,
            ProbesArg::One => Probes::One,
        }
    }

    fn intervals(&self) -> Intervals {
        match self.intervals {
            IntervalsArg::Concurrent => Intervals::Concurrent,
            IntervalsArg::Sequential => Intervals::Sequential,
        }
    }

    fn fleet(&self, (b, m): (usize, usize), ccache: Ccache) -> Fleet {
        Fleet {
            build_nodes: b,
            measure_nodes: m,
            machines: self.machines(),
            ccache,
            intervals: self.intervals(),
            work_trees: self.work_trees,
        }
    }

    /// The simulated samples' noise and the trace it was fitted to (`None`: iid, `--noise`):
    /// by default this machine's recorded noise, not an idealised 3% (which made a 4,000-commit
    /// scan look four times cheaper than a search here is).
    fn noise(&self) -> Result<(NoiseModel, Option<String>)> {
        if let Some(cv) = self.noise {
            return Ok((NoiseModel::iid(cv), None));
        }
        let (text, path) = match &self.noise_from {
            Some(p) => (
                std::fs::read_to_string(p)
                    .with_context(|| format!("cannot read {}", p.display()))?,
                p.clone(),
            ),
            None => (DEFAULT_TRACE.1.to_string(), PathBuf::from(DEFAULT_TRACE.0)),
        };
        let (series, per_round, source) = super::simulate::series_of(&text, &path)?;
        let base = NoiseModel::iid(0.03);
        let fit = noise::fit(&series, per_round, noise::DEFAULT_PHI, &base, source)?;
        Ok((fit.model, Some(path.display().to_string())))
    }

    /// The search's statistics, as `bisect` and `scan` take them (every change is searched).
    fn config(&self) -> Config {
        Config {
            alpha: self.stats.alpha.alpha,
            min_effect: self.stats.min_effect,
            schedule: self.schedule.schedule(),
            max_changes: None,
            min_share: None,
            spread: bisect::Spread::Clock,
            tail: false,
            routing: self.routing.level(),
        }
    }

    fn shape(&self, commits: usize) -> Result<ShapeConfig> {
        let cfg = self.config();
        cfg.validate(commits)?;
        let steps = if self.steps.is_empty() {
            shape::default_steps(commits)
        } else {
            self.steps.clone()
        };
        for s in &steps {
            if let Some(at) = s.at {
                if at == 0 || at + s.spread.max(1) > commits {
                    bail!(
                        "step position {at} is outside 1..{} of a range of {commits} commits",
                        commits - 1
                    );
                }
            }
        }
        Ok(ShapeConfig {
            commits,
            steps,
            noise: self.noise()?.0,
            cfg,
            trials: self.trials,
            seed: self.seed,
            width: 1,
        })
    }
}

/// Every readable build record under `dirs` (each a cache: `DIR/builds/*/meta.json`), and how
/// many each held.
fn read_records(dirs: &[PathBuf]) -> Result<(Vec<BuildRecord>, Vec<RecordsRead>)> {
    let mut out = Vec::new();
    let mut read = Vec::new();
    for d in dirs {
        let before = out.len();
        if !d.is_dir() {
            bail!(
                "{} is not a directory (give a cache directory to --records)",
                d.display()
            );
        }
        if let Ok(entries) = std::fs::read_dir(d.join("builds")) {
            for e in entries.flatten() {
                // Staging and trash directories start with a dot.
                if e.file_name().to_string_lossy().starts_with('.') {
                    continue;
                }
                out.extend(read_record(&e.path().join("meta.json")));
            }
        }
        read.push(RecordsRead {
            dir: d.clone(),
            entries: out.len() - before,
        });
    }
    Ok((out, read))
}

/// One record, or none when its meta.json is missing or unreadable (a damaged entry says
/// nothing about build times).
fn read_record(path: &Path) -> Option<BuildRecord> {
    let meta: BuildMeta = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    Some(BuildRecord {
        duration_s: meta.duration_s,
        ccache_hit_rate: meta.ccache_hit_rate,
        incremental_files: meta.incremental.map(|i| i.written + i.removed),
        ok: meta.ok,
    })
}

/// The caches whose records are read.
fn record_dirs(g: &Global, a: &PlanArgs) -> Result<Vec<PathBuf>> {
    if !a.records.is_empty() {
        return Ok(a.records.clone());
    }
    Ok(vec![Cache::open(&g.cache())?.root])
}

/// A build cost: the flag, else the median of its class's records, else an error naming the
/// flag to give.
fn build_figure(
    given: Option<f64>,
    flag: &'static str,
    class: BuildClass,
    records: &[BuildRecord],
    dirs: &[PathBuf],
) -> Result<Figure> {
    if let Some(s) = given {
        return Ok(Figure {
            seconds: s,
            source: Source::Flag { flag },
        });
    }
    let name = match class {
        BuildClass::Cold => "cold build",
        BuildClass::WarmCcache => "warm-ccache build",
        BuildClass::Near => "near (incremental) build",
    };
    let Some(r) = fleet::recorded(records, class) else {
        let where_: Vec<String> = dirs
            .iter()
            .map(|d| d.join("builds").display().to_string())
            .collect();
        bail!(
            "no {name} recorded in {}: give {flag} SECONDS",
            where_.join(", ")
        );
    };
    Ok(Figure {
        seconds: r.median_s,
        source: Source::Records {
            class,
            recorded: r,
            dirs: dirs.to_vec(),
        },
    })
}

/// A figure given by `flag`, else perfbisect's measured default.
fn given_or_default(
    given: Option<f64>,
    flag: &'static str,
    default: f64,
    why: &'static str,
) -> Figure {
    match given {
        Some(s) => Figure {
            seconds: s,
            source: Source::Flag { flag },
        },
        None => Figure {
            seconds: default,
            source: Source::Default { why },
        },
    }
}

/// `--sample`, else `--duration` plus the per-sample overhead.
fn sample_figure(a: &PlanArgs) -> Figure {
    if let Some(s) = a.sample {
        return Figure {
            seconds: s,
            source: Source::Flag { flag: "--sample" },
        };
    }
    let overhead = given_or_default(
        a.sample_overhead,
        "--sample-overhead",
        SAMPLE_OVERHEAD_S,
        SAMPLE_OVERHEAD_WHY,
    );
    Figure {
        seconds: a.duration + overhead.seconds,
        source: Source::Duration {
            duration_s: a.duration,
            overhead_s: overhead.seconds,
            overhead: Box::new(overhead.source),
        },
    }
}

fn figures(g: &Global, a: &PlanArgs) -> Result<(Figures, Vec<RecordsRead>)> {
    let ccaches = a.ccaches();
    // Records are read only when a build cost the rows need is not given.
    let all_given = a.near_build.is_some()
        && (a.cold_build.is_some() || !ccaches.contains(&Ccache::Local))
        && (a.warm_build.is_some() || !ccaches.contains(&Ccache::Shared));
    let dirs = if all_given {
        Vec::new()
    } else {
        record_dirs(g, a)?
    };
    let (records, read) = read_records(&dirs)?;
    let build = |given, flag, class| build_figure(given, flag, class, &records, &dirs);
    let need = |c: Ccache, given, flag, class| -> Result<Option<Figure>> {
        if !ccaches.contains(&c) {
            return Ok(None);
        }
        build(given, flag, class).map(Some)
    };
    let figures = Figures {
        cold_build: need(
            Ccache::Local,
            a.cold_build,
            "--cold-build",
            BuildClass::Cold,
        )?,
        warm_build: need(
            Ccache::Shared,
            a.warm_build,
            "--warm-build",
            BuildClass::WarmCcache,
        )?,
        near_build: build(a.near_build, "--near-build", BuildClass::Near)?,
        sample: sample_figure(a),
        job_overhead: given_or_default(
            a.job_overhead,
            "--job-overhead",
            JOB_OVERHEAD_S,
            JOB_OVERHEAD_WHY,
        ),
    };
    Ok((figures, read))
}

fn costs(f: &Figures) -> Costs {
    // A cost no row uses is never read; NaN would show at once if one were.
    let or_nan = |x: &Option<Figure>| x.as_ref().map_or(f64::NAN, |x| x.seconds);
    Costs {
        cold_build: or_nan(&f.cold_build),
        warm_build: or_nan(&f.warm_build),
        near_build: f.near_build.seconds,
        sample: f.sample.seconds,
        job_overhead: f.job_overhead.seconds,
    }
}

fn summary(traces: &[Trace], steps: &[SimStep]) -> ShapeSummary {
    let of = |f: fn(&Trace) -> usize| {
        Spread::of(&traces.iter().map(|t| f(t) as f64).collect::<Vec<f64>>())
    };
    ShapeSummary {
        builds: of(Trace::builds),
        samples: of(Trace::samples),
        decisions: of(|t| t.decisions),
        intervals: of(|t| t.intervals),
        confirmed: of(|t| t.confirmed),
        all_confirmed: traces.iter().filter(|t| t.confirmed >= steps.len()).count() as f64
            / traces.len().max(1) as f64,
        steps: steps.to_vec(),
    }
}

/// The search's traces for each of `widths` (commits probed per wave), each simulated once.
fn traces_by_width(
    sc: &ShapeConfig,
    search: Search,
    widths: impl Iterator<Item = usize>,
) -> Result<BTreeMap<usize, Vec<Trace>>> {
    let mut by_width = BTreeMap::new();
    for w in widths {
        if let Entry::Vacant(e) = by_width.entry(w) {
            let sc = ShapeConfig {
                width: w,
                ..sc.clone()
            };
            let t = shape::traces(&sc, search)
                .with_context(|| format!("simulating a {}-commit search", sc.commits))?;
            e.insert(t);
        }
    }
    Ok(by_width)
}

pub fn run(g: &Global, a: PlanArgs) -> Result<Exit> {
    let searches = a.searches()?;
    let noise = a.noise()?;
    let fleets = a.fleets()?;
    let (figures, records) = figures(g, &a)?;
    let costs = costs(&figures);
    let mut plans = Vec::new();
    let mut goal = None;
    for (search, commits) in searches {
        let sc = a.shape(commits)?;
        let width = |m: usize| a.width(search, m);
        let widths = std::iter::once(1).chain(fleets.iter().map(|f| width(f.1)));
        let by_width = traces_by_width(&sc, search, widths)?;
        let traces = &by_width[&1];
        let rows = fleets
            .iter()
            .flat_map(|&f| a.ccaches().into_iter().map(move |c| (f, c)))
            .map(|(f, c)| fleet::predict(&by_width[&width(f.1)], &a.fleet(f, c), &costs))
            .collect();
        if matches!(search, Search::Scan { .. }) && commits == GOAL_COMMITS {
            // Whatever the rows: the goal is of 16 nodes that build and measure.
            let f = Fleet {
                machines: Machines::Shared,
                ..a.fleet((GOAL_NODES, GOAL_NODES), Ccache::Shared)
            };
            let found = summary(traces, &sc.steps).all_confirmed;
            goal = Some((fleet::predict(traces, &f, &costs), found));
        }
        plans.push(SearchPlan {
            search,
            commits,
            shape: summary(traces, &sc.steps),
            rows,
        });
    }
    let planned = Planned {
        records,
        figures,
        machines: a.machines(),
        intervals: a.intervals(),
        probes: a.probes(),
        work_trees: a.work_trees,
        simulated: Simulated {
            noise: noise.0,
            noise_from: noise.1,
            cfg: a.config(),
            trials: a.trials,
            seed: a.seed,
        },
        searches: plans,
        goal: Goal::new(GOAL_COMMITS, GOAL_NODES, GOAL_MINUTES, goal),
    };
    print!("{}", a.format.render(&planned)?);
    Ok(Exit::Done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        a: PlanArgs,
    }

    fn args(v: &[&str]) -> Result<PlanArgs, clap::Error> {
        Cmd::try_parse_from(std::iter::once("plan").chain(v.iter().copied())).map(|c| c.a)
    }

    #[test]
    fn bad_input_is_refused() {
        for bad in [
            &["--nodes", "4,4"][..],
            &["--nodes", "0"],
            &["--nodes", "x"],
            &["--search", "sort"],
            &["--commits", "0"],
            &["--trials", "0"],
            &["--cold-build", "0"],
            &["--job-overhead", "-1"],
        ] {
            assert!(args(bad).is_err(), "{bad:?}");
        }
        let e = |v: &[&str]| {
            let a = args(v).unwrap();
            a.searches()
                .and_then(|_| a.fleets())
                .unwrap_err()
                .to_string()
        };
        assert!(e(&["--search", "scan,scan"]).contains("search scan is listed twice"));
        assert!(e(&["--build-nodes", "1,2"]).contains("one count per row"));
        assert!(e(&[
            "--nodes",
            "1,2",
            "--build-nodes",
            "4,4",
            "--measure-nodes",
            "4,4"
        ])
        .contains("listed twice"));
        assert!(e(&["--search", "scan", "--commits", "10"]).contains("grid of 16"));
    }

    #[test]
    fn rows_pair_build_and_measurement_nodes() {
        let a = args(&["--nodes", "1,4", "--build-nodes", "2,8"]).unwrap();
        assert_eq!(a.fleets().unwrap(), vec![(2, 1), (8, 4)]);
        let a = args(&[]).unwrap();
        assert_eq!(a.fleets().unwrap(), vec![(1, 1), (4, 4), (16, 16)]);
        assert_eq!(
            a.searches().unwrap(),
            vec![(Search::Scan { grid: 16 }, 4000), (Search::Bisect, 775)]
        );
        let a = args(&["--step", "5%@9000", "--search", "bisect"]).unwrap();
        assert!(a.shape(775).unwrap_err().to_string().contains("outside"));
    }
}
