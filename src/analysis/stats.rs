//! Statistics for comparing two sets of samples (µs per operation; larger = slower).
//!
//! Every function takes arbitrary slices: non-finite values (NaN, ±inf) are dropped first, because a
//! sample that is not a number carries no information about speed, and one NaN would otherwise turn
//! every later figure into NaN. Too few values give `None` (or, for [`summarize`], a defined value).
//!
//! Sequential use: the bisect takes looks at growing sample sizes and calls [`compare`] at each look
//! with a per-look alpha. This module does not split alpha itself; the split (Bonferroni over
//! decisions × looks × tests) is done and documented in `crate::analysis::bisect`.

use super::samples::{self, Samples};
use serde::{Deserialize, Deserializer, Serialize};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

fn finite(xs: &[f64]) -> Vec<f64> {
    xs.iter().copied().filter(|x| x.is_finite()).collect()
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// Two-sided Student t quantile: the `q` with P(|T| <= q) = conf. `None` when df or conf is unusable
/// (statrs asserts on a probability outside [0, 1], so this guard is what keeps us panic-free).
pub fn t_quantile(conf: f64, df: f64) -> Option<f64> {
    if !(conf > 0.0 && conf < 1.0 && df > 0.0) {
        return None;
    }
    if df.is_infinite() || df > 1e7 {
        return z_quantile(conf);
    }
    let t = StudentsT::new(0.0, 1.0, df).ok()?;
    let q = t.inverse_cdf(0.5 + conf / 2.0);
    q.is_finite().then_some(q)
}

/// Two-sided standard normal quantile, see [`t_quantile`].
pub fn z_quantile(conf: f64) -> Option<f64> {
    if !(conf > 0.0 && conf < 1.0) {
        return None;
    }
    let q = Normal::standard().inverse_cdf(0.5 + conf / 2.0);
    q.is_finite().then_some(q)
}

/// Two-sided p-value of a t statistic. Computed from the lower tail so that tiny p-values (1e-12)
/// keep their precision instead of rounding to 0 through `1 - cdf`.
fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() {
        return f64::NAN;
    }
    if t.is_infinite() {
        return 0.0;
    }
    let p = match StudentsT::new(0.0, 1.0, df) {
        Ok(d) if df.is_finite() => 2.0 * d.cdf(-t.abs()),
        _ => 2.0 * Normal::standard().cdf(-t.abs()),
    };
    p.clamp(0.0, 1.0)
}

/// JSON has no NaN: serde_json writes it as null, and results read back
/// (`log`, `report merge`) turn null into NaN again.
fn nan_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

fn nan_pair_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<(f64, f64), D::Error> {
    let (a, b) = <(Option<f64>, Option<f64>)>::deserialize(d)?;
    Ok((a.unwrap_or(f64::NAN), b.unwrap_or(f64::NAN)))
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, schemars::JsonSchema)]
pub struct Summary {
    pub n: usize,
    #[serde(deserialize_with = "nan_if_null")]
    pub mean: f64,
    /// Sample standard deviation (n − 1 denominator).
    #[serde(deserialize_with = "nan_if_null")]
    pub sd: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub se: f64,
    /// t-based 95% confidence interval of the mean.
    #[serde(deserialize_with = "nan_pair_if_null")]
    pub ci95: (f64, f64),
}

/// Mean, spread and a 95% CI of the mean. Empty input gives n = 0 and NaN figures (serialized as
/// null); n = 1 gives sd = 0 and a CI collapsed onto the mean, since there is no spread to estimate.
pub fn summarize(xs: &[f64]) -> Summary {
    let xs = finite(xs);
    if xs.is_empty() {
        return Summary {
            n: 0,
            mean: f64::NAN,
            sd: f64::NAN,
            se: f64::NAN,
            ci95: (f64::NAN, f64::NAN),
        };
    }
    let n = xs.len();
    let (mean, var) = mean_var(&xs);
    if n < 2 {
        return Summary {
            n,
            mean,
            sd: 0.0,
            se: 0.0,
            ci95: (mean, mean),
        };
    }
    let sd = var.sqrt();
    let se = sd / (n as f64).sqrt();
    let half = t_quantile(0.95, (n - 1) as f64).unwrap_or(f64::NAN) * se;
    let ci95 = if se == 0.0 {
        (mean, mean)
    } else {
        (mean - half, mean + half)
    };
    Summary {
        n,
        mean,
        sd,
        se,
        ci95,
    }
}

