//! The shape of a search, taken from the real search rather than from a formula: the pure bisect
//! ([`bisect::search`]) or scan ([`scan::scan`]) runs on simulated commits
//! ([`SimMeasurer`]) behind a measurer that records every call for samples as a [`Look`]: which
//! commits it measured (the first time a commit appears it is built), what the search said it may
//! probe next ([`Measurer::prefetch`]), and how many samples the block took. A scan's looks are then split into the grid and one
//! [`Chain`] per searched interval.

use super::{Chain, Look, Trace};
use crate::analysis::bisect::{self, Config, Measurer, Outcome, Probe, SeriesProbes};
use crate::analysis::scan::{self, ScanResult};
use crate::analysis::simulate::noise::NoiseModel;
use crate::analysis::simulate::{SimMeasurer, SimStep};
use anyhow::{bail, Result};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Which search to shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Search {
    /// A grid of this many points, then a search of every interval that moved.
    Scan {
        grid: usize,
    },
    Bisect,
}

/// The simulated history and the search's statistics.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShapeConfig {
    pub commits: usize,
    /// Steps of the per-commit mean; those without a place get a random one per trial.
    pub steps: Vec<SimStep>,
    /// The samples' noise.
    pub noise: NoiseModel,
    pub cfg: Config,
    pub trials: usize,
    pub seed: u64,
    /// Commits a bisect probes per wave: one per measurement node (1: a binary search). A scan
    /// searches its intervals one probe at a time, each on a node of its own.
    pub width: usize,
}

/// One 10% step per thousand commits (at least one): the default history of a plan.
pub fn default_steps(commits: usize) -> Vec<SimStep> {
    let k = ((commits as f64 / 1000.0).round() as usize).max(1);
    (0..k).map(|_| SimStep::at(0.10, None)).collect()
}

/// Records every call for samples the search makes, as chains: the search's own looks, and each
/// lane's looks in a wave (which wait for everything before the wave and run beside each other).
struct Recorder {
    inner: SimMeasurer,
    /// Samples seen per commit, and per (lane, commit).
    seen: HashMap<usize, usize>,
    lane_seen: HashMap<(usize, usize), usize>,
    chains: Vec<Chain>,
    /// The chain the search's own looks go to, since the last wave.
    main: Option<usize>,
    /// The latest wave's chain of each lane, and what that wave waited for.
    wave: BTreeMap<usize, usize>,
    wave_after: Vec<usize>,
    /// Each lane's block in flight: its chain and look.
    flying: HashMap<usize, (usize, usize)>,
    /// The commits the search said it may probe next, for the look that comes next.
    hinted: Vec<usize>,
}

impl Recorder {
    fn new(inner: SimMeasurer) -> Recorder {
        Recorder {
            inner,
            seen: HashMap::new(),
            lane_seen: HashMap::new(),
            chains: Vec::new(),
            main: None,
            wave: BTreeMap::new(),
            wave_after: Vec::new(),
            flying: HashMap::new(),
            hinted: Vec::new(),
        }
    }

    /// A look of `wants`, carrying the hints given since the last look (those it builds
    /// itself left out: a probe's own build is the look's).
    fn look(&mut self, wants: &[(usize, usize)]) -> Look {
        let commits: Vec<usize> = wants.iter().map(|w| w.0).collect();
        let hinted = std::mem::take(&mut self.hinted);
        Look {
            prefetch: hinted
                .into_iter()
                .filter(|c| !commits.contains(c))
                .collect(),
            commits,
            samples: 0,
        }
    }

    fn chain(&mut self, after: Vec<usize>) -> usize {
        self.chains.push(Chain {
            looks: Vec::new(),
            after,
        });
        self.chains.len() - 1
    }

    /// The chain lane `lane`'s block of `commits` belongs to: its own, for the next look at the
    /// same commits; else a new one, of the wave being started (which waits for the search's
    /// own looks since the last wave, or else for the whole last wave).
    fn lane_chain(&mut self, lane: usize, commits: &[usize]) -> usize {
        if let (None, Some(&c)) = (self.main, self.wave.get(&lane)) {
            if self.chains[c]
                .looks
                .last()
                .is_some_and(|l| l.commits == commits)
            {
                return c;
            }
        }
        if self.main.is_some() || self.wave.contains_key(&lane) {
            self.wave_after = match self.main.take() {
                Some(m) => vec![m],
                None => self.wave.values().copied().collect(),
            };
            self.wave.clear();
        }
        let c = self.chain(self.wave_after.clone());
        self.wave.insert(lane, c);
        c
    }

