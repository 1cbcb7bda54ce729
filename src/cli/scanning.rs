//! A scan of a range, from its arguments to its exit code: what `scan` runs, and `bisect --scan`
//! too, so that neither command is a library for the other.

use crate::cli::exit::Exit;
use anyhow::{bail, Result};
use clap::Args;
use std::time::Instant;

use super::args::{GridArg, LinkArgs, SequentialArgs, StatsArgs, ToolArg};
use super::build::BuildArgs;
use super::live::{repo_key, say, Live, RangeSetup};
use crate::analysis::bisect::{Config, Step, StepVerdict};
use crate::analysis::locate::{self, Location};
use crate::analysis::scan;
use crate::build::recipe::Recipe;
use crate::build::{builds, repo};
use crate::cache::Cache;
use crate::measure::engine::Session;
use crate::measure::metric::Metric;
use crate::report::bisect::{step_line, BisectFormat, LocatedJson};
use crate::report::export::Links;
use crate::report::scan::{ScanContext, ScanFormat, ScanReport};
use crate::{hashing, progress, Global};

#[derive(Args, Clone)]
pub struct ScanArgs {
    /// GOOD..BAD (old..new): tags, branches or shas of --repo
    #[arg(value_name = "GOOD..BAD")]
    pub range: String,
    #[command(flatten)]
    pub tool: ToolArg,
    #[command(flatten)]
    pub grid: GridArg,
    #[command(flatten)]
    pub sampling: SequentialArgs,
    #[command(flatten)]
    pub stats: StatsArgs,
    #[command(flatten)]
    pub build: BuildArgs,
    #[command(flatten)]
    pub exec: crate::cli::exec::ExecArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    pub format: ScanFormat,
    #[command(flatten)]
    pub links: LinkArgs,
    /// Also write the scan's profile (every grid point, every searched commit, the fitted
    /// levels and the change points) as an SVG into DIR
    #[arg(long, value_name = "DIR")]
    pub plot: Option<std::path::PathBuf>,
    /// Locate by count, confirm by clock (1 thread): the grid, its fit and the interval searches on instruction counts under valgrind, then every change point confirmed in time on a fresh interleaved block; time the ends moved beyond those is searched in time between them
    #[arg(long, value_enum, value_name = "METRIC")]
    pub locate: Option<super::args::LocateBy>,
}

/// What identifies one scan's samples (a re-run resumes with them; no other command shares
/// them). Every field that changes what is measured or decided is named here.
fn scan_id(a: &ScanArgs, repo: &str, good: &str, bad: &str, tool: &str, cfg: &Config) -> String {
    let mut h = hashing::Hasher::new();
    h.field("scan-v1")
        .field(repo)
        .field(good)
        .field(bad)
        .field(tool)
        .field(&a.tool.threads_text())
        .field(&a.build.recipe)
        .field(&a.grid.grid.to_string())
        .field(&cfg.alpha.to_string())
        .field(&cfg.min_effect.to_string())
        .field(&cfg.schedule.initial.to_string())
        .field(&cfg.schedule.max.to_string())
        .field(&a.sampling.timing.duration.to_string());
    // Only when given, so that every scan id from before --locate stays what it was.
    if let Some(by) = a.locate {
        h.field(&format!("locate {}", by.metric().name()));
    }
    h.finish_short()
}

fn reproduce(a: &ScanArgs) -> String {
    let locate = a
        .locate
        .map(|by| format!("--locate {} ", by.metric().name()))
        .unwrap_or_default();
    format!(
        "perfbisect scan --repo {} --recipe {} --tool '{}' --threads {} --grid {} --samples {} --max-samples {} --duration {} --alpha {} --min-effect {} {locate}{}",
        a.build.repo.display(),
        a.build.recipe,
        a.tool.tool,
        a.tool.threads_text(),
        a.grid.grid,
        a.sampling.schedule().initial,
        a.sampling.schedule().max,
        a.sampling.timing.duration,
        a.stats.alpha.alpha,
        a.stats.min_effect,
        a.range
    )
}

