//! A whole range's profile: a coarse grid of commits measured first, a step model fitted to it
//! ([`segment`]), then the usual search ([`crate::analysis::bisect::search`]) inside every grid interval whose
//! two points the fit puts on different levels. Pure logic behind the same [`Measurer`] as the
//! search: no git, no I/O.
//!
//! # Procedure
//!
//! 1. The grid: `2 × initial` samples of every grid point in time, `initial` in counts
//!    ([`Config::spread`]), all in the same interleaved rounds (one
//!    `ensure` over every point). A point that cannot be measured is left out (its neighbours'
//!    interval spans it); an unmeasurable end is an error, as in a search.
//! 2. The fit: each round's effect (one pass of Tukey's median polish on the logs: the round's
//!    median deviation from the points' medians) is taken out of that round's samples (the
//!    machine's drift and load bursts are common to a round), every point's robust location
//!    and standard error are taken from what is left, the spread is pooled over the points
//!    ([`segment::pool`]), and PELT fits the steps ([`segment::fit`]).
//! 3. The searches: every interval between neighbouring measured grid points that lie on
//!    fitted levels at least half the minimum effect apart is searched with [`crate::analysis::bisect::search`], on samples taken after the
//!    grid's (each search sees only samples taken after everything earlier phases used, so its
//!    comparisons are interleaved with each other and independent of the choice to enter).
//!    Neighbours on one level are not entered: a bump narrower than a grid interval, or two
//!    changes that cancel inside one interval, stay hidden there. The grid size is the knob.
//!    Fallback: when an interval entered for a fitted step turns out to have equal ends on fresh
//!    samples, its two neighbours are searched too (one noisy grid point can move a fitted step
//!    by one interval; in simulation this was most of the misses of an 8% step).
//! 4. The profile: every grid point, the fitted segments, every change point of every search
//!    (global positions), each change's share of the range's total movement (Σ |ln ratio| of the
//!    confirmed changes), and which change (partly) undoes which.
//!
//! # Error control
//!
//! See [`alpha::scan_fit_level`] and [`alpha::scan_per_search`]: the fit runs at
//! `alpha / 2 / (G − 1)` per place and only chooses intervals; every interval that may be
//! searched — the `E` entered ones and their neighbours (the fallback), `C ≤ 3E` in all, known
//! from the grid before any search runs — gets `alpha / 2 / C`, so a false significant call
//! anywhere in the scan, the fit's included, has probability at most `alpha` (each search
//! splits its share further exactly as a bisect does). The result carries the Bonferroni sum
//! of the levels of every test run, the fit's places included ([`ScanResult::family_alpha`]).

use crate::analysis::alpha;
use crate::analysis::bisect::{
    pool_key, ChangePoint, Config, Measurer, Outcome, Probe, SearchResult, Unexplored,
};
use crate::analysis::lanes;
use crate::analysis::resolution::Resolution;
use crate::analysis::segment::{self, Point};
use crate::analysis::series::{self, Cancel, Series};
use crate::analysis::stats::{self, RatioCi};
use crate::analysis::within::{self, Tracker};
use crate::unavailable::Unavailable;
use anyhow::{bail, Result};
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};

/// `g` evenly spaced positions in `0..n`, ends included (fewer when the range is shorter).
pub fn grid_positions(n: usize, g: usize) -> Vec<usize> {
    if n == 0 {
        return vec![];
    }
    let g = g.clamp(2, n.max(2));
    let mut v: Vec<usize> = (0..g)
        .map(|i| ((i as f64) * (n - 1) as f64 / (g - 1) as f64).round() as usize)
        .collect();
    v.dedup();
    v
}

/// How far an interior grid point may move to a commit that is built already: a quarter of the
/// spacing, at most 8 commits (a grid point is a sample of its neighbourhood, not a choice).
pub fn max_move(n: usize, g: usize) -> usize {
    let spacing = n.saturating_sub(1) / g.saturating_sub(1).max(1);
    (spacing / 4).min(8)
}

