//! A scan located by count: the counts' grid, fit and interval searches find where the counts
//! changed; every change point they find is confirmed on the clock, and time the clock's ends
//! moved beyond those is searched in time between them, as [`super::locate`] does for a range.

use super::*;
use crate::analysis::scan::{self, ScanChange, ScanResult};

/// The scan with its change points confirmed on the clock (the grid, its fit and the
/// intervals are the counts'), and what the counts saw.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LocatedScan {
    pub result: ScanResult,
    pub location: Location,
}

/// Scan the grid `positions` on `count`, confirm on `clock` (see the module docs); the run's
/// alpha split over the parts as a located search splits it ([`Budget`]).
pub fn locate_scan(
    positions: &[usize],
    count_cfg: &Config,
    clock_cfg: &Config,
    count: &mut dyn Measurer,
    clock: &mut dyn Measurer,
) -> Result<LocatedScan> {
    let grid = scan::measure_grid(positions, &Budget::of(count_cfg, clock_cfg).count, count)?;
    locate_scan_grid(grid, count_cfg, clock_cfg, count, clock)
}

/// [`locate_scan`] from the counts' grid, measured and fitted (a driver tells it before the
/// searches begin).
pub fn locate_scan_grid(
    grid: scan::Grid,
    count_cfg: &Config,
    clock_cfg: &Config,
    count: &mut dyn Measurer,
    clock: &mut dyn Measurer,
) -> Result<LocatedScan> {
    let positions: Vec<usize> = grid.points.iter().map(|p| p.commit).collect();
    let positions = &positions[..];
    let n = positions.last().map_or(0, |&p| p + 1);
    let budget = Budget::of(count_cfg, clock_cfg);
    let count_cfg = &budget.count;
    let bisect::EndsCompared {
        comparison: clock_ends,
        resolution: clock_resolution,
        spent: ends_spent,
    } = bisect::compare_ends(n, &budget.clock, clock)?;
    let found = scan::search_intervals(grid, count_cfg, count)?;
    let mut location = counted(&found, bisect::compare_ends(n, count_cfg, count)?);
    let counts_moved = (found.changes.iter()).any(|c| c.cp.confirmed || c.cp.unresolved);
    if !counts_moved && !same(&clock_ends) {
        let cfg = budget.clock_search(ends_spent, false);
        let mut result = scan::scan(positions, &cfg, clock)?;
        add(&mut result, ends_spent);
        add(&mut result, spent_of(&found));
        location.searched_by = SearchedBy::Clock;
        return Ok(LocatedScan { result, location });
    }
    let clock_cfg = &budget.clock;
    let mut result = found;
    add(&mut result, ends_spent);
    location.clock_confirmations = confirm((n, clock_cfg), clock, &mut result, &clock_ends)?;
    scan::profile(&mut result, clock_cfg.min_effect);
    let cps = |r: &ScanResult| -> Vec<ChangePoint> {
        (r.changes.iter().map(|c| c.cp.clone()))
            .filter(|c| c.confirmed)
            .collect()
    };
    let before = cps(&result);
    if let Some(moved) = may_hide(
        &clock_ends,
        &before.iter().collect::<Vec<_>>(),
        clock_cfg.min_effect,
    ) {
        let cfg = budget.clock_search(ends_spent, true);
        let parts = search_stretches(n, &cfg, clock, (before.iter().collect(), &clock_ends))?;
        // A scan has no --max-changes and no --budget: nothing is left by a stopping rule, and
        // what would be is the scan's to say.
        result.left.extend(parts.left);
        let (stretches, parts): (Vec<_>, Vec<_>) = parts.searched.into_iter().unzip();
        let found = parts.into_iter().map(|p| join(&mut result, p)).sum();
        location.time_search = Some(TimeSearch {
            moved,
            stretches,
            found,
        });
        scan::profile(&mut result, clock_cfg.min_effect);
    }
    let after = cps(&result);
    location.unexplained = unexplained(
        &clock_ends,
        &after.iter().collect::<Vec<_>>(),
        clock_cfg.min_effect,
    );
    // What the scan resolves is the clock's: what the counts resolved is the location's.
    result.resolution = clock_resolution;
    Ok(LocatedScan { result, location })
}

