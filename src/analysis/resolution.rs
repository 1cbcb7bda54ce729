//! What a run can resolve: from the per-sample noise measured in the run itself, the smallest
//! change a comparison detects at the sample cap, and the samples a decision needs at
//! `--min-effect`. A search that stops undecided must say so with a size, not read as "no
//! change" (issue 28): this is where that size comes from.
//!
//! The model is the search's own test at its cap: two sides of `n` samples, log values with
//! per-sample sd σ, a two-sided test at level α (the search's level per test, halved for the
//! paired/unpaired pair of tests), and 80% power. A change of `exp(δ) − 1` with
//! `δ = (t(1 − α/2) + z(0.8)) · σ · √(2/n)` is found four times in five; smaller ones may
//! pass unseen. σ is robust (1.4826 × MAD of the logs), so the odd slow process does not
//! inflate it, and unpaired: a drifting machine that the paired test cancels makes this a
//! conservative bound, never an optimistic one.

use serde::{Deserialize, Serialize};

use super::stats;

/// The power a "resolvable" change is detected with.
pub const POWER: f64 = 0.8;

/// Fewer samples say too little about a subject's spread to count in the run's noise.
pub const MIN_SAMPLES: usize = 5;

/// What a run resolved, from its own noise.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Resolution {
    /// Per-sample noise: the median over the run's subjects of each one's robust log-sd.
    pub noise: f64,
    /// Subjects the noise was measured on (those with at least 5 samples).
    pub subjects: usize,
    /// Samples per side at the cap.
    pub cap: usize,
    /// The level per test the cap's comparison runs at.
    pub alpha: f64,
    /// The smallest relative change a comparison at the cap resolves (0.12 = 12%), never below
    /// `--min-effect` (smaller changes are not reported by design).
    pub smallest: f64,
    /// Samples per side a comparison needs to resolve a change of `--min-effect`.
    pub needed: usize,
    pub min_effect: f64,
}

impl Resolution {
    /// From each subject's samples (`values`), at a cap of `cap` samples per side and `alpha`
    /// per test. `None` until some subject holds enough samples to show its spread.
    pub fn of(values: &[&[f64]], cap: usize, alpha: f64, min_effect: f64) -> Option<Resolution> {
        let mut sds: Vec<f64> = values
            .iter()
            .filter(|v| v.len() >= MIN_SAMPLES)
            .filter_map(|v| log_sd(v))
            .collect();
        if sds.is_empty() {
            return None;
        }
        sds.sort_by(f64::total_cmp);
        let noise = sds[sds.len() / 2];
        Some(Resolution {
            noise,
            subjects: sds.len(),
            cap,
            alpha,
            smallest: smallest_change(noise, cap, alpha).max(min_effect),
            needed: samples_needed(noise, min_effect, alpha),
            min_effect,
        })
    }

    /// Whether the cap falls short of what `--min-effect` needs.
    pub fn short(&self) -> bool {
        self.needed > self.cap
    }
}

/// What the ends' noise says before a search starts: what it will resolve, and what its
/// decisions will need.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Forecast {
    /// From the ends' samples.
    pub resolution: Resolution,
    /// Decisions a search for one change takes: a binary search of the range, then the
    /// confirmation and the two sub-range checks beside the change point.
    pub decisions: usize,
    /// Samples one decision at `--min-effect` takes: a candidate and both interval ends,
    /// each to the samples needed (at most the cap), at every series (thread count).
    pub samples_per_decision: usize,
}

impl Forecast {
    /// For a search over `commits` commits measured at `series` thread counts.
    pub fn new(resolution: Resolution, commits: usize, series: usize) -> Forecast {
        let decisions = (commits.max(2) as f64).log2().ceil() as usize + 3;
        let per_side = resolution.needed.min(resolution.cap);
        Forecast {
            samples_per_decision: 3 * per_side * series.max(1),
            decisions,
            resolution,
        }
    }

    /// Samples the whole search takes if every decision needs what `--min-effect` does (larger
    /// changes decide sooner: an upper estimate for one change).
    pub fn samples(&self) -> usize {
        self.decisions * self.samples_per_decision
    }
}

/// Robust sd of the logs of `xs` ([`stats::robust_sd`]); `None` unless all are positive.
pub fn log_sd(xs: &[f64]) -> Option<f64> {
    if xs.iter().any(|&x| !(x > 0.0 && x.is_finite())) {
        return None;
    }
    let l: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
    Some(stats::robust_sd(&l))
}