#[derive(Serialize, Clone, Copy, Debug, PartialEq)]
pub struct Welch {
    /// (mean(b) − mean(a)) / se: positive when B is slower. Note: scipy's `ttest_ind(a, b)` reports
    /// the opposite sign.
    pub t: f64,
    pub df: f64,
    /// Two-sided.
    pub p: f64,
}

/// Welch's unequal-variance t-test. Needs at least two finite values on each side.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    let (a, b) = (finite(a), finite(b));
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (ma, va) = mean_var(&a);
    let (mb, vb) = mean_var(&b);
    let (ra, rb) = (va / na, vb / nb);
    let se2 = ra + rb;
    if se2 == 0.0 {
        // Constant samples (a timer with coarse resolution can do this): the difference is either
        // certain or absent.
        let df = na + nb - 2.0;
        return Some(if ma == mb {
            Welch { t: 0.0, df, p: 1.0 }
        } else {
            Welch {
                t: if mb > ma {
                    f64::INFINITY
                } else {
                    f64::NEG_INFINITY
                },
                df,
                p: 0.0,
            }
        });
    }
    let t = (mb - ma) / se2.sqrt();
    let df = se2 * se2 / (ra * ra / (na - 1.0) + rb * rb / (nb - 1.0));
    Some(Welch {
        t,
        df,
        p: t_two_sided_p(t, df),
    })
}

