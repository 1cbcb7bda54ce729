//! Checks the claims about the statistics by running the real search on synthetic commits: a known
//! step (or several) in the per-commit mean, log-normal noise, and builds that fail at random.
//! Users run it to choose --samples / --min-effect for the noise of their machine.

use crate::analysis::bisect::{self, Config, Measurer, Outcome, Probe};
use crate::analysis::rounds::{self, Sampler};
use crate::measure::unavailable::Unavailable;
use anyhow::{bail, Result};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Normal};
use serde::Serialize;
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimStep {
    /// Relative change of the mean µs/op at this commit: 0.10 = 10% slower, −0.10 = 10% faster.
    pub effect: f64,
    /// First commit with the change (1..commits); random when `None`.
    pub at: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimConfig {
    pub commits: usize,
    pub steps: Vec<SimStep>,
    /// Sigma of the log-normal noise, as a fraction (0.03 ≈ 3%).
    pub noise: f64,
    pub trials: usize,
    pub seed: u64,
    /// Fraction of commits whose build fails (never the two ends).
    pub skip_rate: f64,
    pub cfg: Config,
    /// Run the plain bisect instead (fixed 20 samples per commit, Welch at 0.05 against each end,
    /// no sequential sampling, first change only), for comparison.
    pub baseline: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimReport {
    pub trials: usize,
    /// Fraction of trials whose reported change points are exactly the true step positions (a range
    /// left by skips counts as right when it contains the position). With first-change-only (and the
    /// baseline) the truth is the oldest step alone.
    pub accuracy: f64,
    /// Fraction of `trials` further runs with no step that reported any change.
    pub false_alarm_rate: f64,
    /// Distinct commits built per search (failed builds included).
    pub mean_builds: f64,
    pub mean_samples: f64,
    /// All samples divided by the decisions made (the ends' comparison, each classified candidate,
    /// each sub-range check; for the baseline the ends and each candidate).
    pub mean_samples_per_decision: f64,
    /// Fraction of trials in which every true step lies in some reported change point (extra
    /// reports allowed).
    pub detected_all_rate: f64,
    /// Fraction of trials in which some reported change point was flagged uncertain.
    pub uncertain_rate: f64,
    /// Trials in which the search returned an error (counted as wrong).
    pub errors: usize,
}

/// Synthetic commits: mean = product of (1 + effect) over the steps at or before the commit,
/// sample = mean × exp(N(0, noise)). Draws only missing samples, interleaved like the real one.
pub struct SimMeasurer {
    /// (first commit with the change, factor), sorted.
    steps: Vec<(usize, f64)>,
    commits: usize,
    noise: Normal<f64>,
    skip_rate: f64,
    rng: StdRng,
    samples: HashMap<usize, Vec<f64>>,
    skips: HashMap<usize, bool>,
}

impl SimMeasurer {
    pub fn new(
        commits: usize,
        steps: &[(usize, f64)],
        noise: f64,
        skip_rate: f64,
        seed: u64,
    ) -> Result<Self> {
        let Ok(normal) = Normal::new(0.0, noise) else {
            bail!("noise must be a non-negative number, got {noise}");
        };
        let mut steps: Vec<(usize, f64)> = steps.to_vec();
        steps.sort_by_key(|s| s.0);
        Ok(SimMeasurer {
            steps,
            commits,
            noise: normal,
            skip_rate,
            rng: StdRng::seed_from_u64(seed),
            samples: HashMap::new(),
            skips: HashMap::new(),
        })
    }

    pub fn mean(&self, commit: usize) -> f64 {
        self.steps
            .iter()
            .take_while(|s| s.0 <= commit)
            .map(|s| s.1)
            .product()
    }

    fn is_skipped(&mut self, c: usize) -> bool {
        if c == 0 || c + 1 >= self.commits || self.skip_rate <= 0.0 {
            return false;
        }
        let rate = self.skip_rate.min(1.0);
        let rng = &mut self.rng;
        *self.skips.entry(c).or_insert_with(|| rng.gen_bool(rate))
    }
}

impl Sampler for SimMeasurer {
    fn have(&self, c: usize) -> Option<usize> {
        if self.skips.get(&c).copied().unwrap_or(false) {
            return None;
        }
        Some(self.samples.get(&c).map_or(0, Vec::len))
    }

    fn take_one(&mut self, c: usize) -> Result<()> {
        let x = self.mean(c) * self.noise.sample(&mut self.rng).exp();
        self.samples.entry(c).or_default().push(x);
        Ok(())
    }
}

impl Measurer for SimMeasurer {
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        for w in wants {
            self.is_skipped(w.0);
        }
        rounds::fill(self, wants, None)?;
        Ok(wants
            .iter()
            .map(|&(c, _)| match self.have(c) {
                None => Probe::Skip(Unavailable::Simulated {
                    message: "build failed (simulated)".into(),
                }),
                Some(_) => Probe::Samples(self.samples.get(&c).cloned().unwrap_or_default()),
            })
            .collect())
    }
}

/// What one search reported, reduced to what the simulation scores.
struct TrialResult {
    /// (last_old, first_new, uncertain)
    changes: Vec<(usize, usize, bool)>,
    builds: usize,
    samples: usize,
    decisions: usize,
}

fn run_search(n: usize, cfg: &Config, m: &mut SimMeasurer) -> Result<TrialResult> {
    let r = bisect::search(n, cfg, m)?;
    let changes = match &r.outcome {
        Outcome::NoChange => vec![],
        Outcome::Changes(cps) => cps
            .iter()
            .map(|c| (c.last_old, c.first_new, c.uncertain))
            .collect(),
    };
    Ok(TrialResult {
        changes,
        builds: r.commits_measured,
        samples: r.samples_taken,
        decisions: r.decisions,
    })
}

const BASELINE_SAMPLES: usize = 20;
const BASELINE_ALPHA: f64 = 0.05;

/// The plain bisect the sequential search is compared with: 20 samples per commit taken once, a
/// Welch t-test at 0.05 of the candidate against each interval end, the closer mean when both or
/// neither test is significant, first change only.
fn run_baseline(n: usize, m: &mut SimMeasurer) -> Result<TrialResult> {
    let k = BASELINE_SAMPLES;
    let mut samples: HashMap<usize, Vec<f64>> = HashMap::new();
    let mut skipped: HashMap<usize, ()> = HashMap::new();
    let mut builds = 2;
    let mut decisions = 1;
    let ends = m.ensure(&[(0, k), (n - 1, k)])?;
    for (c, p) in [0, n - 1].into_iter().zip(ends) {
        match p {
            Probe::Samples(v) => {
                samples.insert(c, v);
            }
            Probe::Skip(r) => bail!("end {c} cannot be measured: {r}"),
        }
    }
    let p_ends =
        crate::analysis::stats::welch(&samples[&0], &samples[&(n - 1)]).map_or(1.0, |w| w.p);
    let mut changes = vec![];
    if p_ends < BASELINE_ALPHA {
        let (mut lo, mut hi) = (0, n - 1);
        while let Some(c) = bisect::pick_candidate(lo, hi, |i| skipped.contains_key(&i)) {
            builds += 1;
            let x = match m.ensure(&[(c, k)])?.pop() {
                Some(Probe::Samples(v)) => v,
                _ => {
                    skipped.insert(c, ());
                    continue;
                }
            };
            decisions += 1;
            let p = |a: &[f64]| crate::analysis::stats::welch(a, &x).map_or(1.0, |w| w.p);
            let (p_old, p_new) = (p(&samples[&lo]), p(&samples[&hi]));
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
            let (mo, mx, mn) = (mean(&samples[&lo]), mean(&x), mean(&samples[&hi]));
            let is_old = if (p_old < BASELINE_ALPHA) != (p_new < BASELINE_ALPHA) {
                p_new < BASELINE_ALPHA
            } else {
                (mx - mo).abs() < (mx - mn).abs()
            };
            samples.insert(c, x);
            if is_old {
                lo = c;
            } else {
                hi = c;
            }
        }
        changes.push((lo, hi, false));
    }
    let total = samples.values().map(Vec::len).sum();
    Ok(TrialResult {
        changes,
        builds,
        samples: total,
        decisions,
    })
}

fn trial_seed(seed: u64, i: usize, salt: u64) -> u64 {
    // splitmix64 of (seed, trial, salt): neighbouring trials get unrelated streams.
    let mut z = seed
        .wrapping_add((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add(salt.wrapping_mul(0xD1B5_4A32_D192_ED03));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Step positions for one trial: the fixed ones, and distinct random ones in 1..commits for the
/// rest (a position shared by two steps would make them one).
fn place_steps(sc: &SimConfig, rng: &mut StdRng) -> Vec<(usize, f64)> {
    let mut used: Vec<usize> = sc.steps.iter().filter_map(|s| s.at).collect();
    let mut out = Vec::with_capacity(sc.steps.len());
    for s in &sc.steps {
        let at = match s.at {
            Some(a) => a,
            None => {
                let mut a = rng.gen_range(1..sc.commits);
                for _ in 0..100 {
                    if !used.contains(&a) {
                        break;
                    }
                    a = rng.gen_range(1..sc.commits);
                }
                used.push(a);
                a
            }
        };
        out.push((at, 1.0 + s.effect));
    }
    out
}

fn validate(sc: &SimConfig) -> Result<()> {
    sc.cfg.validate(sc.commits)?;
    if !(sc.noise >= 0.0 && sc.noise.is_finite()) {
        bail!("noise must be a non-negative number, got {}", sc.noise);
    }
    if !(0.0..1.0).contains(&sc.skip_rate) {
        bail!("skip rate must be in [0, 1), got {}", sc.skip_rate);
    }
    for s in &sc.steps {
        if !(s.effect > -1.0 && s.effect.is_finite()) {
            bail!(
                "a step's effect must be greater than -100%, got {}",
                s.effect
            );
        }
        if let Some(a) = s.at {
            if a == 0 || a >= sc.commits {
                bail!(
                    "a step's position must be in 1..{} (commit 0 is the old end), got {a}",
                    sc.commits
                );
            }
        }
    }
    Ok(())
}

/// Run `trials` searches with the configured steps and `trials` without any, and score them.
pub fn simulate(sc: &SimConfig) -> Result<SimReport> {
    validate(sc)?;
    let n = sc.commits;
    let run = |m: &mut SimMeasurer| {
        if sc.baseline {
            run_baseline(n, m)
        } else {
            run_search(n, &sc.cfg, m)
        }
    };
    let only_first = sc.baseline || sc.cfg.first_change_only;

    let (mut right, mut all_found, mut uncertain, mut errors) = (0usize, 0usize, 0usize, 0usize);
    let (mut builds, mut samples, mut decisions) = (0usize, 0usize, 0usize);
    for i in 0..sc.trials {
        let mut rng = StdRng::seed_from_u64(trial_seed(sc.seed, i, 1));
        let steps = place_steps(sc, &mut rng);
        let mut m = SimMeasurer::new(n, &steps, sc.noise, sc.skip_rate, rng.gen())?;
        let Ok(r) = run(&mut m) else {
            errors += 1;
            continue;
        };
        builds += r.builds;
        samples += r.samples;
        decisions += r.decisions;
        let mut truth: Vec<usize> = steps.iter().map(|s| s.0).collect();
        truth.sort_unstable();
        truth.dedup();
        let contains = |c: &(usize, usize, bool), p: usize| c.0 < p && p <= c.1;
        if truth
            .iter()
            .all(|&p| r.changes.iter().any(|c| contains(c, p)))
        {
            all_found += 1;
        }
        let expected: &[usize] = if only_first && !truth.is_empty() {
            &truth[..1]
        } else {
            &truth
        };
        let exact = r.changes.len() == expected.len()
            && r.changes
                .iter()
                .all(|c| expected.iter().filter(|&&p| contains(c, p)).count() == 1)
            && expected
                .iter()
                .all(|&p| r.changes.iter().any(|c| contains(c, p)));
        if exact {
            right += 1;
        }
        if r.changes.iter().any(|c| c.2) {
            uncertain += 1;
        }
    }

    let mut alarms = 0usize;
    for i in 0..sc.trials {
        let mut rng = StdRng::seed_from_u64(trial_seed(sc.seed, i, 2));
        let mut m = SimMeasurer::new(n, &[], sc.noise, sc.skip_rate, rng.gen())?;
        match run(&mut m) {
            Ok(r) if r.changes.is_empty() => {}
            _ => alarms += 1,
        }
    }

    let t = sc.trials.max(1) as f64;
    let done = (sc.trials - errors).max(1) as f64;
    Ok(SimReport {
        trials: sc.trials,
        accuracy: right as f64 / t,
        false_alarm_rate: alarms as f64 / t,
        mean_builds: builds as f64 / done,
        mean_samples: samples as f64 / done,
        mean_samples_per_decision: samples as f64 / decisions.max(1) as f64,
        detected_all_rate: all_found as f64 / t,
        uncertain_rate: uncertain as f64 / t,
        errors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sc(steps: Vec<SimStep>, trials: usize) -> SimConfig {
        SimConfig {
            commits: 1000,
            steps,
            noise: 0.03,
            trials,
            seed: 42,
            skip_rate: 0.0,
            cfg: Config::default(),
            baseline: false,
        }
    }

    fn step(effect: f64) -> SimStep {
        SimStep { effect, at: None }
    }

    /// The headline goals of the design at reduced trials (the full-size run is the ignored test
    /// below and `examples/sim.rs`).
    #[test]
    fn headline_goals_reduced() {
        let r = simulate(&sc(vec![step(0.10)], 150)).unwrap();
        assert!(r.accuracy >= 0.99, "{r:?}");
        assert!(r.false_alarm_rate <= 0.01, "{r:?}");
        let r = simulate(&sc(vec![step(0.10), step(0.05)], 60)).unwrap();
        assert!(r.detected_all_rate >= 0.9, "{r:?}");
    }

    #[test]
    #[ignore = "full size: run with --release -- --ignored"]
    fn headline_goals_full() {
        let r = simulate(&sc(vec![step(0.10)], 1000)).unwrap();
        assert!(r.accuracy >= 0.99, "{r:?}");
        let r = simulate(&sc(vec![], 10_000)).unwrap();
        assert!(r.false_alarm_rate <= 0.01, "{r:?}");
        let r = simulate(&sc(vec![step(0.10), step(0.05)], 1000)).unwrap();
        assert!(r.detected_all_rate >= 0.9, "{r:?}");
    }

    #[test]
    fn baseline_runs_and_alarms_more() {
        let r = simulate(&SimConfig {
            baseline: true,
            ..sc(vec![step(0.10)], 300)
        })
        .unwrap();
        assert!(r.accuracy >= 0.95, "{r:?}");
        // a plain t-test at 0.05 on the ends: about 5% false alarms
        assert!(r.false_alarm_rate > 0.01, "{r:?}");
        assert!((r.mean_samples_per_decision - 20.0).abs() < 5.0, "{r:?}");
    }

    #[test]
    fn skips_and_fixed_positions() {
        let r = simulate(&SimConfig {
            skip_rate: 0.2,
            commits: 200,
            ..sc(
                vec![SimStep {
                    effect: -0.2,
                    at: Some(1),
                }],
                30,
            )
        })
        .unwrap();
        assert_eq!(r.errors, 0);
        assert!(r.accuracy >= 0.95, "{r:?}");
    }

    #[test]
    fn report_json_field_names() {
        let r = simulate(&sc(vec![step(0.10)], 3)).unwrap();
        let v = serde_json::to_value(&r).unwrap();
        for k in [
            "trials",
            "accuracy",
            "false_alarm_rate",
            "mean_builds",
            "mean_samples",
            "mean_samples_per_decision",
            "detected_all_rate",
        ] {
            assert!(v[k].is_number(), "{k}");
        }
    }

    #[test]
    fn bad_configs_are_errors() {
        let bad = [
            SimConfig {
                commits: 1,
                ..sc(vec![], 1)
            },
            SimConfig {
                noise: -0.1,
                ..sc(vec![], 1)
            },
            SimConfig {
                noise: f64::NAN,
                ..sc(vec![], 1)
            },
            SimConfig {
                skip_rate: 1.0,
                ..sc(vec![], 1)
            },
            sc(vec![step(-1.0)], 1),
            sc(
                vec![SimStep {
                    effect: 0.1,
                    at: Some(0),
                }],
                1,
            ),
            sc(
                vec![SimStep {
                    effect: 0.1,
                    at: Some(1000),
                }],
                1,
            ),
        ];
        for c in bad {
            assert!(simulate(&c).is_err(), "{c:?}");
        }
        let zero = simulate(&sc(vec![step(0.1)], 0)).unwrap();
        assert_eq!(zero.trials, 0);
    }

    #[test]
    fn measurer_draws_only_missing_samples() {
        let mut m = SimMeasurer::new(10, &[(5, 1.5)], 0.0, 0.0, 1).unwrap();
        let p = m.ensure(&[(0, 3), (7, 2)]).unwrap();
        assert_eq!(
            p,
            vec![Probe::Samples(vec![1.0; 3]), Probe::Samples(vec![1.5; 2])]
        );
        let p = m.ensure(&[(7, 1)]).unwrap();
        assert_eq!(p, vec![Probe::Samples(vec![1.5; 2])]);
        assert_eq!(m.mean(4), 1.0);
        assert_eq!(m.mean(9), 1.5);
    }
}
