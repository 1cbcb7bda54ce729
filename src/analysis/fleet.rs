//! The fleet model behind `perfbisect plan`: how long a scan or a bisect takes on N build nodes
//! and M measurement nodes, from what one build and one sample cost on this machine and from the
//! shape of the search (its builds and blocks of samples, in order, recorded from the real search
//! on simulated commits: [`shape`]). Pure: no I/O, no clock.
//!
//! A search is a set of [`Chain`]s: sequences of [`Look`]s, each look a wave of builds followed by
//! one block of samples on one measurement node. A bisect is one chain; a scan is the grid (one
//! look: every grid point built in one wave, sampled in one block) and then one chain per grid
//! interval it searched, each free to run beside the others. [`wall_time`] plays the chains on
//! the fleet as an event simulation, every machine a queue:
//!
//! - a build node builds one commit at a time (`make -j` of its cores); a build goes to a node
//!   holding a work tree within [`NEAR_COMMITS`] of it when there is one (it costs the
//!   incremental time there, so a search's tree follows its probes), else to the node where it
//!   is done first, so the builds of one wave spread over the build nodes;
//! - a far build is cold without a shared ccache (the node's own ccache holds nothing of it) and
//!   costs the warm-ccache time with one;
//! - a measurement node takes one block at a time, and every block of one chain runs on the node
//!   its first block ran on (no test pools samples of two machines);
//! - every build and every block is one scheduler job, which costs the job overhead;
//! - on [`Machines::Shared`] nodes a machine runs one job at a time (measurement jobs are
//!   exclusive), so with one node nothing overlaps; on [`Machines::Separate`] nodes the search
//!   builds the commits it may probe next while the current one is measured (the search's
//!   prefetch hint), on build nodes that are idle.
//!
//! The placement is greedy, and a greedy schedule can get slower with more machines; a fleet
//! can always leave nodes idle, so [`predict`] takes the best play on the fleet or on a smaller
//! one ([`best_wall_time`]).

pub mod shape;

use crate::analysis::bisect;
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

/// A build this close (in first-parent commits) to a work tree continues that tree: the
/// builder's own threshold (`FAR_COMMITS` in build::builds), beyond which it starts afresh.
pub const NEAR_COMMITS: usize = 64;

/// An incremental build that rewrote at most this many files counts as a build near a tree. Here
/// builds that moved a tree by 1–45 files took 1–31 s; moves of 461–1,238 files (a release
/// apart) took 14–150 s, a far build's time, so they are left out of every class.
pub const NEAR_FILES: usize = 200;

/// Below this ccache hit rate a clean build is cold; from [`WARM_HIT_RATE`] on it is warm.
pub const COLD_HIT_RATE: f64 = 0.1;
pub const WARM_HIT_RATE: f64 = 0.5;

/// Whether the nodes share one ccache (a far build then finds most objects compiled).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Ccache {
    Shared,
    #[serde(rename = "none")]
    Local,
}

/// Whether build nodes and measurement nodes are the same machines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Machines {
    /// max(N, M) machines, each running one job at a time: a build never runs beside a
    /// measurement, and nothing is built ahead.
    Shared,
    /// N build machines and M other measurement machines: builds of the next probes run while
    /// the current probe is measured.
    Separate,
}

/// How a scan's grid intervals are searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Intervals {
    /// All at once, each on its own measurement node.
    Concurrent,
    /// One after another, as `scan` does today.
    Sequential,
}

/// How many commits a bisect probes per wave.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Probes {
    /// One per measurement node (at most [`bisect::WIDEST`]), each in a lane of its own, as a
    /// bisect through Slurm does.
    PerNode,
    /// One: a binary search (`--slurm-lanes 1`, or the local executor).
    One,
}