/// Median of the finite values of `xs` (NaN when there are none).
pub fn median(xs: &[f64]) -> f64 {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The robust standard deviation of `xs`: 1.4826 × their median absolute deviation from
/// their median (the sd for normal data, untouched by a few wild values).
pub fn robust_sd(xs: &[f64]) -> f64 {
    let med = median(xs);
    let dev: Vec<f64> = xs.iter().map(|x| (x - med).abs()).collect();
    1.4826 * median(&dev)
}

/// The most [`outlier_trim`] takes from each end of a sample (20%, the usual fixed choice).
pub const TRIM: f64 = 0.2;

/// A value is an outlier when its log lies more than this many robust standard deviations
/// (1.4826 × MAD) from its side's median: 3.5 flags about 1 in 2000 values of normal noise, and
/// any slow process of a neighbour (+20% and more against a CV of a few %).
pub const OUTLIER_SDS: f64 = 3.5;

/// How many values to trim from each end of `xs` (log values): as many as the side has outliers at
/// its worse end, at most [`TRIM`] of them. Fixed 20% trimming costs power on clean data (in
/// simulation, iid 3% noise, a two-step range: both steps found in 65% of trials against 80%
/// untrimmed), and clean data is the common case; trimming only what is wild keeps that power and
/// still removes the odd slow process.
fn outlier_trim(xs: &[f64]) -> usize {
    let n = xs.len();
    if n < 5 {
        return 0;
    }
    let med = median(xs);
    let sd = robust_sd(xs);
    if sd == 0.0 {
        return 0;
    }
    let high = xs.iter().filter(|&&x| x > med + OUTLIER_SDS * sd).count();
    let low = xs.iter().filter(|&&x| x < med - OUTLIER_SDS * sd).count();
    high.max(low).min((TRIM * n as f64).floor() as usize)
}

/// Yuen's trimmed-mean test (Welch's test on trimmed means with winsorized variances) on the
/// log of the values, so that effects are ratios and one slow process cannot move the verdict.
#[derive(Serialize, Clone, Copy, Debug, PartialEq)]
pub struct Yuen {
    /// (trimmed mean of log b − trimmed mean of log a) / se: positive when B is slower.
    pub t: f64,
    pub df: f64,
    /// Two-sided.
    pub p: f64,
    /// exp(difference of trimmed log means): B/A.
    pub ratio: f64,
    /// Standard error of that difference (log scale).
    pub se: f64,
}

/// Trimmed mean (g values off each end) and Yuen's squared standard error term
/// d = (n − 1)·s²_w / (h·(h − 1)).
fn trimmed(xs: &[f64], g: usize) -> Option<(f64, f64, f64)> {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if 2 * g >= n {
        return None;
    }
    let h = n - 2 * g;
    if h < 2 {
        return None;
    }
    let tm = v[g..n - g].iter().sum::<f64>() / h as f64;
    let w: Vec<f64> = v.iter().map(|&x| x.clamp(v[g], v[n - g - 1])).collect();
    let (_, var_w) = mean_var(&w);
    let d = (n as f64 - 1.0) * var_w / (h as f64 * (h as f64 - 1.0));
    Some((tm, d, h as f64))
}

/// Yuen's test of B against A on log values with `trim` from each end. Needs positive values and
/// at least two left after trimming on each side; matches `scipy.stats.ttest_ind(log a, log b,
/// equal_var=False, trim=trim)` (with the opposite sign of t).
#[cfg(test)]
fn yuen(a: &[f64], b: &[f64], trim: f64) -> Option<Yuen> {
    let g = |n: usize| (trim * n as f64).floor() as usize;
    yuen_logs(&logs(a)?, &logs(b)?, g(a.len()), g(b.len()))
}

/// Yuen's test with each side trimmed of its own outliers ([`outlier_trim`]).
pub fn yuen_robust(a: &[f64], b: &[f64]) -> Option<Yuen> {
    let (la, lb) = (logs(a)?, logs(b)?);
    yuen_logs(&la, &lb, outlier_trim(&la), outlier_trim(&lb))
}

/// A robust location of positive values for comparisons between several subjects: the mean of
/// their logs trimmed of outliers ([`outlier_trim`]), its squared standard error, and the number
/// of values kept (h; the degrees of freedom of the se are h − 1).
pub fn robust_log_location(xs: &[f64]) -> Option<(f64, f64, f64)> {
    let l = logs(xs)?;
    trimmed(&l, outlier_trim(&l))
}

fn logs(xs: &[f64]) -> Option<Vec<f64>> {
    let v = finite(xs);
    v.iter()
        .all(|&x| x > 0.0)
        .then(|| v.iter().map(|x| x.ln()).collect())
}

fn yuen_logs(la: &[f64], lb: &[f64], ga: usize, gb: usize) -> Option<Yuen> {
    let (ma, da, ha) = trimmed(la, ga)?;
    let (mb, db, hb) = trimmed(lb, gb)?;
    let diff = mb - ma;
    let se2 = da + db;
    if se2 == 0.0 {
        let df = ha + hb - 2.0;
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        let t = if diff == 0.0 {
            0.0
        } else {
            diff.signum() * f64::INFINITY
        };
        return Some(Yuen {
            t,
            df,
            p,
            ratio: diff.exp(),
            se: 0.0,
        });
    }
    let df = se2 * se2 / (da * da / (ha - 1.0) + db * db / (hb - 1.0));
    let t = diff / se2.sqrt();
    Some(Yuen {
        t,
        df,
        p: t_two_sided_p(t, df),
        ratio: diff.exp(),
        se: se2.sqrt(),
    })
}

/// The paired form: the per-round differences d = log b − log a, trimmed of their own outliers,
/// tested against 0 (Tukey–McLaughlin's one-sample trimmed t). A shift of the whole machine that
/// hits both subjects of a round alike cancels in d, so drift and load bursts that widen the
/// unpaired test's spread leave this one untouched.
pub fn yuen_paired(a: &[f64], b: &[f64]) -> Option<Yuen> {
    if a.len() != b.len() {
        return None;
    }
    let (la, lb) = (logs(a)?, logs(b)?);
    if la.len() != a.len() || lb.len() != b.len() {
        return None;
    }
    let d: Vec<f64> = la.iter().zip(&lb).map(|(x, y)| y - x).collect();
    let (m, se2, h) = trimmed(&d, outlier_trim(&d))?;
    let df = h - 1.0;
    if se2 == 0.0 {
        let p = if m == 0.0 { 1.0 } else { 0.0 };
        let t = if m == 0.0 {
            0.0
        } else {
            m.signum() * f64::INFINITY
        };
        return Some(Yuen {
            t,
            df,
            p,
            ratio: m.exp(),
            se: 0.0,
        });
    }
    let t = m / se2.sqrt();
    Some(Yuen {
        t,
        df,
        p: t_two_sided_p(t, df),
        ratio: m.exp(),
        se: se2.sqrt(),
    })
}

impl Yuen {
    /// The (conf) interval of B/A.
    pub fn ratio_ci(&self, conf: f64) -> Option<RatioCi> {
        if self.se == 0.0 {
            return Some(RatioCi {
                ratio: self.ratio,
                lo: self.ratio,
                hi: self.ratio,
            });
        }
        let half = t_quantile(conf, self.df)? * self.se;
        Some(RatioCi {
            ratio: self.ratio,
            lo: self.ratio * (-half).exp(),
            hi: self.ratio * half.exp(),
        })
    }
}

/// Ranks (1-based, ties get their average rank) of the pooled values, and Σ(t³ − t) over tie groups.
fn pooled_ranks(a: &[f64], b: &[f64]) -> (Vec<f64>, f64) {
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut ranks_a = Vec::with_capacity(a.len());
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        ranks_a.extend(all[i..=j].iter().filter(|v| v.1).map(|_| avg));
        i = j + 1;
    }
    (ranks_a, tie_term)
}

