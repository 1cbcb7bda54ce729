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

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
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

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
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
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Slower,
    Faster,
    Same,
    Undecided,
}

/// How a change's interval sits against the smallest effect worth reporting.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
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

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
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
mod tests {
    use super::*;

    const A: [f64; 6] = [10.1, 10.4, 9.8, 10.0, 10.3, 10.2];
    const B: [f64; 5] = [10.9, 11.3, 10.7, 11.6, 11.0];

    fn close(x: f64, y: f64, rel: f64) -> bool {
        (x - y).abs() <= rel * y.abs().max(1e-300)
    }

    #[test]
    fn summary_matches_scipy() {
        // np.mean(A), np.std(A, ddof=1),
        // scipy.stats.t.interval(0.95, 5, loc=np.mean(A), scale=scipy.stats.sem(A))
        let s = summarize(&A);
        assert_eq!(s.n, 6);
        assert!(close(s.mean, 10.133333333333333, 1e-12));
        assert!(close(s.sd, 0.21602468994692864, 1e-10));
        assert!(close(s.ci95.0, 9.906629324605547, 1e-8));
        assert!(close(s.ci95.1, 10.36003734206112, 1e-8));
    }

    #[test]
    fn yuen_matches_scipy() {
        // scipy.stats.ttest_ind(np.log(a), np.log(b), equal_var=False, trim=0.2)
        let a = [100.0, 101.0, 99.5, 100.4, 100.9, 99.8, 130.0];
        let b = [120.0, 121.3, 119.4, 120.8, 119.9, 120.5, 104.0];
        let y = yuen(&a, &b, 0.2).unwrap();
        assert!(close(y.t, 43.85484467759016, 1e-9), "{y:?}");
        assert!(close(y.df, 7.922411136448914, 1e-9), "{y:?}");
        assert!(close(y.p, 9.645028489729775e-11, 1e-6), "{y:?}");
        let a = [1.0, 1.1, 0.9, 1.05, 0.97];
        let b = [1.2, 1.1, 1.3, 1.25, 1.15];
        let y = yuen(&a, &b, 0.2).unwrap();
        assert!(close(y.t, 3.7302767295046446, 1e-9), "{y:?}");
        assert!(close(y.df, 3.9917294543959834, 1e-9), "{y:?}");
        assert!(close(y.p, 0.020367126563164802, 1e-6), "{y:?}");
        // an outlier that sinks Welch does not sink Yuen
        let a = [
            100.0, 100.5, 99.6, 100.2, 99.9, 100.3, 99.7, 100.1, 100.4, 99.8,
        ];
        let mut b: Vec<f64> = a.iter().map(|x| x * 1.1).collect();
        b[3] *= 2.0;
        assert!(welch(&a, &b).unwrap().p > 0.01);
        assert!(yuen(&a, &b, 0.2).unwrap().p < 1e-6);
        // nor the robust variant, which trims only that one value and nothing of clean data
        assert!(yuen_robust(&a, &b).unwrap().p < 1e-6);
        let la = logs(&a).unwrap();
        let lb = logs(&b).unwrap();
        assert_eq!((outlier_trim(&la), outlier_trim(&lb)), (0, 1));
        assert_eq!(
            yuen_robust(&a, &a[..9]).unwrap().p,
            yuen(&a, &a[..9], 0.0).unwrap().p
        );
    }

    /// `xs` taken in consecutive rounds from `first` on.
    fn rounds(xs: &[f64], first: u64) -> Samples {
        Samples {
            values: xs.to_vec(),
            rounds: (first..)
                .take(xs.len())
                .map(|round| Some(samples::RoundKey { session: 1, round }))
                .collect(),
        }
    }

