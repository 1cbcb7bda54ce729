//! Locate by count, confirm by clock: a search on a nearly noiseless metric (instructions per
//! operation, 0.25% per sample) finds where the counts changed, and every change point it finds is
//! then confirmed on the clock, on a fresh interleaved block of time samples, because time is what
//! users pay for and counts miss what moves time without moving the instructions executed (memory,
//! caches, contention).
//!
//! # Procedure
//!
//! 1. The ends are compared on the clock, as a search compares them.
//! 2. The range is searched on counts ([`bisect::search`]); each change point gets the count
//!    search's own confirmation.
//! 3. Every change point the counts confirmed (or located without resolving its size) is
//!    confirmed on the clock ([`bisect::confirm_located`], at the level of the j-th
//!    confirmation): its comparison, verdict and share become the clock's, the count's is kept
//!    beside it.
//! 4. A range whose time moved but whose counts did not is searched on the clock instead, and
//!    says so.
//! 5. A range whose time moved more than its clock-confirmed change points explain (counts
//!    found some of it, something that leaves the instructions alone did the rest) says how much
//!    time is unexplained ([`unexplained_time`]), so "one change" is never read off a search
//!    that could not see the rest.
//!
//! The error control of each search is its own (see [`bisect`]); the clock's confirmations are
//! levelled as a search's confirmations are, so a false culprit needs a false count location and a
//! false clock confirmation.

use crate::analysis::bisect::{self, ChangePoint, Config, Measurer, Outcome, SearchResult};
use crate::analysis::resolution::Resolution;
use crate::analysis::stats::{Comparison, RatioCi, Verdict};
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// Which metric searched the range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchedBy {
    /// The counts located; the clock confirmed each change point.
    Count,
    /// The counts' ends did not move but the clock's did: the range was searched on the clock.
    Clock,
}

/// What locating by count saw beside the clock's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Location {
    pub searched_by: SearchedBy,
    /// The ends compared on counts.
    pub count_ends: Comparison,
    /// What the count search resolved (its own noise); the result's resolution is the clock's
    /// (at the ends' noise).
    pub count_resolution: Option<Resolution>,
    /// Samples the count search took (as observed), and its decisions.
    pub count_samples: usize,
    pub count_decisions: usize,
    /// Change points the counts located and the clock confirmed, refuted or left unresolved.
    pub clock_confirmations: usize,
    /// The clock's ends moved beyond what its confirmed change points explain.
    pub unexplained: Option<RatioCi>,
}

/// The clock's result (its ends, each change point confirmed on the clock, the count's
/// comparison beside it), and what the counts saw.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Located {
    pub result: SearchResult,
    pub location: Location,
}

/// Search `0..n` on `count`, confirm on `clock` (see the module docs). `count_cfg` and
/// `clock_cfg` differ in their schedules (a count decides in a few samples).
pub fn locate(
    n: usize,
    count_cfg: &Config,
    clock_cfg: &Config,
    count: &mut dyn Measurer,
    clock: &mut dyn Measurer,
) -> Result<Located> {
    let (clock_ends, clock_resolution) = bisect::compare_ends(n, clock_cfg, clock)?;
    let found = bisect::search(n, count_cfg, count)?;
    let counts_moved = matches!(found.outcome, Outcome::Changes(_));
    let time_moved = matches!(clock_ends.verdict, Verdict::Slower | Verdict::Faster);
    if !counts_moved && time_moved {
        let result = bisect::search(n, clock_cfg, clock)?;
        let location = location(&found, SearchedBy::Clock, 0, None);
        return Ok(Located { result, location });
    }
    let (mut result, confirmations) = on_clock(n, clock_cfg, clock, found.clone(), &clock_ends)?;
    // The run's figures are the clock's, and so is what it resolves: what the counts resolved
    // is the location's.
    result.resolution = clock_resolution;
    let unexplained = unexplained_time(&result, clock_cfg.min_effect);
    let location = location(&found, SearchedBy::Count, confirmations, unexplained);
    Ok(Located { result, location })
}

fn location(
    found: &SearchResult,
    by: SearchedBy,
    confirmations: usize,
    unexplained: Option<RatioCi>,
) -> Location {
    Location {
        searched_by: by,
        count_ends: found.ends,
        count_resolution: found.resolution.clone(),
        count_samples: found.samples_taken,
        count_decisions: found.decisions,
        clock_confirmations: confirmations,
        unexplained,
    }
}