/// U statistic of `a` (number of pairs with a > b, ties counting one half), and the tie term.
fn mwu_u(a: &[f64], b: &[f64]) -> (f64, f64) {
    let (ranks_a, tie_term) = pooled_ranks(a, b);
    let n1 = a.len() as f64;
    (
        ranks_a.iter().sum::<f64>() - n1 * (n1 + 1.0) / 2.0,
        tie_term,
    )
}

/// Largest sample sizes for which the exact null distribution is used (as scipy's `method='auto'`
/// does for small samples without ties); beyond that the normal approximation is good.
const MWU_EXACT_MAX: usize = 8;

/// Two-sided Mann–Whitney U p-value. Exact when there are no ties and both samples have at most
/// 8 values (the normal approximation is poor there); otherwise [`mann_whitney_p_asymptotic`].
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let (a, b) = (finite(a), finite(b));
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (u1, tie_term) = mwu_u(&a, &b);
    if tie_term == 0.0 && a.len() <= MWU_EXACT_MAX && b.len() <= MWU_EXACT_MAX {
        return Some(mwu_exact_p(u1, a.len(), b.len()));
    }
    mann_whitney_p_asymptotic(&a, &b)
}

/// Two-sided Mann–Whitney U p-value by the normal approximation with tie correction and continuity
/// correction (scipy's `method='asymptotic', use_continuity=True`). All values tied → p = 1.
pub fn mann_whitney_p_asymptotic(a: &[f64], b: &[f64]) -> Option<f64> {
    let (a, b) = (finite(a), finite(b));
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let (u1, tie_term) = mwu_u(&a, &b);
    let u = u1.max(n1 * n2 - u1);
    let n = n1 + n2;
    let var = if n > 1.0 {
        n1 * n2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)))
    } else {
        0.0
    };
    // NaN-safe: anything but a positive variance means "no evidence".
    if var.is_nan() || var <= 0.0 {
        return Some(1.0);
    }
    let z = (u - n1 * n2 / 2.0 - 0.5) / var.sqrt();
    Some((2.0 * Normal::standard().sf(z)).clamp(0.0, 1.0))
}

/// Smallest p-value [`mann_whitney_p`] can give for these sample sizes (complete separation).
fn mwu_min_p(n1: usize, n2: usize) -> Option<f64> {
    let a: Vec<f64> = (0..n1).map(|i| i as f64).collect();
    let b: Vec<f64> = (n1..n1 + n2).map(|i| i as f64).collect();
    mann_whitney_p(&a, &b)
}

