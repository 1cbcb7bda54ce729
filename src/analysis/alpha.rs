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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

    pub fn len(&self) -> usize {
        self.looks().len()
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

/// Per-test level of a search over `n` commits:
///
/// ```text
/// alpha_per_test = alpha / (decisions × looks × 2)
///   decisions = ceil(log2 n) + 4   the binary-search steps, the ends, the verification and the two
///                                  sub-range checks beside the change point (+ 2 with first-change-only)
///   looks     = sample sizes in the schedule (5, 10, 20, 40 by default → 4)
///   2         = tests per look: a candidate is compared against both interval ends
/// ```
pub fn search_per_test(alpha: f64, n: usize, schedule: &Schedule, first_change_only: bool) -> f64 {
    let extra = if first_change_only { 2.0 } else { 4.0 };
    let decisions = (n.max(2) as f64).log2().ceil() + extra;
    alpha / (decisions * schedule.len() as f64 * 2.0)
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
    fn splits() {
        let s = sched(5, 40).unwrap();
        // 0.01 / ((ceil(log2 1000) + 4) × 4 looks × 2 tests)
        assert!((search_per_test(0.01, 1000, &s, false) - 0.01 / (14.0 * 4.0 * 2.0)).abs() < 1e-15);
        assert!(search_per_test(0.01, 200, &s, true) > search_per_test(0.01, 200, &s, false));
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