/// Interior grid points moved to the nearest built commit within `max_move` (the nearer, then
/// the older, on a tie), never onto or past a neighbour. Returns (position, moved by).
pub fn snap_to_built(
    positions: &[usize],
    max_move: usize,
    built: impl Fn(usize) -> bool,
) -> Vec<(usize, isize)> {
    let mut out: Vec<(usize, isize)> = positions.iter().map(|&p| (p, 0)).collect();
    for i in 1..positions.len().saturating_sub(1) {
        let p = positions[i];
        if built(p) {
            continue;
        }
        let lo = out[i - 1].0;
        let hi = positions[i + 1];
        for d in 1..=max_move {
            let cand = [p.checked_sub(d), Some(p + d)];
            if let Some(c) = cand
                .into_iter()
                .flatten()
                .find(|&c| c > lo && c < hi && built(c))
            {
                out[i] = (c, c as isize - p as isize);
                break;
            }
        }
    }
    out
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GridPoint {
    pub commit: usize,
    /// Samples of the grid phase.
    pub n: usize,
    /// Mean µs/op and its 95% interval (as a search's step).
    pub mean: f64,
    pub ci95: (f64, f64),
    /// The fitted segment this point belongs to (None when it could not be measured).
    pub segment: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<Unavailable>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FittedSegment {
    /// First and last grid commit of the segment.
    pub first: usize,
    pub last: usize,
    pub points: usize,
    /// The fitted level in µs/op (round effects removed)
    /// and its 95% interval.
    pub level: f64,
    pub ci95: (f64, f64),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Interval {
    pub lo: usize,
    pub hi: usize,
    /// The fitted ratio hi/lo (1 when both lie on one level).
    pub fitted_ratio: f64,
    pub entered: bool,
    /// Entered because the search of a neighbouring interval, entered for a fitted step, found
    /// its ends equal: the step the fit placed there may lie here (one noisy grid point moves a
    /// fitted step by one interval).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fallback: bool,
    /// The search of an entered interval, positions global.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchResult>,
    /// Its grid points compared (hi/lo, the (1 − alpha) interval of the grid's samples): the
    /// net change an interval not entered may hide (steps that cancel inside it, or a bump
    /// narrower than it, can be larger). `None` where a point was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub net: Option<RatioCi>,
}

/// A change point of a search, with its place in the whole profile.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScanChange {
    /// Positions global; `cp.share` is its share of its own interval's ends.
    pub cp: ChangePoint,
    /// Index into `intervals`.
    pub interval: usize,
    /// ln ratio / Σ |ln ratio| over the confirmed changes: the signed share of the range's total
    /// movement (0 for an unconfirmed candidate).
    pub share: f64,
}

/// The grid phase: what was measured and fitted, and which intervals are to be searched.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Grid {
    pub points: Vec<GridPoint>,
    pub segments: Vec<FittedSegment>,
    /// Level per place of the fit and its penalty per change point.
    pub fit_level: f64,
    pub penalty: f64,
    pub intervals: Vec<Interval>,
    /// Samples each grid point got.
    pub samples_per_point: usize,
    /// Each point's samples as the grid took them (`None`: skipped), for the noise.
    #[serde(skip)]
    pub values: Vec<Option<Vec<f64>>>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScanResult {
    pub grid: Grid,
    /// Every change point of every search, oldest first.
    pub changes: Vec<ScanChange>,
    /// Indices into `changes` of the confirmed ones, what lasts of them largest first (a
    /// transient that was undone last), then by |share|.
    pub by_share: Vec<usize>,
    pub cancels: Vec<Cancel>,
    /// Changes linked by cancels, with their net lasting effect.
    pub series: Vec<Series>,
    /// Intervals that may be searched (the entered ones and their neighbours), and the alpha of
    /// each search: the command's alpha over them.
    pub searchable: usize,
    pub alpha_per_search: f64,
    pub tests: usize,
    /// Bonferroni sum of the levels of every test the searches ran.
    pub family_alpha: f64,
    pub commits_measured: usize,
    pub samples_taken: usize,
    /// What the scan's searches could resolve, from the tests that decided in them (with no
    /// search, from the noise of every commit it sampled), at the level per test of its longest
    /// interval's search.
    pub resolution: Option<Resolution>,
    /// Parts left by searches outside the grid's intervals (a located scan's searches in time
    /// between its change points): undecided at the cap, or never checked. What an interval's
    /// own search left is in its `search`.
    pub left: Vec<Unexplored>,
}

/// Step 1 and 2: measure the grid (`positions`, ascending, ends first and last), fit, and choose
/// the intervals to enter.
pub fn measure_grid(positions: &[usize], cfg: &Config, m: &mut dyn Measurer) -> Result<Grid> {
    if positions.len() < 2 || positions.windows(2).any(|w| w[0] >= w[1]) {
        bail!("a scan needs at least 2 distinct grid points in ascending order");
    }
    cfg.validate(positions[positions.len() - 1] + 1)?;
    let k = cfg.spread.fresh_block(&cfg.schedule);
    let (mut points, raw) = grid_points(positions, k, m)?;
    let round_level = round_levels(&raw);
    let mut fitted: Vec<(usize, Point)> = Vec::new();
    for (i, v) in raw.iter().enumerate() {
        let Some(v) = v else { continue };
        let centred: Vec<f64> = v
            .iter()
            .zip(&round_level)
            .filter(|(x, _)| **x > 0.0)
            .map(|(x, r)| (x.ln() - r).exp())
            .collect();
        match Point::from_samples(positions[i], &centred) {
            Some(p) => fitted.push((i, p)),
            None => bail!(
                "{} gave too few usable samples ({}) for the grid",
                m.name(positions[i]),
                v.len()
            ),
        }
    }
    let level = alpha::scan_fit_level(cfg.alpha, fitted.len());
    let pts = segment::pool(&fitted.iter().map(|f| f.1.clone()).collect::<Vec<_>>());
    let fit = segment::fit(&pts, level);
    let mut segments = Vec::with_capacity(fit.segments.len());
    for (si, s) in fit.segments.iter().enumerate() {
        for f in &fitted[s.first..=s.last] {
            points[f.0].segment = Some(si);
        }
        let z = stats::z_quantile(0.95).unwrap_or(1.96);
        segments.push(FittedSegment {
            first: fitted[s.first].1.pos,
            last: fitted[s.last].1.pos,
            points: s.last - s.first + 1,
            level: (s.mean).exp(),
            ci95: ((s.mean - z * s.se).exp(), (s.mean + z * s.se).exp()),
        });
    }
    let mut intervals = intervals_between(&fitted, &points, &segments, cfg.min_effect);
    for (iv, w) in intervals.iter_mut().zip(fitted.windows(2)) {
        iv.net = match (&raw[w[0].0], &raw[w[1].0]) {
            (Some(a), Some(b)) => stats::ratio_ci(a, b, 1.0 - cfg.alpha),
            _ => None,
        };
    }
    Ok(Grid {
        points,
        segments,
        fit_level: level,
        penalty: fit.penalty,
        intervals,
        samples_per_point: k,
        values: raw,
    })
}

type RawSamples = Vec<Option<Vec<f64>>>;

/// Every grid point measured with `k` samples, and its samples as taken (`None`: skipped). An
/// end that cannot be measured leaves nothing to scan against.
fn grid_points(
    positions: &[usize],
    k: usize,
    m: &mut dyn Measurer,
) -> Result<(Vec<GridPoint>, RawSamples)> {
    let wants: Vec<(usize, usize)> = positions.iter().map(|&p| (p, k)).collect();
    let probes = m.ensure(&wants)?;
    if probes.len() != wants.len() {
        bail!(
            "measurer returned {} results for {} commits",
            probes.len(),
            wants.len()
        );
    }
    let last = positions.len() - 1;
    let mut raw: RawSamples = Vec::with_capacity(positions.len());
    let mut points = Vec::with_capacity(positions.len());
    for (i, (&pos, p)) in positions.iter().zip(probes).enumerate() {
        match p {
            Probe::Samples(v) => {
                let v = v.first(k).values;
                let s = stats::summarize(&v);
                points.push(GridPoint {
                    commit: pos,
                    n: v.len(),
                    mean: s.mean,
                    ci95: s.ci95,
                    segment: None,
                    skipped: None,
                });
                raw.push(Some(v));
            }
            Probe::Skip(why) => {
                if i == 0 || i == last {
                    let end = if i == 0 {
                        "old end (good)"
                    } else {
                        "new end (bad)"
                    };
                    bail!("the {end} {} cannot be measured: {why}", m.name(pos));
                }
                points.push(GridPoint {
                    commit: pos,
                    n: 0,
                    mean: f64::NAN,
                    ci95: (f64::NAN, f64::NAN),
                    segment: None,
                    skipped: Some(why),
                });
                raw.push(None);
            }
        }
    }
    Ok((points, raw))
}

/// Round effects, by one pass of Tukey's median polish on the logs: each point's median, then
/// each round's median deviation from the points' medians (the median of the raw logs of a
/// round would jump between the levels of a range that changes).
fn round_levels(raw: &RawSamples) -> Vec<f64> {
    let logs: Vec<Option<Vec<f64>>> = raw
        .iter()
        .map(|v| {
            v.as_ref().map(|v| {
                v.iter()
                    .map(|x| if *x > 0.0 { x.ln() } else { f64::NAN })
                    .collect()
            })
        })
        .collect();
    let point_median: Vec<f64> = logs
        .iter()
        .map(|l| l.as_ref().map_or(f64::NAN, |l| stats::median(l)))
        .collect();
    let rounds = raw.iter().flatten().map(Vec::len).max().unwrap_or(0);
    (0..rounds)
        .map(|j| {
            let d: Vec<f64> = logs
                .iter()
                .zip(&point_median)
                .filter_map(|(l, m)| Some(l.as_ref()?.get(j)? - m))
                .collect();
            let r = stats::median(&d);
            if r.is_finite() {
                r
            } else {
                0.0
            }
        })
        .collect()
}

/// The intervals between neighbouring fitted grid points, entered where the fit puts a step.
fn intervals_between(
    fitted: &[(usize, Point)],
    points: &[GridPoint],
    segments: &[FittedSegment],
    min_effect: f64,
) -> Vec<Interval> {
    // A fitted change is searched from half the minimum effect on: a fitted size is an estimate,
    // and the search decides on fresh samples whether the change is real and how large.
    let entry = (1.0 + min_effect / 2.0).ln();
    fitted
        .windows(2)
        .map(|w| {
            let (a, b) = (&points[w[0].0], &points[w[1].0]);
            let (sa, sb) = (a.segment.unwrap_or(0), b.segment.unwrap_or(0));
            let fitted_ratio = segments[sb].level / segments[sa].level;
            Interval {
                lo: a.commit,
                hi: b.commit,
                fitted_ratio,
                entered: sa != sb && fitted_ratio.ln().abs() >= entry,
                fallback: false,
                search: None,
                net: None,
            }
        })
        .collect()
}

/// Step 3 and 4: search every entered interval of `grid` and put the profile together: one
/// interval at a time, or side by side, one per lane, when the measurer has several
/// ([`lanes`]).
pub fn search_intervals(mut grid: Grid, cfg: &Config, m: &mut dyn Measurer) -> Result<ScanResult> {
    let mut t = Tracker::new(m, grid_values(&grid));
    t.ln_ends = ln_ends(&grid, cfg.min_effect);
    grid_use(&grid, &mut t);
    let (pending, candidates) = searchable_intervals(&grid);
    let alpha_per_search = alpha::scan_per_search(cfg.alpha, candidates);
    let sub_cfg = Config {
        alpha: alpha_per_search,
        ..cfg.clone()
    };
    if t.lanes() > 1 {
        side_by_side(&mut grid, pending, &sub_cfg, &mut t)?;
    } else {
        one_at_a_time(&mut grid, pending, &sub_cfg, &mut t)?;
    }
    // The fit tested every place a change can sit in.
    let places = grid.intervals.len();
    let (mut tests, mut family) = (places, places as f64 * grid.fit_level);
    let mut changes = Vec::new();
    for (ii, iv) in grid.intervals.iter().enumerate() {
        let Some(r) = &iv.search else { continue };
        tests += r.tests;
        family += r.family_alpha;
        if let Outcome::Changes(cps) = &r.outcome {
            for cp in cps {
                changes.push(ScanChange {
                    cp: cp.clone(),
                    interval: ii,
                    share: 0.0,
                });
            }
        }
    }
    let resolution = resolution(&grid, &sub_cfg, &t.held);
    let mut r = ScanResult {
        grid,
        changes,
        by_share: Vec::new(),
        cancels: Vec::new(),
        series: Vec::new(),
        searchable: candidates,
        alpha_per_search,
        tests,
        family_alpha: family.min(1.0),
        commits_measured: t.commits_measured(),
        samples_taken: t.samples_taken(),
        resolution,
        left: Vec::new(),
    };
    profile(&mut r, cfg.min_effect);
    Ok(r)
}

/// The intervals searched in turn, lowest first, each on samples no earlier phase or search
/// used.
fn one_at_a_time(
    grid: &mut Grid,
    mut pending: BTreeSet<usize>,
    cfg: &Config,
    t: &mut Tracker,
) -> Result<()> {
    while let Some(ii) = pending.pop_first() {
        let iv = &grid.intervals[ii];
        if iv.search.is_some() {
            continue;
        }
        let r = within::search(iv.lo, iv.hi, cfg, t)?;
        pending.extend(look_beside(grid, ii, &r));
        grid.intervals[ii].search = Some(r);
    }
    Ok(())
}

/// The intervals searched at once, one lane each (the lane's id is the interval's index).
fn side_by_side(
    grid: &mut Grid,
    pending: BTreeSet<usize>,
    cfg: &Config,
    t: &mut Tracker,
) -> Result<()> {
    let lane = |g: &Grid, ii: usize| lanes::Lane {
        id: ii,
        lo: g.intervals[ii].lo,
        hi: g.intervals[ii].hi,
    };
    let first = pending.iter().map(|&ii| lane(grid, ii)).collect();
    let done = lanes::search(t, cfg, first, |l, r| {
        let next = look_beside(grid, l.id, r);
        next.into_iter().map(|ii| lane(grid, ii)).collect()
    })?;
    for (ii, (_, r)) in done {
        grid.intervals[ii].search = Some(r);
    }
    Ok(())
}

/// Interval `ii` is searched (`r`): the intervals it sends the scan to next, marked entered.
/// Entered for a fitted step but its ends agree on fresh samples: the step may lie beside it.
fn look_beside(grid: &mut Grid, ii: usize, r: &SearchResult) -> Vec<usize> {
    grid.intervals[ii].entered = true;
    if r.outcome != Outcome::NoChange || grid.intervals[ii].fallback {
        return Vec::new();
    }
    let mut next = Vec::new();
    for j in [ii.wrapping_sub(1), ii + 1] {
        if let Some(n) = grid.intervals.get_mut(j) {
            if !n.entered {
                n.entered = true;
                n.fallback = true;
                next.push(j);
            }
        }
    }
    next
}

/// The profile over `r`'s change points as they stand (after the searches, or after another
/// metric confirmed them): oldest first, each one's share of the movement, what lasts of them
/// and which undoes which.
pub fn profile(r: &mut ScanResult, min_effect: f64) {
    r.changes.sort_by_key(|c| c.cp.last_old);
    let logs = share_movement(&mut r.changes);
    let lasting = series::lasting(&logs, min_effect);
    r.by_share = lasting.ranked(&logs);
    r.cancels = lasting.cancels;
    r.series = lasting.series;
}

impl ScanResult {
    /// Sequential decisions made: the grid's fit (one) and those of every interval's search.
    pub fn decisions(&self) -> usize {
        let searches = self.grid.intervals.iter().filter_map(|i| i.search.as_ref());
        1 + searches.map(|s| s.decisions).sum::<usize>()
    }
}

/// The log ratio of the fitted levels at the range's ends, when they moved as much as an
/// interval's fitted step must to be entered (else a change's share of it means nothing: a
/// slowdown undone later would read thousands of percent).
fn ln_ends(grid: &Grid, min_effect: f64) -> Option<f64> {
    let (first, last) = (grid.segments.first()?, grid.segments.last()?);
    let ln = (last.level / first.level).ln();
    (ln.is_finite() && ln.abs() >= (1.0 + min_effect / 2.0).ln()).then_some(ln)
}

/// The grid interval holding commit `c` (the last whose low end is at or before it).
pub fn interval_of(grid: &Grid, c: usize) -> usize {
    grid.intervals
        .iter()
        .rposition(|iv| iv.lo <= c)
        .unwrap_or(0)
}

/// The entered intervals (to search first), and how many intervals may be searched: the
/// entered ones and their neighbours (a fallback). Known from the grid alone, so alpha can be
/// split over them before any search runs.
fn searchable_intervals(grid: &Grid) -> (BTreeSet<usize>, usize) {
    let count = grid.intervals.len();
    let entered: BTreeSet<usize> = (0..count).filter(|&i| grid.intervals[i].entered).collect();
    let candidates = entered
        .iter()
        .flat_map(|&i| [i.saturating_sub(1), i, (i + 1).min(count - 1)])
        .collect::<BTreeSet<usize>>()
        .len();
    (entered, candidates)
}

/// What the grid phase read of each grid point added to the run's marks, per pool (grid points
/// with identical binaries were measured on one pool of samples, see bisect::pool_key); and
/// each grid point's samples counted as seen.
fn grid_use(grid: &Grid, t: &mut Tracker) {
    let mut used = t.used().clone();
    for p in grid.points.iter().filter(|p| p.skipped.is_none()) {
        let key = pool_key(&used, p.commit, &*t);
        let e = used.entry(key).or_insert(0);
        *e = (*e).max(grid.samples_per_point);
    }
    *t.used() = used;
    for p in &grid.points {
        t.seen
            .insert(p.commit, if p.skipped.is_some() { 0 } else { p.n });
    }
}

/// Each change's signed share of the range's total movement (ln ratio over the sum of the
/// confirmed changes' |ln ratio|; 0 for a candidate); returns the ln ratios.
fn share_movement(changes: &mut [ScanChange]) -> Vec<f64> {
    let logs: Vec<f64> = changes
        .iter()
        .map(|c| {
            if c.cp.confirmed {
                c.cp.comparison.ratio.ratio.ln()
            } else {
                0.0
            }
        })
        .collect();
    let total: f64 = logs.iter().map(|l| l.abs()).sum();
    for (c, l) in changes.iter_mut().zip(&logs) {
        c.share = if total > 0.0 { l / total } else { 0.0 };
    }
    logs
}

/// The grid's samples per commit, as the grid phase took them.
fn grid_values(grid: &Grid) -> HashMap<usize, Vec<f64>> {
    grid.points
        .iter()
        .zip(&grid.values)
        .filter_map(|(p, v)| Some((p.commit, v.clone()?)))
        .collect()
}

/// What a search of the scan resolves at its cap, at the strictest level any of its searches
/// runs at (the longest interval's): from the tests that decided in its searches, or with no
/// search, from the noise of every commit it sampled.
fn resolution(grid: &Grid, cfg: &Config, held: &HashMap<usize, Vec<f64>>) -> Option<Resolution> {
    let longest = grid.intervals.iter().map(|i| i.hi - i.lo + 1).max()?;
    let alpha = cfg.resolving_level(longest, 1, 1);
    let (max, me) = (cfg.schedule.max, cfg.min_effect);
    let tested: Vec<(f64, f64)> = (grid.intervals.iter())
        .filter_map(|i| i.search.as_ref())
        .flat_map(|s| s.tested.iter().copied())
        .collect();
    Resolution::of_tests(&tested, max, alpha, me).or_else(|| {
        let values: Vec<&[f64]> = held.values().map(|v| &v[..]).collect();
        Resolution::of(&values, max, alpha, me)
    })
}

/// The whole scan over the grid `positions` (see the module docs).
pub fn scan(positions: &[usize], cfg: &Config, m: &mut dyn Measurer) -> Result<ScanResult> {
    let grid = measure_grid(positions, cfg, m)?;
    search_intervals(grid, cfg, m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::bisect::Spread;
    use crate::analysis::simulate::noise::NoiseModel;
    use crate::analysis::simulate::SimMeasurer;

    fn sim(n: usize, steps: &[(usize, f64)], seed: u64) -> SimMeasurer {
        SimMeasurer::new(n, steps, &NoiseModel::realistic(), 0.0, seed).unwrap()
    }

    fn confirmed(r: &ScanResult) -> Vec<usize> {
        r.changes
            .iter()
            .filter(|c| c.cp.confirmed)
            .map(|c| c.cp.first_new)
            .collect()
    }

    #[test]
    fn grid_and_snapping() {
        assert_eq!(grid_positions(4000, 16).len(), 16);
        assert_eq!(grid_positions(4000, 16)[15], 3999);
        assert_eq!(grid_positions(5, 16), vec![0, 1, 2, 3, 4]);
        assert_eq!(grid_positions(11, 6), vec![0, 2, 4, 6, 8, 10]);
        assert_eq!(max_move(4000, 16), 8);
        assert_eq!(max_move(11, 6), 0);
        let built = |c: usize| [103, 197, 0].contains(&c);
        let s = snap_to_built(&[0, 100, 200, 300], 4, built);
        assert_eq!(s, vec![(0, 0), (103, 3), (197, -3), (300, 0)]);
        // never past a neighbour, never beyond max_move
        let s = snap_to_built(&[0, 10, 12, 20], 5, |c| c == 13 || c == 9);
        assert_eq!(s, vec![(0, 0), (9, -1), (13, 1), (20, 0)]);
        assert_eq!(snap_to_built(&[0, 10, 20], 2, |c| c == 13)[1], (10, 0));
    }

    #[test]
    fn scan_finds_steps_whose_ends_cancel() {
        // +30% at 500, then +15% at 2600 and −13% at 3300: the part after 2000 has equal ends
        let steps = [(500, 1.30), (2600, 1.15), (3300, 0.87)];
        for seed in 0..3 {
            let mut m = sim(4000, &steps, seed);
            let g = grid_positions(4000, 16);
            let r = scan(&g, &Config::default(), &mut m).unwrap();
            assert_eq!(confirmed(&r), vec![500, 2600, 3300], "seed {seed}");
            assert_eq!(r.grid.segments.len(), 4);
            assert_eq!(r.grid.intervals.iter().filter(|i| i.entered).count(), 3);
            assert_eq!(r.by_share[0], 0, "the +30% explains most");
            let c = &r.cancels;
            assert_eq!(c.len(), 1, "{c:?}");
            assert_eq!((c[0].change, c[0].undone_by), (1, 2));
            assert!(r.family_alpha <= Config::default().alpha + 1e-12);
            assert!(r.alpha_per_search < Config::default().alpha / 2.0);
        }
    }

    #[test]
    fn flat_range_enters_nothing() {
        for seed in 0..5 {
            let mut m = sim(2000, &[], 10 + seed);
            let r = scan(&grid_positions(2000, 16), &Config::default(), &mut m).unwrap();
            assert!(r.changes.is_empty(), "seed {seed}: {:?}", r.grid.segments);
            assert_eq!(r.grid.segments.len(), 1);
            assert!(r.grid.intervals.iter().all(|i| !i.entered));
            // Each interval not entered carries the net change its grid points bound, holding
            // the truth (none); before, only a general note said what could hide.
            for iv in &r.grid.intervals {
                let net = iv.net.expect("both grid points measured");
                assert!(net.lo <= 1.0 && 1.0 <= net.hi, "seed {seed}: {net:?}");
            }
            assert_eq!(r.commits_measured, 16);
            assert_eq!(r.samples_taken, 16 * 10);
        }
    }

    #[test]
    fn searches_use_samples_after_the_grid() {
        let mut m = sim(400, &[(130, 1.2)], 3);
        let g = grid_positions(400, 5);
        let r = scan(&g, &Config::default(), &mut m).unwrap();
        assert_eq!(confirmed(&r), vec![130]);
        let iv = r.grid.intervals.iter().find(|i| i.entered).unwrap();
        // the interval's ends were sampled again for its search: more than the grid's 10
        let s = iv.search.as_ref().unwrap();
        assert!(
            s.ends.a.n >= 5
                && s.steps
                    .iter()
                    .all(|st| st.commit >= iv.lo && st.commit <= iv.hi)
        );
        assert!(r.samples_taken > 5 * 10);
    }

    /// The grid looks once: twice a search's first look of every point in time, one first
    /// look in counts.
    #[test]
    fn a_grid_takes_fewer_counts_than_timings() {
        let g = grid_positions(200, 6);
        for (spread, k) in [(Spread::Clock, 10), (Spread::Count, 5)] {
            let cfg = Config {
                spread,
                ..Config::default()
            };
            let mut m = sim(200, &[(120, 1.5)], 4);
            let grid = measure_grid(&g, &cfg, &mut m).unwrap();
            assert_eq!(grid.samples_per_point, k, "{spread:?}");
            assert!(grid.points.iter().all(|p| p.n == k), "{spread:?}");
        }
    }

    #[test]
    fn bad_grids_are_errors() {
        let mut m = sim(100, &[], 1);
        assert!(scan(&[0], &Config::default(), &mut m).is_err());
        assert!(scan(&[0, 50, 50, 99], &Config::default(), &mut m).is_err());
        assert!(scan(&[10, 5], &Config::default(), &mut m).is_err());
    }
}
