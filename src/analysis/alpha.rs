//! Error control, in one place: the schedule of sequential looks and every
//! Bonferroni split of a command's alpha. No caller divides alpha itself.
//!
//! Every look at the data is a test, so peeking is paid for: a comparison
//! grown over the looks `initial, 2·initial, 4·initial, …, max` spends
//! `alpha / looks` per look. A search spends its alpha over its decisions
//! (see [`search_per_test`]); a gate over its comparisons.

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

/// Per-test level of one sequential decision that runs `tests_per_look` tests at every look
/// (placing a merge base between GOOD and BAD: two).
pub fn per_test_of_decision(alpha: f64, schedule: &Schedule, tests_per_look: usize) -> f64 {
    alpha / (schedule.len() * tests_per_look.max(1)) as f64
}

/// Per-test level of a search over `n` commits that probes `width` commits per wave (1: a binary
/// search; W: a search across W measurement nodes, see `bisect::wide`):
///
/// ```text
/// alpha_per_test = alpha / (decisions × looks × 2 × series)
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
    let decisions = (width.max(1) * waves(n, width) + 4) as f64;
    alpha / (decisions * schedule.len() as f64 * 2.0 * series.max(1) as f64)
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

/// Per-look level of the `j`-th confirmation of a search (1-based), which runs as soon as its
/// change point is found, before anyone knows how many will follow: with `max` change points
/// asked for, alpha / max each; otherwise the j-th gets alpha × 6 / (π² j²), a sequence whose sum
/// over all j is alpha (0.61, 0.15, 0.07, … of it). Then split over the looks and `series` (thread
/// counts: the change must hold at one of them, each tested).
pub fn confirmation_per_look(
    alpha: f64,
    schedule: &Schedule,
    j: usize,
    max: Option<usize>,
    series: usize,
) -> f64 {
    let j = j.max(1);
    let share = match max {
        Some(m) if j <= m => 1.0 / m.max(1) as f64,
        _ => 6.0 / (std::f64::consts::PI.powi(2) * (j * j) as f64),
    };
    per_look(alpha * share, schedule, series)
}

/// Level per place of a scan's step fit over `grid_points` measured grid points
/// (`segment::penalty`): `alpha` spread by Bonferroni over the `grid_points − 1` intervals a
/// change can sit in. The fit only chooses which intervals are searched: every change a scan
/// reports comes from a search (and its confirmation) on samples taken after the grid's, so a
/// false place here costs a search, never a false report.
pub fn scan_fit_level(alpha: f64, grid_points: usize) -> f64 {
    alpha / (grid_points.max(2) - 1) as f64
}

/// The alpha of each of the `entered` interval searches a scan may run (the intervals its fit
/// enters and their neighbours, searched when an entered one turns out flat): Bonferroni over
/// them, so together they make a false significant call with probability at most `alpha`. Valid
/// although they are chosen from the data: the choice is made on the grid's samples and each search
/// runs on samples taken after them (see analysis::scan), so given the choice every search keeps
/// its level.
pub fn scan_per_search(alpha: f64, entered: usize) -> f64 {
    alpha / entered.max(1) as f64
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
        // 0.01 / ((ceil(log2 1000) + 4) × 4 looks × 2 tests)
        let one = search_per_test(0.01, 1000, &s, 1, 1);
        assert!((one - 0.01 / (14.0 * 4.0 * 2.0)).abs() < 1e-15);
        // three thread counts: each decision tests each, at a third of the level
        assert!((search_per_test(0.01, 1000, &s, 3, 1) * 3.0 - one).abs() < 1e-15);
        // four probes per wave: 5^5 >= 1000 > 5^4, so 5 waves of 4 decisions
        let four = search_per_test(0.01, 1000, &s, 1, 4);
        assert!((four - 0.01 / (24.0 * 4.0 * 2.0)).abs() < 1e-15);
        // confirmations as they come: the levels of any number of them sum to at most alpha
        let total: f64 = (1..10_000)
            .map(|j| confirmation_per_look(0.01, &s, j, None, 1) * s.len() as f64)
            .sum();
        assert!(total <= 0.01 && total > 0.0099, "{total}");
        assert_eq!(confirmation_per_look(0.01, &s, 1, Some(1), 1), 0.01 / 4.0);
        assert_eq!(
            confirmation_per_look(0.01, &s, 2, Some(2), 2),
            0.01 / 2.0 / 8.0
        );
        assert_eq!(per_look(0.01, &s, 1), 0.01 / 4.0);
        assert_eq!(per_look(0.01, &s, 5), 0.01 / 20.0);
        // a schedule of two looks is not charged for four (the old hard-coded alpha / 4)
        assert_eq!(per_look(0.01, &sched(5, 10).unwrap(), 1), 0.01 / 2.0);
        // a scan: the fit per place, the searches among themselves
        assert_eq!(scan_fit_level(0.01, 16), 0.01 / 15.0);
        assert_eq!(scan_per_search(0.01, 4), 0.0025);
        assert_eq!(scan_per_search(0.01, 0), 0.01);
    }
}