    /// Every look, in order, of a search that used no lane (a scan).
    fn looks(self) -> Vec<Look> {
        self.chains.into_iter().flat_map(|c| c.looks).collect()
    }
}

/// Samples in `probes` of `commits` beyond those `seen` holds under each one's `key` (updated).
fn new_samples<K: std::hash::Hash + Eq>(
    commits: &[usize],
    probes: &[Probe],
    seen: &mut HashMap<K, usize>,
    key: impl Fn(usize) -> K,
) -> usize {
    let mut samples = 0;
    for (&c, p) in commits.iter().zip(probes) {
        if let Probe::Samples(v) = p {
            let s = seen.entry(key(c)).or_insert(0);
            samples += v.len().saturating_sub(*s);
            *s = (*s).max(v.len());
        }
    }
    samples
}

impl Measurer for Recorder {
    fn used(&mut self) -> &mut crate::analysis::bisect::Used {
        self.inner.used()
    }
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        let probes = self.inner.ensure(wants)?;
        let mut look = self.look(wants);
        look.samples = new_samples(&look.commits, &probes, &mut self.seen, |c| c);
        let main = match self.main {
            Some(m) => m,
            None => {
                let m = self.chain(self.wave.values().copied().collect());
                self.main = Some(m);
                m
            }
        };
        self.chains[main].looks.push(look);
        Ok(probes)
    }

    /// The search names the probes it is about to measure, then what it may probe next: the
    /// next look carries the guesses.
    fn prefetch(&mut self, commits: &[usize]) {
        self.hinted = commits.to_vec();
    }

    /// A wave's candidates, about to be measured: needed now, not guesses.
    fn prepare_all(&mut self, commits: &[usize]) -> Result<()> {
        self.hinted.retain(|c| !commits.contains(c));
        Ok(())
    }

    fn lanes(&self) -> usize {
        self.inner.lanes()
    }

    fn start_lane(&mut self, lane: usize, wants: &[(usize, usize)]) -> Result<()> {
        let look = self.look(wants);
        let c = self.lane_chain(lane, &look.commits);
        self.chains[c].looks.push(look);
        self.flying
            .insert(lane, (c, self.chains[c].looks.len() - 1));
        self.inner.start_lane(lane, wants)
    }

    fn next_lane(&mut self) -> Result<(usize, SeriesProbes)> {
        let (lane, probes) = self.inner.next_lane()?;
        let Some((c, l)) = self.flying.remove(&lane) else {
            bail!("lane {lane} answered with no block in flight");
        };
        let firsts: Vec<Probe> = probes.iter().filter_map(|p| p.first().cloned()).collect();
        let look = &mut self.chains[c].looks[l];
        look.samples = new_samples(&look.commits, &firsts, &mut self.lane_seen, |x| (lane, x));
        Ok((lane, probes))
    }
}

/// Places the steps for one trial: given places kept, the others drawn (distinct).
fn place(commits: usize, steps: &[SimStep], rng: &mut StdRng) -> Vec<(usize, f64)> {
    let mut used: Vec<usize> = steps.iter().filter_map(|s| s.at).collect();
    let mut factors = Vec::new();
    for s in steps {
        let k = s.spread.max(1);
        let at = s.at.unwrap_or_else(|| {
            let hi = commits.saturating_sub(k).max(2);
            // A few tries for a free place; a clash only merges two steps.
            let mut a = rng.gen_range(1..hi);
            for _ in 0..100 {
                if !used.contains(&a) {
                    break;
                }
                a = rng.gen_range(1..hi);
            }
            used.push(a);
            a
        });
        let each = (1.0 + s.effect).powf(1.0 / k as f64);
        factors.extend((at..at + k).map(|p| (p, each)));
    }
    factors
}