impl Probes {
    /// Commits per wave of a bisect on `measure_nodes` nodes (as the search takes them: at
    /// most [`bisect::WIDEST`]).
    pub fn width(self, measure_nodes: usize) -> usize {
        match self {
            Probes::PerNode => measure_nodes.clamp(1, bisect::WIDEST),
            Probes::One => 1,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Fleet {
    pub build_nodes: usize,
    pub measure_nodes: usize,
    pub machines: Machines,
    pub ccache: Ccache,
    pub intervals: Intervals,
    /// Work trees each build node keeps (`build --work-trees`).
    pub work_trees: usize,
}

/// Seconds from one block of a lane to its next, on the node the lane's job holds: the job
/// looks for a handed block every 0.1 s and the run reads answers every 0.2 s (node.rs,
/// slurm/mod.rs), no queue between them. Until 35f9a7d the model charged a whole job overhead
/// per block, as when every block was a job of its own.
pub const HAND_OFF: f64 = 0.3;

/// Seconds each unit of work takes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Costs {
    /// A clean build with an empty (or useless) ccache.
    pub cold_build: f64,
    /// A clean build whose objects are nearly all in ccache.
    pub warm_build: f64,
    /// A build that continues a work tree within [`NEAR_COMMITS`].
    pub near_build: f64,
    /// One sample: its duration plus the fresh process's overhead.
    pub sample: f64,
    /// Submitting a job until it runs: per build, and per measurement lane (a chain's first
    /// block; the lane's job then holds its node, and each later block costs [`HAND_OFF`]).
    pub job_overhead: f64,
}

impl Costs {
    fn far_build(&self, ccache: Ccache) -> f64 {
        match ccache {
            Ccache::Shared => self.warm_build,
            Ccache::Local => self.cold_build,
        }
    }
}

/// One call of the search for samples: the commits of one block (those not built yet are built
/// first, in one wave), the commits it may probe next, and the samples the block takes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Look {
    pub commits: Vec<usize>,
    /// Built ahead on separate build machines while this block is measured.
    pub prefetch: Vec<usize>,
    pub samples: usize,
}

/// Looks that follow one another: each needs the answer of the one before.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Chain {
    pub looks: Vec<Look>,
    /// The chains that must all be done before this one starts (a scan's grid; for an interval
    /// entered as a fallback, the neighbour whose ends turned out equal; for a bisect's wave,
    /// every lane of the wave before it).
    pub after: Vec<usize>,
}

/// What one search did, in the order it did it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Trace {
    pub chains: Vec<Chain>,
    /// Sequential decisions the search made.
    pub decisions: usize,
    /// Grid intervals a scan searched (0 for a bisect).
    pub intervals: usize,
    /// Change points the search confirmed: beside its cost, whether it found the steps at all
    /// (a search that cannot resolve them at this noise ends early, and cheaply).
    pub confirmed: usize,
}

impl Trace {
    /// Distinct commits built.
    pub fn builds(&self) -> usize {
        let mut all: Vec<usize> = self
            .looks()
            .flat_map(|l| l.commits.iter().copied())
            .collect();
        all.sort_unstable();
        all.dedup();
        all.len()
    }

    pub fn samples(&self) -> usize {
        self.looks().map(|l| l.samples).sum()
    }

    /// More nodes than this can never all be busy: one per build (those built ahead included)
    /// and one per chain's blocks.
    fn most_nodes(&self) -> usize {
        let mut all: Vec<usize> = self
            .looks()
            .flat_map(|l| l.commits.iter().chain(&l.prefetch).copied())
            .collect();
        all.sort_unstable();
        all.dedup();
        all.len() + self.chains.len()
    }

    fn looks(&self) -> impl Iterator<Item = &Look> {
        self.chains.iter().flat_map(|c| c.looks.iter())
    }

    /// The same work with a scan's intervals searched one after another (in the order the scan
    /// searched them), as today's `scan` does.
    pub fn sequential(&self) -> Trace {
        let mut t = self.clone();
        for i in 1..t.chains.len() {
            if !t.chains[i].after.is_empty() {
                t.chains[i].after = vec![i - 1];
            }
        }
        t
    }
}

/// What one play of a trace on a fleet gave.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Played {
    pub wall_s: f64,
    /// Builds made, those built ahead and never probed included.
    pub builds_made: usize,
}

struct Machine {
    builds: bool,
    measures: bool,
    free_at: f64,
    /// The commit each work tree holds.
    trees: Vec<usize>,
    /// Chains whose blocks run here and are not done.
    pinned: usize,
}

/// The fleet's machines and what has been built, as time goes on.
struct Floor<'a> {
    fleet: &'a Fleet,
    costs: &'a Costs,
    /// Whether the search's next probes are built while it measures.
    prefetch: bool,
    machines: Vec<Machine>,
    /// When each commit handed to a build node is built.
    built: HashMap<usize, f64>,
}

