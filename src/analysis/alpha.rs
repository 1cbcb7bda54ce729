//! Error control, in one place: the schedule of sequential looks and every
//! Bonferroni split of a command's alpha. No caller divides alpha itself.
//!
//! Every look at the data is a test, so peeking is paid for: a comparison
//! grown over the looks `initial, 2·initial, 4·initial, …, max` spends
//! `alpha / looks` per look. A search spends half its alpha on confirming
//! change points (the j-th its share, see [`confirmation_alpha`]), each on a
//! fresh block: those tests alone can report a change. Its routing decisions
//! are tested at a level of their own by default ([`RoutingLevel::PerDecision`],
//! outside the family: a wrong turn costs samples, never a report), or with
//! `--routing-level family` inside the other half (in blocks whose levels
//! halve: see [`Routing`]), so every test together stays within alpha however
//! many changes the range holds; a gate spends its alpha over its comparisons.
//!
//! Not in the family: a sub-range check's "same" call (its ends' interval
//! inside ±min-effect at 1 − alpha) can only pass over a change, never report
//! one; what may hide there is what the search's bounds state.

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

/// Sample sizes at which a sequential comparison looks at the data:
/// initial, doubling, capped at max.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema, Deserialize)]
pub struct Schedule {
    pub initial: usize,
    pub max: usize,
}

impl Schedule {
    /// One-line error for a schedule no test can work with.
    pub fn validate(&self) -> Result<()> {
        if self.initial < 2 {
            bail!(
                "initial samples must be at least 2 (a t-test needs a variance), got {}",
                self.initial
            );
        }
        if self.max < self.initial {
            bail!(
                "max samples ({}) must not be less than initial samples ({})",
                self.max,
                self.initial
            );
        }
        Ok(())
    }

    pub fn looks(&self) -> Vec<usize> {
        let mut k = self.initial.max(1);
        let mut v = vec![k];
        while k < self.max {
            k = k.saturating_mul(2).min(self.max);
            v.push(k);
        }
        v
    }

    /// The number of looks.
    pub fn len(&self) -> usize {
        self.looks().len()
    }

    /// A schedule always has its first look; validation refuses one without.
    pub fn is_empty(&self) -> bool {
        self.looks().is_empty()
    }
}

/// Per-look level of `comparisons` sequential comparisons that together may
/// make a false call with probability at most `alpha` (compare: 1; gate: one
/// per (tool, threads) cell of all shards).
pub fn per_look(alpha: f64, schedule: &Schedule, comparisons: usize) -> f64 {
    alpha / (schedule.len() * comparisons.max(1)) as f64
}

/// A comparison that runs two tests on the same samples and takes the better one (the paired
/// and the unpaired trimmed test, see stats::compare_rounds) pays for both: each at half the
/// level, i.e. the smaller p-value doubled.
pub const TWO_TESTS: f64 = 2.0;

/// With `--tail` a comparison also runs the tail check (stats::tail, itself the better of two
/// tests doubled): the comparison's alpha is split in half between the trimmed pair and the tail
/// pair, so the four tests together stay within it.
pub const TAIL_SPLIT: f64 = 2.0;

/// Per-test level of one sequential decision that runs `tests_per_look` tests at every look
/// (placing a merge base between GOOD and BAD: two).
pub fn per_test_of_decision(alpha: f64, schedule: &Schedule, tests_per_look: usize) -> f64 {
    alpha / (schedule.len() * tests_per_look.max(1)) as f64
}

/// The half of a search's alpha its routing decisions spend (the ends, candidates, sub-range
/// checks, middle probes); the other half confirms change points.
pub fn routing_alpha(alpha: f64) -> f64 {
    alpha / 2.0
}

/// The chance that a run with `alpha` reports a false culprit, at most, whatever it finds and
/// however many change points it confirms: every culprit needs a confirmation that errs on a
/// fresh block, and all the confirmations a run may make share the confirmations' half of
/// `alpha` ([`confirmation_alpha`]: its terms sum to 1 over any number of them; a located
/// run's clock confirmations and a scan's searches hold less of it), in every routing mode.
/// Not the sum of the levels of the tests a run happened to make: which ran, and how many,
/// depended on what they saw, so that sum bounds nothing.
pub fn false_culprit_bound(alpha: f64) -> f64 {
    alpha - routing_alpha(alpha)
}

