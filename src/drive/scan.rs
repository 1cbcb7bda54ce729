//! A scan of GOOD..BAD, from its plan to its typed result: the grid placed (moved onto builds
//! the cache has where that costs a few commits), measured and fitted, then every interval
//! whose ends lie on different levels searched; located by count and confirmed by clock when
//! the plan says so.

use std::time::Instant;

use anyhow::Result;

use super::ids::scan_id;
use super::live::Live;
use super::plan::{Locate, ScanPlan};
use super::setup::RangeSetup;
use crate::analysis::bisect::Config;
use crate::analysis::locate::{self, Location};
use crate::analysis::scan;
use crate::build::{builds, repo};
use crate::measure::engine::{builds_used, Session};
use crate::measure::metric::Metric;
use crate::report::bisect::LocatedJson;
use crate::report::events::{Event, Sink};
use crate::report::scan::{ScanContext, ScanReport};

/// Scans the plan's range, telling `sink` the grid and each step as it happens.
pub fn scan(plan: &ScanPlan, sink: &dyn Sink) -> Result<ScanReport> {
    plan.validate()?;
    let started = Instant::now();
    let r = &plan.range;
    let (good, bad) = r.ends()?;
    let setup = RangeSetup::open(r)?;
    let commits = &setup.range.commits;
    let id = scan_id(r, &setup, plan.grid);
    // The executor is connected (and refuses what it cannot serve) before anything is said.
    let (mut session, mut counting) = setup.sessions(r, format!("scan {id}"), commits, &sink)?;
    let notes: Vec<String> = merge_base_note(&setup.range, &good, &bad)
        .into_iter()
        .collect();
    for note in &notes {
        sink.send(Event::Said(note));
    }
    let grid = GridPlan::place(plan, &setup)?;
    let describe = format!(
        "scanning {}: grid of {} points every ~{} commits",
        setup.describe(&plan.threads().to_string()),
        grid.positions.len(),
        grid.spacing
    );
    sink.send(Event::Said(&describe));
    sink.send(Event::Said(&grid.plan_line()));
    sink.send(Event::Started {
        commits: commits.len(),
    });
    let live = |session, locating| Live {
        session,
        commits,
        threads: &r.threads,
        sink,
        started,
        deadline: None,
        locating,
        used: Default::default(),
    };
    let mut notes = notes;
    let lives = (
        live(&mut session, false),
        counting.as_mut().map(|c| live(c, true)),
    );
    let searched = search_chosen(lives, &grid, plan, &mut notes);
    sink.send(Event::Finished);
    let (result, location) = searched?;
    let sessions = (&session, counting.as_ref().zip(location.as_ref()));
    Ok(report(
        plan, &setup, &result, sessions, grid, notes, started,
    ))
}

/// The typed result, with what the driver knows besides the analysis's.
fn report(
    plan: &ScanPlan,
    setup: &RangeSetup,
    result: &scan::ScanResult,
    (session, counted): (&Session, Option<(&Session, &Location)>),
    grid: GridPlan,
    notes: Vec<String>,
    started: Instant,
) -> ScanReport {
    let r = &plan.range;
    let commits = &setup.range.commits;
    let samples_total = session.samples_held() + counted.map_or(0, |c| c.0.samples_held());
    ScanReport::new(
        result,
        ScanContext {
            tool: setup.spec.short(),
            threads: plan.threads(),
            range: r.range.clone(),
            repo: r.sources.repo.display().to_string(),
            recipe: setup.recipe.name.clone(),
            good: &setup.range.good,
            bad: &setup.range.bad,
            merge_base: setup.range.merge_base.as_ref(),
            commits,
            grid_size: plan.grid,
            max_move: grid.max_move,
            moved: grid.moved,
            grid_builds_cached: grid.cached,
            builds: builds_used(std::iter::once(session).chain(counted.map(|c| c.0))),
            samples: samples_total,
            samples_taken_now: session.samples_taken + counted.map_or(0, |c| c.0.samples_taken),
            placement: session.placement(),
            alpha: r.cfg.alpha,
            routing: r.cfg.routing,
            min_effect: r.cfg.min_effect,
            notes,
            wall_s: started.elapsed().as_secs_f64(),
            reproduce: plan.reproduce(),
            metric: session.metric(),
            located: counted.map(|(s, l)| LocatedJson::new(s.metric(), l, commits)),
        },
    )
}

/// A scan of GOOD..BAD where GOOD is not an ancestor of BAD covers merge-base..BAD only.
fn merge_base_note(range: &repo::Range, good: &str, bad: &str) -> Option<String> {
    let mb = range.merge_base.as_ref()?;
    Some(format!(
        "{good} is not an ancestor of {bad}: the scan covers the first-parent line from their merge base {} ({}) to {bad}; {good}'s own branch is not in it",
        mb.short,
        mb.dates()
    ))
}

