//! Statistics for comparing two sets of samples (µs per operation; larger = slower).
//!
//! Every function takes arbitrary slices: non-finite values (NaN, ±inf) are dropped first, because a
//! sample that is not a number carries no information about speed, and one NaN would otherwise turn
//! every later figure into NaN. Too few values give `None` (or, for [`summarize`], a defined value).
//!
//! Sequential use: the bisect takes looks at growing sample sizes and calls [`compare`] at each look
//! with a per-look alpha. This module does not split alpha itself; the split (Bonferroni over
//! decisions × looks × tests) is done and documented in `crate::analysis::bisect`.

use serde::{Deserialize, Deserializer, Serialize};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

mod compare;
mod mann_whitney;
mod means;
mod robust;
mod tail;

pub use compare::{
    compare, compare_rounds, compare_rounds_with, Comparison, Size, TailRule, Verdict,
};
pub use mann_whitney::{mann_whitney_p, mann_whitney_p_asymptotic};
pub use means::{ratio_ci, welch, Welch};
pub use robust::{
    median, robust_log_location, robust_sd, yuen_paired, yuen_robust, Yuen, OUTLIER_SDS, TRIM,
};
pub use tail::{tail_check, TailCounts, TAIL_MAX_SAMPLES};

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

#[cfg(test)]
mod tail_tests;
#[cfg(test)]
mod tests;