/// How a search's routing decisions (the ends, the candidates, the sub-range checks, the middle
/// probes) are tested. Routing only chooses where to look: every change point a search reports is
/// confirmed on a fresh block of samples taken after every sample routing read, in paired rounds,
/// at the confirmations' own alpha ([`confirmation_alpha`]). A wrong turn therefore costs samples
/// or leaves a step unfound (stated as undecided, with its bound), and can report one only through
/// a confirmation that errs, which the confirmations' half of alpha bounds by itself.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoutingLevel {
    /// Inside the search's alpha: its routing half split by Bonferroni over the decisions, their
    /// looks, tests and series, later blocks at half the level (see [`Routing`]); a routing test
    /// is held to what a reported change is held to.
    Family,
    /// Each routing decision errs with at most this probability (its looks, tests and series
    /// split it), outside the family: the confirmations alone bound false culprits. Chosen from
    /// the recorded traces' simulation (docs/how-a-number-is-made.md).
    PerDecision(f64),
}

/// As `--routing-level` takes it: `family`, or the level in percent (`0.1%`).
impl std::fmt::Display for RoutingLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RoutingLevel::Family => f.write_str("family"),
            RoutingLevel::PerDecision(p) => {
                let s = format!("{:.4}", p * 100.0);
                write!(f, "{}%", s.trim_end_matches('0').trim_end_matches('.'))
            }
        }
    }
}

/// The routing a search uses unless told otherwise.
pub const DEFAULT_ROUTING: RoutingLevel = RoutingLevel::PerDecision(0.001);

impl RoutingLevel {
    /// Whether routing tests count in the family's alpha.
    pub fn in_family(self) -> bool {
        self == RoutingLevel::Family
    }

    /// What a record without a routing level was routed by.
    pub fn family() -> RoutingLevel {
        RoutingLevel::Family
    }

    /// [`Self::in_family`] for serde's `skip_serializing_if`: results of a search in the family
    /// read as they did before routing had a level.
    pub fn in_family_ref(&self) -> bool {
        self.in_family()
    }
}

/// Per-test level of the first block of a search's decisions over `n` commits that probes
/// `width` commits per wave (1: a binary search; W: a search across W measurement nodes, see
/// `bisect::wide`); later blocks get half the level of the one before (see [`Routing`]):
///
/// ```text
/// alpha_per_test = routing_alpha / 2 / (decisions × looks × 2 × series)
///   decisions = W × waves + 4      the probes (W per wave; waves = the least t with
///                                  (W + 1)^t ≥ n, which is ceil(log2 n) for W = 1), the ends, the
///                                  verification and the two sub-range checks beside the change
///                                  point
///   looks     = sample sizes in the schedule (5, 10, 20, 40 by default → 4)
///   2         = tests per look: a candidate is compared against both interval ends
///   series    = thread counts measured at every probe (`--threads 1,8,32` → 3): a commit counts
///               as a change point when any of them changed, so every decision runs its tests
///               once per thread count and pays for each (Bonferroni over the thread counts)
/// ```
pub fn search_per_test(
    alpha: f64,
    n: usize,
    schedule: &Schedule,
    series: usize,
    width: usize,
) -> f64 {
    let decisions = block_size(n, width) as f64;
    routing_alpha(alpha) / 2.0 / (decisions * schedule.len() as f64 * 2.0 * series.max(1) as f64)
}

/// Decisions in one block of a search's routing: the path to one change point.
fn block_size(n: usize, width: usize) -> usize {
    width.max(1) * waves(n, width) + 4
}

/// A search's routing decisions, each given its level before its first test. They come in
/// blocks of the decisions one change point needs; block b (0-based) may spend half of what is
/// left, `routing_alpha / 2^(b+1)`, so its decisions test at half the level of the block
/// before. A range with one change costs what it did before the split; each further change
/// costs a little more per decision; the sum over every decision ever made stays within
/// `routing_alpha` (at 07d6d4e a range with three changes spent 1.54 × the alpha it printed).
#[derive(Clone, Debug, PartialEq)]
pub struct Routing {
    first: f64,
    block: usize,
    taken: usize,
}

