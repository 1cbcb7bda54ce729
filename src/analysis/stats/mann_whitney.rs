//! The Mann–Whitney U test: exact for small samples without ties, asymptotic otherwise.

use statrs::distribution::{ContinuousCDF, Normal};

use super::finite;

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
pub(super) fn mwu_min_p(n1: usize, n2: usize) -> Option<f64> {
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