/// The smallest relative change two sides of `n` samples at per-sample log-sd `noise` resolve
/// at `alpha` with [`POWER`].
pub fn smallest_change(noise: f64, n: usize, alpha: f64) -> f64 {
    let n = n.max(2) as f64;
    let df = 2.0 * (n - 1.0);
    let (Some(t), Some(z)) = (
        stats::t_quantile(1.0 - alpha, df),
        stats::z_quantile(2.0 * POWER - 1.0),
    ) else {
        return f64::INFINITY;
    };
    ((t + z) * noise * (2.0 / n).sqrt()).exp() - 1.0
}

/// Samples per side that resolve a change of `effect` at per-sample log-sd `noise`: the
/// smallest n whose [`smallest_change`] is at most `effect` (at least 2; `usize::MAX` when no
/// count does).
pub fn samples_needed(noise: f64, effect: f64, alpha: f64) -> usize {
    if noise == 0.0 {
        return 2;
    }
    let resolves = |n: usize| smallest_change(noise, n, alpha) <= effect;
    let mut hi = 2;
    while !resolves(hi) {
        if hi > 1 << 30 {
            return usize::MAX;
        }
        hi *= 2;
    }
    let mut lo = hi / 2;
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        if resolves(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi.max(2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, SeedableRng};
    use rand_distr::{Distribution, Normal};

    #[test]
    fn the_smallest_change_shrinks_with_samples_and_grows_with_noise() {
        let a = 1e-4;
        let at = |noise, n| smallest_change(noise, n, a);
        assert!(at(0.03, 40) < at(0.03, 10));
        assert!(at(0.03, 40) < at(0.10, 40));
        // (t + z) σ √(2/n) at 3%, 40 samples, 1e-4: t(78 df) ≈ 4.13, z(0.8) ≈ 0.84.
        let expect = ((4.13 + 0.8416) * 0.03 * (2.0f64 / 40.0).sqrt()).exp() - 1.0;
        assert!((at(0.03, 40) - expect).abs() < 0.002, "{}", at(0.03, 40));
    }

    #[test]
    fn samples_needed_is_the_first_count_that_resolves() {
        let (noise, effect, a) = (0.05, 0.03, 1e-4);
        let n = samples_needed(noise, effect, a);
        assert!(smallest_change(noise, n, a) <= effect);
        assert!(smallest_change(noise, n - 1, a) > effect);
        assert_eq!(samples_needed(0.0, 0.03, a), 2);
    }

    /// The claim itself, on simulated comparisons: a change of the stated smallest size is
    /// found about 80% of the time by the test the search runs.
    #[test]
    fn a_change_of_the_stated_size_is_found_four_times_in_five() {
        let (noise, n, a) = (0.05, 40, 1e-3);
        let d = smallest_change(noise, n, a);
        let z = Normal::new(0.0, noise).unwrap();
        let mut rng = StdRng::seed_from_u64(7);
        let trials = 400;
        let mut found = 0;
        for _ in 0..trials {
            let x: Vec<f64> = (0..n).map(|_| z.sample(&mut rng).exp()).collect();
            let y: Vec<f64> = (0..n)
                .map(|_| (1.0 + d) * z.sample(&mut rng).exp())
                .collect();
            let c = stats::compare(&x, &y, a, 0.001);
            found += usize::from(c.verdict == stats::Verdict::Slower);
        }
        let rate = found as f64 / trials as f64;
        assert!((0.72..=0.88).contains(&rate), "found in {rate} of trials");
    }

    #[test]
    fn the_run_noise_is_the_median_subject_and_needs_five_samples() {
        let quiet = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98];
        let loud = [1.0, 1.3, 0.7, 1.1, 0.9, 1.2];
        let few = [1.0, 5.0];
        assert_eq!(Resolution::of(&[&few], 40, 1e-3, 0.03), None);
        let r = Resolution::of(&[&quiet, &quiet, &loud, &few], 40, 1e-3, 0.03).unwrap();
        assert_eq!(r.subjects, 3);
        assert_eq!(r.noise, log_sd(&quiet).unwrap());
        assert!(r.smallest >= 0.03);
        assert!(!r.short());
        let loud = Resolution::of(&[&loud], 40, 1e-3, 0.03).unwrap();
        assert!(loud.short() && loud.smallest > 0.03, "{loud:?}");
    }
}