/// What the counts saw of a scan: its ends, its samples and decisions (the ends' comparison
/// one of them); the clock's part is filled in as it is done.
fn counted(found: &ScanResult, count_ends: bisect::EndsCompared) -> Location {
    Location {
        searched_by: SearchedBy::Count,
        count_ends: count_ends.comparison,
        count_resolution: count_ends.resolution,
        count_samples: found.samples_taken,
        count_decisions: found.decisions() + 1,
        clock_confirmations: 0,
        unexplained: None,
        time_search: None,
    }
}

/// The counts' change points confirmed on the clock, the largest share of the range's
/// movement first. Each keeps its share of its own interval (a scan's change point's share is
/// of its interval; its share of the range is the profile's).
fn confirm(
    range: (usize, &Config),
    clock: &mut dyn Measurer,
    r: &mut ScanResult,
    clock_ends: &Comparison,
) -> Result<usize> {
    let mut order: Vec<&mut ScanChange> = r.changes.iter_mut().collect();
    order.sort_by(|a, b| b.share.abs().total_cmp(&a.share.abs()));
    let shares: Vec<f64> = order.iter().map(|c| c.cp.share).collect();
    let asked = to_confirm(order.iter_mut().map(|c| &mut c.cp));
    let (k, spent) = on_clock(range, clock, asked, clock_ends)?;
    for (c, share) in order.into_iter().zip(shares) {
        c.cp.share = share;
    }
    add(r, spent);
    Ok(k)
}

/// Another part's tests counted in the scan's.
fn add(r: &mut ScanResult, spent: Spent) {
    r.tests += spent.tests;
    r.family_alpha = (r.family_alpha + spent.alpha).min(1.0);
}

/// What a scan's tests spent.
fn spent_of(r: &ScanResult) -> Spent {
    Spent {
        tests: r.tests,
        alpha: r.family_alpha,
    }
}

