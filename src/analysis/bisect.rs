//! The search for the commit(s) that changed the speed: binary search over commit indices with a
//! statistical oracle. Pure logic: no git, no I/O; samples come from a [`Measurer`].
//!
//! Commits are indices `0..n` in history order; 0 is the OLD end (good, or the merge base), `n - 1`
//! the NEW end (bad). "Old"/"new" name the ends, not a direction: whether the change is a slowdown
//! (regression) or a speed-up (fix) is found from the ends.
//!
//! # Procedure
//!
//! 1. The ends, sampled interleaved and sequentially (initial, doubling, up to max) until
//!    [`stats::compare`] decides. Same, or still undecided at the cap → [`Outcome::NoChange`].
//! 2. Binary search. Each candidate is sampled together with fresh samples of both interval ends
//!    and classified Old / New / Between / Ambiguous / Skipped (see [`StepVerdict`]).
//! 3. Skipped commits are left out and the unskipped commit nearest the middle is tried instead; if
//!    only skipped commits remain between an Old and a New commit, the answer is that range.
//! 4. Every change: a Between commit splits the range in two and both halves are searched, the
//!    half holding the larger share of the change first; after a change point is found, the rest
//!    of its range on either side is searched if that part's own ends differ (a sub-range check).
//! 5. Each change point is confirmed as soon as it is found: parent against culprit on a fresh
//!    block of samples (at least 2 × initial each), and handed to [`Measurer::confirmed`] so a
//!    user sees it while the search goes on.
//! 6. Stopping: `max_changes` confirmed change points in the range's direction (one against it
//!    never counts: with 1, the search goes on to the change the user asked about); a sub-range
//!    whose estimated share of the ends' change is below `min_share` is not searched; once
//!    [`Measurer::should_stop`] says so (a time budget) and at least one change point in the
//!    range's direction is confirmed, no further sub-range is searched. What was left is listed in
//!    [`SearchResult::unexplored`].
//!
//! # Error control (the alpha split)
//!
//! `cfg.alpha` bounds the probability that the whole search makes a false significant call. It is
//! split by Bonferroni in [`alpha::search_per_test`] (decisions × looks × 2 tests per look).
//!
//! For n = 1000 with the defaults that is 0.01 / (14 × 4 × 2) ≈ 8.9e-5. A false "no change" at the
//! ends is not a false alarm and is not in this budget (its rate is the power of the test, checked
//! by simulation). When the range holds more than one change, each extra change costs about
//! log2 of its sub-range more decisions than budgeted; the budget covers the path to one change
//! point, which is where a spurious change point would have to start. The position interval used
//! to tell Old/New from "part of the change" is a tie-breaker at a fixed 80% (see
//! `POSITION_CONF`), not a test.

use crate::analysis::alpha::{self, Schedule};
use crate::analysis::resolution::{Forecast, Resolution};
use crate::analysis::samples::Samples;
use crate::analysis::stats::{self, Comparison, RatioCi, Verdict};
use crate::unavailable::Unavailable;
use anyhow::{bail, Result};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

mod config;
mod measurer;
mod result;
mod sequential;

pub use config::Config;
pub use measurer::{Measurer, Probe};
pub use result::{
    ChangePoint, LeftBecause, Outcome, SearchResult, SeriesPoint, Step, StepVerdict, Unexplored,
};
pub use sequential::{compare_pair, Side};
use sequential::{position, sequential, Compared};

/// Confidence of the position interval that keeps a commit whose place between the ends is still
/// unclear from being called Old or New. It is a tie-breaker, not an error-controlling test: the
/// significance tests decide old/new, and a second change hidden next to a commit that passed as
/// Old/New is found by the sub-range checks. In simulation (10% + 5% steps, 3% noise) 80% found both
/// steps as often as 99% did, with far fewer commits left ambiguous at the sample cap.
const POSITION_CONF: f64 = 0.8;

/// A confirmation block still undecided at the sample cap grows to this many times the cap
/// before its change point is called located but of unresolved size.
pub const UNRESOLVED_CAP: usize = 2;

/// The same for a change point located on another metric and confirmed here
/// ([`confirm_located`]): its place is known, only its size is asked, so the block may grow
/// further before the size is called unresolved.
pub const LOCATED_CAP: usize = 4;

/// What a check of a sub-range's ends found.
enum EndsCheck {
    /// They differ: the estimated share of the range's change, and the series that moved.
    Differ(f64, Vec<bool>),
    /// The same (or one binary): nothing to search.
    Same,
    /// Undecided at the cap: the primary series' ratio (new/old) and its interval.
    Undecided(RatioCi),
}

/// A sub-range still to search: `lo` is known to differ from `hi` (unless it waits for its check).
struct Range {
    lo: usize,
    hi: usize,
    uncertain: bool,
    /// Estimated share of the ends' change (from positions of Between commits), when known.
    share: Option<f64>,
    /// The series (thread counts) whose ends differ in this range: only they decide here.
    active: Vec<bool>,
}

struct Found {
    last_old: usize,
    first_new: usize,
    uncertain: bool,
}

/// Work for the parts of a range outside `lo..hi` (`bounds` = range_lo, lo, hi, range_hi):
/// each is searched only if its own ends differ. `larger_newer`: the newer part is pushed last,
/// so it is searched first (the part whose ends' samples so far differ more goes first, see
/// [`Searcher::newer_part_larger`]).
fn push_outer_checks(
    work: &mut Vec<(Range, bool)>,
    bounds: (usize, usize, usize, usize),
    uncertain: bool,
    k: usize,
    larger_newer: bool,
) {
    let (range_lo, lo, hi, range_hi) = bounds;
    let parts = if larger_newer {
        [(range_lo, lo), (hi, range_hi)]
    } else {
        [(hi, range_hi), (range_lo, lo)]
    };
    for (l, h) in parts {
        // Two adjacent commits are a part too: if they differ, they are a change point (on the
        // release history 3.1.4 passed as New, and 3.1.4 -> 3.2.1 was never checked).
        if h > l {
            let r = Range {
                lo: l,
                hi: h,
                uncertain,
                share: None,
                // set by the check
                active: vec![true; k],
            };
            work.push((r, true));
        }
    }
}

