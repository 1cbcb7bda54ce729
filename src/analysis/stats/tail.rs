//! The tail check: did the share of slow processes change? The trimmed tests remove a slow tenth
//! of processes as outliers (robust::outlier_trim), so a commit that makes one run in ten 1.5×
//! slower (+5% on the mean) is invisible to them. This counts the slow ones instead.
//!
//! Two exact conditional tests, like the trimmed pair, the better one taken and paid for:
//! - unpaired: values above the pooled upper fence (log scale: the 90th percentile plus
//!   [`FENCE`] times its distance from the 75th), A's count against B's, Fisher's exact test. The
//!   fence is a symmetric function of the pooled values, so under "same distribution" the split
//!   of the slow values is hypergeometric whatever the noise's shape.
//! - paired (rounds both sides were sampled in): rounds whose log difference lies beyond
//!   [`PAIRED_SDS`] × 1.4826 × median |difference| of zero, B far slower against A far slower,
//!   a sign test. |difference| does not change when a round's two subjects swap, so under "same
//!   distribution" the signs are fair coins; a slow wave both subjects of a round share cancels.
//!
//! What it costs: a change in the share of slow processes is seen in counts of slow processes,
//! and at a search's per-test levels (about 1e-5) that takes a score of them on one side: with a
//! tenth of processes 1.5× slower, a few hundred samples per side (module tests).

use serde::{Deserialize, Serialize};
use statrs::distribution::{Binomial, DiscreteCDF, Hypergeometric};

use super::median;
use super::robust::logs;

/// Slow for the unpaired test: above the pooled 90th percentile by this many times its distance
/// from the 75th (log scale): 2.2 sd of normal noise (1.4% of it), and most of a 1.5× slower
/// process against 10% noise. Drawn from the upper quarter alone: this machine's timings spread
/// over two levels (13 and 30 µs/op for the fake library) as often as not, where a scale from
/// the median (1.4826 MAD, the first choice) put the line at 80 µs/op, above the slow tenth at
/// 45 (the recorded block in the module tests).
pub const FENCE: f64 = 1.5;

/// Far apart for the paired test: this many robust sds of the rounds' differences from zero (a
/// difference has √2 the noise of a sample, so a lower cut than the unpaired one).
pub const PAIRED_SDS: f64 = 2.0;

/// The sample cap `--tail` sets unless `--max-samples` is given: a tenth of processes 1.5×
/// slower needs a few hundred samples per side before a search's per-test level (about 1e-5)
/// can see it (module tests: on a model of 10% noise, at 320 found in most comparisons without
/// shared waves, at 40 hardly ever). On this machine's two-level timings only the slow processes
/// of the upper level stand above the fence (half of them), and 320 was not enough: with the
/// cap at 320 one `scripts/bench-tail` run of two saw the ends differ (then left the culprit
/// unresolved), the other passed the range as the same; at 640 it was located and confirmed
/// (7.5% of the new side's processes slow against none, 2,560 samples, 271 s).
pub const TAIL_MAX_SAMPLES: usize = 640;

/// The counts of slow values the tail check decided on.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, schemars::JsonSchema)]
pub struct TailCounts {
    /// Paired: rounds where A was far slower than B, and B far slower than A (of `of` rounds
    /// each); unpaired: A's and B's values above the pooled threshold (of `of`).
    pub slow: (usize, usize),
    pub of: (usize, usize),
    pub paired: bool,
    /// The better test's p-value doubled (Bonferroni over the two), two-sided.
    pub p: f64,
}

impl TailCounts {
    /// B has more slow values than A (relative to their counts).
    pub fn slower(&self) -> bool {
        self.share(1) > self.share(0)
    }

    /// The share of side `i` (0: A, 1: B) that was slow.
    pub fn share(&self, i: usize) -> f64 {
        let (k, n) = if i == 0 {
            (self.slow.0, self.of.0)
        } else {
            (self.slow.1, self.of.1)
        };
        k as f64 / n.max(1) as f64
    }
}

/// The tail check of B against A (raw values, µs/op), with the rounds' pairs when there are 5 or
/// more; `None` when a side has fewer than 5 finite values.
pub fn tail_check(a: &[f64], b: &[f64], pairs: Option<(&[f64], &[f64])>) -> Option<TailCounts> {
    let unpaired = unpaired(a, b)?;
    let paired = pairs
        .filter(|(pa, _)| pa.len() >= 5)
        .and_then(|(pa, pb)| paired(pa, pb));
    let Some(paired) = paired else {
        return Some(unpaired);
    };
    let best = if paired.p < unpaired.p {
        paired
    } else {
        unpaired
    };
    Some(TailCounts {
        p: (2.0 * best.p).min(1.0),
        ..best
    })
}

/// Fisher's exact test on the values above the pooled threshold.
fn unpaired(a: &[f64], b: &[f64]) -> Option<TailCounts> {
    let (la, lb) = (logs(a)?, logs(b)?);
    if la.len() < 5 || lb.len() < 5 {
        return None;
    }
    let pooled: Vec<f64> = la.iter().chain(&lb).copied().collect();
    let cut = upper_fence(&pooled);
    let above = |v: &[f64]| v.iter().filter(|&&x| x > cut).count();
    let (ka, kb) = (above(&la), above(&lb));
    let h = Hypergeometric::new(pooled.len() as u64, (ka + kb) as u64, lb.len() as u64).ok()?;
    let kb = kb as u64;
    // P(X ≥ k) as sf(k − 1): statrs' hypergeometric pmf overflows to NaN at a thousand values.
    let at_least = if kb == 0 { 1.0 } else { h.sf(kb - 1) };
    let p = two_sided(h.cdf(kb), at_least);
    Some(TailCounts {
        slow: (ka, kb as usize),
        of: (la.len(), lb.len()),
        paired: false,
        p,
    })
}

/// The pooled upper fence: q90 + [`FENCE`] × (q90 − q75).
fn upper_fence(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    let (q75, q90) = (q(0.75), q(0.90));
    q90 + FENCE * (q90 - q75)
}

/// The sign test on the rounds whose difference is far from zero.
fn paired(a: &[f64], b: &[f64]) -> Option<TailCounts> {
    let d: Vec<f64> = a
        .iter()
        .zip(b)
        .filter(|(x, y)| **x > 0.0 && **y > 0.0 && x.is_finite() && y.is_finite())
        .map(|(x, y)| y.ln() - x.ln())
        .collect();
    if d.len() < 5 {
        return None;
    }
    let abs: Vec<f64> = d.iter().map(|x| x.abs()).collect();
    let cut = PAIRED_SDS * 1.4826 * median(&abs);
    let (neg, pos) = (
        d.iter().filter(|&&x| x < -cut).count(),
        d.iter().filter(|&&x| x > cut).count(),
    );
    let p = if neg + pos == 0 {
        1.0
    } else {
        let bin = Binomial::new(0.5, (neg + pos) as u64).ok()?;
        let pos = pos as u64;
        let at_least = if pos == 0 { 1.0 } else { bin.sf(pos - 1) };
        two_sided(bin.cdf(pos), at_least)
    };
    Some(TailCounts {
        slow: (neg, pos),
        of: (d.len(), d.len()),
        paired: true,
        p,
    })
}

/// Two-sided p from the two one-sided tails P(X ≤ k) and P(X ≥ k): the smaller doubled; 1 (no
/// evidence) when a tail is not a number.
fn two_sided(at_most: f64, at_least: f64) -> f64 {
    let p = 2.0 * at_most.min(at_least);
    if p.is_finite() {
        p.clamp(0.0, 1.0)
    } else {
        1.0
    }
}
