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
//! 4. Every change (default): a Between commit splits the range in two and both halves are
//!    searched; after a change point is found, the rest of its range on either side is searched if
//!    that part's own ends differ (a sub-range check). First-change-only: Between counts as New, no
//!    sub-range checks.
//! 5. Each change point is verified: parent against culprit on all their samples (at least
//!    2 × initial each).
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
use crate::analysis::stats::{self, Comparison, Verdict};
use crate::measure::unavailable::Unavailable;
use anyhow::{bail, Result};
use serde::Serialize;
use std::collections::HashMap;

/// Confidence of the position interval that keeps a commit whose place between the ends is still
/// unclear from being called Old or New. It is a tie-breaker, not an error-controlling test: the
/// significance tests decide old/new, and a second change hidden next to a commit that passed as
/// Old/New is found by the sub-range checks. In simulation (10% + 5% steps, 3% noise) 80% found both
/// steps as often as 99% did, with far fewer commits left ambiguous at the sample cap.
const POSITION_CONF: f64 = 0.8;

/// What measuring a commit gave.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Probe {
    Samples(Vec<f64>),
    /// Build failed / kernel not applicable / crashed: the reason.
    Skip(Unavailable),
}

pub trait Measurer {
    /// For each (commit, n) make sure at least n samples exist and return ALL samples known for that
    /// commit (in the order they were taken). The implementation takes missing samples interleaved
    /// across the listed commits (A B C A B C ...), so drift cancels; callers therefore always ask for
    /// the candidate together with the ends/neighbours it is compared against.
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>>;
    /// Called when a commit's verdict is final (for live output). Default: do nothing.
    fn decided(&mut self, _step: &Step) {}
    /// Get commit `c` ready to measure (build it) without sampling, so that [`identical`]
    /// can tell. Default: nothing to do.
    ///
    /// [`identical`]: Measurer::identical
    fn prepare(&mut self, _c: usize) -> Result<()> {
        Ok(())
    }
    /// Whether commits `a` and `b` load byte-identical libraries and modules (then no change of
    /// speed can lie between them). Default: not known.
    fn identical(&self, _a: usize, _b: usize) -> bool {
        false
    }
    /// How errors name commit `i` (a short sha in the real pipeline).
    fn name(&self, i: usize) -> String {
        format!("commit {i}")
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Config {
    /// Error rate of the whole search (see the module docs for how it is split).
    pub alpha: f64,
    /// Smallest relative change worth reporting (0.03 = 3%).
    pub min_effect: f64,
    /// Sample sizes at which each decision looks at the data.
    pub schedule: Schedule,
    pub first_change_only: bool,
    /// Stop after this many change points (the search goes to the larger share of the change
    /// first, so 1 gives the change that explains most of the range).
    pub max_changes: Option<usize>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            alpha: 0.01,
            min_effect: 0.03,
            schedule: Schedule {
                initial: 5,
                max: 40,
            },
            first_change_only: false,
            max_changes: None,
        }
    }
}

impl Config {
    /// One-line error for a configuration the search cannot work with.
    pub fn validate(&self, n: usize) -> Result<()> {
        if n < 2 {
            bail!("a bisect needs at least 2 commits, got {n}");
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            bail!(
                "alpha must be between 0 and 1 (exclusive), got {}",
                self.alpha
            );
        }
        if !(self.min_effect > 0.0 && self.min_effect.is_finite()) {
            bail!("min-effect must be greater than 0, got {}", self.min_effect);
        }
        self.schedule.validate()
    }