/// The key under which commit `c`'s used samples are counted in `counts`: a commit already
/// there, or one that loads byte-identical binaries (the measurer gives such commits one pool of
/// samples, so a window fresh for one must be fresh for all: a confirmation of 7 -> 8 must not
/// reuse the samples that an identical 3 already spent), else `c` itself.
pub(crate) fn pool_key(counts: &HashMap<usize, usize>, c: usize, m: &dyn Measurer) -> usize {
    if counts.contains_key(&c) {
        return c;
    }
    counts
        .keys()
        .copied()
        .filter(|&p| m.identical(c, p))
        .min()
        .unwrap_or(c)
}

/// The unskipped commit strictly between `lo` and `hi` closest to the middle (like `git bisect
/// skip`, which moves away from a skipped commit rather than giving up). Only visits skipped
/// commits, so it costs O(skips), not O(range).
pub(crate) fn pick_candidate<F: Fn(usize) -> bool>(
    lo: usize,
    hi: usize,
    is_skipped: F,
) -> Option<usize> {
    if hi <= lo + 1 {
        return None;
    }
    let mid = lo + (hi - lo) / 2;
    for d in 0..(hi - lo) {
        let up = mid + d;
        if up < hi && !is_skipped(up) {
            return Some(up);
        }
        if d > 0 && mid >= lo + 1 + d {
            let down = mid - d;
            if !is_skipped(down) {
                return Some(down);
            }
        }
        if up >= hi && mid < lo + 1 + d {
            break;
        }
    }
    None
}

enum Window {
    /// One window per series (thread count), in the measurer's series order.
    Samples(Vec<Samples>),
    Skip(Unavailable),
}

/// Where a candidate lies for one series (thread count) against its interval's ends.
#[derive(Clone, Copy, Debug, PartialEq)]
enum SeriesStatus {
    /// The series' ends do not differ in this interval: it says nothing here.
    Inactive,
    Old,
    New,
    Between,
    /// Not decided (yet).
    Pending,
}

/// The series whose comparison moved most (largest |ln ratio|) among those `pick` accepts, else
/// among all.
fn dominant(cs: &[Comparison], pick: impl Fn(&Comparison) -> bool) -> usize {
    let size = |c: &Comparison| {
        let l = c.ratio.ratio.ln().abs();
        if l.is_finite() {
            l
        } else {
            0.0
        }
    };
    let best = |only: bool| {
        cs.iter()
            .enumerate()
            .filter(|(_, c)| !only || pick(c))
            .max_by(|a, b| size(a.1).total_cmp(&size(b.1)))
            .map(|(i, _)| i)
    };
    best(true).or_else(|| best(false)).unwrap_or(0)
}

/// The step's verdict from its series' statuses: Between at one Between or at an Old beside a
/// New (two changes); undecided while one is pending; else the one direction they agree on.
fn combined_verdict(status: &[SeriesStatus]) -> Option<StepVerdict> {
    let has = |s: SeriesStatus| status.contains(&s);
    if has(SeriesStatus::Between) || (has(SeriesStatus::Old) && has(SeriesStatus::New)) {
        Some(StepVerdict::Between)
    } else if has(SeriesStatus::Pending) {
        None
    } else if has(SeriesStatus::Old) {
        Some(StepVerdict::Old)
    } else if has(SeriesStatus::New) {
        Some(StepVerdict::New)
    } else {
        None
    }
}

fn significant(c: &Comparison) -> bool {
    matches!(c.verdict, Verdict::Slower | Verdict::Faster)
}

struct Searcher<'a> {
    cfg: &'a Config,
    m: &'a mut dyn Measurer,
    n: usize,
    /// Series (thread counts) measured at every probe.
    k: usize,
    alpha: f64,
    schedule: Vec<usize>,
    /// Samples of each commit already used by earlier decisions: every decision works on a fresh
    /// window after these, so the samples it compares were taken interleaved with each other.
    claimed: HashMap<usize, usize>,
    /// The most samples seen per (commit, series).
    seen: HashMap<(usize, usize), usize>,
    /// Every sample value seen per (commit, series): the run's noise.
    held: HashMap<(usize, usize), Vec<f64>>,
    skipped: HashMap<usize, Unavailable>,
    steps: Vec<Step>,
    decisions: usize,
    /// Σ of the levels of the tests run so far, and their count.
    spent: f64,
    tests: usize,
    /// Log of the ends' ratio from their first comparison (what shares are estimated against),
    /// of the primary series.
    total_log: f64,
    /// The series whose ends moved most: its comparison is the one a change point reports first.
    primary: usize,
    direction: Verdict,
    confirmed: Vec<ChangePoint>,
    unexplored: Vec<Unexplored>,
    /// An undecided confirmation block grows to this many times the cap.
    unresolved_cap: usize,
}

