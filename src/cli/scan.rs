use crate::cli::exit::Exit;
use anyhow::{bail, Result};
use clap::Args;
use std::time::Instant;

use super::args::{GridArg, LinkArgs, SequentialArgs, StatsArgs, ToolArg};
use super::build::BuildArgs;
use super::live::Live;
use crate::analysis::bisect::Config;
use crate::analysis::scan;
use crate::build::{builds, repo};
use crate::cache::Cache;
use crate::measure::engine::{Library, Reuse, Session, Side, Subject};
use crate::measure::kernel::Registry;
use crate::report::bisect::{step_line, BisectFormat};
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
    h.finish_short()
}

fn reproduce(a: &ScanArgs) -> String {
    format!(
        "perfbisect scan --repo {} --recipe {} --tool '{}' --threads {} --grid {} --samples {} --max-samples {} --duration {} --alpha {} --min-effect {} {}",
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

pub fn run(g: &Global, a: ScanArgs) -> Result<Exit> {
    let started = Instant::now();
    let threads = a.tool.thread_counts();
    let [thread_count] = threads[..] else {
        bail!("a scan measures one thread count (--threads N); bisect takes several");
    };
    a.sampling.timing.check_threads(&threads)?;
    let (good, bad) = repo::split_range(&a.range)?;
    let cfg = Config {
        alpha: a.stats.alpha.alpha,
        min_effect: a.stats.min_effect,
        schedule: a.sampling.schedule(),
        max_changes: None,
        min_share: None,
    };
    cfg.validate(2)?;
    let links = a.links.links()?;
    let reg = Registry::load(g.kernels_dir.as_deref())?;
    let spec = reg.parse_spec(&a.tool.tool)?;
    let (repo, recipe) = a.build.open()?;
    let range = repo.range(&good, &bad)?;
    let cache = Cache::open(g.cache.as_deref())?;
    let exec = a.exec.executor((&cache, &repo), &a.build, &recipe)?;
    let commits = range.commits.clone();
    let n = commits.len();
    cfg.validate(n)?;
    let text = a.format == ScanFormat::Text;
    let say = |s: &str| {
        if text {
            println!("{s}");
        } else {
            progress::info(s);
        }
    };
    let mut notes = Vec::new();
    if let Some(mb) = &range.merge_base {
        let note = format!(
            "{good} is not an ancestor of {bad}: the scan covers the first-parent line from their merge base {} ({}) to {bad}; {good}'s own branch is not in it",
            mb.short,
            mb.dates()
        );
        say(&note);
        notes.push(note);
    }

    // The grid, moved to commits built already where that costs a few commits at most.
    let opts = a.build.options(&recipe);
    let even = scan::grid_positions(n, a.grid.grid);
    let max_move = scan::max_move(n, even.len());
    let mut built = std::collections::HashMap::new();
    let mut is_built = |i: usize| -> Result<bool> {
        if let Some(b) = built.get(&i) {
            return Ok(*b);
        }
        let b = builds::cached(&cache, &repo, &commits[i], &opts)?.is_some();
        built.insert(i, b);
        Ok(b)
    };
    // Look every candidate up first (errors surface here), then snap on the answers.
    for &p in &even {
        for q in p.saturating_sub(max_move)..=(p + max_move).min(n - 1) {
            is_built(q)?;
        }
    }
    let snapped = scan::snap_to_built(&even, max_move, |i| built.get(&i).copied().unwrap_or(false));
    let positions: Vec<usize> = snapped.iter().map(|s| s.0).collect();
    let moved: Vec<isize> = snapped.iter().map(|s| s.1).collect();
    let cached = positions
        .iter()
        .filter(|p| built.get(p).copied().unwrap_or(false))
        .count();
    let spacing = (n - 1) / (even.len() - 1).max(1);
    say(&format!(
        "scanning {} at {} thread(s) over {} commits ({}..{}), recipe {}: grid of {} points every ~{} commits",
        spec.short(),
        thread_count,
        n,
        range.good.short,
        range.bad.short,
        recipe.name,
        positions.len(),
        spacing
    ));
    say(&format!(
        "  builds for the grid: {} needed, {} in the cache, {} to build; {} point(s) moved (at most {} commits) to a commit already built",
        positions.len(),
        cached,
        positions.len() - cached,
        moved.iter().filter(|m| **m != 0).count(),
        max_move
    ));

    let id = scan_id(
        &a,
        &repo
            .path
            .canonicalize()
            .unwrap_or(repo.path.clone())
            .to_string_lossy(),
        &range.good.id,
        &range.bad.id,
        &spec.canonical(),
        &cfg,
    );
    let mut session = Session::new(
        &cache,
        a.sampling.timing.timing(),
        Reuse::Context(format!("scan {id}")),
    )
    .with_repo(&repo, a.build.options(&recipe))
    .with_executor(exec);
    for c in &commits {
        let lib = session.add_library(Library::Revision {
            label: c.short.clone(),
            commit: c.clone(),
        });
        session.add_subject(Subject {
            lib,
            spec: spec.clone(),
            threads: thread_count,
            side: Side::Only,
        })?;
    }

    let result = {
        let mut live = Live {
            session: &mut session,
            commits: &commits,
            threads: &threads,
            format: if text {
                BisectFormat::Text
            } else {
                BisectFormat::Json
            },
            status: progress::SearchStatus::new(n),
            started,
            deadline: None,
        };
        let grid = scan::measure_grid(&positions, &cfg, &mut live);
        let grid = match grid {
            Ok(g) => g,
            Err(e) => {
                live.status.finish();
                return Err(e);
            }
        };
        let line = |s: &str| {
            if text {
                progress::above_status(|| println!("{s}"));
            } else {
                progress::info(s);
            }
        };
        line(&format!(
            "grid measured ({} samples per point): {} fitted level(s)",
            grid.samples_per_point,
            grid.segments.len()
        ));
        for (i, p) in grid.points.iter().enumerate() {
            let step = crate::analysis::bisect::Step {
                commit: p.commit,
                n: p.n,
                mean: p.mean,
                ci95: p.ci95,
                verdict: crate::analysis::bisect::StepVerdict::Ambiguous,
                position: None,
                series: Vec::new(),
            };
            let mut l = step_line(
                &step,
                &commits[p.commit],
                a.sampling.timing.metric.metric,
                &threads,
            );
            // The grid has no verdicts: its level instead.
            l = l.replacen(
                "ambiguous",
                &match p.segment {
                    Some(s) => format!("level {}", s + 1),
                    None => "skipped".into(),
                },
                1,
            );
            if moved[i] != 0 {
                l.push_str(&format!(" (moved {:+})", moved[i]));
            }
            line(&l);
        }
        let entered = grid.intervals.iter().filter(|i| i.entered).count();
        line(&format!(
            "searching {entered} of {} grid intervals whose ends lie on different levels; the others are not entered (a bump narrower than a grid interval can hide there)",
            grid.intervals.len()
        ));
        let r = scan::search_intervals(grid, &cfg, &mut live);
        live.status.finish();
        r?
    };
    let samples_total: usize = (0..commits.len())
        .filter_map(|i| session.samples(i).ok().map(|s| s.len()))
        .sum();
    let report = ScanReport::new(
        &result,
        ScanContext {
            tool: spec.short(),
            threads: thread_count,
            range: a.range.clone(),
            repo: a.build.repo.display().to_string(),
            recipe: recipe.name.clone(),
            good: &range.good,
            bad: &range.bad,
            merge_base: range.merge_base.as_ref(),
            commits: &commits,
            grid_size: a.grid.grid,
            max_move,
            moved,
            grid_builds_cached: cached,
            builds: session.builds.values().cloned().collect(),
            samples: samples_total,
            samples_taken_now: session.samples_taken,
            placement: session.placement(),
            alpha: cfg.alpha,
            min_effect: cfg.min_effect,
            notes,
            wall_s: started.elapsed().as_secs_f64(),
            reproduce: reproduce(&a),
        },
    );
    print!("{}", a.format.render_linked(&report, &links)?);
    if let Some(dir) = &a.plot {
        let path = report.write_plot(dir)?;
        progress::info(&format!("wrote {}", path.display()));
    }
    // 3: finished, but a candidate change point did not hold on its fresh block (as bisect).
    if report
        .changes
        .iter()
        .any(|c| !c.culprit.confirmed && !c.culprit.unresolved)
    {
        return Ok(Exit::Unconfirmed);
    }
    Ok(Exit::Done)
}