/// One trial of one search.
pub fn trace(sc: &ShapeConfig, search: Search, trial: usize) -> Result<Trace> {
    let mut rng = StdRng::seed_from_u64(sc.seed.wrapping_add(trial as u64 * 0x9E37_79B9));
    let factors = place(sc.commits, &sc.steps, &mut rng);
    let inner = SimMeasurer::new(sc.commits, &factors, &sc.noise, 0.0, rng.gen())?;
    match search {
        Search::Bisect => {
            let mut rec = Recorder::new(inner.with_lanes(sc.width.max(1)));
            let r = bisect::search(sc.commits, &sc.cfg, &mut rec)?;
            let confirmed = match &r.outcome {
                Outcome::Changes(v) => v.iter().filter(|c| c.confirmed).count(),
                _ => 0,
            };
            Ok(Trace {
                chains: rec.chains,
                decisions: r.decisions,
                intervals: 0,
                confirmed,
            })
        }
        Search::Scan { grid } => {
            let mut rec = Recorder::new(inner);
            let r = scan::scan(&scan::grid_positions(sc.commits, grid), &sc.cfg, &mut rec)?;
            split_scan(rec.looks(), &r)
        }
    }
}

/// Every trial of one search.
pub fn traces(sc: &ShapeConfig, search: Search) -> Result<Vec<Trace>> {
    (0..sc.trials).map(|i| trace(sc, search, i)).collect()
}

/// A scan's looks as chains: the grid (the first look), then one chain per searched interval in
/// the order the scan searched them. The scan searches one interval at a time and each search
/// starts with its interval's two ends, so a look belongs to the chain before it while it stays
/// inside that interval, and otherwise starts the chain of the one interval holding it.
fn split_scan(looks: Vec<Look>, r: &ScanResult) -> Result<Trace> {
    let mut looks = looks.into_iter();
    let Some(grid) = looks.next() else {
        bail!("the scan measured nothing");
    };
    let intervals = &r.grid.intervals;
    let holds = |i: usize, l: &Look| {
        l.commits
            .iter()
            .all(|&c| intervals[i].lo <= c && c <= intervals[i].hi)
    };
    let mut chains = vec![Chain {
        looks: vec![grid],
        after: Vec::new(),
    }];
    // The interval of each chain after the grid.
    let mut of: Vec<usize> = Vec::new();
    for l in looks {
        match of.last() {
            Some(&i) if holds(i, &l) => chains.last_mut().expect("a chain").looks.push(l),
            _ => {
                let Some(i) =
                    (0..intervals.len()).find(|&i| intervals[i].search.is_some() && holds(i, &l))
                else {
                    bail!(
                        "a look of the scan lies in no searched interval: {:?}",
                        l.commits
                    );
                };
                of.push(i);
                chains.push(Chain {
                    looks: vec![l],
                    after: vec![0],
                });
            }
        }
    }
    set_fallback_order(&mut chains, &of, r);
    let decisions = 1 + intervals
        .iter()
        .filter_map(|i| i.search.as_ref())
        .map(|s| s.decisions)
        .sum::<usize>();
    Ok(Trace {
        intervals: of.len(),
        chains,
        decisions,
        confirmed: r.changes.iter().filter(|c| c.cp.confirmed).count(),
    })
}

