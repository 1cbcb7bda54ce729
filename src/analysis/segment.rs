//! A step model fitted to a coarse grid of measured commits: which grid points share a level,
//! and where the level changes. Pure: points in, segments out.
//!
//! # Method: PELT with a penalty from the points' own uncertainty
//!
//! Each grid point is a robust location of its samples on the log scale (the outlier-trimmed mean
//! of the logs, [`stats::robust_log_location`]) with the squared standard error `v` of that
//! location. A step model is a partition of the points into segments of equal level; its cost is
//! the weighted residual sum of squares `Σ (m_i − m̄_seg)² / v_i` (m̄_seg the inverse-variance
//! weighted mean) plus a penalty `β` per change point. The partition of least cost is found
//! exactly by optimal partitioning with PELT's pruning (Killick, Fearnhead & Eckley 2012, "Optimal
//! detection of changepoints with a linear computational cost", JASA 107:1590): a start `s` is
//! dropped once `F(s) + C(s..t) > F(t)`, valid here because splitting a segment never raises its
//! residual sum of squares.
//!
//! Why PELT rather than binary segmentation or E-divisive: a grid is small (16–64 points), so
//! the exact optimum is cheap, and binary segmentation's greedy first split misses exactly the
//! case this command exists for: two changes that cancel at the ends (no single split of the
//! series explains much, the pair does). E-divisive is distribution-free but needs many points
//! per segment; here a segment is often one point (a grid point inside a transient bump), while
//! each point carries its own samples, so its uncertainty is known and can be used directly.
//!
//! The penalty: with known variances, adding one change point between two segments lowers the
//! cost by `z² = Δ² / (1/W₁ + 1/W₂)` (W the segments' summed weights), a χ²₁ statistic when the
//! level does not change. Searched over the `G − 1` places a change can sit, `β` is the square of
//! the two-sided Student-t quantile at `level` (Bonferroni over the places, the level from
//! [`crate::analysis::alpha::scan_fit_level`]) with the smallest degrees of freedom of any point
//! (its variance is estimated from a handful of samples; with [`pool`], the pooled degrees of
//! freedom). Changes smaller than the minimum effect are kept as fitted (the profile shows them);
//! which of them are worth a search is the caller's decision (analysis::scan). Merging them away
//! was tried and dropped: merging a small step into its neighbour shifts that neighbour's level,
//! and in simulation it hid a +15% step next to a −8% one at a 10% minimum effect.

use crate::analysis::stats;
use serde::{Deserialize, Serialize};

/// One grid point: a position (commit index) and a location on the log scale.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub pos: usize,
    /// Location of ln(µs/op).
    pub mean: f64,
    /// Squared standard error of `mean`.
    pub var: f64,
    /// Degrees of freedom of `var`.
    pub df: f64,
}

impl Point {
    /// The robust location of positive samples (None with fewer than 2 usable values).
    pub fn from_samples(pos: usize, xs: &[f64]) -> Option<Point> {
        let (mean, var, h) = stats::robust_log_location(xs)?;
        (h >= 2.0 && mean.is_finite() && var.is_finite()).then_some(Point {
            pos,
            mean,
            var,
            df: h - 1.0,
        })
    }
}

/// Points whose variances are pooled: every point's samples come from the same machine in the
/// same rounds, so one spread estimated from all of them (`Σ df·v·(df+1) / Σ df` per sample) is
/// far more precise than each point's own from a handful of samples, and the penalty can use
/// its degrees of freedom (`Σ df`) instead of the smallest point's. A point noisier than the
/// pooled spread keeps its own variance (the larger of the two), so a noisy commit is not made
/// to look precise. In simulation (realistic noise, 10 samples per point) this lowered the
/// penalty from about 56 to about 12 and found single-point end segments of 8% that the
/// per-point variances missed.
pub fn pool(points: &[Point]) -> Vec<Point> {
    let df: f64 = points.iter().map(|p| p.df).sum();
    if df <= 0.0 {
        return points.to_vec();
    }
    let per_sample = points
        .iter()
        .map(|p| p.df * p.var * (p.df + 1.0))
        .sum::<f64>()
        / df;
    points
        .iter()
        .map(|p| Point {
            var: p.var.max(per_sample / (p.df + 1.0)),
            df,
            ..p.clone()
        })
        .collect()
}

/// A run of points at one level: points `first..=last` (indices into the fitted points).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    pub first: usize,
    pub last: usize,
    /// Weighted mean of the points' log locations, and its standard error.
    pub mean: f64,
    pub se: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fit {
    pub segments: Vec<Segment>,
    /// The penalty per change point (on the scale of squared standard errors).
    pub penalty: f64,
}

#[cfg(test)]
impl Fit {
    /// Point indices where a new level starts (every segment's first point but the first).
    pub fn changes(&self) -> Vec<usize> {
        self.segments.iter().skip(1).map(|s| s.first).collect()
    }
}