/// A stretch's search joined to the scan: its change points (one the counts located but did
/// not confirm is replaced by the clock's finding of the same pair), each in the grid interval
/// that holds it, its tests, and the parts it left. Returns how many it found.
fn join(r: &mut ScanResult, part: SearchResult) -> usize {
    add(r, spent_by(&part));
    // What the stretch's search left is the scan's to say, never dropped.
    r.left.extend(part.unexplored);
    let Outcome::Changes(new) = part.outcome else {
        return 0;
    };
    let found = new.len();
    for cp in new {
        let pair = (cp.last_old, cp.first_new);
        r.changes
            .retain(|c| (c.cp.last_old, c.cp.first_new) != pair);
        r.changes.push(ScanChange {
            interval: scan::interval_of(&r.grid, cp.last_old),
            cp,
            share: 0.0,
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::locate::tests::count_cfg;
    use crate::analysis::simulate::noise::NoiseModel;
    use crate::analysis::simulate::SimMeasurer;

    fn scanned(
        n: usize,
        count_steps: &[(usize, f64)],
        clock_steps: &[(usize, f64)],
        seed: u64,
    ) -> LocatedScan {
        let count = SimMeasurer::new(n, count_steps, &NoiseModel::iid(0.0025), 0.0, seed);
        let clock = SimMeasurer::new(n, clock_steps, &NoiseModel::iid(0.03), 0.0, seed + 1);
        let (mut count, mut clock) = (count.unwrap(), clock.unwrap());
        let grid = scan::grid_positions(n, 16);
        locate_scan(
            &grid,
            &count_cfg(),
            &Config::default(),
            &mut count,
            &mut clock,
        )
        .unwrap()
    }

    /// (culprit, confirmed, located by count) of every change, oldest first.
    fn changes(r: &ScanResult) -> Vec<(usize, bool, bool)> {
        (r.changes.iter())
            .map(|c| (c.cp.first_new, c.cp.confirmed, c.cp.located.is_some()))
            .collect()
    }

    #[test]
    fn a_scan_locates_by_count_and_confirms_on_the_clock() {
        let steps = [(500, 1.3), (1400, 0.8)];
        let l = scanned(2000, &steps, &steps, 3);
        assert_eq!(l.location.searched_by, SearchedBy::Count);
        assert_eq!(
            changes(&l.result),
            vec![(500, true, true), (1400, true, true)]
        );
        assert_eq!(l.location.clock_confirmations, 2);
        // The remainder's interval still reaches --min-effect, so the stretches were searched
        // in time: nothing is there.
        assert_eq!(l.location.time_search.map(|t| t.found), Some(0));
        assert_eq!(l.location.unexplained, None);
        // The profile is the clock's: the +30% is the larger share of the movement.
        assert_eq!(l.result.by_share[0], 0);
        let c = &l.result.changes[0].cp;
        assert!(
            c.comparison.ratio.lo < 1.3 && c.comparison.ratio.hi > 1.3,
            "{c:?}"
        );
    }

    #[test]
    fn time_the_counts_did_not_see_is_searched_between_them() {
        let l = scanned(2000, &[(500, 1.3)], &[(500, 1.3), (1400, 1.5)], 5);
        assert_eq!(
            changes(&l.result),
            vec![(500, true, true), (1400, true, false)]
        );
        let t = l.location.time_search.as_ref().expect("searched in time");
        assert_eq!(t.stretches, vec![(0, 499), (500, 1999)]);
        assert_eq!(t.found, 1);
        assert_eq!(l.location.unexplained, None);
        let iv = &l.result.grid.intervals[l.result.changes[1].interval];
        assert!(iv.lo <= 1399 && iv.hi >= 1400, "{iv:?}");
    }

    /// Counts that moved and a clock that could not tell the ends apart (+5% at 15% noise):
    /// the time between the located change points is searched. At 07d6d4e undecided clock ends
    /// were read as no time moved: no stretch was searched.
    #[test]
    fn undecided_clock_ends_have_the_time_between_searched() {
        let count = SimMeasurer::new(600, &[(200, 1.05)], &NoiseModel::iid(0.0025), 0.0, 41);
        let clock = SimMeasurer::new(600, &[(200, 1.05)], &NoiseModel::iid(0.15), 0.0, 42);
        let grid = scan::grid_positions(600, 8);
        let (mut count, mut clock) = (count.unwrap(), clock.unwrap());
        let cfg = Config::default();
        let ends = bisect::compare_ends(600, &cfg, &mut clock)
            .unwrap()
            .comparison;
        assert_eq!(ends.verdict, Verdict::Undecided, "{ends:?}");
        let l = locate_scan(&grid, &count_cfg(), &cfg, &mut count, &mut clock).unwrap();
        assert_eq!(l.location.searched_by, SearchedBy::Count);
        let t = l.location.time_search.expect("the time searched");
        assert!(!t.stretches.is_empty(), "{t:?}");
        // What the stretches' searches could not decide is the scan's to say (at 07d6d4e
        // it was dropped with them).
        assert!(
            (l.result.left.iter()).any(|u| u.because == bisect::LeftBecause::Undecided),
            "{:?}",
            l.result.left
        );
    }

    #[test]
    fn counts_that_did_not_move_leave_the_scan_to_the_clock() {
        let l = scanned(1000, &[], &[(700, 1.4)], 7);
        assert_eq!(l.location.searched_by, SearchedBy::Clock);
        assert_eq!(changes(&l.result), vec![(700, true, false)]);
    }
}