/// Where the grid's points lie: evenly spaced, then moved to commits built already where
/// that costs a few commits at most.
struct GridPlan {
    positions: Vec<usize>,
    /// Per point: how far it was moved.
    moved: Vec<isize>,
    /// Points whose build is in the cache.
    cached: usize,
    max_move: usize,
    /// Commits between evenly spaced points.
    spacing: usize,
}

impl GridPlan {
    fn place(plan: &ScanPlan, setup: &RangeSetup) -> Result<GridPlan> {
        let commits = &setup.range.commits;
        let n = commits.len();
        let opts = plan.range.sources.options(&setup.recipe);
        let even = scan::grid_positions(n, plan.grid);
        let max_move = scan::max_move(n, even.len());
        let mut built = std::collections::HashMap::new();
        // Look every candidate up first (errors surface here), then snap on the answers.
        let mut look_up = |i: usize| -> Result<()> {
            if let std::collections::hash_map::Entry::Vacant(e) = built.entry(i) {
                let cached = builds::cached(&setup.cache, &setup.repo, &commits[i], &opts)?;
                e.insert(cached.is_some());
            }
            Ok(())
        };
        for &p in &even {
            for q in p.saturating_sub(max_move)..=(p + max_move).min(n - 1) {
                look_up(q)?;
            }
        }
        let is_built = |i: &usize| built.get(i).copied().unwrap_or(false);
        let snapped = scan::snap_to_built(&even, max_move, |i| is_built(&i));
        let positions: Vec<usize> = snapped.iter().map(|s| s.0).collect();
        Ok(GridPlan {
            cached: positions.iter().filter(|p| is_built(p)).count(),
            moved: snapped.iter().map(|s| s.1).collect(),
            positions,
            max_move,
            spacing: (n - 1) / (even.len() - 1).max(1),
        })
    }

    fn plan_line(&self) -> String {
        format!(
            "  builds for the grid: {} needed, {} in the cache, {} to build; {} point(s) moved (at most {} commits) to a commit already built",
            self.positions.len(),
            self.cached,
            self.positions.len() - self.cached,
            self.moved.iter().filter(|m| **m != 0).count(),
            self.max_move
        )
    }
}

/// The grid measured and fitted, then every interval it marks searched; the grid's points
/// are told as they are decided, like a bisect's steps.
fn search(mut live: Live, grid: &GridPlan, plan: &ScanPlan) -> Result<scan::ScanResult> {
    let cfg = &plan.range.cfg;
    let measured = measure_grid(&mut live, grid, cfg, plan.range.timing.metric)?;
    scan::search_intervals(measured, cfg, &mut live)
}

/// The grid measured in `metric` and fitted, then told: its levels, every point with its
/// level, and the intervals it enters.
fn measure_grid(
    live: &mut Live,
    grid: &GridPlan,
    cfg: &Config,
    metric: Metric,
) -> Result<scan::Grid> {
    let measured = scan::measure_grid(&grid.positions, cfg, live)?;
    let sink = live.sink;
    sink.send(Event::GridMeasured {
        samples_per_point: measured.samples_per_point,
        levels: measured.segments.len(),
    });
    for (p, moved) in measured.points.iter().zip(&grid.moved) {
        sink.send(Event::GridPoint {
            point: p,
            moved: *moved,
            commit: &live.commits[p.commit],
            metric,
            threads: live.threads,
        });
    }
    sink.send(Event::Entering {
        entered: measured.intervals.iter().filter(|i| i.entered).count(),
        intervals: measured.intervals.len(),
    });
    Ok(measured)
}

/// On the clock (`lives.0`) alone, or located by the counts (`lives.1`) and confirmed on the
/// clock, as `--locate` chose.
fn search_chosen(
    lives: (Live, Option<Live>),
    grid: &GridPlan,
    plan: &ScanPlan,
    notes: &mut Vec<String>,
) -> Result<(scan::ScanResult, Option<Location>)> {
    let (mut clock, count) = lives;
    let r = &plan.range;
    let count = clock.counts_to_locate((clock.commits.len(), &r.cfg, r.locate), count, notes)?;
    match count {
        Some(count) => {
            search_located((clock, count), grid, plan).map(|l| (l.result, Some(l.location)))
        }
        None => search(clock, grid, plan).map(|r| (r, None)),
    }
}

/// Located by count (`lives.1`), confirmed on the clock (`lives.0`); the counts' grid is told
/// as soon as it is measured, as the clock's is.
fn search_located(
    lives: (Live, Live),
    grid: &GridPlan,
    plan: &ScanPlan,
) -> Result<locate::LocatedScan> {
    let (mut clock, mut count) = lives;
    let count_cfg = plan.range.count_config();
    let by = plan
        .range
        .locate
        .map_or(Metric::Instructions, Locate::metric);
    let measured = measure_grid(&mut count, grid, &count_cfg, by)?;
    let cfg = &plan.range.cfg;
    locate::locate_scan_grid(measured, &count_cfg, cfg, &mut count, &mut clock)
}
