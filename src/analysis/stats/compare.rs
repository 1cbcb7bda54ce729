//! The three-way comparison of B against A that every command's verdict comes from.

use serde::{Deserialize, Serialize};

use super::mann_whitney::mwu_min_p;
use super::tail::{tail_check, TailCounts};
use super::{
    mann_whitney_p, nan_if_null, summarize, welch, yuen_paired, yuen_robust, RatioCi, Summary,
};
use crate::analysis::samples::{self, Samples};

/// B relative to A, samples in µs/op.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Slower,
    Faster,
    Same,
    Undecided,
}

/// How a change's interval sits against the smallest effect worth reporting.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Size {
    /// The whole interval is at least min-effect away from 1.
    AtLeast,
    /// The whole interval is within ±min-effect.
    Below,
    /// The interval straddles ±min-effect: more samples would tell.
    Uncertain,
}

impl Size {
    pub(super) fn of(r: &RatioCi, min_effect: f64) -> Size {
        let (up, down) = (1.0 + min_effect, 1.0 - min_effect);
        if r.lo >= up || r.hi <= down {
            Size::AtLeast
        } else if r.lo >= down && r.hi <= up {
            Size::Below
        } else {
            Size::Uncertain
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, schemars::JsonSchema)]
pub struct Comparison {
    pub a: Summary,
    pub b: Summary,
    /// B/A as the ratio of the trimmed geometric means (Yuen, on logs) with its (1 − alpha)
    /// interval: robust to the odd slow process, and equal to the ratio of means when the
    /// noise is multiplicative.
    pub ratio: RatioCi,
    /// Yuen's trimmed test on log values: the p-value the verdict uses.
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub p_yuen: f64,
    /// Where the interval lies against min-effect.
    #[serde(default = "uncertain")]
    pub size: Size,
    /// NaN (null in JSON) when a side has fewer than two values.
    #[serde(deserialize_with = "nan_if_null")]
    pub p_welch: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub p_mwu: f64,
    pub verdict: Verdict,
    /// Yuen and Mann–Whitney land on different sides of alpha: the distributions are probably not
    /// the shape the t-test assumes (outliers, bimodal timings), so read the verdict with care.
    pub tests_disagree: bool,
    /// Rounds both sides were sampled in: the pairs the paired test had (0: not run).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pairs: usize,
    /// The deciding test's standard error as noise per sample (log scale): se · √(n/2), n the
    /// pairs it had (paired) or the harmonic mean of the sides' counts (unpaired). What a
    /// comparison of n samples per side resolves follows from it (analysis/resolution.rs). NaN
    /// (null) without a test, and in results written before it was recorded.
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub sigma: f64,
    /// The deciding test's degrees of freedom per sample of that n (paired trimmed: about 0.6;
    /// unpaired: about 1.2): what its t quantile is at another n. NaN like `sigma`.
    #[serde(default = "nan", deserialize_with = "nan_if_null")]
    pub df_per_sample: f64,
    /// The tail check (`--tail`, see stats::tail): the slow processes counted on each side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail: Option<TailCounts>,
    /// The verdict is the tail check's: the share of slow processes changed by at least
    /// min-effect, which the trimmed ratio (the headline, still `ratio`) does not show.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_tail: bool,
}

/// `--tail`: the tail check decides beside the trimmed pair, each at half the comparison's alpha
/// ([`crate::analysis::alpha::TAIL_SPLIT`]), and "same" waits until both sides have `same_from`
/// samples: before that the tail check cannot see a slow tenth of processes, and "same" would
/// only be the trimmed test's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TailRule {
    pub same_from: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn nan() -> f64 {
    f64::NAN
}

fn uncertain() -> Size {
    Size::Uncertain
}

/// Three-way comparison of B against A (Pinpoint-style), on Yuen's trimmed test of the log
/// values (Welch's and Mann–Whitney's p-values are reported beside it):
/// - `Slower`/`Faster`: Yuen p < alpha and the ratio's point estimate is at least `min_effect`
///   away from 1 (so a statistically real but negligible change is not reported as one); `size`
///   says whether the interval, too, supports "at least min-effect";
/// - `Same`: the (1 − alpha) interval of the ratio lies inside [1 − min_effect, 1 + min_effect],
///   i.e. any change as large as the minimum effect is excluded;
/// - `Undecided`: neither yet; more samples may decide it.
pub fn compare(a: &[f64], b: &[f64], alpha: f64, min_effect: f64) -> Comparison {
    compare_with(a, b, alpha, min_effect, None)
}

/// [`compare`] for samples taken in interleaved rounds: beside the unpaired test, the paired
/// trimmed test runs on the samples of the rounds both sides were sampled in (never by
/// position, see analysis::samples), and the verdict takes the smaller p-value doubled
/// (Bonferroni over the two), so it has the paired test's power on a drifting machine at the
/// price of a factor 2 in alpha on a steady one. The interval is the chosen test's, at
/// 1 − alpha/2.
pub fn compare_rounds(a: &Samples, b: &Samples, alpha: f64, min_effect: f64) -> Comparison {
    compare_rounds_with(a, b, alpha, min_effect, None)
}

/// [`compare_rounds`], with the tail check when `tail` is given (`--tail`).
pub fn compare_rounds_with(
    a: &Samples,
    b: &Samples,
    alpha: f64,
    min_effect: f64,
    tail: Option<TailRule>,
) -> Comparison {
    let (pa, pb) = samples::pairs(a, b);
    // With the tail check beside it, the trimmed pair has half the alpha.
    let trimmed_alpha = match tail {
        Some(_) => alpha / crate::analysis::alpha::TAIL_SPLIT,
        None => alpha,
    };
    let pairs = Some((&pa[..], &pb[..]));
    let mut c = compare_with(&a.values, &b.values, trimmed_alpha, min_effect, pairs);
    if let Some(rule) = tail {
        decide_by_tail(
            &mut c,
            tail_check(&a.values, &b.values, pairs),
            rule,
            alpha,
            min_effect,
        );
    }
    c
}

/// The tail check's part of a verdict the trimmed pair made at half the alpha: a change in the
/// share of slow processes by at least min-effect where the trimmed pair saw none, and no "same"
/// before `rule.same_from` samples a side.
fn decide_by_tail(
    c: &mut Comparison,
    t: Option<TailCounts>,
    rule: TailRule,
    alpha: f64,
    min_effect: f64,
) {
    c.tail = t;
    let level = alpha / crate::analysis::alpha::TAIL_SPLIT;
    let moved = t.filter(|t| t.p < level && (t.share(1) - t.share(0)).abs() >= min_effect);
    match (c.verdict, moved) {
        (Verdict::Slower | Verdict::Faster, _) => {}
        (_, Some(t)) => {
            c.verdict = if t.slower() {
                Verdict::Slower
            } else {
                Verdict::Faster
            };
            c.by_tail = true;
        }
        (Verdict::Same, None) if c.a.n.min(c.b.n) < rule.same_from => {
            c.verdict = Verdict::Undecided
        }
        _ => {}
    }
}

/// The test a comparison decides on, and what it says of the noise.
struct Deciding {
    test: Option<super::Yuen>,
    /// Its p-value (doubled when it was the better of two).
    p: f64,
    /// The confidence of the interval it reports.
    conf: f64,
    /// Its standard error as noise per sample, and its degrees of freedom per sample.
    sigma: f64,
    df_per_sample: f64,
    /// The pairs the paired test ran on (0: not run).
    paired: usize,
}

/// Yuen's unpaired trimmed test, and with 5 rounds or more the paired one; the verdict takes the
/// smaller p-value doubled (Bonferroni over the two). `counts`: the sides' sample counts.
fn deciding(
    a: &[f64],
    b: &[f64],
    counts: (usize, usize),
    alpha: f64,
    pairs: Option<(&[f64], &[f64])>,
) -> Deciding {
    let unpaired = yuen_robust(a, b);
    // Below 5 rounds the paired test has df ≤ 3: its interval is useless at a search's small
    // alphas, and choosing it would only widen the reported one.
    let pairs = pairs.filter(|(pa, _)| pa.len() >= 5);
    let paired = pairs.and_then(|(pa, pb)| yuen_paired(pa, pb));
    let n_pairs = pairs.map_or(0, |(pa, _)| pa.len());
    let n_sides = 2.0 / (1.0 / counts.0.max(1) as f64 + 1.0 / counts.1.max(1) as f64);
    let (test, p, conf, n) = match (unpaired, paired) {
        (Some(u), Some(p)) => {
            let (best, n) = if p.p < u.p {
                (p, n_pairs as f64)
            } else {
                (u, n_sides)
            };
            let k = crate::analysis::alpha::TWO_TESTS;
            (Some(best), (k * best.p).min(1.0), 1.0 - alpha / k, n)
        }
        (u, _) => (u, u.map_or(f64::NAN, |u| u.p), 1.0 - alpha, n_sides),
    };
    Deciding {
        test,
        p,
        conf,
        sigma: test.map_or(f64::NAN, |y| y.se * (n / 2.0).sqrt()),
        df_per_sample: test.map_or(f64::NAN, |y| y.df / n),
        paired: if paired.is_some() { n_pairs } else { 0 },
    }
}

fn compare_with(
    a: &[f64],
    b: &[f64],
    alpha: f64,
    min_effect: f64,
    pairs: Option<(&[f64], &[f64])>,
) -> Comparison {
    let sa = summarize(a);
    let sb = summarize(b);
    let w = welch(a, b);
    let p_welch = w.map_or(f64::NAN, |w| w.p);
    let p_mwu = mann_whitney_p(a, b).unwrap_or(f64::NAN);
    let Deciding {
        test: y,
        p: p_yuen,
        conf,
        sigma,
        df_per_sample,
        paired,
    } = deciding(a, b, (sa.n, sb.n), alpha, pairs);
    let ratio = y
        .and_then(|y| y.ratio_ci(conf))
        .unwrap_or_else(RatioCi::unknown);
    let valid = alpha > 0.0 && alpha < 1.0 && min_effect > 0.0 && ratio.ratio.is_finite();
    let size = if valid {
        Size::of(&ratio, min_effect)
    } else {
        Size::Uncertain
    };
    let verdict = if !valid {
        Verdict::Undecided
    } else if p_yuen < alpha && (ratio.ratio - 1.0).abs() >= min_effect {
        if ratio.ratio > 1.0 {
            Verdict::Slower
        } else {
            Verdict::Faster
        }
    } else if ratio.lo >= 1.0 - min_effect && ratio.hi <= 1.0 + min_effect {
        Verdict::Same
    } else {
        Verdict::Undecided
    };
    // With few samples the rank test cannot reach a small alpha at all (5 vs 5: p >= 0.008), so a
    // disagreement only counts when it could have agreed.
    let mwu_can_reach = mwu_min_p(sa.n, sb.n).is_some_and(|m| m < alpha);
    let tests_disagree = mwu_can_reach
        && p_yuen.is_finite()
        && p_mwu.is_finite()
        && ((p_yuen < alpha) != (p_mwu < alpha));
    Comparison {
        a: sa,
        b: sb,
        ratio,
        p_yuen,
        size,
        p_welch,
        p_mwu,
        verdict,
        tests_disagree,
        pairs: paired,
        sigma,
        df_per_sample,
        tail: None,
        by_tail: false,
    }
}