impl Routing {
    pub fn new(alpha: f64, n: usize, schedule: &Schedule, series: usize, width: usize) -> Routing {
        Routing {
            first: search_per_test(alpha, n, schedule, series, width),
            block: block_size(n, width),
            taken: 0,
        }
    }

    /// Routing at `level`: in the family as [`Routing::new`], or every decision at its fixed
    /// level split over its looks, its two tests per look and the series (no blocks: outside
    /// the family nothing sums).
    pub fn at(
        level: RoutingLevel,
        alpha: f64,
        n: usize,
        schedule: &Schedule,
        series: usize,
        width: usize,
    ) -> Routing {
        match level {
            RoutingLevel::Family => Routing::new(alpha, n, schedule, series, width),
            RoutingLevel::PerDecision(p) => Routing {
                first: p / (schedule.len() * 2 * series.max(1)) as f64,
                block: usize::MAX,
                taken: 0,
            },
        }
    }

    /// The per-test level of the first block (what a one-change search tests at).
    pub fn first_level(&self) -> f64 {
        self.first
    }

    /// Levels for the next `decisions` decisions (a wave of several runs at once): the level of
    /// the last of them, the lowest, which every one of them uses.
    pub fn take(&mut self, decisions: usize) -> f64 {
        self.taken = self.taken.saturating_add(decisions.max(1));
        let block = (self.taken - 1) / self.block;
        self.first * 0.5f64.powi(block.min(1000) as i32)
    }
}

/// Waves of `width` probes each that narrow `n` commits to two neighbours: each wave splits its
/// range into `width + 1` parts.
pub fn waves(n: usize, width: usize) -> usize {
    let (n, parts) = (n.max(2), width.max(1) + 1);
    let (mut t, mut reach) = (0, 1usize);
    while reach < n {
        reach = reach.saturating_mul(parts);
        t += 1;
    }
    t
}

/// The alpha of the `j`-th confirmation (1-based) of a search with `alpha`, which runs as soon
/// as its change point is found, before anyone knows how many will follow: of the confirmations'
/// half of alpha the j-th gets 6 / (π² j²), a sequence whose sum over all j is 1 (0.61, 0.15,
/// 0.07, …). With `max` change points asked for, the first `max` share what those `max` terms
/// hold equally, and any later one (a change against the range's direction, which `max` does
/// not count) keeps its own term: the sum stays 1 (at 07d6d4e the later ones came on top, up to
/// 1.39). The confirmation splits it over its looks and series.
pub fn confirmation_alpha(alpha: f64, j: usize, max: Option<usize>) -> f64 {
    let term = |j: usize| 6.0 / (std::f64::consts::PI.powi(2) * (j * j) as f64);
    let j = j.max(1);
    let share = match max {
        Some(m) if j <= m => (1..=m).map(term).sum::<f64>() / m as f64,
        _ => term(j),
    };
    (alpha - routing_alpha(alpha)) * share
}

/// Level per place of a scan's step fit over `grid_points` measured grid points
/// (`segment::penalty`): half of `alpha` spread by Bonferroni over the `grid_points − 1`
/// intervals a change can sit in (the other half is the searches', see [`scan_per_search`]).
/// The fit only chooses which intervals are searched: every change a scan reports comes from a
/// search (and its confirmation) on samples taken after the grid's, so a false place here costs
/// a search, never a false report; it is counted in the scan's family all the same.
pub fn scan_fit_level(alpha: f64, grid_points: usize) -> f64 {
    alpha / 2.0 / (grid_points.max(2) - 1) as f64
}