/// An interval entered as a fallback waits for the neighbour whose ends turned out equal: the
/// scan enters it only then.
fn set_fallback_order(chains: &mut [Chain], of: &[usize], r: &ScanResult) {
    let intervals = &r.grid.intervals;
    for (k, &i) in of.iter().enumerate() {
        if !intervals[i].fallback {
            continue;
        }
        let trigger = of.iter().position(|&j| {
            j.abs_diff(i) == 1
                && !intervals[j].fallback
                && intervals[j]
                    .search
                    .as_ref()
                    .is_some_and(|s| s.outcome == Outcome::NoChange)
        });
        if let Some(t) = trigger {
            chains[k + 1].after = vec![t + 1];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sc(commits: usize, steps: Vec<SimStep>) -> ShapeConfig {
        ShapeConfig {
            commits,
            steps,
            noise: NoiseModel::iid(0.03),
            cfg: Config::default(),
            trials: 4,
            seed: 1,
            width: 1,
        }
    }

    #[test]
    fn a_bisect_is_one_chain_from_its_two_ends() {
        let t = trace(&sc(775, default_steps(775)), Search::Bisect, 0).unwrap();
        assert_eq!(t.chains.len(), 1);
        let first = &t.chains[0].looks[0];
        assert_eq!(first.commits, vec![0, 774]);
        // ~log2(775) probes, each built once, plus the ends
        assert!((8..40).contains(&t.builds()), "{}", t.builds());
        assert!(t.decisions >= 10 && t.samples() > 100, "{t:?}");
        // a candidate's first look hints at the middles of both halves
        let cand = t.chains[0]
            .looks
            .iter()
            .find(|l| l.commits.len() == 3)
            .unwrap();
        let (c, lo, hi) = (cand.commits[0], cand.commits[1], cand.commits[2]);
        assert_eq!(cand.prefetch, vec![lo + (c - lo) / 2, c + (hi - c) / 2]);
    }

    #[test]
    fn a_bisect_on_four_nodes_is_waves_of_four_chains_side_by_side() {
        let sc = ShapeConfig {
            width: 4,
            ..sc(775, default_steps(775))
        };
        let t = trace(&sc, Search::Bisect, 0).unwrap();
        // The ends first, on their own.
        assert_eq!(t.chains[0].looks[0].commits, vec![0, 774]);
        assert!(t.chains[0].after.is_empty());
        // Then the first wave: four lanes, each a candidate with the ends, waiting for the
        // ends' chain, the first carrying the hints for the next wave.
        let wave: Vec<&Chain> = t.chains.iter().filter(|c| c.after == [0]).collect();
        assert_eq!(wave.len(), 4, "{t:?}");
        let firsts: Vec<usize> = wave.iter().map(|c| c.looks[0].commits[0]).collect();
        assert_eq!(firsts, vec![154, 309, 464, 619]);
        assert!(wave.iter().all(|c| c.looks[0].commits[1..] == [0, 774]));
        assert_eq!(wave[0].looks[0].prefetch.len(), 5, "{:?}", wave[0].looks[0]);
        // Every later chain waits for chains before it; no chain waits for itself.
        for (i, c) in t.chains.iter().enumerate().skip(1) {
            assert!(
                !c.after.is_empty() && c.after.iter().all(|&a| a < i),
                "{i}: {c:?}"
            );
        }
        // A wave of four cuts the range into five: ceil(log5 775) = 5 waves, not 10 probes.
        let waves: std::collections::BTreeSet<&Vec<usize>> = t.chains[1..]
            .iter()
            .filter(|c| c.looks[0].commits.len() == 3)
            .map(|c| &c.after)
            .collect();
        assert!(
            (4..=7).contains(&waves.len()),
            "{} waves: {t:?}",
            waves.len()
        );
    }

    #[test]
    fn a_scan_is_its_grid_then_one_chain_per_searched_interval() {
        let steps = vec![SimStep::at(0.1, Some(1000)), SimStep::at(0.1, Some(3000))];
        let t = trace(&sc(4000, steps), Search::Scan { grid: 16 }, 0).unwrap();
        let grid = &t.chains[0].looks;
        assert_eq!(grid.len(), 1);
        assert_eq!(grid[0].commits, scan::grid_positions(4000, 16));
        assert_eq!(grid[0].samples, 16 * 10);
        assert!(t.intervals >= 2, "{t:?}");
        assert_eq!(t.chains.len(), t.intervals + 1);
        for c in &t.chains[1..] {
            let lo = c.looks.iter().flat_map(|l| &l.commits).min().unwrap();
            let hi = c.looks.iter().flat_map(|l| &l.commits).max().unwrap();
            assert!(hi - lo <= 4000 / 15 + 1, "a chain spans {lo}..{hi}");
            assert!(!c.after.is_empty());
        }
        // the steps lie in searched intervals
        for s in [1000, 3000] {
            assert!(t.chains[1..].iter().any(|c| c
                .looks
                .iter()
                .flat_map(|l| &l.commits)
                .any(|&x| x.abs_diff(s) <= 1)));
        }
    }

    #[test]
    fn trials_differ_and_repeat() {
        let c = sc(500, default_steps(500));
        let a = traces(&c, Search::Bisect).unwrap();
        assert_eq!(a, traces(&c, Search::Bisect).unwrap());
        assert!(a.windows(2).any(|w| w[0] != w[1]));
        assert_eq!(default_steps(4000).len(), 4);
        assert_eq!(default_steps(775).len(), 1);
    }
}