    #[test]
    fn paired_rounds_see_through_a_drifting_machine() {
        // a +5% change; the machine drifts by ±10% between rounds, alike for both subjects
        let drift = [1.0, 1.1, 0.9, 1.05, 0.95, 1.08, 0.92, 1.02, 0.97, 1.1];
        let jitter = [
            1.0, 1.004, 0.997, 1.002, 0.999, 1.003, 0.998, 1.001, 0.996, 1.0,
        ];
        let a: Vec<f64> = drift
            .iter()
            .zip(&jitter)
            .map(|(d, j)| 100.0 * d * j)
            .collect();
        let b: Vec<f64> = drift
            .iter()
            .zip(jitter.iter().rev())
            .map(|(d, j)| 105.0 * d * j)
            .collect();
        let unpaired = compare(&a, &b, 0.01, 0.03);
        let paired = compare_rounds(&rounds(&a, 1), &rounds(&b, 1), 0.01, 0.03);
        assert_eq!(unpaired.verdict, Verdict::Undecided);
        assert_eq!(paired.verdict, Verdict::Slower);
        assert_eq!(paired.pairs, 10);
        assert!(
            (paired.ratio.ratio - 1.05).abs() < 0.005,
            "{:?}",
            paired.ratio
        );
        // on the same values without pairing information nothing changes
        let same = compare_rounds(&rounds(&a, 1), &rounds(&a, 1), 0.01, 0.03);
        assert!(same.p_yuen > 0.5);
        assert!(yuen_paired(&a, &b[..9]).is_none());
        // B's samples one round later than A's are no pairs: the drift no longer cancels.
        let shifted = compare_rounds(&rounds(&a, 1), &rounds(&b, 2), 0.01, 0.03);
        assert_eq!(shifted.pairs, 9);
        assert_eq!(shifted.verdict, Verdict::Undecided);
        let none = compare_rounds(&Samples::unpaired(a.clone()), &rounds(&b, 1), 0.01, 0.03);
        assert_eq!((none.pairs, none.verdict), (0, Verdict::Undecided));
    }

    #[test]
    fn size_against_min_effect() {
        let r = |lo, hi| RatioCi {
            ratio: (lo + hi) / 2.0,
            lo,
            hi,
        };
        assert_eq!(Size::of(&r(1.06, 1.2), 0.05), Size::AtLeast);
        assert_eq!(Size::of(&r(0.8, 0.94), 0.05), Size::AtLeast);
        assert_eq!(Size::of(&r(1.01, 1.04), 0.05), Size::Below);
        assert_eq!(Size::of(&r(1.02, 1.08), 0.05), Size::Uncertain);
    }

    #[test]
    fn summary_degenerate() {
        let e = summarize(&[]);
        assert_eq!(e.n, 0);
        assert!(e.mean.is_nan());
        let one = summarize(&[3.0]);
        assert_eq!(
            (one.n, one.mean, one.sd, one.ci95),
            (1, 3.0, 0.0, (3.0, 3.0))
        );
        let nan = summarize(&[f64::NAN, 2.0, 4.0, f64::INFINITY]);
        assert_eq!((nan.n, nan.mean), (2, 3.0));
        let flat = summarize(&[2.0; 4]);
        assert_eq!((flat.sd, flat.ci95), (0.0, (2.0, 2.0)));
    }

    #[test]
    fn quantiles_match_scipy() {
        // scipy.stats.t.ppf(0.975, 5), scipy.stats.t.ppf(0.995, 12.3)
        assert!(close(
            t_quantile(0.95, 5.0).unwrap(),
            2.5705818356363146,
            1e-8
        ));
        assert!(close(
            t_quantile(0.99, 12.3).unwrap(),
            3.0410295709435236,
            1e-8
        ));
        assert!(t_quantile(f64::NAN, 5.0).is_none());
        assert!(t_quantile(0.95, 0.0).is_none());
        assert!(t_quantile(1.0, 5.0).is_none());
    }

    #[test]
    fn welch_matches_scipy() {
        // scipy.stats.ttest_ind(A, B, equal_var=False) -> statistic -5.339332783810285,
        // pvalue 0.0014494331626801256, df 6.3818865157209625 (scipy's t is mean(a)-mean(b))
        let w = welch(&A, &B).unwrap();
        assert!(close(w.t, 5.339332783810285, 1e-10));
        assert!(close(w.df, 6.3818865157209625, 1e-10));
        assert!(close(w.p, 0.0014494331626801256, 1e-6));
        // scipy.stats.ttest_ind([1..8], [2.5, 3.5, .., 10.5], equal_var=False)
        let c = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        let d = [2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5];
        let w = welch(&c, &d).unwrap();
        assert!(close(w.t, 1.5894388284780523, 1e-10));
        assert!(close(w.df, 14.997032640949557, 1e-10));
        assert!(close(w.p, 0.13281662704158104, 1e-6));
    }

    #[test]
    fn welch_degenerate() {
        assert!(welch(&[], &A).is_none());
        assert!(welch(&[1.0], &A).is_none());
        assert!(welch(&[1.0, f64::NAN], &A).is_none());
        assert_eq!(welch(&[2.0; 3], &[2.0; 4]).unwrap().p, 1.0);
        let w = welch(&[2.0; 3], &[3.0; 4]).unwrap();
        assert_eq!(w.p, 0.0);
        assert!(w.t > 0.0);
        // one side constant: still a regular test
        let w = welch(&[2.0; 3], &[3.0, 3.1, 2.9]).unwrap();
        assert!(w.p > 0.0 && w.p < 0.01);
    }