/// The alpha of each of the `entered` interval searches a scan may run (the intervals its fit
/// enters and their neighbours, searched when an entered one turns out flat): Bonferroni of the
/// searches' half of `alpha` over them, so together with the fit they make a false significant
/// call with probability at most `alpha`. Valid
/// although they are chosen from the data: the choice is made on the grid's samples and each search
/// runs on samples taken after them (see analysis::scan), so given the choice every search keeps
/// its level.
pub fn scan_per_search(alpha: f64, entered: usize) -> f64 {
    alpha / 2.0 / entered.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sched(initial: usize, max: usize) -> Result<Schedule> {
        let s = Schedule { initial, max };
        s.validate()?;
        Ok(s)
    }

    #[test]
    fn looks_double_up_to_the_cap() {
        assert_eq!(sched(5, 40).unwrap().looks(), vec![5, 10, 20, 40]);
        assert_eq!(sched(5, 30).unwrap().looks(), vec![5, 10, 20, 30]);
        assert_eq!(sched(7, 7).unwrap().looks(), vec![7]);
        assert!(sched(1, 10).is_err());
        assert!(sched(10, 5).is_err());
    }

    /// Decisions made one block after another: each block's decisions, at their level and
    /// the most tests a decision makes, spend half of what is left of the routing alpha, so
    /// any number of decisions stays within it.
    #[test]
    fn routing_stays_within_its_half_however_many_decisions() {
        let s = sched(5, 40).unwrap();
        let mut r = Routing::new(0.01, 1000, &s, 2, 1);
        let most = (s.len() * 2 * 2) as f64;
        let first = r.first_level();
        let spent: f64 = (0..100_000).map(|_| r.take(1) * most).sum();
        assert!(spent <= 0.005 && spent > 0.00499, "{spent}");
        let mut r = Routing::new(0.01, 1000, &s, 1, 1);
        assert_eq!(r.take(1), r.first_level() * 0.5f64.powi(0));
        assert!(first < r.first_level());
        for _ in 0..12 {
            r.take(1);
        }
        assert_eq!(
            r.take(1),
            r.first_level(),
            "14 decisions in the first block"
        );
        assert_eq!(r.take(1), r.first_level() / 2.0);
        // A wave of four takes the level of its last decision.
        let mut w = Routing::new(0.01, 1000, &s, 1, 4);
        assert_eq!(w.take(24), w.first_level());
        assert_eq!(w.take(4), w.first_level() / 2.0);
    }

    #[test]
    fn waves_split_a_range_into_width_plus_one_parts() {
        assert_eq!(waves(1000, 1), 10);
        assert_eq!(waves(1024, 1), 10);
        assert_eq!(waves(1025, 1), 11);
        assert_eq!(waves(1000, 4), 5);
        assert_eq!(waves(2, 1), 1);
        assert_eq!(waves(2, 16), 1);
        assert_eq!(waves(0, 0), 1);
    }

    #[test]
    fn splits() {
        let s = sched(5, 40).unwrap();
        // the routing half's first half, 0.0025 / ((ceil(log2 1000) + 4) × 4 looks × 2 tests)
        let one = search_per_test(0.01, 1000, &s, 1, 1);
        assert!((one - 0.0025 / (14.0 * 4.0 * 2.0)).abs() < 1e-15);
        // three thread counts: each decision tests each, at a third of the level
        assert!((search_per_test(0.01, 1000, &s, 3, 1) * 3.0 - one).abs() < 1e-15);
        // four probes per wave: 5^5 >= 1000 > 5^4, so 5 waves of 4 decisions
        let four = search_per_test(0.01, 1000, &s, 1, 4);
        assert!((four - 0.0025 / (24.0 * 4.0 * 2.0)).abs() < 1e-15);
        // confirmations as they come: any number of them sum to at most their half of alpha,
        // with or without --max-changes
        for max in [None, Some(1), Some(3)] {
            let total: f64 = (1..10_000).map(|j| confirmation_alpha(0.01, j, max)).sum();
            assert!(total <= 0.005 && total > 0.00499, "{max:?}: {total}");
        }
        let first = 0.005 * 6.0 / std::f64::consts::PI.powi(2);
        assert!((confirmation_alpha(0.01, 1, Some(1)) - first).abs() < 1e-15);
        assert_eq!(
            confirmation_alpha(0.01, 1, Some(2)),
            confirmation_alpha(0.01, 2, Some(2))
        );
        assert_eq!(per_look(0.01, &s, 1), 0.01 / 4.0);
        assert_eq!(per_look(0.01, &s, 5), 0.01 / 20.0);
        // a schedule of two looks is not charged for four (the old hard-coded alpha / 4)
        assert_eq!(per_look(0.01, &sched(5, 10).unwrap(), 1), 0.01 / 2.0);
        // a scan: the fit per place, the searches among themselves
        assert_eq!(scan_fit_level(0.01, 16), 0.005 / 15.0);
        assert_eq!(scan_per_search(0.01, 4), 0.00125);
        assert_eq!(scan_per_search(0.01, 0), 0.005);
    }
}