/// Exact two-sided p for U without ties: 2·P(U ≥ max(U1, U2)), capped at 1.
fn mwu_exact_p(u1: f64, n1: usize, n2: usize) -> f64 {
    let max_u = n1 * n2;
    // counts[i][j][u]: arrangements of i a's and j b's with U = u; built up one value at a time
    // (the last value is an a, adding j to U, or a b, adding nothing).
    let mut prev: Vec<Vec<f64>> = vec![vec![0.0; max_u + 1]; n2 + 1];
    for row in prev.iter_mut() {
        row[0] = 1.0;
    }
    for _i in 1..=n1 {
        let mut cur: Vec<Vec<f64>> = vec![vec![0.0; max_u + 1]; n2 + 1];
        cur[0][0] = 1.0;
        for j in 1..=n2 {
            for u in 0..=max_u {
                let from_a = if u >= j { prev[j][u - j] } else { 0.0 };
                cur[j][u] = from_a + cur[j - 1][u];
            }
        }
        prev = cur;
    }
    let dist = &prev[n2];
    let total: f64 = dist.iter().sum();
    let u = u1.max(max_u as f64 - u1);
    let upper: f64 = dist
        .iter()
        .enumerate()
        .filter(|(k, _)| *k as f64 >= u - 1e-9)
        .map(|(_, c)| c)
        .sum();
    (2.0 * upper / total).min(1.0)
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, schemars::JsonSchema)]
pub struct RatioCi {
    /// mean(b) / mean(a): above 1 means B is slower.
    #[serde(deserialize_with = "nan_if_null")]
    pub ratio: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub lo: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub hi: f64,
}

impl RatioCi {
    /// `+48.2% [+45.1%, +51.4%]`: the change of B relative to A.
    pub fn pct(&self) -> String {
        let p = |r: f64| {
            if r.is_finite() {
                format!("{:+.1}%", (r - 1.0) * 100.0)
            } else {
                "?".to_string()
            }
        };
        format!("{} [{}, {}]", p(self.ratio), p(self.lo), p(self.hi))
    }

    fn unknown() -> RatioCi {
        RatioCi {
            ratio: f64::NAN,
            lo: f64::NAN,
            hi: f64::NAN,
        }
    }
}

/// Ratio of means mean(b)/mean(a) with a `conf` confidence interval.
///
/// Method: delta method on the log ratio. Var(log r) ≈ s_a²/(n_a·m_a²) + s_b²/(n_b·m_b²), with
/// Welch–Satterthwaite degrees of freedom computed from those two relative terms and a t quantile;
/// the interval is exp(log r ± t·se). Working on the log scale keeps the interval positive and
/// asymmetric the way ratios are, and matches the log-normal noise of timings. Needs two finite
/// values per side and positive means (µs/op always is); otherwise `None`.
pub fn ratio_ci(a: &[f64], b: &[f64], conf: f64) -> Option<RatioCi> {
    let (a, b) = (finite(a), finite(b));
    if a.len() < 2 || b.len() < 2 || !(conf > 0.0 && conf < 1.0) {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (ma, va) = mean_var(&a);
    let (mb, vb) = mean_var(&b);
    if !(ma > 0.0 && mb > 0.0) {
        return None;
    }
    let ratio = mb / ma;
    let (ra, rb) = (va / (na * ma * ma), vb / (nb * mb * mb));
    let var = ra + rb;
    if var == 0.0 {
        return Some(RatioCi {
            ratio,
            lo: ratio,
            hi: ratio,
        });
    }
    let df = var * var / (ra * ra / (na - 1.0) + rb * rb / (nb - 1.0));
    let half = t_quantile(conf, df)? * var.sqrt();
    Some(RatioCi {
        ratio,
        lo: ratio * (-half).exp(),
        hi: ratio * half.exp(),
    })
}

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
    fn of(r: &RatioCi, min_effect: f64) -> Size {
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
    let (pa, pb) = samples::pairs(a, b);
    compare_with(&a.values, &b.values, alpha, min_effect, Some((&pa, &pb)))
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
    let unpaired = yuen_robust(a, b);
    // Below 5 rounds the paired test has df ≤ 3: its interval is useless at a search's small
    // alphas, and choosing it would only widen the reported one.
    let pairs = pairs.filter(|(pa, _)| pa.len() >= 5);
    let paired = pairs.and_then(|(pa, pb)| yuen_paired(pa, pb));
    let (y, p_yuen, conf) = match (unpaired, paired) {
        (Some(u), Some(p)) => {
            let best = if p.p < u.p { p } else { u };
            let k = super::alpha::TWO_TESTS;
            (Some(best), (k * best.p).min(1.0), 1.0 - alpha / k)
        }
        (u, _) => (u, u.map_or(f64::NAN, |u| u.p), 1.0 - alpha),
    };
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
        pairs: if paired.is_some() {
            pairs.map_or(0, |(pa, _)| pa.len())
        } else {
            0
        },
    }
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;