impl<'a> Floor<'a> {
    fn new(fleet: &'a Fleet, costs: &'a Costs, prefetch: bool) -> Floor<'a> {
        let (n, m) = (fleet.build_nodes.max(1), fleet.measure_nodes.max(1));
        let machine = |builds, measures| Machine {
            builds,
            measures,
            free_at: 0.0,
            trees: Vec::new(),
            pinned: 0,
        };
        let machines = match fleet.machines {
            Machines::Shared => (0..n.max(m)).map(|i| machine(i < n, i < m)).collect(),
            Machines::Separate => (0..n)
                .map(|_| machine(true, false))
                .chain((0..m).map(|_| machine(false, true)))
                .collect(),
        };
        Floor {
            fleet,
            costs,
            prefetch,
            machines,
            built: HashMap::new(),
        }
    }

    /// Whether build node `m` holds a work tree the build of `c` continues.
    fn near(&self, m: usize, c: usize) -> bool {
        self.machines[m]
            .trees
            .iter()
            .any(|&t| t.abs_diff(c) <= NEAR_COMMITS)
    }

    fn build_cost(&self, m: usize, c: usize) -> f64 {
        if self.near(m, c) {
            self.costs.near_build
        } else {
            self.costs.far_build(self.fleet.ccache)
        }
    }

    /// The tree the builder moves to `c`: a near one, else a free slot, else the nearest.
    fn move_tree(&mut self, m: usize, c: usize) {
        let slots = self.fleet.work_trees.max(1);
        let trees = &mut self.machines[m].trees;
        let nearest = trees
            .iter()
            .enumerate()
            .min_by_key(|(_, &t)| t.abs_diff(c))
            .map(|(i, &t)| (i, t.abs_diff(c)));
        match nearest {
            Some((i, d)) if d <= NEAR_COMMITS || trees.len() >= slots => trees[i] = c,
            _ => trees.push(c),
        }
    }

    /// When `c` would be built on build node `m`, handed out at `at`.
    fn finish_on(&self, m: usize, c: usize, at: f64) -> f64 {
        self.machines[m].free_at.max(at) + self.costs.job_overhead + self.build_cost(m, c)
    }

    /// The build node for `c`: one holding a tree near it if any (the one done first; waiting
    /// for it rather than building far elsewhere, so a search's tree follows its probes), else
    /// the node where it would be done first.
    fn place(&self, c: usize, at: f64) -> usize {
        (0..self.machines.len())
            .filter(|&i| self.machines[i].builds)
            .min_by(|&a, &b| {
                (self.near(b, c).cmp(&self.near(a, c)))
                    .then(
                        self.finish_on(a, c, at)
                            .total_cmp(&self.finish_on(b, c, at)),
                    )
                    .then(a.cmp(&b))
            })
            .expect("a fleet has a build node")
    }

    /// Whether a build node is idle at `at`.
    fn idle_builder(&self, at: f64) -> bool {
        self.machines.iter().any(|m| m.builds && m.free_at <= at)
    }

    /// Hands `c` to a build node (once: a commit built or being built is not built again);
    /// returns when it is built.
    fn build(&mut self, c: usize, at: f64) -> f64 {
        if let Some(&t) = self.built.get(&c) {
            return t;
        }
        let m = self.place(c, at);
        let end = self.finish_on(m, c, at);
        self.machines[m].free_at = end;
        self.move_tree(m, c);
        self.built.insert(c, end);
        end
    }

    /// The measurement node a chain's first block takes: the one fewest chains measure on (each
    /// interval on its own node while there are enough), and of those the one free first.
    fn pick_measurer(&self, at: f64) -> usize {
        (0..self.machines.len())
            .filter(|&i| self.machines[i].measures)
            .min_by(|&a, &b| {
                let (ma, mb) = (&self.machines[a], &self.machines[b]);
                (ma.pinned.cmp(&mb.pinned))
                    .then(ma.free_at.max(at).total_cmp(&mb.free_at.max(at)))
                    .then(a.cmp(&b))
            })
            .expect("a fleet has a measurement node")
    }

    /// One block of `samples` on the chain's node; returns when it is done.
    fn block(&mut self, samples: usize, at: f64, node: &mut Option<usize>) -> f64 {
        if samples == 0 {
            // Every sample was there already: the engine submits no job.
            return at;
        }
        let (m, overhead) = match *node {
            Some(m) => (m, HAND_OFF),
            None => {
                let m = self.pick_measurer(at);
                self.machines[m].pinned += 1;
                *node = Some(m);
                (m, self.costs.job_overhead)
            }
        };
        let start = self.machines[m].free_at.max(at);
        let end = start + overhead + samples as f64 * self.costs.sample;
        self.machines[m].free_at = end;
        end
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    Build,
    Block,
}

/// Something that happens at a time: the next phase of a chain. Earliest first, then in the
/// order they were made (so equal times keep the order of submission, as a queue does).
#[derive(Clone, Copy, Debug)]
struct Event {
    at: f64,
    seq: u64,
    chain: usize,
    phase: Phase,
}

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Event {
    // Reversed: BinaryHeap pops the greatest, the earliest event must come first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.at.total_cmp(&self.at).then(o.seq.cmp(&self.seq))
    }
}