/// The clock's ends' ratio over the product of its confirmed change points' ratios, when that
/// remainder is at least `min_effect` and its interval excludes no change. The interval is
/// interval arithmetic on the ends' and the confirmations' own intervals (the ends' low over
/// the product of the highs, and so on): conservative, so time is called unexplained only when
/// no combination of the measured sizes accounts for it. `None` when the clock could not tell
/// the ends apart: there is then no moved time to explain.
pub fn unexplained_time(r: &SearchResult, min_effect: f64) -> Option<RatioCi> {
    if !matches!(r.ends.verdict, Verdict::Slower | Verdict::Faster) {
        return None;
    }
    let confirmed: Vec<RatioCi> = match &r.outcome {
        Outcome::Changes(cps) => cps
            .iter()
            .filter(|c| c.confirmed)
            .map(|c| c.comparison.ratio)
            .collect(),
        Outcome::NoChange => vec![],
    };
    let product = |f: fn(&RatioCi) -> f64| confirmed.iter().map(f).product::<f64>();
    let e = r.ends.ratio;
    let rest = RatioCi {
        ratio: e.ratio / product(|c| c.ratio),
        lo: e.lo / product(|c| c.hi),
        hi: e.hi / product(|c| c.lo),
    };
    let excludes_none = rest.lo > 1.0 || rest.hi < 1.0;
    let large = (rest.ratio.ln()).abs() >= (1.0 + min_effect).ln();
    (excludes_none && large && rest.ratio.is_finite()).then_some(rest)
}

