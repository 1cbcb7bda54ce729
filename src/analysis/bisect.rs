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
//!    (in counts, which do not drift, against the ends' first samples: only the candidate is
//!    sampled) and classified Old / New / Between / Ambiguous / Skipped (see [`StepVerdict`]).
//!    A measurer with W lanes (W measurement nodes) gets W candidates per wave, each in a lane
//!    of its own with its own samples of the ends (see `wide`): about log2(W + 1) times fewer
//!    waves, each paid for as W decisions.
//! 3. Skipped commits are left out and the unskipped commit nearest the middle is tried instead; if
//!    only skipped commits remain between an Old and a New commit, the answer is that range.
//! 4. Every change: a Between commit splits the range in two and both halves are searched, the
//!    half holding the larger share of the change first; after a change point is found, the rest
//!    of its range on either side is searched if that part's own ends differ (a sub-range check).
//!    A part whose check is undecided at the cap has its middle probed against both its ends
//!    (see `inside`): a half that differs is searched, what stays undecided is left with its
//!    bound.
//! 5. Each change point is confirmed as soon as it is found: parent against culprit on a fresh
//!    block of samples (at least 2 × initial each in time, initial in counts: see
//!    [`Spread`]), and handed to [`Measurer::confirmed`] so a
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
//! A false culprit needs a confirmation that errs: every change point is confirmed on a fresh
//! block of its parent and itself, sampled in rounds together after every sample the run read
//! before it, in this search or an earlier phase ([`Measurer::used`]), and the j-th confirmation tests at [`alpha::confirmation_alpha`] — a share 6 / (π² j²)
//! of the confirmations' half of `cfg.alpha` (the first `max_changes` share their terms
//! equally), split over its looks and series — so all of a range's confirmations together stay
//! within that half however many change points it holds.
//!
//! Routing decisions (the ends, candidates, sub-range checks, middle probes) only choose where
//! to look. By default each is tested at its own level ([`alpha::RoutingLevel`], `--routing-level`,
//! 0.1%), outside `cfg.alpha`: a wrong turn costs samples or leaves a part undecided with its
//! bound, and reports a change only through a confirmation that errs. With
//! `RoutingLevel::Family` they share the other half of `cfg.alpha`, split by Bonferroni in
//! [`alpha::search_per_test`] (decisions × looks × 2 tests per look × series). A false "no
//! change" at the ends is not a false alarm and is in neither (its rate is the power of the
//! test, checked by simulation). Before a search, the merge base's placement ([`place`], at the
//! level it is given: `--alpha`) and `--locate auto`'s look at the ends are routing too, in every
//! mode, and counted in no result's tests. What bounds false culprits is the confirmations'
//! allocation, [`alpha::false_culprit_bound`], not the sum of the levels of the tests a run
//! made. The position interval used to tell Old/New from "part of the change" is a
//! tie-breaker at a fixed 80% (see `POSITION_CONF`), not a test.

use crate::analysis::alpha::{self, Schedule};
use crate::analysis::resolution::{Forecast, Resolution};
use crate::analysis::samples::Samples;
use crate::analysis::stats::{self, Comparison, RatioCi, Verdict};
use crate::unavailable::Unavailable;
use anyhow::{bail, Result};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

mod config;
mod confirm;
mod inside;
mod measurer;
mod ranges;
mod result;
mod sequential;
mod step;
mod wide;

pub use config::{Config, Spread};
pub use measurer::{first_series, Measurer, Probe, SeriesProbes};
use ranges::{Found, Range};
pub use result::{
    ChangePoint, LeftBecause, Outcome, SearchResult, SeriesPoint, Step, StepVerdict, Unexplored,
};
pub use sequential::{compare_pair, Side};
use sequential::{position, sequential, Compared};
use step::{Judged, SeriesStatus, Window};

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

/// A bisect probes at most this many commits per wave, whatever its lanes. More waste samples
/// without saving time: each wave lasts as long as its slowest candidate, and every candidate is
/// paid for at a smaller level per test. `plan` (775 commits, one +10% step, separate build and
/// measurement nodes, a shared ccache): a median of 215 s with 4 per wave, 208 s with 8 and
/// 330 s with 16, for 715, 1,035 and 1,408 samples.
pub const WIDEST: usize = 4;

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