    #[test]
    fn mann_whitney_matches_scipy() {
        // scipy.stats.mannwhitneyu(A, B, alternative='two-sided', method='asymptotic',
        //                          use_continuity=True).pvalue
        assert!(close(
            mann_whitney_p_asymptotic(&A, &B).unwrap(),
            0.00811311726556578,
            1e-9
        ));
        // ... method='exact'
        assert!(close(
            mann_whitney_p(&A, &B).unwrap(),
            0.004329004329004329,
            1e-9
        ));
        let g = [3.1, 1.2, 5.5, 4.4, 2.0, 6.3, 7.7];
        let h = [4.0, 8.1, 6.6, 9.9, 5.0, 7.0];
        // scipy.stats.mannwhitneyu(g, h, alternative='two-sided', method='exact')
        assert!(close(
            mann_whitney_p(&g, &h).unwrap(),
            0.10139860139860139,
            1e-9
        ));
        // ... method='asymptotic'
        assert!(close(
            mann_whitney_p_asymptotic(&g, &h).unwrap(),
            0.10041249398610284,
            1e-9
        ));
        // with ties: scipy.stats.mannwhitneyu(e, f, alternative='two-sided', method='asymptotic',
        //                                     use_continuity=True).pvalue
        let e = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 5.0, 9.0, 9.0];
        let f = [2.0, 3.0, 4.0, 4.0, 5.0, 6.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0];
        assert!(close(
            mann_whitney_p(&e, &f).unwrap(),
            0.06789407672171735,
            1e-9
        ));
        // order of the arguments does not matter for a two-sided test
        assert!(close(
            mann_whitney_p(&f, &e).unwrap(),
            0.06789407672171735,
            1e-9
        ));
    }

    #[test]
    fn mann_whitney_degenerate() {
        assert!(mann_whitney_p(&[], &[1.0]).is_none());
        assert_eq!(mann_whitney_p(&[1.0; 10], &[1.0; 10]), Some(1.0));
        assert_eq!(mann_whitney_p(&[1.0], &[2.0]), Some(1.0));
        assert!(mann_whitney_p(&[f64::NAN], &[1.0]).is_none());
    }

    #[test]
    fn ratio_ci_matches_reference() {
        // delta method computed in numpy: r = mean(B)/mean(A); v = var(A)/(nA mA^2) + var(B)/(nB mB^2);
        // df = Welch-Satterthwaite on those terms; r * exp(-+ scipy.stats.t.ppf(0.975, df) * sqrt(v))
        let r = ratio_ci(&A, &B, 0.95).unwrap();
        assert!(close(r.ratio, 1.0953947368421055, 1e-12));
        assert!(close(r.lo, 1.0527336213093483, 1e-8));
        assert!(close(r.hi, 1.1397846570236927, 1e-8));
        assert_eq!(r.pct(), "+9.5% [+5.3%, +14.0%]");
        let f = RatioCi {
            ratio: 0.9,
            lo: 0.85,
            hi: 0.951,
        };
        assert_eq!(f.pct(), "-10.0% [-15.0%, -4.9%]");
        assert_eq!(RatioCi::unknown().pct(), "? [?, ?]");
    }

    #[test]
    fn ratio_ci_degenerate() {
        assert!(ratio_ci(&A, &B, 1.0).is_none());
        assert!(ratio_ci(&A, &B, f64::NAN).is_none());
        assert!(ratio_ci(&[1.0], &B, 0.95).is_none());
        assert!(ratio_ci(&[-1.0, 1.0], &B, 0.95).is_none());
        let r = ratio_ci(&[2.0; 3], &[3.0; 3], 0.95).unwrap();
        assert_eq!((r.ratio, r.lo, r.hi), (1.5, 1.5, 1.5));
    }

    #[test]
    fn compare_verdicts() {
        let c = compare(&A, &B, 0.01, 0.03);
        assert_eq!(c.verdict, Verdict::Slower);
        let c = compare(&B, &A, 0.01, 0.03);
        assert_eq!(c.verdict, Verdict::Faster);
        // significant but below the minimum effect: not a change, and too wide to call the same
        let x: Vec<f64> = (0..30).map(|i| 100.0 + (i % 5) as f64 * 0.1).collect();
        let y: Vec<f64> = x.iter().map(|v| v * 1.01).collect();
        let c = compare(&x, &y, 0.01, 0.03);
        assert!(c.p_welch < 0.01);
        assert_eq!(c.verdict, Verdict::Same);
        let c = compare(&x, &x, 0.01, 0.03);
        assert_eq!(c.verdict, Verdict::Same);
        assert!(!c.tests_disagree);
        // few noisy samples: cannot tell
        let c = compare(&[1.0, 1.2], &[1.1, 0.9], 0.01, 0.03);
        assert_eq!(c.verdict, Verdict::Undecided);
        // nothing at all
        let c = compare(&[], &[f64::NAN], 0.01, 0.03);
        assert_eq!(c.verdict, Verdict::Undecided);
        assert!(c.p_welch.is_nan());
        let c = compare(&A, &B, 0.0, 0.03);
        assert_eq!(c.verdict, Verdict::Undecided);
        let json = serde_json::to_value(compare(&A, &B, 0.01, 0.03)).unwrap();
        assert_eq!(json["verdict"], "slower");
    }

    #[test]
    fn tests_disagree_only_when_reachable() {
        // 5 vs 5: the rank test's smallest p is 0.008, so at alpha 0.001 it cannot agree.
        let a = [1.0, 1.01, 0.99, 1.0, 1.02];
        let b = [1.2, 1.21, 1.19, 1.2, 1.22];
        let c = compare(&a, &b, 0.001, 0.03);
        assert!(c.p_yuen < 0.001 && c.p_mwu > 0.001);
        assert!(!c.tests_disagree);
        // one wild outlier makes Welch lose significance while ranks still separate
        let a: Vec<f64> = (0..12).map(|i| 1.0 + i as f64 * 0.001).collect();
        let mut b: Vec<f64> = a.iter().map(|v| v + 0.1).collect();
        b[0] = 50.0;
        // Welch loses significance; the trimmed test the verdict uses does not, and agrees with
        // the ranks
        let c = compare(&a, &b, 0.01, 0.03);
        assert!(c.p_mwu < 0.01 && c.p_welch > 0.01 && c.p_yuen < 0.01);
        assert_eq!(c.verdict, Verdict::Slower);
        assert!(!c.tests_disagree);
    }

    /// Instruction counts: (almost) no spread. The interval collapses onto the ratio, so
    /// min-effect alone decides how large a change must be to count, and 3 samples a side
    /// are enough (the metric's default schedule).
    #[test]
    fn zero_variance_verdicts_follow_min_effect() {
        let a = [4_383_218.0; 3];
        let same = compare(&a, &a, 0.001, 0.03);
        assert_eq!(same.verdict, Verdict::Same);
        assert_eq!(same.size, Size::Below);
        assert_eq!((same.ratio.lo, same.ratio.hi), (1.0, 1.0));

        let slower: Vec<f64> = a.iter().map(|x| x * 1.05).collect();
        let c = compare(&a, &slower, 0.001, 0.03);
        assert_eq!(c.verdict, Verdict::Slower);
        assert_eq!(c.size, Size::AtLeast);
        assert!((c.ratio.ratio - 1.05).abs() < 1e-9);

        // A real but small change (1%) is below a 3% min-effect: "same", not "slower".
        let small: Vec<f64> = a.iter().map(|x| x * 1.01).collect();
        let c = compare(&a, &small, 0.001, 0.03);
        assert_eq!(c.verdict, Verdict::Same);
        // ... and above a 0.5% one.
        assert_eq!(compare(&a, &small, 0.001, 0.005).verdict, Verdict::Slower);
        // Paired and unpaired alike (the search compares rounds).
        assert_eq!(
            compare_rounds(&rounds(&a, 1), &rounds(&slower, 1), 0.001, 0.03).verdict,
            Verdict::Slower
        );
        let faster: Vec<f64> = a.iter().map(|x| x * 0.9).collect();
        assert_eq!(
            compare_rounds(&rounds(&a, 1), &rounds(&faster, 1), 0.001, 0.03).verdict,
            Verdict::Faster
        );
    }

    /// A count that varies by a few instructions in a million (the spread measured on
    /// pkeyread under callgrind) still gives an interval far inside ±min-effect at n = 3 and a
    /// search's per-step alpha.
    #[test]
    fn near_zero_variance_decides_with_three_samples() {
        let a = [4_383_218.2, 4_383_384.7, 4_383_301.0];
        let b_same = [4_383_290.0, 4_383_199.5, 4_383_350.1];
        let c = compare(&a, &b_same, 1e-4, 0.03);
        assert_eq!(c.verdict, Verdict::Same);
        assert!(c.ratio.hi - c.ratio.lo < 0.001, "{:?}", c.ratio);
        let b_new: Vec<f64> = b_same.iter().map(|x| x * 1.04).collect();
        let c = compare(&a, &b_new, 1e-4, 0.03);
        assert_eq!(c.verdict, Verdict::Slower);
        assert_eq!(c.size, Size::AtLeast);
    }
}