/// Variances below this are taken as this (a point of identical samples would weigh infinitely).
const VAR_FLOOR: f64 = 1e-12;

/// Prefix sums of w, w·m, w·m² for O(1) segment costs.
struct Sums {
    w: Vec<f64>,
    wm: Vec<f64>,
    wmm: Vec<f64>,
}

impl Sums {
    fn new(points: &[Point]) -> Sums {
        let mut s = Sums {
            w: vec![0.0],
            wm: vec![0.0],
            wmm: vec![0.0],
        };
        for p in points {
            let w = 1.0 / p.var.max(VAR_FLOOR);
            s.w.push(s.w.last().unwrap_or(&0.0) + w);
            s.wm.push(s.wm.last().unwrap_or(&0.0) + w * p.mean);
            s.wmm
                .push(s.wmm.last().unwrap_or(&0.0) + w * p.mean * p.mean);
        }
        s
    }

    /// Weighted residual sum of squares of points `a..b` around their weighted mean.
    fn cost(&self, a: usize, b: usize) -> f64 {
        let w = self.w[b] - self.w[a];
        if w <= 0.0 {
            return 0.0;
        }
        let wm = self.wm[b] - self.wm[a];
        ((self.wmm[b] - self.wmm[a]) - wm * wm / w).max(0.0)
    }

    /// (weighted mean, its standard error) of points `a..b`.
    fn level(&self, a: usize, b: usize) -> (f64, f64) {
        let w = self.w[b] - self.w[a];
        ((self.wm[b] - self.wm[a]) / w, (1.0 / w).sqrt())
    }
}

/// The segment starts (point indices, 0 excluded) of the least-cost partition with `penalty` per
/// change point: optimal partitioning with PELT's pruning.
pub fn pelt(points: &[Point], penalty: f64) -> Vec<usize> {
    let n = points.len();
    if n < 2 {
        return vec![];
    }
    let sums = Sums::new(points);
    // f[t]: least cost of points 0..t; last[t]: start of its last segment.
    let mut f = vec![0.0; n + 1];
    let mut last = vec![0usize; n + 1];
    f[0] = -penalty;
    let mut starts: Vec<usize> = vec![0];
    for t in 1..=n {
        let (best, arg) = starts
            .iter()
            .map(|&s| (f[s] + sums.cost(s, t) + penalty, s))
            .fold((f64::INFINITY, 0), |a, b| if b.0 < a.0 { b } else { a });
        f[t] = best;
        last[t] = arg;
        // PELT: a start that cannot beat f[t] now never will (costs only grow with t).
        starts.retain(|&s| f[s] + sums.cost(s, t) <= f[t]);
        starts.push(t);
    }
    let mut cps = vec![];
    let mut t = n;
    while t > 0 {
        let s = last[t];
        if s > 0 {
            cps.push(s);
        }
        t = s;
    }
    cps.reverse();
    cps
}

/// The penalty per change point for points whose variances have at least `df` degrees of
/// freedom, at `level` per place (see the module docs).
pub fn penalty(level: f64, df: f64) -> f64 {
    let q = stats::t_quantile(1.0 - level, df.max(1.0))
        .or_else(|| stats::z_quantile(1.0 - level))
        .unwrap_or(4.0);
    q * q
}

fn segments(sums: &Sums, starts: &[usize], n: usize) -> Vec<Segment> {
    let mut bounds = vec![0];
    bounds.extend_from_slice(starts);
    bounds.push(n);
    bounds
        .windows(2)
        .map(|w| {
            let (mean, se) = sums.level(w[0], w[1]);
            Segment {
                first: w[0],
                last: w[1] - 1,
                mean,
                se,
            }
        })
        .collect()
}