/// What a look asks of the measurer: `k` samples after each commit's base.
fn wants(commits: &[usize], bases: &[usize], k: usize) -> Vec<(usize, usize)> {
    commits
        .iter()
        .zip(bases)
        .map(|(&c, &b)| (c, b + k))
        .collect()
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

/// Whose samples of a commit a decision reads: the search's own, or a lane's (subjects of its
/// own, measured on its own node: see [`wide`]). Samples of two pools never meet in one test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Pool {
    Main,
    Lane(usize),
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
    /// Commits probed per wave: the measurer's lanes (1: a binary search).
    width: usize,
    schedule: Vec<usize>,
    /// Samples of each commit already used by earlier decisions, per pool: every decision works
    /// on a fresh window after these, so the samples it compares were taken interleaved with
    /// each other.
    claimed: HashMap<Pool, HashMap<usize, usize>>,
    /// The most samples seen per (pool, commit, series).
    seen: HashMap<(Pool, usize, usize), usize>,
    /// Every sample value seen per (pool, commit, series).
    held: HashMap<(Pool, usize, usize), Vec<f64>>,
    /// Per series, the noise and degrees of freedom per sample of the test that decided each
    /// decision, at its last look ([`Comparison::sigma`]): what the run resolves.
    sigmas: Vec<Vec<(f64, f64)>>,
    skipped: HashMap<usize, Unavailable>,
    steps: Vec<Step>,
    decisions: usize,
    /// The levels of its routing decisions, one after another (see [`alpha::Routing`]).
    routing: alpha::Routing,
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
    /// The comparisons a decision ended on, one per series (`None`: that series was not
    /// tested): their noise is what the run resolves.
    fn decided_on<'c>(&mut self, cs: impl IntoIterator<Item = (usize, &'c Comparison)>) {
        for (t, c) in cs {
            if let Some(v) = self.sigmas.get_mut(t) {
                v.push((c.sigma, c.df_per_sample));
            }
        }
    }

    /// B against A at `alpha` (one of the search's tests), with the tail check under `--tail`.
    fn compare(&self, a: &Samples, b: &Samples, alpha: f64) -> Comparison {
        stats::compare_rounds_with(a, b, alpha, self.cfg.min_effect, self.cfg.tail_rule())
    }

    fn spend(&mut self, tests: usize, level: f64) {
        self.tests += tests;
        self.spent += tests as f64 * level;
    }

    /// A routing decision's tests: counted in the family's alpha only when routing is in it
    /// (outside, the fresh-block confirmations alone bound false culprits).
    fn route(&mut self, tests: usize, level: f64) {
        if self.cfg.routing.in_family() {
            self.spend(tests, level);
        } else {
            self.tests += tests;
        }
    }

    /// Windows of `k` samples after `bases` for each commit (every series), taken interleaved.
    /// Slicing (rather than using everything `ensure` returns) keeps the search a function of the
    /// requested samples, so a resumed search with a warm cache replays the same decisions.
    fn windows(&mut self, commits: &[usize], bases: &[usize], k: usize) -> Result<Vec<Window>> {
        let probes = self.m.ensure_series(&wants(commits, bases, k))?;
        self.cut(Pool::Main, commits, bases, k, probes)
    }

    /// The windows of `k` samples after `bases` of what the measurer gave `pool` for `commits`.
    fn cut(
        &mut self,
        pool: Pool,
        commits: &[usize],
        bases: &[usize],
        k: usize,
        probes: SeriesProbes,
    ) -> Result<Vec<Window>> {
        if probes.len() != commits.len() {
            bail!(
                "measurer returned {} results for {} commits",
                probes.len(),
                commits.len()
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
                let seen = self.seen.entry((pool, c, t)).or_insert(0);
                match p {
                    Probe::Samples(v) => {
                        *seen = (*seen).max(v.len());
                        series.push(v.window(base, base + k));
                        self.held.insert((pool, c, t), v.values);
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
        self.claimed_in(Pool::Main, c)
    }

    fn claimed_in(&self, pool: Pool, c: usize) -> usize {
        let Some(marks) = self.claimed.get(&pool) else {
            return 0;
        };
        let p = pool_key(marks, c, &*self.m);
        marks.get(&p).copied().unwrap_or(0)
    }

    fn claim(&mut self, c: usize, upto: usize) {
        self.claim_in(Pool::Main, c, upto)
    }

    /// Marks `c`'s samples in `pool` up to `upto` as used: what comes after them is fresh. Never
    /// lowers the mark (a count's step reads its ends' first samples again, see `end_base`).
    fn claim_in(&mut self, pool: Pool, c: usize, upto: usize) {
        let marks = self.claimed.entry(pool).or_default();
        let p = pool_key(marks, c, &*self.m);
        let mark = marks.entry(p).or_insert(0);
        *mark = (*mark).max(upto);
    }

    /// Where a step's window of the interval end `c` starts. In time, after every sample used
    /// so far: the end is sampled afresh in the candidate's rounds, so drift between the rounds
    /// cannot pass for a change. In counts there is no drift to pair against, so the end's first
    /// samples serve every step and only the candidate is sampled (a third of the counts, each a
    /// process under valgrind); a confirmation still takes a fresh block of both.
    fn end_base(&self, pool: Pool, c: usize) -> usize {
        match self.cfg.spread {
            Spread::Clock => self.claimed_in(pool, c),
            Spread::Count => 0,
        }
    }

    fn record(&mut self, step: Step) {
        self.m.decided(&step);
        self.steps.push(step);
    }

    /// Ends first, growing the samples until every series' comparison decides or the cap is
    /// reached.
    fn compare_ends(&mut self) -> Result<Compared> {
        let ends = [0, self.n - 1];
        let looks = self.schedule.clone();
        self.alpha = self.routing.take(1);
        let (alpha, me, k) = (self.alpha, self.cfg.min_effect, self.k);
        let r = sequential(&looks, alpha, (me, self.cfg.tail_rule()), false, |look| {
            let w = self.windows(&ends, &[0, 0], look)?;
            self.claim(0, look);
            self.claim(self.n - 1, look);
            self.route(k, alpha);
            Ok(w)
        })?;
        let (old, new) = (self.m.name(0), self.m.name(self.n - 1));
        match r {
            Ok(done) => {
                self.decided_on(done.0.iter().enumerate());
                Ok(done)
            }
            Err((Side::Both, r0, r1)) => {
                bail!("neither end can be measured: old end {old}: {r0}; new end {new}: {r1}")
            }
            Err((Side::A, r, _)) => bail!("the old end (good) {old} cannot be measured: {r}"),
            Err((Side::B, r, _)) => bail!("the new end (bad) {new} cannot be measured: {r}"),
        }
    }

    /// What a comparison at the cap resolves: from the noise of the tests that decided at
    /// series `t` ([`Resolution::of_tests`]), or before any, of every commit sampled so far.
    fn resolution(&self, t: usize) -> Option<Resolution> {
        let (max, me) = (self.cfg.schedule.max, self.cfg.min_effect);
        let alpha = (self.cfg).resolving_level(self.n, self.k, self.width);
        let tests = self.sigmas.get(t).map_or(&[][..], |v| &v[..]);
        Resolution::of_tests(tests, max, alpha, me).or_else(|| {
            let values: Vec<&[f64]> = (self.held.iter())
                .filter(|((_, _, s), _)| *s == t)
                .map(|(_, v)| &v[..])
                .collect();
            Resolution::of(&values, max, alpha, me)
        })
    }

    /// Confirmed change points in the range's direction (what `max_changes` counts).
    fn answers(&self) -> usize {
        self.confirmed
            .iter()
            .filter(|c| c.confirmed && c.verdict() == self.direction)
            .count()
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

/// Samples of each commit that a run's decisions read, keyed by pool (see `pool_key`): a
/// later decision's fresh block of that commit starts after them. The measurer keeps them for
/// the whole run ([`Measurer::used`]); every search starts from them and leaves its own there
/// when it ends, so no phase has to hand them to the next.
pub type Used = HashMap<usize, usize>;

/// Tests a phase made and the sum of their levels: what a result's `tests` and
/// `family_alpha` add up.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spent {
    pub tests: usize,
    pub alpha: f64,
}

impl Spent {
    /// `other` added to this.
    pub fn add(&mut self, other: Spent) {
        self.tests += other.tests;
        self.alpha += other.alpha;
    }
}

/// The ends of a range compared on their own (see [`compare_ends`]).
pub struct EndsCompared {
    /// The comparison of the series whose ends moved most.
    pub comparison: Comparison,
    /// What a comparison at the cap resolves at the ends' noise.
    pub resolution: Option<Resolution>,
    /// Its tests.
    pub spent: Spent,
}

/// The ends of `0..n` compared as [`search`] compares them (its schedule, its level per test, its
/// growth), and nothing else: another metric's view of a range (see [`crate::analysis::locate`]).
pub fn compare_ends(n: usize, cfg: &Config, m: &mut dyn Measurer) -> Result<EndsCompared> {
    cfg.validate(n)?;
    let mut s = Searcher::new(n, cfg, m);
    let (series, _, _) = s.compare_ends()?;
    let primary = dominant(&series, significant);
    Ok(EndsCompared {
        comparison: series[primary],
        resolution: s.resolution(primary),
        spent: Spent {
            tests: s.tests,
            alpha: s.spent,
        },
    })
}

/// A change point located on another metric, confirmed on `m`'s as the search confirms its own:
/// parent against culprit on a fresh block of `m`'s samples (after every one the run read, see
/// [`Measurer::used`], and taken in rounds of both), from 2 × initial over the schedule's looks,
/// grown to [`LOCATED_CAP`] × the cap when undecided, at the level of the `j`-th confirmation.
/// `ends` is `m`'s comparison of the range's ends (what its share is of). With the tests it made.
pub fn confirm_located(
    n: usize,
    cfg: &Config,
    m: &mut dyn Measurer,
    (cp, j): (&ChangePoint, usize),
    ends: &Comparison,
) -> Result<(ChangePoint, Spent)> {
    let mut s = Searcher::new(n, cfg, m);
    s.direction = ends.verdict;
    s.unresolved_cap = LOCATED_CAP;
    let f = Found {
        last_old: cp.last_old,
        first_new: cp.first_new,
        uncertain: cp.uncertain,
    };
    let alpha_conf = alpha::confirmation_alpha(cfg.alpha, j, cfg.max_changes);
    let mut confirmed = s.confirm(&f, std::slice::from_ref(ends), alpha_conf)?;
    confirmed.skipped_between = cp.skipped_between.clone();
    confirmed.located = Some(cp.comparison);
    let spent = Spent {
        tests: s.tests,
        alpha: s.spent,
    };
    Ok((confirmed, spent))
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
        // The same bounds only the net change: steps that cancel inside are said to be unbounded.
        let because = match ends.verdict {
            Verdict::Undecided => Some(LeftBecause::Undecided),
            Verdict::Same if n > 2 => Some(LeftBecause::Same),
            _ => None,
        };
        if let Some(because) = because {
            s.unexplored.push(Unexplored {
                lo: 0,
                hi: n - 1,
                differs: false,
                share: None,
                because,
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
    let mut unexplored = std::mem::take(&mut s.unexplored);
    unexplored.sort_by_key(|u| (u.lo, u.hi));
    let commits_measured = s.seen.keys().map(|k| k.1).collect::<HashSet<_>>().len();
    let samples_taken = s.seen.values().sum();
    Ok(SearchResult {
        ends,
        direction,
        outcome,
        steps: std::mem::take(&mut s.steps),
        commits_measured,
        samples_taken,
        decisions: s.decisions,
        alpha_per_test: s.routing.first_level(),
        tests: s.tests,
        family_alpha: s.spent.min(1.0),
        unexplored,
        resolution,
        explained,
        ends_series: if k > 1 { ends_series } else { Vec::new() },
        tested: s.sigmas.get(primary).cloned().unwrap_or_default(),
        primary,
    })
}

/// What the search read stays the run's: the next phase's blocks start after it.
impl Drop for Searcher<'_> {
    fn drop(&mut self) {
        if let Some(marks) = self.claimed.remove(&Pool::Main) {
            *self.m.used() = marks;
        }
    }
}

impl<'a> Searcher<'a> {
    fn new(n: usize, cfg: &'a Config, m: &'a mut dyn Measurer) -> Searcher<'a> {
        let k = m.series().max(1);
        let width = m.lanes().clamp(1, WIDEST);
        let routing = cfg.routing(n, k, width);
        // The run's marks: without them a block began after only this search's own reads, on
        // samples an earlier phase took minutes before in other rounds (no pairs, and a slow
        // wave then passed for a change: a merge base's placement, `auto`'s look, the ends'
        // comparison, another confirmation's block).
        let claimed = HashMap::from([(Pool::Main, m.used().clone())]);
        Searcher {
            cfg,
            m,
            n,
            k,
            alpha: routing.first_level(),
            routing,
            width,
            schedule: cfg.schedule.looks(),
            claimed,
            seen: HashMap::new(),
            held: HashMap::new(),
            sigmas: vec![Vec::new(); k],
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