pub fn scan(g: &Global, a: ScanArgs) -> Result<Exit> {
    let started = Instant::now();
    let (thread_count, cfg) = plan(&a)?;
    let (good, bad) = repo::split_range(&a.range)?;
    let setup = RangeSetup::open(g, &a.links, &a.tool.tool, &a.build, (&good, &bad), &cfg)?;
    let exec = setup.executor(&a.exec, &a.build)?;
    let RangeSetup {
        links,
        spec,
        repo,
        recipe,
        range,
        cache,
    } = &setup;
    let commits = &range.commits;
    let n = commits.len();
    let text = a.format == ScanFormat::Text;
    let notes: Vec<String> = merge_base_note(range, &good, &bad).into_iter().collect();
    for note in &notes {
        say(text, note);
    }
    let grid = place_grid(&a, cache, repo, recipe, commits)?;
    say(
        text,
        &format!(
            "scanning {}: grid of {} points every ~{} commits",
            setup.describe(&thread_count.to_string()),
            grid.positions.len(),
            grid.spacing
        ),
    );
    say(text, &grid.plan_line());

    let id = scan_id(
        &a,
        &repo_key(repo),
        &range.good.id,
        &range.bad.id,
        &spec.canonical(),
        &cfg,
    );
    let threads = [thread_count];
    let sampling = (a.sampling.timing.timing(), format!("scan {id}"), a.locate);
    let (mut session, mut counting) =
        setup.sessions((&a.build, &a.exec), sampling, exec, commits, &threads)?;
    let live = |session, locating| Live {
        session,
        commits,
        threads: &threads,
        format: if text {
            BisectFormat::Text
        } else {
            BisectFormat::Json
        },
        status: progress::SearchStatus::new(n),
        started,
        deadline: None,
        locating,
    };
    let (result, location) = match (&mut counting, a.locate) {
        (Some(c), Some(by)) => {
            let lives = (live(&mut session, false), live(c, true));
            let l = search_located(lives, &grid, &cfg, by.metric())?;
            (l.result, Some(l.location))
        }
        _ => {
            let metric = a.sampling.timing.metric.metric;
            (
                search(live(&mut session, false), &grid, &cfg, metric)?,
                None,
            )
        }
    };
    let sessions = (&session, counting.as_ref().zip(location.as_ref()));
    let report = report(&a, &setup, &result, sessions, grid, notes, started);
    output(&a, &report, links)
}