impl Searcher<'_> {
    fn spend(&mut self, tests: usize, level: f64) {
        self.tests += tests;
        self.spent += tests as f64 * level;
    }

    /// Windows of `k` samples after `bases` for each commit (every series), taken interleaved.
    /// Slicing (rather than using everything `ensure` returns) keeps the search a function of the
    /// requested samples, so a resumed search with a warm cache replays the same decisions.
    fn windows(&mut self, commits: &[usize], bases: &[usize], k: usize) -> Result<Vec<Window>> {
        let wants: Vec<(usize, usize)> = commits
            .iter()
            .zip(bases)
            .map(|(&c, &b)| (c, b + k))
            .collect();
        let probes = self.m.ensure_series(&wants)?;
        if probes.len() != wants.len() {
            bail!(
                "measurer returned {} results for {} commits",
                probes.len(),
                wants.len()
            );
        }
        let mut out = Vec::with_capacity(probes.len());
        for ((&c, &base), ps) in commits.iter().zip(bases).zip(probes) {
            if ps.len() != self.k {
                bail!(
                    "measurer returned {} series for {} thread counts",
                    ps.len(),
                    self.k
                );
            }
            let mut series = Vec::with_capacity(ps.len());
            let mut skip = None;
            for (t, p) in ps.into_iter().enumerate() {
                let seen = self.seen.entry((c, t)).or_insert(0);
                match p {
                    Probe::Samples(v) => {
                        *seen = (*seen).max(v.len());
                        series.push(v.window(base, base + k));
                        self.held.insert((c, t), v.values);
                    }
                    // A commit that cannot be measured at one thread count is skipped whole.
                    Probe::Skip(reason) => skip = skip.or(Some(reason)),
                }
            }
            out.push(match skip {
                Some(r) => Window::Skip(r),
                None => Window::Samples(series),
            });
        }
        Ok(out)
    }

    fn claimed(&self, c: usize) -> usize {
        let p = pool_key(&self.claimed, c, &*self.m);
        self.claimed.get(&p).copied().unwrap_or(0)
    }

    fn claim(&mut self, c: usize, upto: usize) {
        let p = pool_key(&self.claimed, c, &*self.m);
        self.claimed.insert(p, upto);
    }

    fn record(&mut self, step: Step) {
        self.m.decided(&step);
        self.steps.push(step);
    }

    /// A step from the windows of each series; its mean and interval are of series `shown`.
    fn step(
        commit: usize,
        xs: &[Samples],
        shown: usize,
        verdict: StepVerdict,
        position: Option<f64>,
        positions: &[Option<f64>],
    ) -> Step {
        let s = stats::summarize(xs.get(shown).map_or(&[][..], |v| &v.values[..]));
        let series = if xs.len() > 1 {
            xs.iter()
                .enumerate()
                .map(|(t, x)| {
                    let s = stats::summarize(&x.values);
                    SeriesPoint {
                        mean: s.mean,
                        ci95: s.ci95,
                        position: positions.get(t).copied().flatten(),
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        Step {
            commit,
            n: s.n,
            mean: s.mean,
            ci95: s.ci95,
            verdict,
            position,
            series,
        }
    }

    /// Ends first, growing the samples until every series' comparison decides or the cap is
    /// reached.
    fn compare_ends(&mut self) -> Result<Compared> {
        let ends = [0, self.n - 1];
        let looks = self.schedule.clone();
        let (alpha, me, k) = (self.alpha, self.cfg.min_effect, self.k);
        let r = sequential(&looks, alpha, me, false, |look| {
            let w = self.windows(&ends, &[0, 0], look)?;
            self.claim(0, look);
            self.claim(self.n - 1, look);
            self.spend(k, alpha);
            Ok(w)
        })?;
        let (old, new) = (self.m.name(0), self.m.name(self.n - 1));
        match r {
            Ok(done) => Ok(done),
            Err((Side::Both, r0, r1)) => {
                bail!("neither end can be measured: old end {old}: {r0}; new end {new}: {r1}")
            }
            Err((Side::A, r, _)) => bail!("the old end (good) {old} cannot be measured: {r}"),
            Err((Side::B, r, _)) => bail!("the new end (bad) {new} cannot be measured: {r}"),
        }
    }

    /// Classify `c` against the interval ends `lo` (old-like) and `hi` (new-like) on fresh windows of
    /// all three, growing them together. Only the `active` series (whose ends differ in this
    /// interval) decide; with several, c is Between when one series says Between or one says Old
    /// and another New (two changes), Old/New when every active series that decided agrees and
    /// none is pending. Returns the step and each series' status.
    fn classify(
        &mut self,
        c: usize,
        lo: usize,
        hi: usize,
        active: &[bool],
    ) -> Result<(Step, Vec<SeriesStatus>)> {
        self.m.prepare(c)?;
        if let Some(same) = self.as_identical_end(c, lo, hi)? {
            return Ok(same);
        }
        let commits = [c, lo, hi];
        let bases = [self.claimed(c), self.claimed(lo), self.claimed(hi)];
        let looks = self.schedule.clone();
        let mut result = None;
        for (li, &k) in looks.iter().enumerate() {
            let w = self.windows(&commits, &bases, k)?;
            for (i, &cm) in commits.iter().enumerate() {
                self.claim(cm, bases[i] + k);
            }
            let x = match &w[0] {
                Window::Samples(x) => x.clone(),
                Window::Skip(r) => {
                    let st = Self::step(c, &[], 0, StepVerdict::Skipped(r.clone()), None, &[]);
                    return Ok((st, vec![SeriesStatus::Pending; self.k]));
                }
            };
            let (xo, xn) = match (&w[1], &w[2]) {
                (Window::Samples(o), Window::Samples(n)) => (o, n),
                (Window::Skip(r), _) | (_, Window::Skip(r)) => {
                    bail!("commit {lo} or {hi} was measured before but now cannot be: {r}")
                }
            };
            let (status, positions, spread) = self.series_statuses(&x, xo, xn, active);
            let verdict = combined_verdict(&status);
            // The position that steers the search: of the active series whose ends are furthest
            // apart (the single series when there is one).
            let lead = (0..self.k)
                .filter(|&t| status[t] != SeriesStatus::Inactive && positions[t].is_some())
                .max_by(|&a, &b| spread[a].total_cmp(&spread[b]));
            let point = lead.and_then(|t| positions[t]);
            let shown = lead.unwrap_or(self.primary);
            let decided = verdict.is_some();
            let st = Self::step(
                c,
                &x,
                if self.k > 1 { self.primary } else { shown },
                verdict.unwrap_or(StepVerdict::Ambiguous),
                point,
                &positions,
            );
            result = Some((st, status));
            if decided || li + 1 == looks.len() {
                break;
            }
        }
        result.ok_or_else(|| anyhow::anyhow!("empty sample schedule"))
    }

    /// A commit that loads the same binaries as an end behaves as that end: measuring it
    /// would compare one subject with itself. Its step as that end, when it is one.
    fn as_identical_end(
        &mut self,
        c: usize,
        lo: usize,
        hi: usize,
    ) -> Result<Option<(Step, Vec<SeriesStatus>)>> {
        let ends = [
            (lo, StepVerdict::Old, SeriesStatus::Old, 0.0),
            (hi, StepVerdict::New, SeriesStatus::New, 1.0),
        ];
        for (end, verdict, status, point) in ends {
            if self.m.identical(c, end) {
                let k = self.claimed(end).max(1);
                let xs = match self.windows(&[end], &[0], k)?.pop() {
                    Some(Window::Samples(v)) => v,
                    _ => Vec::new(),
                };
                let st = Self::step(c, &xs, self.primary, verdict, Some(point), &[]);
                return Ok(Some((st, vec![status; self.k])));
            }
        }
        Ok(None)
    }

    /// One look's tests of `x` against the old end `xo` and the new end `xn` at every active
    /// series: each series' status, c's position between the ends and the ends' spread (|ln
    /// ratio|).
    fn series_statuses(
        &mut self,
        x: &[Samples],
        xo: &[Samples],
        xn: &[Samples],
        active: &[bool],
    ) -> (Vec<SeriesStatus>, Vec<Option<f64>>, Vec<f64>) {
        let mut status = vec![SeriesStatus::Inactive; self.k];
        let mut positions = vec![None; self.k];
        let mut spread = vec![0.0; self.k];
        for t in (0..self.k).filter(|&t| active.get(t).copied().unwrap_or(true)) {
            let vo = stats::compare_rounds(&xo[t], &x[t], self.alpha, self.cfg.min_effect);
            let vn = stats::compare_rounds(&xn[t], &x[t], self.alpha, self.cfg.min_effect);
            self.spend(2, self.alpha);
            let (d_old, d_new) = (significant(&vo), significant(&vn));
            let pos = position(&xo[t].values, &x[t].values, &xn[t].values, POSITION_CONF);
            positions[t] = pos.map(|p| p.0);
            spread[t] = stats::compare(
                &xo[t].values,
                &xn[t].values,
                self.alpha,
                self.cfg.min_effect,
            )
            .ratio
            .ratio
            .ln()
            .abs();
            status[t] = if d_old && d_new {
                SeriesStatus::Between
            } else if d_new && !d_old && pos.is_some_and(|p| p.2 < 0.5) {
                SeriesStatus::Old
            } else if d_old && !d_new && pos.is_some_and(|p| p.1 > 0.5) {
                SeriesStatus::New
            } else {
                SeriesStatus::Pending
            };
        }
        (status, positions, spread)
    }

    /// Do the ends of a left-over sub-range differ (at any series)? Sequential like every
    /// decision: a significant difference (at the per-test alpha) says yes; the ratio's
    /// (1 − alpha) interval inside ±min_effect at every series, or the cap, says no. The "no" side
    /// uses the whole-search level because its error is only a missed extra change, and the
    /// stricter level would cost max samples at every check. With yes: the sub-range's estimated
    /// share of the ends' change (primary series) and the series that are to be searched in it
    /// (those that differ, and those not yet told apart when another already did).
    fn ends_differ(&mut self, lo: usize, hi: usize) -> Result<EndsCheck> {
        // Ends that load byte-identical binaries share one pool of samples: comparing two
        // windows of it tests a subject against itself, and its false "differs" (at the rate
        // alpha) ended in a change point that could never be confirmed (seen in CI on a scan).
        if self.m.identical(lo, hi) {
            return Ok(EndsCheck::Same);
        }
        let mut last = None;
        self.decisions += 1;
        let commits = [lo, hi];
        let bases = [self.claimed(lo), self.claimed(hi)];
        for k in self.schedule.clone() {
            let w = self.windows(&commits, &bases, k)?;
            self.claim(lo, bases[0] + k);
            self.claim(hi, bases[1] + k);
            let (a, b) = match (&w[0], &w[1]) {
                (Window::Samples(a), Window::Samples(b)) => (a, b),
                (Window::Skip(r), _) | (_, Window::Skip(r)) => {
                    bail!("commit {lo} or {hi} was measured before but now cannot be: {r}")
                }
            };
            let me = self.cfg.min_effect;
            let mut differs = vec![false; self.k];
            let mut same = vec![false; self.k];
            let mut share = 0.0;
            for t in 0..self.k {
                let c = stats::compare_rounds(&a[t], &b[t], self.alpha, me);
                differs[t] = significant(&c);
                same[t] = stats::ratio_ci(&a[t].values, &b[t].values, 1.0 - self.cfg.alpha)
                    .is_some_and(|r| r.lo >= 1.0 - me && r.hi <= 1.0 + me);
                if t == self.primary {
                    share = c.ratio.ratio.ln() / self.total_log;
                    last = Some(c.ratio);
                }
            }
            self.spend(self.k, self.alpha);
            if differs.contains(&true) {
                let active = (0..self.k).map(|t| differs[t] || !same[t]).collect();
                return Ok(EndsCheck::Differ(share, active));
            }
            if same.iter().all(|s| *s) {
                return Ok(EndsCheck::Same);
            }
        }
        Ok(match last {
            Some(r) => EndsCheck::Undecided(r),
            None => EndsCheck::Same,
        })
    }

    /// What a comparison at the cap resolves, from series `t` of every commit sampled so far.
    fn resolution(&self, t: usize) -> Option<Resolution> {
        let values: Vec<&[f64]> = self
            .held
            .iter()
            .filter(|((_, s), _)| *s == t)
            .map(|(_, v)| &v[..])
            .collect();
        let max = self.cfg.schedule.max;
        Resolution::of(
            &values,
            max,
            self.alpha / alpha::TWO_TESTS,
            self.cfg.min_effect,
        )
    }

    /// Confirmed change points in the range's direction (what `max_changes` counts).
    fn answers(&self) -> usize {
        self.confirmed
            .iter()
            .filter(|c| c.confirmed && c.verdict() == self.direction)
            .count()
    }

    /// Whether to leave the rest: the budget is spent (after the main answer), or enough answers.
    fn stop_now(&self) -> Option<LeftBecause> {
        if self.cfg.max_changes.is_some_and(|m| self.answers() >= m) {
            Some(LeftBecause::MaxChanges)
        } else if self.answers() > 0 && self.m.should_stop() {
            Some(LeftBecause::Budget)
        } else {
            None
        }
    }

    fn leave(&mut self, r: &Range, differs: bool, because: LeftBecause) {
        self.unexplored.push(Unexplored {
            lo: r.lo,
            hi: r.hi,
            differs,
            share: r.share,
            because,
            ratio: None,
        });
    }

    /// Of the two parts outside `lo..hi` (`bounds` = range_lo, lo, hi, range_hi), does the newer
    /// one's ends differ more (|ln ratio|, primary series) on the samples the search already
    /// has? No new samples: a heuristic for the order only (each part is still checked by
    /// [`Self::ends_differ`]), so the change that explains more is printed first.
    fn newer_part_larger(&mut self, bounds: (usize, usize, usize, usize)) -> Result<bool> {
        let (range_lo, lo, hi, range_hi) = bounds;
        let mut size = |a: usize, b: usize| -> Result<f64> {
            let (na, nb) = (self.claimed(a), self.claimed(b));
            if a >= b || na < 2 || nb < 2 || self.m.identical(a, b) {
                return Ok(0.0);
            }
            let p = self.m.ensure_series(&[(a, na), (b, nb)])?;
            let t = self.primary;
            Ok(match (p[0].get(t), p[1].get(t)) {
                (Some(Probe::Samples(x)), Some(Probe::Samples(y))) => {
                    let r = stats::compare(
                        &x.first(na).values,
                        &y.first(nb).values,
                        0.05,
                        self.cfg.min_effect,
                    )
                    .ratio
                    .ratio
                    .ln()
                    .abs();
                    if r.is_finite() {
                        r
                    } else {
                        0.0
                    }
                }
                _ => 0.0,
            })
        };
        Ok(size(hi, range_hi)? > size(range_lo, lo)?)
    }

    /// Too small a share of the ends' change to be searched (`min_share`)?
    fn below_min_share(&self, share: Option<f64>) -> bool {
        matches!((self.cfg.min_share, share), (Some(m), Some(s)) if s.abs() < m)
    }

    /// Binary search of every range on the work list. A Between splits a range in two. After a
    /// change point is found, the parts of its range on either side are searched too if their own
    /// ends differ: a candidate can pass as Old or New while a smaller second change hides beside
    /// it, and this is what finds that change anyway. Each change point is confirmed as soon as it
    /// is found.
    fn search_ranges(&mut self, first: Range, ends: &[Comparison]) -> Result<()> {
        let mut work = vec![(first, false)];
        while let Some((range, check_first)) = work.pop() {
            if let Some(why) = self.stop_now() {
                self.leave(&range, !check_first, why);
                continue;
            }
            let range = if check_first {
                match self.checked(range)? {
                    Some(r) => r,
                    None => continue,
                }
            } else {
                range
            };
            self.narrow(range, ends, &mut work)?;
        }
        Ok(())
    }

    /// A range queued beside a change point or a split, whose ends were not tested against
    /// each other yet: searched only when they differ (then with their estimated share and
    /// the series that differ), else passed over, or left as unexplored when undecided or
    /// below --min-share.
    fn checked(&mut self, range: Range) -> Result<Option<Range>> {
        let (share, active) = match self.ends_differ(range.lo, range.hi)? {
            EndsCheck::Same => return Ok(None),
            EndsCheck::Undecided(ratio) => {
                // Not "the same": say what may hide there instead of passing over it.
                self.unexplored.push(Unexplored {
                    lo: range.lo,
                    hi: range.hi,
                    differs: false,
                    share: range.share,
                    because: LeftBecause::Undecided,
                    ratio: Some(ratio),
                });
                return Ok(None);
            }
            EndsCheck::Differ(est, act) => (Some(est), act),
        };
        let r = Range {
            share,
            active,
            ..range
        };
        if self.below_min_share(r.share) {
            self.leave(&r, true, LeftBecause::MinShare);
            return Ok(None);
        }
        Ok(Some(r))
    }

    /// Narrow one range by classifying candidates until it holds a change point (confirmed
    /// here) or splits at a Between commit (its halves queued), or the search must stop.
    fn narrow(
        &mut self,
        range: Range,
        ends: &[Comparison],
        work: &mut Vec<(Range, bool)>,
    ) -> Result<()> {
        let (range_lo, range_hi) = (range.lo, range.hi);
        let mut r = range;
        loop {
            if let Some(why) = self.stop_now() {
                // The narrowed range still holds the change its ends differ by; the parts
                // already passed are left unchecked.
                self.leave(&r, true, why);
                return Ok(());
            }
            let skipped = |i: usize| self.skipped.contains_key(&i);
            let Some(c) = pick_candidate(r.lo, r.hi, skipped) else {
                return self.found(&r, (range_lo, r.lo, r.hi, range_hi), ends, work);
            };
            // The probe itself first: a build queue must never hold it behind a guess.
            let next: Vec<usize> = [
                Some(c),
                pick_candidate(r.lo, c, skipped),
                pick_candidate(c, r.hi, skipped),
            ]
            .into_iter()
            .flatten()
            .collect();
            self.m.prefetch(&next);
            let (step, status) = self.classify(c, r.lo, r.hi, &r.active)?;
            let verdict = step.verdict.clone();
            let position = step.position;
            self.record(step);
            if !matches!(verdict, StepVerdict::Skipped(_)) {
                self.decisions += 1;
            }
            match verdict {
                StepVerdict::Skipped(why) => {
                    self.skipped.insert(c, why);
                }
                StepVerdict::Old => r.lo = c,
                StepVerdict::New => r.hi = c,
                StepVerdict::Between => {
                    // The commits this range already passed as Old or New were judged against
                    // ends that have since turned out to hold two changes: check the parts
                    // outside lo..hi again (last, after the halves), as after a change point.
                    let bounds = (range_lo, r.lo, r.hi, range_hi);
                    let newer = self.newer_part_larger(bounds)?;
                    push_outer_checks(work, bounds, r.uncertain, self.k, newer);
                    self.split(&r, c, position, &status, work);
                    return Ok(());
                }
                StepVerdict::Ambiguous => {
                    r.uncertain = true;
                    if position.is_some_and(|p| p < 0.5) {
                        r.lo = c;
                    } else {
                        r.hi = c;
                    }
                }
            }
        }
    }

    /// No candidate left: lo..hi is a change point. It is confirmed at once, and the parts of
    /// the searched range beside it (`bounds`: range lo, lo, hi, range hi) are queued for a
    /// check of their own ends.
    fn found(
        &mut self,
        r: &Range,
        bounds: (usize, usize, usize, usize),
        ends: &[Comparison],
        work: &mut Vec<(Range, bool)>,
    ) -> Result<()> {
        let f = Found {
            last_old: r.lo,
            first_new: r.hi,
            uncertain: r.uncertain,
        };
        let ends_now = self.ends_now(ends)?;
        let j = self.confirmed.len() + 1;
        let alpha_look = alpha::confirmation_per_look(
            self.cfg.alpha,
            &self.cfg.schedule,
            j,
            self.cfg.max_changes,
            self.k,
        );
        let cp = self.confirm(&f, &ends_now, alpha_look)?;
        self.m.confirmed(&cp);
        self.confirmed.push(cp);
        let newer = self.newer_part_larger(bounds)?;
        push_outer_checks(work, bounds, r.uncertain, self.k, newer);
        Ok(())
    }

    /// Queue the halves of a range that `c` (Between) splits. Both halves' ends differ by the
    /// very tests that made c Between, so they are searched without a check. The half holding
    /// the larger share of the change (by c's position between the ends) is pushed last, so it
    /// is searched first: the change that explains most of the range is found first.
    fn split(
        &mut self,
        r: &Range,
        c: usize,
        position: Option<f64>,
        status: &[SeriesStatus],
        work: &mut Vec<(Range, bool)>,
    ) {
        let p = position.unwrap_or(0.5);
        let old_half_larger = position.is_none_or(|p| p >= 0.5);
        // A series like the old end at c changes only in the newer half, one
        // like the new end only in the older half.
        let act = |not: SeriesStatus| -> Vec<bool> {
            (r.active.iter().zip(status))
                .map(|(a, st)| *a && *st != not)
                .collect()
        };
        let (old_act, new_act) = (act(SeriesStatus::New), act(SeriesStatus::Old));
        let halves = if old_half_larger {
            [(c, r.hi, 1.0 - p, new_act), (r.lo, c, p, old_act)]
        } else {
            [(r.lo, c, p, old_act), (c, r.hi, 1.0 - p, new_act)]
        };
        for (lo, hi, part, active) in halves {
            let half = Range {
                lo,
                hi,
                uncertain: r.uncertain,
                share: r.share.map(|s| s * part),
                active,
            };
            if self.below_min_share(half.share) {
                self.leave(&half, true, LeftBecause::MinShare);
            } else {
                work.push((half, false));
            }
        }
    }

    /// The ends' comparison at every series on every sample of them the search has claimed so
    /// far (they are sampled again beside every candidate, so this is far more precise than the
    /// first look), with the first look's verdicts: what a change's share is measured against.
    fn ends_now(&mut self, first: &[Comparison]) -> Result<Vec<Comparison>> {
        let last = self.n - 1;
        let (c0, cn) = (self.claimed(0), self.claimed(last));
        let all = self.m.ensure_series(&[(0, c0), (last, cn)])?;
        let mut out = first.to_vec();
        if let (Some(o), Some(b)) = (all.first(), all.get(1)) {
            for (t, slot) in out.iter_mut().enumerate() {
                if let (Some(Probe::Samples(o)), Some(Probe::Samples(b))) = (o.get(t), b.get(t)) {
                    let (o, b) = (o.first(c0), b.first(cn));
                    let mut c =
                        stats::compare(&o.values, &b.values, self.alpha, self.cfg.min_effect);
                    c.verdict = first[t].verdict;
                    *slot = c;
                }
            }
        }
        Ok(out)
    }

    /// The parent and culprit of `f` compared on a fresh block (the samples after `bases`),
    /// looked at after each of `looks` samples, at `alpha_look` per look and series.
    fn confirmation_block(
        &mut self,
        f: &Found,
        bases: [usize; 2],
        looks: &[usize],
        alpha_look: f64,
    ) -> Result<Vec<Comparison>> {
        let commits = [f.last_old, f.first_new];
        let (me, k) = (self.cfg.min_effect, self.k);
        let r = sequential(looks, alpha_look, me, true, |look| {
            let w = self.windows(&commits, &bases, look)?;
            self.claim(f.last_old, bases[0] + look);
            self.claim(f.first_new, bases[1] + look);
            self.spend(k, alpha_look);
            Ok(w)
        })?;
        match r {
            Ok((series, _, _)) => Ok(series),
            Err((_, why, _)) => bail!(
                "{} or {} was measured before but now cannot be: {why}",
                self.m.name(f.last_old),
                self.m.name(f.first_new)
            ),
        }
    }

    /// Confirm a change point: its parent against it on a fresh block of samples (after every
    /// sample the search used), grown over the looks of the schedule from 2 × initial on, at
    /// `alpha_look` per look and series. The reported numbers come from this block alone.
    fn confirm(&mut self, f: &Found, ends: &[Comparison], alpha_look: f64) -> Result<ChangePoint> {
        let min = self.cfg.schedule.initial * 2;
        let looks: Vec<usize> = self
            .schedule
            .iter()
            .copied()
            .filter(|&k| k >= min)
            .collect();
        let looks = if looks.is_empty() { vec![min] } else { looks };
        // Every look of the block, the larger cap's too, counts from the same start.
        let bases = [self.claimed(f.last_old), self.claimed(f.first_new)];
        let mut series = self.confirmation_block(f, bases, &looks, alpha_look)?;
        // A parent and child with byte-identical binaries cannot differ in speed: whatever the
        // samples say, that is noise, never a culprit.
        let identical = self.m.identical(f.last_old, f.first_new);
        // Located is not refuted: a block still undecided at the cap gets more samples, and if
        // it stays undecided the change point is reported as located, its size unresolved.
        let undecided = |s: &[Comparison]| {
            !s.iter().any(significant) && s.iter().any(|c| c.verdict == Verdict::Undecided)
        };
        if !identical && undecided(&series) {
            let more = self.cfg.schedule.max * self.unresolved_cap;
            series = self.confirmation_block(f, bases, &[more], alpha_look)?;
        }
        let comparison = series[self.primary];
        let confirmed = !identical && series.iter().any(significant);
        let unresolved = !identical && undecided(&series);
        // "Clearly smaller": the whole interval of this change lies nearer to 1 than the
        // end-to-end ratio (estimated on every sample of the ends, see `search`).
        let e = &ends[self.primary];
        let smaller = match e.verdict {
            Verdict::Slower => comparison.ratio.hi < e.ratio.ratio,
            Verdict::Faster => comparison.ratio.lo > e.ratio.ratio,
            _ => false,
        };
        let skipped_between = (f.last_old + 1..f.first_new)
            .filter(|i| self.skipped.contains_key(i))
            .collect();
        Ok(ChangePoint {
            last_old: f.last_old,
            first_new: f.first_new,
            skipped_between,
            comparison,
            confirmed,
            unresolved,
            identical_binaries: identical,
            share: comparison.ratio.ratio.ln() / e.ratio.ratio.ln(),
            partial: smaller,
            uncertain: f.uncertain,
            series: if self.k > 1 { series } else { Vec::new() },
            located: None,
        })
    }
}

/// Where subject `x` lies between `lo` and `hi` (which must differ): all three sampled in the
/// same rounds, grown over the schedule, classified as a search classifies a candidate (Old,
/// New, Between, Ambiguous with its position, or Skipped), at `alpha` for this one decision.
/// Used to place a merge base between GOOD and BAD.
pub fn place(
    m: &mut dyn Measurer,
    x: usize,
    lo: usize,
    hi: usize,
    cfg: &Config,
    alpha: f64,
) -> Result<Step> {
    let n = x.max(lo).max(hi) + 1;
    let mut s = Searcher::new(n, cfg, m);
    let k = s.k;
    // Two tests per look and series, every look paid for.
    s.alpha = alpha::per_test_of_decision(alpha, &cfg.schedule, 2 * k);
    // One decision on its own, not a search's first.
    s.decisions = 0;
    let (step, _) = s.classify(x, lo, hi, &vec![true; k])?;
    s.record(step.clone());
    Ok(step)
}

/// The ends of `0..n` compared as [`search`] compares them (its schedule, its level per test, its
/// growth), and nothing else: another metric's view of a range (see [`crate::analysis::locate`]).
/// With what a comparison at the cap resolves at the ends' noise.
pub fn compare_ends(
    n: usize,
    cfg: &Config,
    m: &mut dyn Measurer,
) -> Result<(Comparison, Option<Resolution>)> {
    cfg.validate(n)?;
    let mut s = Searcher::new(n, cfg, m);
    let (series, _, _) = s.compare_ends()?;
    let primary = dominant(&series, significant);
    Ok((series[primary], s.resolution(primary)))
}

/// A change point located on another metric, confirmed on `m`'s as the search confirms its own:
/// parent against culprit on a block of `m`'s samples (none of which located it), from 2 ×
/// initial over the schedule's looks, grown to [`LOCATED_CAP`] × the cap when undecided, at the level of the
/// `j`-th confirmation. `ends` is `m`'s comparison of the range's ends (what its share is of).
pub fn confirm_located(
    n: usize,
    cfg: &Config,
    m: &mut dyn Measurer,
    cp: &ChangePoint,
    ends: &Comparison,
    j: usize,
) -> Result<ChangePoint> {
    let mut s = Searcher::new(n, cfg, m);
    s.direction = ends.verdict;
    s.unresolved_cap = LOCATED_CAP;
    let f = Found {
        last_old: cp.last_old,
        first_new: cp.first_new,
        uncertain: cp.uncertain,
    };
    let alpha_look =
        alpha::confirmation_per_look(cfg.alpha, &cfg.schedule, j, cfg.max_changes, s.k);
    let mut confirmed = s.confirm(&f, std::slice::from_ref(ends), alpha_look)?;
    confirmed.skipped_between = cp.skipped_between.clone();
    confirmed.located = Some(cp.comparison);
    Ok(confirmed)
}

/// Find the commit(s) in `0..n` where the speed changed. See the module docs for the procedure and
/// the error control.
pub fn search(n: usize, cfg: &Config, m: &mut dyn Measurer) -> Result<SearchResult> {
    cfg.validate(n)?;
    let mut s = Searcher::new(n, cfg, m);
    let k = s.k;
    let (ends_series, old, new) = s.compare_ends()?;
    // The series whose ends moved most leads: its direction is the range's.
    let primary = dominant(&ends_series, significant);
    if let Some(r) = s.resolution(primary) {
        s.m.forecast(&Forecast::new(r, n, k));
    }
    let ends = ends_series[primary];
    let direction = ends.verdict;
    s.primary = primary;
    s.direction = direction;
    s.total_log = ends.ratio.ratio.ln();
    let outcome = if ends_series.iter().any(significant) {
        Outcome::Changes(s.changes(&ends_series, &old, &new)?)
    } else {
        // Undecided at the cap is not "the same": the whole range is left, with what may hide.
        if ends.verdict == Verdict::Undecided {
            s.unexplored.push(Unexplored {
                lo: 0,
                hi: n - 1,
                differs: false,
                share: None,
                because: LeftBecause::Undecided,
                ratio: Some(ends.ratio),
            });
        }
        Outcome::NoChange
    };
    let explained = match &outcome {
        Outcome::Changes(cps) => cps.iter().filter(|c| c.confirmed).map(|c| c.share).sum(),
        Outcome::NoChange => 0.0,
    };
    let resolution = s.resolution(primary);
    let mut unexplored = s.unexplored;
    unexplored.sort_by_key(|u| (u.lo, u.hi));
    let commits_measured = s.seen.keys().map(|(c, _)| *c).collect::<HashSet<_>>().len();
    let samples_taken = s.seen.values().sum();
    Ok(SearchResult {
        ends,
        direction,
        outcome,
        steps: s.steps,
        commits_measured,
        samples_taken,
        decisions: s.decisions,
        alpha_per_test: s.alpha,
        tests: s.tests,
        family_alpha: s.spent.min(1.0),
        unexplored,
        resolution,
        explained,
        ends_series: if k > 1 { ends_series } else { Vec::new() },
    })
}

impl<'a> Searcher<'a> {
    fn new(n: usize, cfg: &'a Config, m: &'a mut dyn Measurer) -> Searcher<'a> {
        let k = m.series().max(1);
        Searcher {
            cfg,
            m,
            n,
            k,
            alpha: cfg.alpha_per_test(n, k),
            schedule: cfg.schedule.looks(),
            claimed: HashMap::new(),
            seen: HashMap::new(),
            held: HashMap::new(),
            skipped: HashMap::new(),
            steps: Vec::new(),
            decisions: 1,
            spent: 0.0,
            tests: 0,
            total_log: 0.0,
            primary: 0,
            direction: Verdict::Undecided,
            confirmed: Vec::new(),
            unexplored: Vec::new(),
            unresolved_cap: UNRESOLVED_CAP,
        }
    }

    /// The change points of a range whose ends differ (`old`, `new`: their first samples),
    /// oldest first, each with its share of the ends' change.
    fn changes(
        &mut self,
        ends_series: &[Comparison],
        old: &[Samples],
        new: &[Samples],
    ) -> Result<Vec<ChangePoint>> {
        let (n, k, primary) = (self.n, self.k, self.primary);
        let active: Vec<bool> = ends_series.iter().map(significant).collect();
        let no_pos = vec![None; k];
        self.record(Searcher::step(
            0,
            old,
            primary,
            StepVerdict::Old,
            Some(0.0),
            &no_pos,
        ));
        self.record(Searcher::step(
            n - 1,
            new,
            primary,
            StepVerdict::New,
            Some(1.0),
            &no_pos,
        ));
        self.search_ranges(
            Range {
                lo: 0,
                hi: n - 1,
                uncertain: false,
                share: Some(1.0),
                active,
            },
            ends_series,
        )?;
        // Shares against the ends on all their samples (the streamed ones used the ends as
        // sampled at the time).
        let ends_now = self.ends_now(ends_series)?;
        let several = self.confirmed.len() > 1;
        let mut cps = std::mem::take(&mut self.confirmed);
        for cp in &mut cps {
            cp.share = cp.comparison.ratio.ratio.ln() / ends_now[primary].ratio.ratio.ln();
            cp.partial |= several || cp.share < 0.0;
        }
        cps.sort_by_key(|c| c.last_old);
        Ok(cps)
    }
}

#[cfg(test)]
mod tests;
