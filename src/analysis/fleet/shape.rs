//! The shape of a search, taken from the real search rather than from a formula: the pure bisect
//! ([`bisect::search`]) or scan ([`scan::scan`]) runs on simulated commits
//! ([`SimMeasurer`]) behind a measurer that records every call for samples as a [`Look`]: which
//! commits it measured (the first time a commit appears it is built), what the search said it may
//! probe next ([`Measurer::prefetch`]), and how many samples the block took. A scan's looks are then split into the grid and one
//! [`Chain`] per searched interval.

use super::{Chain, Look, Trace};
use crate::analysis::bisect::{self, Config, Measurer, Outcome, Probe};
use crate::analysis::scan::{self, ScanResult};
use crate::analysis::simulate::noise::NoiseModel;
use crate::analysis::simulate::{SimMeasurer, SimStep};
use anyhow::{bail, Result};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::collections::HashMap;

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
    /// Sigma of the iid log-normal noise of a sample.
    pub noise: f64,
    pub cfg: Config,
    pub trials: usize,
    pub seed: u64,
}

/// One 10% step per thousand commits (at least one): the default history of a plan.
pub fn default_steps(commits: usize) -> Vec<SimStep> {
    let k = ((commits as f64 / 1000.0).round() as usize).max(1);
    (0..k).map(|_| SimStep::at(0.10, None)).collect()
}

/// Records every call for samples the search makes.
struct Recorder {
    inner: SimMeasurer,
    /// Samples seen per commit.
    seen: HashMap<usize, usize>,
    looks: Vec<Look>,
    /// The commits the search said it may probe next, for the look that comes next.
    hinted: Vec<usize>,
}

impl Measurer for Recorder {
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        let prefetch = std::mem::take(&mut self.hinted);
        let probes = self.inner.ensure(wants)?;
        let mut samples = 0;
        for (&(c, _), p) in wants.iter().zip(&probes) {
            if let Probe::Samples(v) = p {
                let seen = self.seen.entry(c).or_insert(0);
                samples += v.len().saturating_sub(*seen);
                *seen = (*seen).max(v.len());
            }
        }
        self.looks.push(Look {
            commits: wants.iter().map(|w| w.0).collect(),
            prefetch,
            samples,
        });
        Ok(probes)
    }

    /// The search names the candidate, then what it may probe next, just before it measures
    /// the candidate: the candidate's look carries the guesses (the candidate itself is the
    /// look's own build).
    fn prefetch(&mut self, commits: &[usize]) {
        self.hinted = commits.iter().skip(1).copied().collect();
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
    let inner = SimMeasurer::new(
        sc.commits,
        &factors,
        &NoiseModel::iid(sc.noise),
        0.0,
        rng.gen(),
    )?;
    let mut rec = Recorder {
        inner,
        seen: HashMap::new(),
        looks: Vec::new(),
        hinted: Vec::new(),
    };
    match search {
        Search::Bisect => {
            let r = bisect::search(sc.commits, &sc.cfg, &mut rec)?;
            Ok(Trace {
                chains: vec![Chain {
                    looks: rec.looks,
                    after: None,
                }],
                decisions: r.decisions,
                intervals: 0,
            })
        }
        Search::Scan { grid } => {
            let r = scan::scan(&scan::grid_positions(sc.commits, grid), &sc.cfg, &mut rec)?;
            split_scan(rec.looks, &r)
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
        after: None,
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
                    after: Some(0),
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
            chains[k + 1].after = Some(t + 1);
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
            noise: 0.03,
            cfg: Config::default(),
            trials: 4,
            seed: 1,
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
            assert!(c.after.is_some());
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