/// The typed result, with what the command knows besides the analysis's.
fn report(
    a: &ScanArgs,
    setup: &RangeSetup,
    result: &scan::ScanResult,
    (session, counted): (&Session, Option<(&Session, &Location)>),
    grid: GridPlan,
    notes: Vec<String>,
    started: Instant,
) -> ScanReport {
    let RangeSetup {
        spec,
        recipe,
        range,
        ..
    } = setup;
    let commits = &range.commits;
    let held = |s: &Session| -> usize {
        (0..commits.len())
            .filter_map(|i| s.samples(i).ok().map(|s| s.len()))
            .sum()
    };
    let samples_total = held(session) + counted.map_or(0, |c| held(c.0));
    let mut builds = session.builds.clone();
    for (k, b) in counted.iter().flat_map(|c| &c.0.builds) {
        builds.entry(k.clone()).or_insert_with(|| b.clone());
    }
    ScanReport::new(
        result,
        ScanContext {
            tool: spec.short(),
            threads: a.tool.thread_counts()[0],
            range: a.range.clone(),
            repo: a.build.repo.display().to_string(),
            recipe: recipe.name.clone(),
            good: &range.good,
            bad: &range.bad,
            merge_base: range.merge_base.as_ref(),
            commits,
            grid_size: a.grid.grid,
            max_move: grid.max_move,
            moved: grid.moved,
            grid_builds_cached: grid.cached,
            builds: builds.into_values().collect(),
            samples: samples_total,
            samples_taken_now: session.samples_taken + counted.map_or(0, |c| c.0.samples_taken),
            placement: session.placement(),
            alpha: a.stats.alpha.alpha,
            min_effect: a.stats.min_effect,
            notes,
            wall_s: started.elapsed().as_secs_f64(),
            reproduce: reproduce(a),
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

/// The one thread count a scan measures, and its search's configuration.
fn plan(a: &ScanArgs) -> Result<(usize, Config)> {
    let threads = a.tool.thread_counts();
    let [thread_count] = threads[..] else {
        bail!("a scan measures one thread count (--threads N); bisect takes several");
    };
    a.sampling.timing.check_threads(&threads)?;
    if let Some(by) = a.locate {
        by.check(a.sampling.timing.metric.metric, &threads)?;
    }
    let cfg = Config {
        alpha: a.stats.alpha.alpha,
        min_effect: a.stats.min_effect,
        schedule: a.sampling.schedule(),
        max_changes: None,
        min_share: None,
    };
    Ok((thread_count, cfg))
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

fn place_grid(
    a: &ScanArgs,
    cache: &Cache,
    repo: &repo::Repo,
    recipe: &Recipe,
    commits: &[repo::CommitInfo],
) -> Result<GridPlan> {
    let n = commits.len();
    let opts = a.build.options(recipe);
    let even = scan::grid_positions(n, a.grid.grid);
    let max_move = scan::max_move(n, even.len());
    let mut built = std::collections::HashMap::new();
    // Look every candidate up first (errors surface here), then snap on the answers.
    let mut look_up = |i: usize| -> Result<()> {
        if let std::collections::hash_map::Entry::Vacant(e) = built.entry(i) {
            e.insert(builds::cached(cache, repo, &commits[i], &opts)?.is_some());
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

impl GridPlan {
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
fn search(
    mut live: Live,
    grid: &GridPlan,
    cfg: &Config,
    metric: Metric,
) -> Result<scan::ScanResult> {
    let measured = match scan::measure_grid(&grid.positions, cfg, &mut live) {
        Ok(g) => g,
        Err(e) => {
            live.status.finish();
            return Err(e);
        }
    };
    let text = live.format == BisectFormat::Text;
    let line = |s: &str| {
        if text {
            progress::above_status(|| println!("{s}"));
        } else {
            progress::info(s);
        }
    };
    line(&format!(
        "grid measured ({} samples per point): {} fitted level(s)",
        measured.samples_per_point,
        measured.segments.len()
    ));
    for (p, moved) in measured.points.iter().zip(&grid.moved) {
        line(&grid_point_line(
            p,
            *moved,
            &live.commits[p.commit],
            metric,
            live.threads,
        ));
    }
    let entered = measured.intervals.iter().filter(|i| i.entered).count();
    line(&format!(
        "searching {entered} of {} grid intervals whose ends lie on different levels; the others are not entered (a bump narrower than a grid interval can hide there)",
        measured.intervals.len()
    ));
    let r = scan::search_intervals(measured, cfg, &mut live);
    live.status.finish();
    r
}

/// Located by count (`lives.1`), confirmed on the clock (`lives.0`); the grid's points are told
/// once the whole scan is done (the counts' grid is measured inside the located scan).
fn search_located(
    lives: (Live, Live),
    grid: &GridPlan,
    cfg: &Config,
    by: Metric,
) -> Result<locate::LocatedScan> {
    let (mut clock, mut count) = lives;
    let count_cfg = Config {
        schedule: by.default_schedule(),
        ..cfg.clone()
    };
    let l = locate::locate_scan(&grid.positions, &count_cfg, cfg, &mut count, &mut clock);
    count.status.finish();
    clock.status.finish();
    let l = l?;
    let text = clock.format == BisectFormat::Text;
    for (p, moved) in l.result.grid.points.iter().zip(&grid.moved) {
        let line = grid_point_line(p, *moved, &clock.commits[p.commit], by, clock.threads);
        say(text, &line);
    }
    Ok(l)
}

/// A grid point in a bisect step's line, with its fitted level where a step has its verdict.
fn grid_point_line(
    p: &scan::GridPoint,
    moved: isize,
    commit: &repo::CommitInfo,
    metric: Metric,
    threads: &[usize],
) -> String {
    let step = Step {
        commit: p.commit,
        n: p.n,
        mean: p.mean,
        ci95: p.ci95,
        verdict: StepVerdict::Ambiguous,
        position: None,
        series: Vec::new(),
    };
    let mut l = step_line(&step, commit, metric, threads).replacen(
        "ambiguous",
        &match p.segment {
            Some(s) => format!("level {}", s + 1),
            None => "skipped".into(),
        },
        1,
    );
    if moved != 0 {
        l.push_str(&format!(" (moved {moved:+})"));
    }
    l
}

fn output(a: &ScanArgs, report: &ScanReport, links: &Links) -> Result<Exit> {
    print!("{}", a.format.render_linked(report, links)?);
    if let Some(dir) = &a.plot {
        let path = report.write_plot(dir)?;
        progress::info(&format!("wrote {}", path.display()));
    }
    // 3: finished, but a candidate change point did not hold on its fresh block (as bisect).
    if report
        .changes
        .iter()
        .any(|c| !c.point.confirmed && !c.point.unresolved)
    {
        return Ok(Exit::Unconfirmed);
    }
    Ok(Exit::Done)
}
