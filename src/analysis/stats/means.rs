//! Tests on means: Welch's t-test, and the ratio of means with its delta-method interval.

use serde::Serialize;

use super::{finite, mean_var, t_quantile, t_two_sided_p, RatioCi};

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