/// Where each chain is.
#[derive(Default, Clone)]
struct Progress {
    look: usize,
    /// Its measurement node.
    node: Option<usize>,
}

/// How a fleet runs a search.
#[derive(Clone, Copy, Debug, PartialEq)]
struct How {
    intervals: Intervals,
    /// Build the next probes while measuring (on by default where builds run apart).
    prefetch: bool,
}

impl How {
    fn of(f: &Fleet) -> How {
        How {
            intervals: f.intervals,
            prefetch: f.machines == Machines::Separate,
        }
    }

    /// What the fleet may do instead: search the intervals one after another (on few nodes,
    /// concurrent searches only take each other's work trees), and not build ahead (with few
    /// build nodes a build nobody needs can hold back the one that is).
    fn choices(f: &Fleet) -> Vec<How> {
        let mut v = vec![How::of(f)];
        for h in [
            How {
                intervals: Intervals::Sequential,
                ..How::of(f)
            },
            How {
                prefetch: false,
                ..How::of(f)
            },
            How {
                intervals: Intervals::Sequential,
                prefetch: false,
            },
        ] {
            if !v.contains(&h) {
                v.push(h);
            }
        }
        v
    }
}

/// Plays `trace` on `fleet` as configured: the wall time from the first build to the last
/// sample.
pub fn wall_time(trace: &Trace, fleet: &Fleet, costs: &Costs) -> Played {
    play(trace, fleet, costs, How::of(fleet))
}

fn play(trace: &Trace, fleet: &Fleet, costs: &Costs, how: How) -> Played {
    let trace = match how.intervals {
        Intervals::Concurrent => trace.clone(),
        Intervals::Sequential => trace.sequential(),
    };
    let mut floor = Floor::new(fleet, costs, how.prefetch);
    let mut progress = vec![Progress::default(); trace.chains.len()];
    // Per chain, the chains it still waits for.
    let mut waits: Vec<usize> = trace.chains.iter().map(|c| c.after.len()).collect();
    let mut queue = BinaryHeap::new();
    let mut seq = 0;
    let mut push = |q: &mut BinaryHeap<Event>, at, chain, phase| {
        seq += 1;
        q.push(Event {
            at,
            seq,
            chain,
            phase,
        });
    };
    for (i, c) in trace.chains.iter().enumerate() {
        if c.after.is_empty() {
            push(&mut queue, 0.0, i, Phase::Build);
        }
    }
    let mut wall: f64 = 0.0;
    while let Some(e) = queue.pop() {
        let chain = &trace.chains[e.chain];
        let Some(look) = chain.looks.get(progress[e.chain].look) else {
            continue;
        };
        match e.phase {
            Phase::Build => {
                let ready = build_look(&mut floor, look, e.at);
                push(&mut queue, ready, e.chain, Phase::Block);
            }
            Phase::Block => {
                let p = &mut progress[e.chain];
                let end = floor.block(look.samples, e.at, &mut p.node);
                p.look += 1;
                wall = wall.max(end);
                if p.look < chain.looks.len() {
                    push(&mut queue, end, e.chain, Phase::Build);
                    continue;
                }
                if let Some(m) = p.node {
                    floor.machines[m].pinned -= 1;
                }
                // The last chain a chain waits for ends last: it starts now.
                for (j, c) in trace.chains.iter().enumerate() {
                    if c.after.contains(&e.chain) {
                        waits[j] -= 1;
                        if waits[j] == 0 {
                            push(&mut queue, end, j, Phase::Build);
                        }
                    }
                }
            }
        }
    }
    Played {
        wall_s: wall,
        builds_made: floor.built.len(),
    }
}

/// The builds a look waits for, handed out at `at`; returns when the last is built. On separate
/// machines the commits it may probe next go out first, as the search asks for them before it
/// measures this one, but only to build nodes that are idle: building ahead never holds back a
/// build that is needed now.
fn build_look(floor: &mut Floor, look: &Look, at: f64) -> f64 {
    if floor.prefetch {
        for &c in &look.prefetch {
            if floor.idle_builder(at) {
                floor.build(c, at);
            }
        }
    }
    look.commits
        .iter()
        .map(|&c| floor.build(c, at))
        .fold(at, f64::max)
}

/// The q-quantile (0..=1) of `v`, linearly interpolated between order statistics; NaN when
/// empty.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return f64::NAN;
    }
    s.sort_by(f64::total_cmp);
    let pos = q.clamp(0.0, 1.0) * (s.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
}