/// The count search's result with its change points confirmed on the clock, largest count
/// share first (it gets the first, largest share of the confirmations' alpha); the ends and the
/// direction the clock's when it decided, the explained share the clock's. Change points the
/// counts themselves refuted are kept as they are: the clock is not asked about them.
fn on_clock(
    n: usize,
    cfg: &Config,
    clock: &mut dyn Measurer,
    mut r: SearchResult,
    clock_ends: &Comparison,
) -> Result<(SearchResult, usize)> {
    let Outcome::Changes(cps) = &mut r.outcome else {
        return Ok((r, 0));
    };
    let mut order: Vec<usize> = (0..cps.len())
        .filter(|&i| cps[i].confirmed || cps[i].unresolved)
        .collect();
    order.sort_by(|&a, &b| cps[b].share.abs().total_cmp(&cps[a].share.abs()));
    let decided = matches!(clock_ends.verdict, Verdict::Slower | Verdict::Faster);
    for (j, &i) in order.iter().enumerate() {
        let confirmed = bisect::confirm_located(n, cfg, clock, &cps[i], clock_ends, j + 1)?;
        clock.confirmed(&confirmed);
        cps[i] = ChangePoint {
            // A clock that could not tell the ends apart has no share to give.
            share: if decided {
                confirmed.share
            } else {
                cps[i].share
            },
            ..confirmed
        };
    }
    r.explained = cps.iter().filter(|c| c.confirmed).map(|c| c.share).sum();
    if decided {
        r.ends = *clock_ends;
        r.direction = clock_ends.verdict;
    }
    Ok((r, order.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::simulate::noise::NoiseModel;
    use crate::analysis::simulate::SimMeasurer;

    /// A count with 0.25% noise and a clock with 15%, both seeing `count_steps`/`clock_steps`.
    fn pair(
        n: usize,
        count_steps: &[(usize, f64)],
        clock_steps: &[(usize, f64)],
        seed: u64,
    ) -> (SimMeasurer, SimMeasurer) {
        let count = SimMeasurer::new(n, count_steps, &NoiseModel::iid(0.0025), 0.0, seed).unwrap();
        let clock =
            SimMeasurer::new(n, clock_steps, &NoiseModel::iid(0.15), 0.0, seed + 1).unwrap();
        (count, clock)
    }

    fn count_cfg() -> Config {
        Config {
            schedule: crate::analysis::alpha::Schedule {
                initial: 3,
                max: 10,
            },
            ..Config::default()
        }
    }

    fn changes(r: &SearchResult) -> Vec<(usize, bool, bool)> {
        match &r.outcome {
            Outcome::Changes(c) => c
                .iter()
                .map(|c| (c.first_new, c.confirmed, c.located.is_some()))
                .collect(),
            Outcome::NoChange => vec![],
        }
    }

    #[test]
    fn a_step_in_both_is_located_by_count_and_confirmed_by_clock() {
        let (mut count, mut clock) = pair(300, &[(120, 1.3)], &[(120, 1.3)], 3);
        let l = locate(
            300,
            &count_cfg(),
            &Config::default(),
            &mut count,
            &mut clock,
        )
        .unwrap();
        assert_eq!(l.location.searched_by, SearchedBy::Count);
        assert_eq!(changes(&l.result), vec![(120, true, true)]);
        let Outcome::Changes(cps) = &l.result.outcome else {
            unreachable!()
        };
        // The clock's figures, with the count's beside them.
        let located = cps[0].located.expect("count comparison kept");
        assert!((located.ratio.ratio - 1.3).abs() < 0.01, "{located:?}");
        assert!(cps[0].comparison.ratio.lo < 1.3 && cps[0].comparison.ratio.hi > 1.3);
        assert_eq!(l.result.ends.verdict, Verdict::Slower);
        assert_eq!(l.location.clock_confirmations, 1);
    }

    #[test]
    fn a_count_step_that_time_does_not_show_is_not_confirmed() {
        // Counts +5%, time unchanged (a change the clock cannot see at 1% noise: refuted).
        let count = SimMeasurer::new(200, &[(80, 1.05)], &NoiseModel::iid(0.0025), 0.0, 5);
        let clock = SimMeasurer::new(200, &[], &NoiseModel::iid(0.01), 0.0, 6);
        let (mut count, mut clock) = (count.unwrap(), clock.unwrap());
        let l = locate(
            200,
            &count_cfg(),
            &Config::default(),
            &mut count,
            &mut clock,
        )
        .unwrap();
        assert_eq!(changes(&l.result), vec![(80, false, true)]);
        let Outcome::Changes(cps) = &l.result.outcome else {
            unreachable!()
        };
        assert_eq!(cps[0].comparison.verdict, Verdict::Same);
        assert_eq!(l.result.explained, 0.0);
    }

    /// `locate` over `n` simulated commits: counts at 0.25% noise, the clock at `clock_noise`.
    fn located(
        n: usize,
        count_steps: &[(usize, f64)],
        clock_steps: &[(usize, f64)],
        clock_noise: f64,
        seed: u64,
    ) -> Located {
        let count = SimMeasurer::new(n, count_steps, &NoiseModel::iid(0.0025), 0.0, seed);
        let clock = SimMeasurer::new(n, clock_steps, &NoiseModel::iid(clock_noise), 0.0, seed + 1);
        let (mut count, mut clock) = (count.unwrap(), clock.unwrap());
        locate(n, &count_cfg(), &Config::default(), &mut count, &mut clock).unwrap()
    }

    #[test]
    fn time_the_located_change_points_do_not_explain_is_named() {
        // Counts see the +30% at 120; the clock sees it and a +50% at 60 that leaves the
        // instructions alone.
        let l = located(200, &[(120, 1.3)], &[(60, 1.5), (120, 1.3)], 0.03, 11);
        assert_eq!(changes(&l.result), vec![(120, true, true)]);
        let rest = l.location.unexplained.expect("the +50% is unexplained");
        assert!(rest.lo > 1.0 && rest.lo < 1.5 && rest.hi > 1.5, "{rest:?}");
    }

    #[test]
    fn time_the_located_change_points_explain_leaves_nothing_unexplained() {
        let steps = [(60, 1.5), (120, 1.3)];
        let l = located(200, &steps, &steps, 0.03, 13);
        assert_eq!(changes(&l.result).len(), 2);
        assert_eq!(l.location.unexplained, None);
    }

    #[test]
    fn time_that_moved_without_the_counts_is_searched_on_the_clock() {
        let (mut count, mut clock) = pair(200, &[], &[(150, 1.5)], 7);
        let l = locate(
            200,
            &count_cfg(),
            &Config::default(),
            &mut count,
            &mut clock,
        )
        .unwrap();
        assert_eq!(l.location.searched_by, SearchedBy::Clock);
        assert_eq!(l.location.count_ends.verdict, Verdict::Same);
        assert_eq!(changes(&l.result), vec![(150, true, false)]);
    }

    #[test]
    fn nothing_moved_is_no_change() {
        let (mut count, mut clock) = pair(100, &[], &[], 9);
        let l = locate(
            100,
            &count_cfg(),
            &Config::default(),
            &mut count,
            &mut clock,
        )
        .unwrap();
        assert_eq!(l.result.outcome, Outcome::NoChange);
        assert_eq!(l.location.searched_by, SearchedBy::Count);
    }
}