/// Fit the step model: PELT at `level` per place (see the module docs).
pub fn fit(points: &[Point], level: f64) -> Fit {
    let n = points.len();
    if n == 0 {
        return Fit {
            segments: vec![],
            penalty: f64::INFINITY,
        };
    }
    let df = points
        .iter()
        .map(|p| p.df)
        .fold(f64::INFINITY, f64::min)
        .min(1e9);
    let beta = penalty(level, df);
    let sums = Sums::new(points);
    let starts = pelt(points, beta);
    Fit {
        segments: segments(&sums, &starts, n),
        penalty: beta,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use rand_distr::{Distribution, Normal};

    /// Points at `levels` (log scale) with known standard error `se` and normal noise.
    fn series(levels: &[f64], se: f64, seed: u64) -> Vec<Point> {
        let mut rng = StdRng::seed_from_u64(seed);
        let noise = Normal::new(0.0, se).unwrap();
        levels
            .iter()
            .enumerate()
            .map(|(i, &l)| Point {
                pos: i * 100,
                mean: l + noise.sample(&mut rng),
                var: se * se,
                df: 9.0,
            })
            .collect()
    }

    fn levels(n: usize, steps: &[(usize, f64)]) -> Vec<f64> {
        (0..n)
            .map(|i| steps.iter().filter(|s| s.0 <= i).map(|s| s.1).sum())
            .collect()
    }

    #[test]
    fn flat_series_has_no_change() {
        for seed in 0..50 {
            let p = series(&[0.0; 16], 0.01, seed);
            assert_eq!(fit(&p, 0.01 / 15.0).changes(), Vec::<usize>::new());
        }
    }

    #[test]
    fn one_step_and_cancelling_pair() {
        let p = series(&levels(16, &[(5, 0.10)]), 0.01, 1);
        let f = fit(&p, 0.01 / 15.0);
        assert_eq!(f.changes(), vec![5]);
        assert!((f.segments[1].mean - f.segments[0].mean - 0.10).abs() < 0.03);
        // +15% then −15%: the ends agree, the pair is found (binary segmentation's first split
        // would see little)
        let p = series(&levels(16, &[(4, 0.14), (11, -0.14)]), 0.01, 2);
        assert_eq!(fit(&p, 0.01 / 15.0).changes(), vec![4, 11]);
        // a transient bump on one point
        let p = series(&levels(16, &[(7, 0.9), (8, -0.9)]), 0.01, 3);
        assert_eq!(fit(&p, 0.01 / 15.0).changes(), vec![7, 8]);
    }

    #[test]
    fn small_but_clear_changes_are_fitted() {
        // a 2% step with tiny noise is a level of its own (whether to search it is the scan's call)
        let p = series(&levels(16, &[(8, 0.02)]), 0.001, 4);
        assert_eq!(fit(&p, 0.001).changes(), vec![8]);
        // and pooling keeps a noisy point's own variance
        let mut p = series(&levels(4, &[]), 0.01, 5);
        p[2].var = 0.01;
        let pooled = pool(&p);
        assert_eq!(pooled[2].var, 0.01);
        assert!(pooled[0].var >= p[0].var && pooled.iter().all(|q| q.df == 36.0));
    }

    #[test]
    fn pelt_matches_exhaustive_search_on_small_series() {
        // every partition of 7 points, least penalised cost, against PELT
        for seed in 0..40 {
            let p = series(&levels(7, &[(2, 0.05), (5, -0.03)]), 0.01, 100 + seed);
            let sums = Sums::new(&p);
            let beta = 9.0;
            let mut best = (f64::INFINITY, vec![]);
            for mask in 0u32..(1 << 6) {
                let starts: Vec<usize> = (1..7).filter(|i| mask & (1 << (i - 1)) != 0).collect();
                let mut b = vec![0];
                b.extend(&starts);
                b.push(7);
                let c: f64 = b.windows(2).map(|w| sums.cost(w[0], w[1]) + beta).sum();
                if c < best.0 - 1e-12 {
                    best = (c, starts);
                }
            }
            assert_eq!(pelt(&p, beta), best.1, "seed {seed}");
        }
    }

    #[test]
    fn degenerate_inputs() {
        assert!(fit(&[], 0.01).segments.is_empty());
        let one = series(&[0.0], 0.01, 1);
        assert_eq!(fit(&one, 0.01).segments.len(), 1);
        // zero variance (and no noise) does not divide by zero
        let mut p = series(&levels(4, &[(2, 0.2)]), 0.01, 1);
        for (x, l) in p.iter_mut().zip(levels(4, &[(2, 0.2)])) {
            x.var = 0.0;
            x.mean = l;
        }
        assert_eq!(fit(&p, 0.01).changes(), vec![2]);
        assert!(Point::from_samples(0, &[1.0]).is_none());
        assert!(Point::from_samples(0, &[1.0, 1.1, 1.05]).is_some());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Steps of at least 20 standard errors (and ≥ min-effect) at random places are found
        /// exactly, and nothing else; a very small per-place level keeps false changes out.
        #[test]
        fn simulated_steps_are_recovered(
            n in 4usize..40,
            raw in proptest::collection::vec((1usize..40, 0.2f64..0.6, any::<bool>()), 0..4),
            seed in any::<u64>(),
        ) {
            let mut steps: Vec<(usize, f64)> = raw
                .into_iter()
                .filter(|s| s.0 < n)
                .map(|(at, size, up)| (at, if up { size } else { -size }))
                .collect();
            steps.sort_by_key(|s| s.0);
            steps.dedup_by_key(|s| s.0);
            let mut p = series(&levels(n, &steps), 0.01, seed);
            for x in &mut p {
                x.df = 1e6; // a known variance: the normal quantile
            }
            let f = fit(&p, 1e-9);
            let want: Vec<usize> = steps.iter().map(|s| s.0).collect();
            prop_assert_eq!(f.changes(), want);
            // the segments tile the points
            prop_assert_eq!(f.segments.first().map(|s| s.first), Some(0));
            prop_assert_eq!(f.segments.last().map(|s| s.last), Some(n - 1));
            for w in f.segments.windows(2) {
                prop_assert_eq!(w[0].last + 1, w[1].first);
            }
        }
    }
}