/// Median and 90th percentile of a distribution over trials.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Spread {
    pub median: f64,
    pub p90: f64,
}

impl Spread {
    pub fn of(v: &[f64]) -> Spread {
        Spread {
            median: quantile(v, 0.5),
            p90: quantile(v, 0.9),
        }
    }
}

/// A search's predicted wall time on one fleet, over the trials' traces.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Prediction {
    pub fleet: Fleet,
    pub wall_s: Spread,
    pub builds_made: Spread,
    /// Samples per trial (a bisect's waves take more than one probe at a time).
    pub samples: Spread,
}

/// The fastest play of `trace` on `fleet` or on a smaller fleet (k build and k measurement
/// nodes, at most the fleet's), run as configured or in a way the fleet may choose instead
/// ([`How::choices`]): a fleet can always leave nodes idle, while a greedy placement, like any
/// list schedule, can get slower with more machines (here by scattering a search's work trees
/// over more nodes). Beyond the nodes a search can ever keep busy, more change nothing, so the
/// smaller fleets stop there.
pub fn best_wall_time(trace: &Trace, fleet: &Fleet, costs: &Costs) -> Played {
    let top = fleet
        .build_nodes
        .max(fleet.measure_nodes)
        .min(trace.most_nodes());
    let fleets = (1..=top)
        .map(|k| Fleet {
            build_nodes: k.min(fleet.build_nodes),
            measure_nodes: k.min(fleet.measure_nodes),
            ..*fleet
        })
        .chain(std::iter::once(*fleet));
    let hows = How::choices(fleet);
    fleets
        .flat_map(|f| hows.iter().map(move |&h| (f, h)))
        .map(|(f, h)| play(trace, &f, costs, h))
        .min_by(|a, b| a.wall_s.total_cmp(&b.wall_s))
        .expect("at least the fleet itself")
}

pub fn predict(traces: &[Trace], fleet: &Fleet, costs: &Costs) -> Prediction {
    let played: Vec<Played> = traces
        .iter()
        .map(|t| best_wall_time(t, fleet, costs))
        .collect();
    let walls: Vec<f64> = played.iter().map(|p| p.wall_s).collect();
    let builds: Vec<f64> = played.iter().map(|p| p.builds_made as f64).collect();
    let samples: Vec<f64> = traces.iter().map(|t| t.samples() as f64).collect();
    Prediction {
        fleet: *fleet,
        wall_s: Spread::of(&walls),
        builds_made: Spread::of(&builds),
        samples: Spread::of(&samples),
    }
}

/// What a build's record says about its cost, as far as the model needs.
#[derive(Clone, Debug, PartialEq)]
pub struct BuildRecord {
    pub duration_s: f64,
    pub ccache_hit_rate: Option<f64>,
    /// Files written and removed to move a work tree, when the build continued one.
    pub incremental_files: Option<usize>,
    pub ok: bool,
}

/// Which of the model's build costs a record measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum BuildClass {
    Cold,
    WarmCcache,
    Near,
}

impl BuildClass {
    /// Which build a record is, or none: a failed build, a clean build with a ccache partly
    /// warm, or an incremental one that moved its tree far (neither near nor clean).
    pub fn of(r: &BuildRecord) -> Option<BuildClass> {
        if !r.ok || !r.duration_s.is_finite() {
            return None;
        }
        match (r.incremental_files, r.ccache_hit_rate) {
            (Some(files), _) => (files <= NEAR_FILES).then_some(BuildClass::Near),
            (None, None) => Some(BuildClass::Cold),
            (None, Some(h)) if h < COLD_HIT_RATE => Some(BuildClass::Cold),
            (None, Some(h)) if h >= WARM_HIT_RATE => Some(BuildClass::WarmCcache),
            (None, Some(_)) => None,
        }
    }
}

/// The median of one class's records, and what it rests on.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Recorded {
    pub median_s: f64,
    pub records: usize,
    pub min_s: f64,
    pub max_s: f64,
}

pub fn recorded(records: &[BuildRecord], class: BuildClass) -> Option<Recorded> {
    let v: Vec<f64> = records
        .iter()
        .filter(|r| BuildClass::of(r) == Some(class))
        .map(|r| r.duration_s)
        .collect();
    if v.is_empty() {
        return None;
    }
    Some(Recorded {
        median_s: quantile(&v, 0.5),
        records: v.len(),
        min_s: v.iter().copied().fold(f64::INFINITY, f64::min),
        max_s: v.iter().copied().fold(0.0, f64::max),
    })
}

#[cfg(test)]
mod tests;