    /// Per-test significance level for a search over `n` commits.
    pub fn alpha_per_test(&self, n: usize) -> f64 {
        alpha::search_per_test(self.alpha, n, &self.schedule, self.first_change_only)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepVerdict {
    /// Like the old end of its interval.
    Old,
    /// Like the new end of its interval.
    New,
    /// Significantly different from both ends: part of the change, or a second change.
    Between,
    /// Still undecided at max samples; the search went on by the closer end.
    Ambiguous,
    Skipped(Unavailable),
}

/// One decided commit, for live output and the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Step {
    pub commit: usize,
    /// Samples of this commit the decision used.
    pub n: usize,
    pub mean: f64,
    pub ci95: (f64, f64),
    pub verdict: StepVerdict,
    /// (mean − mean_old) / (mean_new − mean_old) against the interval's ends at the time.
    pub position: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChangePoint {
    pub last_old: usize,
    /// `last_old + 1` for a single culprit; larger when skipped commits leave a range.
    pub first_new: usize,
    pub skipped_between: Vec<usize>,
    /// Confirmation: `last_old` (a) against `first_new` (b) on a fresh block of samples taken
    /// for it alone (interleaved, in random order), never the samples that selected the pair, so
    /// its ratio, interval and p-values are not biased by the selection.
    pub comparison: Comparison,
    /// The confirmation found the change significant (at its own share of alpha), and the two
    /// commits' binaries are not byte-identical.
    pub confirmed: bool,
    /// Parent and culprit load byte-identical libraries: never a culprit.
    pub identical_binaries: bool,
    /// This change's share of the ends' change, on the log scale (ln ratio / ln ends' ratio):
    /// 1 explains the whole range, negative goes against the range's direction.
    pub share: f64,
    /// This change explains only part of the end-to-end change (the range holds more than one).
    pub partial: bool,
    /// A commit on the way here stayed ambiguous (the search went on by the closer end).
    pub uncertain: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    NoChange,
    /// Oldest first.
    Changes(Vec<ChangePoint>),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchResult {
    /// Old end (a) against new end (b).
    pub ends: Comparison,
    /// `Slower` = regression, `Faster` = fix; `Same`/`Undecided` with `NoChange`.
    pub direction: Verdict,
    pub outcome: Outcome,
    pub steps: Vec<Step>,
    /// Distinct commits asked for (skipped ones included: their build was attempted).
    pub commits_measured: usize,
    /// Samples as observed via `ensure` (the most seen per commit, summed).
    pub samples_taken: usize,
    /// Sequential decisions made: the ends, each classified candidate, each sub-range check.
    pub decisions: usize,
    pub alpha_per_test: f64,
    /// Significance tests actually run by the search (every look of every decision; a candidate's
    /// look is two tests) and by the confirmations.
    pub tests: usize,
    /// The family-wise error bound achieved: Bonferroni's sum of the levels of every test run. A
    /// range with several changes can spend more than the budget `alpha`; this says how much.
    pub family_alpha: f64,
}

/// A sub-range still to search: `lo` is known to differ from `hi`.
struct Range {
    lo: usize,
    hi: usize,
    uncertain: bool,
    /// A Between seen on the way (first-change-only mode): the range holds another change.
    partial: bool,
}

struct Found {
    last_old: usize,
    first_new: usize,
    uncertain: bool,
    partial: bool,
}

/// Work for the parts of a range outside `lo..hi` (`bounds` = range_lo, lo, hi, range_hi):
/// each is searched only if its own ends differ. The newer part is pushed first, so the older
/// one is searched first.
fn push_outer_checks(
    work: &mut Vec<(Range, bool)>,
    bounds: (usize, usize, usize, usize),
    uncertain: bool,
) {
    let (range_lo, lo, hi, range_hi) = bounds;
    for (l, h) in [(hi, range_hi), (range_lo, lo)] {
        if h > l + 1 {
            let r = Range {
                lo: l,
                hi: h,
                uncertain,
                partial: true,
            };
            work.push((r, true));
        }
    }
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
    Samples(Vec<f64>),
    Skip(Unavailable),
}

struct Searcher<'a> {
    cfg: &'a Config,
    m: &'a mut dyn Measurer,
    n: usize,
    alpha: f64,
    schedule: Vec<usize>,
    /// Samples of each commit already used by earlier decisions: every decision works on a fresh
    /// window after these, so the samples it compares were taken interleaved with each other.
    claimed: HashMap<usize, usize>,
    seen: HashMap<usize, usize>,
    skipped: HashMap<usize, Unavailable>,
    steps: Vec<Step>,
    decisions: usize,
    /// Σ of the levels of the tests run so far, and their count.
    spent: f64,
    tests: usize,
}

impl Searcher<'_> {
    fn spend(&mut self, tests: usize, level: f64) {
        self.tests += tests;
        self.spent += tests as f64 * level;
    }

    /// Windows of `k` samples after `bases` for each commit, taken interleaved. Slicing (rather than
    /// using everything `ensure` returns) keeps the search a function of the requested samples, so a
    /// resumed search with a warm cache replays the same decisions.
    fn windows(&mut self, commits: &[usize], bases: &[usize], k: usize) -> Result<Vec<Window>> {
        let wants: Vec<(usize, usize)> = commits
            .iter()
            .zip(bases)
            .map(|(&c, &b)| (c, b + k))
            .collect();
        let probes = self.m.ensure(&wants)?;
        if probes.len() != wants.len() {
            bail!(
                "measurer returned {} results for {} commits",
                probes.len(),
                wants.len()
            );
        }
        let mut out = Vec::with_capacity(probes.len());
        for ((&c, &base), p) in commits.iter().zip(bases).zip(probes) {
            out.push(match p {
                Probe::Samples(v) => {
                    let seen = self.seen.entry(c).or_insert(0);
                    *seen = (*seen).max(v.len());
                    let end = (base + k).min(v.len());
                    Window::Samples(v[base.min(end)..end].to_vec())
                }
                Probe::Skip(reason) => {
                    self.seen.entry(c).or_insert(0);
                    Window::Skip(reason)
                }
            });
        }
        Ok(out)
    }

    fn claimed(&self, c: usize) -> usize {
        self.claimed.get(&c).copied().unwrap_or(0)
    }

    fn record(&mut self, step: Step) {
        self.m.decided(&step);
        self.steps.push(step);
    }

    fn step(commit: usize, xs: &[f64], verdict: StepVerdict, position: Option<f64>) -> Step {
        let s = stats::summarize(xs);
        Step {
            commit,
            n: s.n,
            mean: s.mean,
            ci95: s.ci95,
            verdict,
            position,
        }
    }

    /// Ends first, growing the samples until the comparison decides or the cap is reached.
    fn compare_ends(&mut self) -> Result<(Comparison, Vec<f64>, Vec<f64>)> {
        let ends = [0, self.n - 1];
        let looks = self.schedule.clone();
        let (alpha, me) = (self.alpha, self.cfg.min_effect);
        let r = sequential(&looks, alpha, me, false, |k| {
            let w = self.windows(&ends, &[0, 0], k)?;
            self.claimed.insert(0, k);
            self.claimed.insert(self.n - 1, k);
            self.spend(1, alpha);
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
    /// all three, growing them together.
    fn classify(&mut self, c: usize, lo: usize, hi: usize) -> Result<Step> {
        // A commit that loads the same binaries as an end behaves as that end: measuring it
        // would compare one subject with itself.
        let ends = [(lo, StepVerdict::Old, 0.0), (hi, StepVerdict::New, 1.0)];
        self.m.prepare(c)?;
        for (end, verdict, point) in ends {
            if self.m.identical(c, end) {
                let k = self.claimed(end).max(1);
                let xs = match self.windows(&[end], &[0], k)?.pop() {
                    Some(Window::Samples(v)) => v,
                    _ => Vec::new(),
                };
                return Ok(Self::step(c, &xs, verdict, Some(point)));
            }
        }
        let commits = [c, lo, hi];
        let bases = [self.claimed(c), self.claimed(lo), self.claimed(hi)];
        let pos_conf = POSITION_CONF;
        let mut result = None;
        for k in self.schedule.clone() {
            let w = self.windows(&commits, &bases, k)?;
            for (i, &cm) in commits.iter().enumerate() {
                self.claimed.insert(cm, bases[i] + k);
            }
            let x = match &w[0] {
                Window::Samples(x) => x.clone(),
                Window::Skip(r) => {
                    return Ok(Self::step(c, &[], StepVerdict::Skipped(r.clone()), None));
                }
            };
            let (xo, xn) = match (&w[1], &w[2]) {
                (Window::Samples(o), Window::Samples(n)) => (o, n),
                (Window::Skip(r), _) | (_, Window::Skip(r)) => {
                    bail!("commit {lo} or {hi} was measured before but now cannot be: {r}")
                }
            };
            let vo = stats::compare_rounds(xo, &x, self.alpha, self.cfg.min_effect).verdict;
            let vn = stats::compare_rounds(xn, &x, self.alpha, self.cfg.min_effect).verdict;
            self.spend(2, self.alpha);
            let differs = |v: Verdict| matches!(v, Verdict::Slower | Verdict::Faster);
            let (d_old, d_new) = (differs(vo), differs(vn));
            let pos = position(xo, &x, xn, pos_conf);
            let point = pos.map(|p| p.0);
            let verdict = if d_old && d_new {
                Some(StepVerdict::Between)
            } else if d_new && !d_old && pos.is_some_and(|p| p.2 < 0.5) {
                Some(StepVerdict::Old)
            } else if d_old && !d_new && pos.is_some_and(|p| p.1 > 0.5) {
                Some(StepVerdict::New)
            } else {
                None
            };
            result = Some(Self::step(
                c,
                &x,
                verdict.clone().unwrap_or(StepVerdict::Ambiguous),
                point,
            ));
            if verdict.is_some() {
                break;
            }
        }
        result.ok_or_else(|| anyhow::anyhow!("empty sample schedule"))
    }

    /// Do the ends of a left-over sub-range differ? Sequential like every decision: a significant
    /// difference (at the per-test alpha) says yes; the ratio's (1 − alpha) interval inside
    /// ±min_effect, or the cap, says no. The "no" side uses the whole-search level because its error
    /// is only a missed extra change, and the stricter level would cost max samples at every check.
    fn ends_differ(&mut self, lo: usize, hi: usize) -> Result<bool> {
        self.decisions += 1;
        let commits = [lo, hi];
        let bases = [self.claimed(lo), self.claimed(hi)];
        for k in self.schedule.clone() {
            let w = self.windows(&commits, &bases, k)?;
            self.claimed.insert(lo, bases[0] + k);
            self.claimed.insert(hi, bases[1] + k);
            let (a, b) = match (&w[0], &w[1]) {
                (Window::Samples(a), Window::Samples(b)) => (a, b),
                (Window::Skip(r), _) | (_, Window::Skip(r)) => {
                    bail!("commit {lo} or {hi} was measured before but now cannot be: {r}")
                }
            };
            let c = stats::compare_rounds(a, b, self.alpha, self.cfg.min_effect);
            self.spend(1, self.alpha);
            if matches!(c.verdict, Verdict::Slower | Verdict::Faster) {
                return Ok(true);
            }
            let me = self.cfg.min_effect;
            if stats::ratio_ci(a, b, 1.0 - self.cfg.alpha)
                .is_some_and(|r| r.lo >= 1.0 - me && r.hi <= 1.0 + me)
            {
                return Ok(false);
            }
        }
        Ok(false)
    }

    /// Binary search of every range on the work list. A Between splits a range in two (unless only
    /// the first change is wanted). After a change point is found, the parts of its range on either
    /// side are searched too if their own ends differ: a candidate can pass as Old or New while a
    /// smaller second change hides beside it, and this is what finds that change anyway.
    fn search_ranges(&mut self, first: Range) -> Result<Vec<Found>> {
        let mut work = vec![(first, false)];
        let mut found = Vec::new();
        while let Some((range, check_first)) = work.pop() {
            if self.cfg.max_changes.is_some_and(|m| found.len() >= m) {
                break;
            }
            let Range {
                mut lo,
                mut hi,
                mut uncertain,
                mut partial,
            } = range;
            if check_first && !self.ends_differ(lo, hi)? {
                continue;
            }
            let (range_lo, range_hi) = (lo, hi);
            loop {
                let Some(c) = pick_candidate(lo, hi, |i| self.skipped.contains_key(&i)) else {
                    found.push(Found {
                        last_old: lo,
                        first_new: hi,
                        uncertain,
                        partial,
                    });
                    if !self.cfg.first_change_only {
                        push_outer_checks(&mut work, (range_lo, lo, hi, range_hi), uncertain);
                    }
                    break;
                };
                let step = self.classify(c, lo, hi)?;
                let verdict = step.verdict.clone();
                let position = step.position;
                self.record(step);
                if !matches!(verdict, StepVerdict::Skipped(_)) {
                    self.decisions += 1;
                }
                match verdict {
                    StepVerdict::Skipped(r) => {
                        self.skipped.insert(c, r);
                    }
                    StepVerdict::Old => lo = c,
                    StepVerdict::New => hi = c,
                    StepVerdict::Between if self.cfg.first_change_only => {
                        partial = true;
                        hi = c;
                    }
                    StepVerdict::Between => {
                        // Both halves' ends differ by the very tests that made c Between, so they
                        // are searched without a check. The half holding the larger share of the
                        // change (by c's position between the ends) is pushed last, so it is
                        // searched first: the change that explains most of the range is found
                        // first.
                        // The commits this range already passed as Old or New were judged against
                        // ends that have since turned out to hold two changes: check the parts
                        // outside lo..hi again (last, after the halves), as after a change point.
                        push_outer_checks(&mut work, (range_lo, lo, hi, range_hi), uncertain);
                        let old_half_larger = position.is_none_or(|p| p >= 0.5);
                        let halves = if old_half_larger {
                            [(c, hi), (lo, c)]
                        } else {
                            [(lo, c), (c, hi)]
                        };
                        for (l, h) in halves {
                            let r = Range {
                                lo: l,
                                hi: h,
                                uncertain,
                                partial: true,
                            };
                            work.push((r, false));
                        }
                        break;
                    }
                    StepVerdict::Ambiguous => {
                        uncertain = true;
                        if position.is_some_and(|p| p < 0.5) {
                            lo = c;
                        } else {
                            hi = c;
                        }
                    }
                }
            }
        }
        Ok(found)
    }

    /// Confirm a change point: its parent against it on a fresh block of samples (after every
    /// sample the search used), grown over the looks of the schedule from 2 × initial on, at
    /// `alpha_look` per look. The reported numbers come from this block alone.
    fn confirm(&mut self, f: &Found, ends: &Comparison, alpha_look: f64) -> Result<ChangePoint> {
        let commits = [f.last_old, f.first_new];
        let bases = [self.claimed(f.last_old), self.claimed(f.first_new)];
        let min = self.cfg.schedule.initial * 2;
        let looks: Vec<usize> = self
            .schedule
            .iter()
            .copied()
            .filter(|&k| k >= min)
            .collect();
        let looks = if looks.is_empty() { vec![min] } else { looks };
        let me = self.cfg.min_effect;
        let r = sequential(&looks, alpha_look, me, true, |k| {
            let w = self.windows(&commits, &bases, k)?;
            self.claimed.insert(f.last_old, bases[0] + k);
            self.claimed.insert(f.first_new, bases[1] + k);
            self.spend(1, alpha_look);
            Ok(w)
        })?;
        let (comparison, _, _) = match r {
            Ok(done) => done,
            Err((_, why, _)) => bail!(
                "{} or {} was measured before but now cannot be: {why}",
                self.m.name(f.last_old),
                self.m.name(f.first_new)
            ),
        };
        // A parent and child with byte-identical binaries cannot differ in speed: whatever the
        // samples say, that is noise, never a culprit.
        let identical = self.m.identical(f.last_old, f.first_new);
        let confirmed =
            !identical && matches!(comparison.verdict, Verdict::Slower | Verdict::Faster);
        // "Clearly smaller": the whole interval of this change lies nearer to 1 than the
        // end-to-end ratio (estimated on every sample of the ends, see `search`).
        let e = ends.ratio.ratio;
        let smaller = match ends.verdict {
            Verdict::Slower => comparison.ratio.hi < e,
            Verdict::Faster => comparison.ratio.lo > e,
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
            identical_binaries: identical,
            share: comparison.ratio.ratio.ln() / ends.ratio.ratio.ln(),
            partial: f.partial || smaller,
            uncertain: f.uncertain,
        })
    }
}

/// Which side of a pair could not be measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Side {
    A,
    B,
    Both,
}

type Unmeasurable = (Side, Unavailable, Unavailable);
/// A decided (or capped) comparison with the windows it was made on.
type Compared = (Comparison, Vec<f64>, Vec<f64>);

/// The one sequential comparison: windows of `k` samples for each look `k`, compared until the
/// verdict is decided or the last look. `window(k)` returns the two sides' windows.
fn sequential<F>(
    looks: &[usize],
    alpha_look: f64,
    min_effect: f64,
    settle_size: bool,
    mut window: F,
) -> Result<std::result::Result<Compared, Unmeasurable>>
where
    F: FnMut(usize) -> Result<Vec<Window>>,
{
    let mut last = None;
    for &k in looks {
        let mut w = window(k)?;
        if w.len() != 2 {
            bail!("measurer returned {} results for 2 subjects", w.len());
        }
        let (wb, wa) = (w.pop(), w.pop());
        let (a, b) = match (wa, wb) {
            (Some(Window::Samples(a)), Some(Window::Samples(b))) => (a, b),
            (Some(Window::Skip(ra)), Some(Window::Skip(rb))) => {
                return Ok(Err((Side::Both, ra, rb)))
            }
            (Some(Window::Skip(r)), _) => return Ok(Err((Side::A, r.clone(), r))),
            (_, Some(Window::Skip(r))) => return Ok(Err((Side::B, r.clone(), r))),
            _ => unreachable!("two windows checked above"),
        };
        let c = stats::compare_rounds(&a, &b, alpha_look, min_effect);
        // With `settle_size`, a significant change whose interval still straddles min-effect
        // is not done: "at least min-effect" (a failed gate, a culprit's size) must rest on the
        // interval, not on a point estimate picked by optional stopping. The ends of a search
        // need only the direction.
        let done = match c.verdict {
            Verdict::Undecided => false,
            Verdict::Slower | Verdict::Faster => !settle_size || c.size != stats::Size::Uncertain,
            Verdict::Same => true,
        };
        last = Some((c, a, b));
        if done {
            break;
        }
    }
    last.map(Ok)
        .ok_or_else(|| anyhow::anyhow!("empty sample schedule"))
}

/// Subjects `a` and `b` compared sequentially over the schedule at `alpha_look` per look (see
/// [`alpha::per_look`]), on all samples the measurer holds up to each look. Used where two
/// subjects are compared outside a search (compare, verify, gate, the merge base).
pub fn compare_pair(
    m: &mut dyn Measurer,
    a: usize,
    b: usize,
    schedule: &Schedule,
    alpha_look: f64,
    min_effect: f64,
) -> Result<std::result::Result<Comparison, Unavailable>> {
    let r = sequential(&schedule.looks(), alpha_look, min_effect, true, |k| {
        let probes = m.ensure(&[(a, k), (b, k)])?;
        Ok(probes
            .into_iter()
            .map(|p| match p {
                Probe::Samples(v) => Window::Samples(v[..k.min(v.len())].to_vec()),
                Probe::Skip(r) => Window::Skip(r),
            })
            .collect())
    })?;
    Ok(r.map(|(c, _, _)| c).map_err(|(_, r, _)| r))
}

/// Position of `x` between the old and new ends, (x̄ − ō)/(n̄ − ō), with a `conf` interval by the
/// delta method (t quantile, Welch–Satterthwaite df over the three variance terms). Returns
/// (point, lo, hi); `None` when the ends have the same mean or a side has fewer than 2 values.
fn position(old: &[f64], x: &[f64], new: &[f64], conf: f64) -> Option<(f64, f64, f64)> {
    // On logs, trimmed of outliers like the tests: one slow process must not drag a commit
    // toward the slow end (raw means did, and left commits "ambiguous" at the sample cap).
    let (mo, vo, ho) = stats::robust_log_location(old)?;
    let (mx, vx, hx) = stats::robust_log_location(x)?;
    let (mn, vn, hn) = stats::robust_log_location(new)?;
    if ho < 2.0 || hx < 2.0 || hn < 2.0 {
        return None;
    }
    let d = mn - mo;
    if d == 0.0 || !d.is_finite() {
        return None;
    }
    let p = (mx - mo) / d;
    // ∂p/∂x̄ = 1/d, ∂p/∂ō = (p − 1)/d, ∂p/∂n̄ = −p/d
    let terms = [(vx, hx), ((p - 1.0) * (p - 1.0) * vo, ho), (p * p * vn, hn)];
    let var: f64 = terms.iter().map(|t| t.0).sum();
    if var == 0.0 {
        return Some((p, p, p));
    }
    let denom: f64 = terms.iter().map(|(t, h)| t * t / (h - 1.0)).sum();
    let df = var * var / denom;
    let half = stats::t_quantile(conf, df)? * var.sqrt() / d.abs();
    Some((p, p - half, p + half))
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
    let mut s = Searcher {
        cfg,
        m,
        n,
        // Two tests per look, every look paid for.
        alpha: alpha::per_test_of_decision(alpha, &cfg.schedule, 2),
        schedule: cfg.schedule.looks(),
        claimed: HashMap::new(),
        seen: HashMap::new(),
        skipped: HashMap::new(),
        steps: Vec::new(),
        decisions: 0,
        spent: 0.0,
        tests: 0,
    };
    let step = s.classify(x, lo, hi)?;
    s.record(step.clone());
    Ok(step)
}

/// Find the commit(s) in `0..n` where the speed changed. See the module docs for the procedure and
/// the error control.
pub fn search(n: usize, cfg: &Config, m: &mut dyn Measurer) -> Result<SearchResult> {
    cfg.validate(n)?;
    let mut s = Searcher {
        cfg,
        m,
        n,
        alpha: cfg.alpha_per_test(n),
        schedule: cfg.schedule.looks(),
        claimed: HashMap::new(),
        seen: HashMap::new(),
        skipped: HashMap::new(),
        steps: Vec::new(),
        decisions: 1,
        spent: 0.0,
        tests: 0,
    };
    let (ends, old, new) = s.compare_ends()?;
    let direction = ends.verdict;
    let outcome = if matches!(direction, Verdict::Slower | Verdict::Faster) {
        s.record(Searcher::step(0, &old, StepVerdict::Old, Some(0.0)));
        s.record(Searcher::step(n - 1, &new, StepVerdict::New, Some(1.0)));
        let found = s.search_ranges(Range {
            lo: 0,
            hi: n - 1,
            uncertain: false,
            partial: false,
        })?;
        let several = found.len() > 1;
        // The ends were sampled again beside every candidate: their ratio on all those samples
        // is far more precise than the first look's, and is what a change is measured against.
        let (c0, cn) = (s.claimed(0), s.claimed(n - 1));
        let all = s.m.ensure(&[(0, c0), (n - 1, cn)])?;
        let ends_now = match (all.first(), all.get(1)) {
            (Some(Probe::Samples(o)), Some(Probe::Samples(b))) => {
                let (o, b) = (&o[..c0.min(o.len())], &b[..cn.min(b.len())]);
                let mut c = stats::compare(o, b, s.alpha, cfg.min_effect);
                c.verdict = ends.verdict;
                c
            }
            _ => ends,
        };
        // Each confirmation is a comparison of its own: together they may make a false
        // confirmation with probability at most alpha.
        let alpha_confirm = alpha::per_look(cfg.alpha, &cfg.schedule, found.len());
        let mut cps = Vec::with_capacity(found.len());
        for f in &found {
            let mut cp = s.confirm(f, &ends_now, alpha_confirm)?;
            cp.partial |= several;
            cps.push(cp);
        }
        cps.sort_by_key(|c| c.last_old);
        Outcome::Changes(cps)
    } else {
        Outcome::NoChange
    };
    let commits_measured = s.seen.len();
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::rounds::{self, Sampler};
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use rand_distr::{Distribution, Normal};
    use std::collections::HashSet;

    /// Synthetic history: explicit per-commit means, log-normal noise, explicit failed builds.
    struct Fake {
        means: Vec<f64>,
        skip: HashSet<usize>,
        noise: Normal<f64>,
        rng: StdRng,
        samples: HashMap<usize, Vec<f64>>,
        drawn: usize,
        calls: Vec<Vec<(usize, usize)>>,
        decided: Vec<usize>,
        fail_after: Option<usize>,
        /// Pairs of commits whose binaries are byte-identical.
        same: HashSet<(usize, usize)>,
    }

    impl Fake {
        /// `steps`: (first commit with the change, relative effect).
        fn new(n: usize, steps: &[(usize, f64)], seed: u64) -> Fake {
            let means = (0..n)
                .map(|c| {
                    steps
                        .iter()
                        .filter(|s| s.0 <= c)
                        .map(|s| 1.0 + s.1)
                        .product::<f64>()
                        * 100.0
                })
                .collect();
            Fake {
                means,
                skip: HashSet::new(),
                noise: Normal::new(0.0, 0.03).unwrap(),
                rng: StdRng::seed_from_u64(seed),
                samples: HashMap::new(),
                drawn: 0,
                calls: vec![],
                decided: vec![],
                fail_after: None,
                same: HashSet::new(),
            }
        }
        fn skipping(mut self, s: &[usize]) -> Fake {
            self.skip.extend(s);
            self
        }
    }

    impl Sampler for Fake {
        fn have(&self, c: usize) -> Option<usize> {
            (!self.skip.contains(&c)).then(|| self.samples.get(&c).map_or(0, Vec::len))
        }
        fn take_one(&mut self, c: usize) -> Result<()> {
            let x = self.means[c] * self.noise.sample(&mut self.rng).exp();
            self.samples.entry(c).or_default().push(x);
            self.drawn += 1;
            Ok(())
        }
    }

    impl Measurer for Fake {
        fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
            if self.fail_after.is_some_and(|f| self.calls.len() >= f) {
                bail!("disk full");
            }
            self.calls.push(wants.to_vec());
            rounds::fill(self, wants, None)?;
            Ok(wants
                .iter()
                .map(|&(c, _)| {
                    if self.skip.contains(&c) {
                        Probe::Skip(Unavailable::Simulated {
                            message: format!("build of {c} failed"),
                        })
                    } else {
                        Probe::Samples(self.samples[&c].clone())
                    }
                })
                .collect())
        }
        fn decided(&mut self, step: &Step) {
            self.decided.push(step.commit);
        }
        fn identical(&self, a: usize, b: usize) -> bool {
            self.same.contains(&(a, b))
        }
    }

    /// The confirmed change points: what the search reports as culprits.
    fn changes(r: &SearchResult) -> Vec<(usize, usize)> {
        match &r.outcome {
            Outcome::NoChange => vec![],
            Outcome::Changes(c) => c
                .iter()
                .filter(|c| c.confirmed)
                .map(|c| (c.last_old, c.first_new))
                .collect(),
        }
    }

    fn cfg() -> Config {
        Config::default()
    }

    #[test]
    fn single_step_anywhere() {
        for (n, at) in [
            (50, 1),
            (50, 49),
            (50, 20),
            (1000, 1),
            (1000, 999),
            (1000, 377),
        ] {
            for (seed, effect) in [(1, 0.10), (2, -0.10)] {
                let mut m = Fake::new(n, &[(at, effect)], seed + at as u64);
                let r = search(n, &cfg(), &mut m).unwrap();
                let dir = if effect > 0.0 {
                    Verdict::Slower
                } else {
                    Verdict::Faster
                };
                assert_eq!(r.direction, dir, "n={n} at={at}");
                assert_eq!(changes(&r), vec![(at - 1, at)], "n={n} at={at}");
                let Outcome::Changes(all) = &r.outcome else {
                    unreachable!()
                };
                // a candidate that failed its confirmation may stand beside the culprit, but
                // is reported as such
                let cps: Vec<&ChangePoint> = all.iter().filter(|c| c.confirmed).collect();
                assert!(all.len() - cps.len() <= 1, "{all:?}");
                assert_eq!(cps[0].comparison.verdict, dir);
                assert!(
                    !cps[0].uncertain && cps[0].confirmed,
                    "n={n} at={at} effect={effect}: {:?} ends {:?}",
                    cps[0],
                    r.ends.ratio
                );
                assert!(cps[0].comparison.a.n >= 10 && cps[0].comparison.b.n >= 10);
                assert!((cps[0].comparison.ratio.ratio - (1.0 + effect)).abs() < 0.05);
                // the search asked for every sample it saw, and nothing else was drawn
                assert_eq!(r.samples_taken, m.drawn);
                assert_eq!(r.commits_measured, m.samples.len());
                assert!(r.commits_measured <= 2 + 2 * (n as f64).log2().ceil() as usize);
            }
        }
    }

    #[test]
    fn largest_share_first_and_max_changes() {
        // a small step on the old side, the large one later, a small one after it
        for seed in 0..5 {
            let steps = [(60, 0.04), (230, 0.20), (380, 0.06)];
            let mut m = Fake::new(500, &steps, 40 + seed);
            let c = Config {
                max_changes: Some(1),
                ..cfg()
            };
            let r = search(500, &c, &mut m).unwrap();
            assert_eq!(changes(&r), vec![(229, 230)], "seed {seed}");
            let Outcome::Changes(cps) = &r.outcome else {
                unreachable!()
            };
            assert!(cps[0].share > 0.4 && cps[0].share < 1.0, "{:?}", cps[0]);
        }
        // a change against the range's direction has a negative share
        let mut m = Fake::new(300, &[(80, -0.05), (200, 0.25)], 9);
        let r = search(300, &cfg(), &mut m).unwrap();
        let Outcome::Changes(cps) = &r.outcome else {
            panic!("changes expected")
        };
        let against = cps
            .iter()
            .find(|c| c.first_new == 80)
            .expect("the -5% step");
        assert!(against.share < 0.0, "{against:?}");
    }

    #[test]
    fn identical_binaries_are_never_a_culprit() {
        // the samples say 39 -> 40 changed, the build hashes say the libraries are the same
        let mut m = Fake::new(100, &[(40, 0.1)], 3);
        m.same.insert((39, 40));
        let r = search(100, &cfg(), &mut m).unwrap();
        let Outcome::Changes(cps) = &r.outcome else {
            panic!("the step is still found")
        };
        let cp = cps.iter().find(|c| c.first_new == 40).unwrap();
        assert!(cp.identical_binaries && !cp.confirmed, "{cp:?}");
        assert_eq!(changes(&r), vec![]);
    }

    #[test]
    fn candidates_are_measured_with_both_ends() {
        let mut m = Fake::new(100, &[(40, 0.1)], 3);
        let r = search(100, &cfg(), &mut m).unwrap();
        assert_eq!(changes(&r), vec![(39, 40)]);
        // the ends first, then every look at a candidate also samples the two interval ends
        assert_eq!(m.calls[0].iter().map(|w| w.0).collect::<Vec<_>>(), [0, 99]);
        let candidate_calls = m.calls.iter().filter(|c| c.len() == 3).count();
        assert!(candidate_calls >= 6);
        for call in m.calls.iter().filter(|c| c.len() == 3) {
            let (c, lo, hi) = (call[0].0, call[1].0, call[2].0);
            assert!(lo < c && c < hi);
        }
        // every decided commit was reported live, in order
        assert_eq!(
            m.decided,
            r.steps.iter().map(|s| s.commit).collect::<Vec<_>>()
        );
    }

    #[test]
    fn no_change() {
        for seed in 0..5 {
            let mut m = Fake::new(500, &[], seed);
            let r = search(500, &cfg(), &mut m).unwrap();
            assert_eq!(r.outcome, Outcome::NoChange);
            assert!(matches!(r.direction, Verdict::Same | Verdict::Undecided));
            assert_eq!(r.commits_measured, 2);
            assert!(r.steps.is_empty());
        }
        // a change smaller than min_effect is no change either
        let mut m = Fake::new(500, &[(200, 0.005)], 9);
        let r = search(500, &cfg(), &mut m).unwrap();
        assert_eq!(r.outcome, Outcome::NoChange);
    }

    #[test]
    fn skips_around_the_culprit_give_a_range() {
        let mut m = Fake::new(100, &[(50, 0.1)], 4).skipping(&[48, 49, 50, 51]);
        let r = search(100, &cfg(), &mut m).unwrap();
        let Outcome::Changes(cps) = &r.outcome else {
            panic!("no change found")
        };
        assert_eq!(cps.len(), 1);
        assert_eq!((cps[0].last_old, cps[0].first_new), (47, 52));
        assert_eq!(cps[0].skipped_between, vec![48, 49, 50, 51]);
        assert!(r.steps.iter().any(
            |s| matches!(&s.verdict, StepVerdict::Skipped(r) if r.to_string().contains("failed"))
        ));
        // a skip away from the culprit does not widen the answer
        let mut m = Fake::new(100, &[(30, 0.1)], 5).skipping(&[49, 50, 31]);
        let r = search(100, &cfg(), &mut m).unwrap();
        assert_eq!(changes(&r), vec![(29, 30)]);
    }

    #[test]
    fn two_steps_both_found() {
        for (seed, steps) in [
            (6, vec![(60, 0.10), (150, 0.08)]),
            (7, vec![(50, 0.15), (120, -0.08)]),
            (8, vec![(10, 0.05), (90, 0.10)]),
        ] {
            let mut m = Fake::new(200, &steps, seed);
            let r = search(200, &cfg(), &mut m).unwrap();
            let want: Vec<(usize, usize)> = steps.iter().map(|s| (s.0 - 1, s.0)).collect();
            assert_eq!(changes(&r), want, "{steps:?}");
            let Outcome::Changes(cps) = &r.outcome else {
                unreachable!()
            };
            assert!(cps.iter().all(|c| c.partial));
            for (cp, s) in cps.iter().zip(&steps) {
                assert!((cp.comparison.ratio.ratio - (1.0 + s.1)).abs() < 0.04);
            }
        }
    }

    #[test]
    fn first_change_only_stops_at_the_oldest() {
        let c = Config {
            first_change_only: true,
            ..cfg()
        };
        let mut m = Fake::new(200, &[(60, 0.10), (150, 0.08)], 6);
        let r = search(200, &c, &mut m).unwrap();
        assert_eq!(changes(&r), vec![(59, 60)]);
        let Outcome::Changes(cps) = &r.outcome else {
            unreachable!()
        };
        assert!(cps[0].partial);
        assert!(c.alpha_per_test(200) > cfg().alpha_per_test(200));
    }

    #[test]
    fn skipped_end_is_an_error() {
        let mut m = Fake::new(100, &[(50, 0.1)], 1).skipping(&[0]);
        let e = search(100, &cfg(), &mut m).unwrap_err().to_string();
        assert!(
            e.contains("old end") && e.contains("build of 0 failed"),
            "{e}"
        );
        let mut m = Fake::new(100, &[(50, 0.1)], 1).skipping(&[99]);
        let e = search(100, &cfg(), &mut m).unwrap_err().to_string();
        assert!(e.contains("new end"), "{e}");
        let mut m = Fake::new(100, &[(50, 0.1)], 1).skipping(&[0, 99]);
        assert!(search(100, &cfg(), &mut m).is_err());
    }

    #[test]
    fn two_commits() {
        let mut m = Fake::new(2, &[(1, -0.2)], 1);
        let r = search(2, &cfg(), &mut m).unwrap();
        assert_eq!(r.direction, Verdict::Faster);
        assert_eq!(changes(&r), vec![(0, 1)]);
        let mut m = Fake::new(2, &[], 1);
        assert_eq!(
            search(2, &cfg(), &mut m).unwrap().outcome,
            Outcome::NoChange
        );
    }

    #[test]
    fn measurer_errors_propagate() {
        let mut m = Fake::new(100, &[(50, 0.1)], 1);
        m.fail_after = Some(3);
        let e = search(100, &cfg(), &mut m).unwrap_err();
        assert_eq!(e.to_string(), "disk full");
    }

    #[test]
    fn resumed_search_replays_from_cached_samples() {
        let mut m = Fake::new(300, &[(100, 0.1), (200, 0.06)], 11);
        let first = search(300, &cfg(), &mut m).unwrap();
        let drawn = m.drawn;
        // same measurer = warm cache: ensure returns more samples than asked for
        let again = search(300, &cfg(), &mut m).unwrap();
        assert_eq!(m.drawn, drawn);
        assert_eq!(first.steps, again.steps);
        assert_eq!(first.outcome, again.outcome);
    }

    #[test]
    fn config_is_validated() {
        let mut m = Fake::new(10, &[], 1);
        let bad = [
            (1, cfg()),
            (
                10,
                Config {
                    alpha: 0.0,
                    ..cfg()
                },
            ),
            (
                10,
                Config {
                    alpha: 1.0,
                    ..cfg()
                },
            ),
            (
                10,
                Config {
                    alpha: f64::NAN,
                    ..cfg()
                },
            ),
            (
                10,
                Config {
                    min_effect: 0.0,
                    ..cfg()
                },
            ),
            (
                10,
                Config {
                    min_effect: -0.1,
                    ..cfg()
                },
            ),
            (
                10,
                Config {
                    schedule: Schedule {
                        initial: 1,
                        max: 40,
                    },
                    ..cfg()
                },
            ),
            (
                10,
                Config {
                    schedule: Schedule {
                        initial: 10,
                        max: 5,
                    },
                    ..cfg()
                },
            ),
        ];
        for (n, c) in bad {
            let e = search(n, &c, &mut m).unwrap_err().to_string();
            assert!(!e.contains('\n'), "{e}");
        }
        assert!(m.calls.is_empty());
    }

    #[test]
    fn alpha_split_comes_from_the_error_control_module() {
        let s = cfg().schedule;
        assert_eq!(
            cfg().alpha_per_test(1000),
            alpha::search_per_test(0.01, 1000, &s, false)
        );
    }

    #[test]
    fn candidate_picking() {
        let none = |_| false;
        assert_eq!(pick_candidate(0, 1, none), None);
        assert_eq!(pick_candidate(0, 2, none), Some(1));
        assert_eq!(pick_candidate(0, 10, none), Some(5));
        let s = [5usize, 6];
        assert_eq!(pick_candidate(0, 10, |i| s.contains(&i)), Some(4));
        let s = [4usize, 5, 6];
        assert_eq!(pick_candidate(0, 10, |i| s.contains(&i)), Some(7));
        assert_eq!(pick_candidate(0, 4, |i| i != 3), Some(3));
        assert_eq!(pick_candidate(0, 4, |i| i != 1), Some(1));
        assert_eq!(pick_candidate(3, 7, |_| true), None);
    }

    #[test]
    fn result_serializes() {
        let mut m = Fake::new(20, &[(7, 0.1)], 2).skipping(&[9]);
        let r = search(20, &cfg(), &mut m).unwrap();
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["direction"], "slower");
        assert_eq!(v["outcome"]["changes"][0]["first_new"], 7);
        assert!(v["steps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["verdict"]["skipped"]["kind"] == "simulated"));
        assert!(v["alpha_per_test"].as_f64().unwrap() > 0.0);
    }
}
