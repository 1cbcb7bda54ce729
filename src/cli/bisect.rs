use crate::cli::exit::Exit;
use anyhow::{bail, Result};
use clap::Args;
use std::time::Instant;

use super::args::{GridArg, LinkArgs, SequentialArgs, StatsArgs, StopArgs, ToolArg};
use super::build::BuildArgs;
use super::live::{repo_key, say, Live, RangeSetup};
use crate::analysis::bisect::{self, Config, Outcome, StepVerdict};
use crate::analysis::locate::{self, Location};
use crate::build::repo;
use crate::cache::{self, Cache};
use crate::measure::engine::{Library, Session, Side, Subject};
use crate::report::bisect::{
    change_point_json, step_line, BisectFormat, BisectReport, ChangePointJson, LocatedJson,
    RunState, SavedBisect, StepJson, ThreadEffect, UnexploredJson, BISECT_KIND,
};
use crate::report::explain::{ExplainFormat, ExplainReport, Side as ExplainSide};
use crate::report::export::{Links, Versioned};
use crate::{hashing, progress, Global};

#[derive(Args, Clone)]
pub struct BisectArgs {
    /// GOOD..BAD (old..new): tags, branches or shas of --repo
    #[arg(value_name = "GOOD..BAD")]
    range: String,
    #[command(flatten)]
    tool: ToolArg,
    #[command(flatten)]
    sampling: SequentialArgs,
    #[command(flatten)]
    stats: StatsArgs,
    #[command(flatten)]
    stop: StopArgs,
    /// Stop exploring smaller changes once this much time is spent (e.g. 30m, 1h30m), after the first change point in the range's direction; the result lists what was left and the command that continues from the cache
    #[arg(long, value_name = "DURATION", value_parser = super::args::parse_budget)]
    budget: Option<std::time::Duration>,
    #[command(flatten)]
    build: BuildArgs,
    #[command(flatten)]
    exec: crate::cli::exec::ExecArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: BisectFormat,
    #[command(flatten)]
    links: LinkArgs,
    /// Also write the profile (µs/op of every tested commit along the range) as an SVG into DIR
    #[arg(long, value_name = "DIR")]
    plot: Option<std::path::PathBuf>,
    /// Then profile each confirmed culprit against its parent under callgrind (as `explain`,
    /// one thread): the functions whose instructions/op changed most, and a differential
    /// flame graph in the --plot DIR (else the current directory)
    #[arg(long)]
    explain: bool,
    /// Scan the range instead: a coarse grid first, then a search of every grid interval that
    /// changed (the same as `perfbisect scan`)
    #[arg(long)]
    scan: bool,
    #[command(flatten)]
    grid: GridArg,
    /// Locate by count, confirm by clock (1 thread): search on instruction counts under valgrind, then confirm every change point in time on a fresh interleaved block; the ends are compared in time too, and a range whose time moved without its counts is searched in time
    #[arg(long, value_enum, value_name = "METRIC")]
    locate: Option<super::args::LocateBy>,
}

/// What identifies one bisect, so a re-run finds its samples (resume) and
/// no other bisect shares them. Every field is named here: a new option that
/// changes what is measured must be added (and the pinned id in the test
/// below changes with it, on purpose).
struct ResumeKey<'a> {
    repo: &'a str,
    good: &'a str,
    bad: &'a str,
    tool: &'a str,
    /// "1", or "1,8,32" for several thread counts.
    threads: &'a str,
    recipe: &'a str,
    cfg: &'a Config,
    duration: f64,
    metric: crate::measure::metric::Metric,
    locate: Option<super::args::LocateBy>,
}

impl ResumeKey<'_> {
    fn id(&self) -> String {
        let mut h = hashing::Hasher::new();
        h.field("bisect-v2")
            .field(self.repo)
            .field(self.good)
            .field(self.bad)
            .field(self.tool)
            .field(self.threads)
            .field(self.recipe)
            .field(&self.cfg.alpha.to_string())
            .field(&self.cfg.min_effect.to_string())
            .field(&self.cfg.schedule.initial.to_string())
            .field(&self.cfg.schedule.max.to_string())
            // what `--first-change-only` was before it became --max-changes 1: kept so that
            // existing ids stay what they were
            .field("false")
            .field(&self.duration.to_string());
        if let Some(m) = self.cfg.max_changes {
            h.field(&format!("max-changes {m}"));
        }
        // Time keeps the id it had before metrics existed (resumes still work).
        if !self.metric.is_time() {
            h.field(&format!("metric {}", self.metric.name()));
        }
        if let Some(by) = self.locate {
            h.field(&format!("locate {}", by.metric().name()));
        }
        h.finish_short()
    }
}

fn reproduce(a: &BisectArgs) -> String {
    let mut s = format!(
        "perfbisect bisect --repo {} --recipe {} --tool '{}' --threads {} --samples {} --max-samples {} --duration {} --alpha {} --min-effect {}",
        a.build.repo.display(),
        a.build.recipe,
        a.tool.tool,
        a.tool.threads_text(),
        a.sampling.schedule().initial,
        a.sampling.schedule().max,
        a.sampling.timing.duration,
        a.stats.alpha.alpha,
        a.stats.min_effect
    );
    if !a.sampling.timing.metric.metric.is_time() {
        s.push_str(&format!(
            " --metric {}",
            a.sampling.timing.metric.metric.name()
        ));
    }
    if let Some(by) = a.locate {
        s.push_str(&format!(" --locate {}", by.metric().name()));
    }
    if let Some(m) = a.stop.max_changes() {
        s.push_str(&format!(" --max-changes {m}"));
    }
    if let Some(m) = a.stop.min_share {
        s.push_str(&format!(" --min-share {}%", m * 100.0));
    }
    if let Some(b) = a.budget {
        s.push_str(&format!(" --budget {}", humantime::format_duration(b)));
    }
    s.push(' ');
    s.push_str(&a.range);
    s
}

pub fn run(g: &Global, a: BisectArgs) -> Result<Exit> {
    check_locate(&a)?;
    if a.scan {
        return super::scanning::scan(g, as_scan(a)?);
    }
    let started = Instant::now();
    let (good, bad) = repo::split_range(&a.range)?;
    a.sampling.timing.check_threads(&a.tool.thread_counts())?;
    let cfg = config(&a);
    let setup = RangeSetup::open(g, &a.links, &a.tool.tool, &a.build, (&good, &bad), &cfg)?;
    let exec = setup.executor(&a.exec, &a.build)?;
    let RangeSetup {
        links,
        repo,
        range,
        cache,
        ..
    } = &setup;
    let n = range.commits.len();
    let id = resume_id(&a, &setup, &cfg);
    let text = a.format == BisectFormat::Text;
    say(
        text,
        &format!("bisecting {}", setup.describe(&a.tool.threads_text())),
    );
    let (commits, good_idx) = searched_commits(range);
    let threads = a.tool.thread_counts();
    a.tool.warn_oversubscribed();
    let sampling = (a.sampling.timing.timing(), format!("bisect {id}"), a.locate);
    let (mut session, mut counting) =
        setup.sessions((&a.build, &a.exec), sampling, exec, &commits, &threads)?;
    save_state(cache, &id, &a, RunState::Running, None)?;

    let mut notes = Vec::new();
    let live = |session, locating| Live {
        session,
        commits: &commits,
        threads: &threads,
        format: a.format,
        status: progress::SearchStatus::new(n),
        started,
        deadline: a.budget.map(|b| started + b),
        locating,
    };
    let lives = (
        live(&mut session, false),
        counting.as_mut().map(|c| live(c, true)),
    );
    let ends = good_idx.map(|gi| (good.as_str(), bad.as_str(), gi, n - 1));
    let (result, location) = match search(lives, &a, &cfg, range, ends, &mut notes)? {
        Searched::Range(Ok(r)) => *r,
        Searched::Range(Err(e)) => return Err(failed(cache, &id, &a, e)),
        Searched::OnGoodsBranch(mb) => {
            save_state(cache, &id, &a, RunState::Redirected, None)?;
            let mut on_branch = a.clone();
            on_branch.range = format!("{mb}..{good}");
            return run(g, on_branch);
        }
    };
    let counted = (counting.as_ref()).zip(location.as_ref());
    let mut json = report(
        &a,
        &setup,
        (&session, counted),
        &result,
        &commits,
        notes,
        started,
    );
    if a.explain {
        json.explanations = explain_culprits(&mut session, repo, &json, a.plot.as_deref())?;
    }
    save_state(cache, &id, &a, RunState::Finished, Some(&json))?;
    output(&a, &json, links)
}

/// `--locate` confirms in time and counts one thread.
fn check_locate(a: &BisectArgs) -> Result<()> {
    match a.locate {
        Some(by) => by.check(a.sampling.timing.metric.metric, &a.tool.thread_counts()),
        None => Ok(()),
    }
}

fn config(a: &BisectArgs) -> Config {
    Config {
        alpha: a.stats.alpha.alpha,
        min_effect: a.stats.min_effect,
        schedule: a.sampling.schedule(),
        max_changes: a.stop.max_changes(),
        min_share: a.stop.min_share,
    }
}

fn resume_id(a: &BisectArgs, setup: &RangeSetup, cfg: &Config) -> String {
    ResumeKey {
        repo: &repo_key(&setup.repo),
        good: &setup.range.good.id,
        bad: &setup.range.bad.id,
        tool: &setup.spec.canonical(),
        threads: &a.tool.threads_text(),
        recipe: &a.build.recipe,
        cfg,
        duration: a.sampling.timing.duration,
        metric: a.sampling.timing.metric.metric,
        locate: a.locate,
    }
    .id()
}

/// The range's commits, oldest first, and GOOD's index among them when the list starts at
/// a merge base: GOOD is then kept past the end of the searched indices.
fn searched_commits(range: &repo::Range) -> (Vec<repo::CommitInfo>, Option<usize>) {
    let mut commits = range.commits.clone();
    let good_idx = range.merge_base.as_ref().map(|_| {
        commits.push(range.good.clone());
        commits.len() - 1
    });
    (commits, good_idx)
}

/// What the search of the range came to. Its own failure is a value (the run's state records
/// it); one placing the merge base is not.
enum Searched {
    /// With what the counts saw when they located.
    Range(Result<Box<(bisect::SearchResult, Option<Location>)>>),
    /// The merge base behaves like BAD: search from it (this id) to GOOD instead.
    OnGoodsBranch(String),
}

/// The merge base placed first when GOOD is not an ancestor of BAD (`ends`, as
/// [`place_merge_base`] takes them), then the search of the range: on the clock (`lives.0`)
/// alone, or located by the counts (`lives.1`) and confirmed on the clock.
fn search<'s, 'a>(
    lives: (Live<'s, 'a>, Option<Live<'s, 'a>>),
    a: &BisectArgs,
    cfg: &Config,
    range: &repo::Range,
    ends: Option<(&str, &str, usize, usize)>,
    notes: &mut Vec<String>,
) -> Result<Searched> {
    let text = a.format == BisectFormat::Text;
    let (mut clock, mut count) = lives;
    let count_cfg = count_config(a, cfg);
    if let (Some(mb), Some(ends)) = (&range.merge_base, ends) {
        let (placing, cfg): (&mut Live, &Config) = match &mut count {
            Some(c) => (c, &count_cfg),
            None => (&mut clock, cfg),
        };
        match place_merge_base(placing, a, cfg, mb, ends, &|s| say(text, s))? {
            Placement::Search(note) => notes.extend(note),
            Placement::OnGoodsBranch => return Ok(Searched::OnGoodsBranch(mb.id.clone())),
        }
    }
    let n = range.commits.len();
    let found = match count {
        None => bisect::search(n, cfg, &mut clock).map(|r| (r, None)),
        Some(mut count) => {
            let l = locate::locate(n, &count_cfg, cfg, &mut count, &mut clock);
            count.status.finish();
            l.map(|l| (l.result, Some(l.location)))
        }
    };
    clock.status.finish();
    Ok(Searched::Range(found.map(Box::new)))
}

/// The counts' search configuration when locating: the clock's, on the count's own schedule
/// (a count decides in a few samples).
fn count_config(a: &BisectArgs, cfg: &Config) -> Config {
    Config {
        schedule: a
            .locate
            .map_or(cfg.schedule.clone(), |by| by.metric().default_schedule()),
        ..cfg.clone()
    }
}

/// The search's error, with the run's state saved as interrupted or failed.
fn failed(cache: &Cache, id: &str, a: &BisectArgs, e: anyhow::Error) -> anyhow::Error {
    // After Ctrl-C, whatever failed on the way out (a child killed by
    // the signal, say) is part of the interruption: exit 130 with the
    // resume hint, not a failure.
    let (state, e) = if crate::interrupt::is_interrupted(&e) || crate::interrupt::interrupted() {
        (RunState::Interrupted, crate::interrupt::Interrupted.into())
    } else {
        (RunState::Failed, e)
    };
    match save_state(cache, id, a, state, None) {
        Ok(()) => e,
        Err(saving) => saving,
    }
}

/// The typed result: the search's, in the commits' and the session's terms.
fn report(
    a: &BisectArgs,
    setup: &RangeSetup,
    (session, counted): (&Session, Option<(&Session, &Location)>),
    result: &bisect::SearchResult,
    commits: &[repo::CommitInfo],
    notes: Vec<String>,
    started: Instant,
) -> BisectReport {
    let RangeSetup {
        spec,
        recipe,
        range,
        ..
    } = setup;
    let threads = a.tool.thread_counts();
    let cfg = config(a);
    BisectReport {
        kind: BISECT_KIND.into(),
        tool: spec.short(),
        threads: threads[0],
        thread_counts: if threads.len() > 1 {
            threads.clone()
        } else {
            Vec::new()
        },
        ends_per_threads: (result.ends_series.iter().zip(&threads))
            .map(|(c, t)| ThreadEffect::new(*t, c))
            .collect(),
        range: a.range.clone(),
        repo: a.build.repo.display().to_string(),
        recipe: recipe.name.clone(),
        good: (&range.good).into(),
        bad: (&range.bad).into(),
        merge_base: range.merge_base.as_ref().map(|m| m.into()),
        commits: range.commits.len(),
        direction: result.direction,
        ends: result.ends,
        outcome: outcome_text(&result.outcome),
        changes: change_points(&result.outcome, commits, &threads),
        steps: (result.steps.iter())
            .map(|s| StepJson::new(s, commits, &threads))
            .collect(),
        builds: builds_used(session, counted.map(|c| c.0)),
        samples: samples_total(session, commits.len() * threads.len())
            + counted.map_or(0, |c| samples_total(c.0, commits.len())),
        samples_taken_now: session.samples_taken + counted.map_or(0, |c| c.0.samples_taken),
        placement: session.placement(),
        shared_probes: session.shared,
        alpha_per_test: result.alpha_per_test,
        notes,
        tests: result.tests,
        family_alpha: result.family_alpha,
        alpha: cfg.alpha,
        min_effect: cfg.min_effect,
        wall_s: started.elapsed().as_secs_f64(),
        reproduce: reproduce(a),
        metric: session.metric(),
        explanations: Vec::new(),
        resolution: result.resolution.clone(),
        explained: matches!(result.outcome, Outcome::Changes(_)).then_some(result.explained),
        unexplored: (result.unexplored.iter())
            .map(|u| UnexploredJson::new(u, commits))
            .collect(),
        continue_with: continue_with(a, result),
        located: counted.map(|(s, l)| LocatedJson::new(s.metric(), l, commits)),
    }
}

fn outcome_text(outcome: &Outcome) -> String {
    match outcome {
        Outcome::NoChange => "no_change".into(),
        Outcome::Changes(c) => format!("{} change(s)", c.len()),
    }
}

fn change_points(
    outcome: &Outcome,
    commits: &[repo::CommitInfo],
    threads: &[usize],
) -> Vec<ChangePointJson> {
    match outcome {
        Outcome::NoChange => Vec::new(),
        Outcome::Changes(cps) => cps
            .iter()
            .map(|cp| change_point_json(cp, commits, threads))
            .collect(),
    }
}

/// The builds the clock and the counts used, each once (the counts' first: they built them).
fn builds_used(clock: &Session, count: Option<&Session>) -> Vec<crate::measure::engine::BuildUse> {
    let mut builds = count.map(|c| c.builds.clone()).unwrap_or_default();
    for (k, b) in &clock.builds {
        builds.entry(k.clone()).or_insert_with(|| b.clone());
    }
    builds.into_values().collect()
}

/// Samples of every subject (each commit at each thread count); one measured as a
/// byte-identical build has none of its own.
fn samples_total(session: &Session, subjects: usize) -> usize {
    (0..subjects)
        .filter(|&i| session.root(i) == i)
        .filter_map(|i| session.samples(i).ok().map(|s| s.len()))
        .sum()
}

/// The command that goes on where a spent --budget stopped.
fn continue_with(a: &BisectArgs, result: &bisect::SearchResult) -> Option<String> {
    (result.unexplored.iter())
        .any(|u| u.because == bisect::LeftBecause::Budget)
        .then(|| {
            reproduce(&BisectArgs {
                budget: None,
                ..a.clone()
            })
        })
}

/// The result in its format on stdout, each explanation after it, the plot; the exit code.
fn output(a: &BisectArgs, json: &BisectReport, links: &Links) -> Result<Exit> {
    print!("{}", a.format.render_linked(json, links)?);
    let explain_format = match a.format {
        BisectFormat::Text => Some(ExplainFormat::Text),
        BisectFormat::Markdown => Some(ExplainFormat::Markdown),
        // JSON carries them; HTML names the flame graphs only.
        _ => None,
    };
    for e in &json.explanations {
        match explain_format {
            Some(f) => print!("\n{}", f.render(e)?),
            None => progress::info(&format!(
                "explained {}..{}: {}",
                e.before,
                e.after,
                e.flamegraph.as_deref().unwrap_or("-")
            )),
        }
    }
    if let Some(dir) = &a.plot {
        let path = json.write_plot(dir)?;
        progress::info(&format!("wrote {}", path.display()));
    }
    // 3: finished, but a candidate change point did not hold on its fresh block of samples.
    if json.changes.iter().any(|c| !c.confirmed && !c.unresolved) {
        return Ok(Exit::Unconfirmed);
    }
    Ok(Exit::Done)
}

/// `--explain`: each confirmed culprit against its parent, profiled at one
/// thread in this session (builds and kernels are already there).
fn explain_culprits(
    session: &mut Session,
    repo: &repo::Repo,
    report: &BisectReport,
    dir: Option<&std::path::Path>,
) -> Result<Vec<ExplainReport>> {
    if report.changes.is_empty() {
        return Ok(Vec::new());
    }
    let spec_text = report.tool.clone();
    // Every subject of a bisect measures the same tool.
    let spec = session.subject(0).spec.clone();
    let mut out = Vec::new();
    for c in report.changes.iter().filter(|c| c.confirmed) {
        let parent = repo.resolve(&c.parent)?;
        let culprit = repo.resolve(&c.info.commit)?;
        progress::info(&format!(
            "explaining {}..{} under callgrind",
            parent.short, culprit.short
        ));
        let mut subject = |commit: &repo::CommitInfo| {
            let lib = session.add_library(Library::Revision {
                label: commit.short.clone(),
                commit: commit.clone(),
            });
            session.add_subject(Subject {
                lib,
                spec: spec.clone(),
                threads: 1,
                side: Side::Explain,
            })
        };
        let (sa, sb) = (subject(&parent)?, subject(&culprit)?);
        let pa = crate::measure::profile::take(session, sa)?;
        let pb = crate::measure::profile::take(session, sb)?;
        let mut e = ExplainReport::new(
            &spec_text,
            ExplainSide {
                label: &parent.short,
                commit: &parent.id,
            },
            ExplainSide {
                label: &culprit.short,
                commit: &culprit.id,
            },
            (&pa, &pb),
            20,
        );
        let name = format!(
            "explain-{}-{}-{}.svg",
            crate::report::plot::file_stem(&spec_text),
            parent.short,
            culprit.short
        );
        let path = dir.map(|d| d.join(&name)).unwrap_or_else(|| name.into());
        e.write_flamegraph(&path, (&pa, &pb))?;
        out.push(e);
    }
    Ok(out)
}

/// `bisect --scan`: the same range, tool, sampling and statistics, scanned.
fn as_scan(a: BisectArgs) -> Result<super::scanning::ScanArgs> {
    use crate::report::scan::ScanFormat;
    if a.stop.max_changes().is_some() {
        bail!("--scan reports every change of the range: it takes no --first-change-only or --max-changes");
    }
    let format = match a.format {
        BisectFormat::Text => ScanFormat::Text,
        BisectFormat::Markdown => ScanFormat::Markdown,
        BisectFormat::Json => ScanFormat::Json,
        BisectFormat::Html => ScanFormat::Html,
        BisectFormat::Jsonl => bail!("--scan renders text, markdown, json or html, not jsonl"),
    };
    Ok(super::scanning::ScanArgs {
        range: a.range,
        tool: a.tool,
        grid: a.grid,
        sampling: a.sampling,
        stats: a.stats,
        build: a.build,
        exec: a.exec,
        format,
        links: a.links,
        plot: a.plot,
        locate: a.locate,
    })
}

/// What placing the merge base between GOOD and BAD decided.
enum Placement {
    /// Search merge-base..BAD; with a note when GOOD's own branch differs too.
    Search(Option<String>),
    /// The merge base behaves like BAD: the change is on GOOD's branch.
    OnGoodsBranch,
}

/// GOOD, the merge base and BAD measured in the same rounds: where does the merge base lie?
/// `ends` = (GOOD's name, BAD's name, GOOD's subject index, BAD's subject index).
fn place_merge_base(
    session: &mut Live,
    a: &BisectArgs,
    cfg: &Config,
    mb: &repo::CommitInfo,
    ends: (&str, &str, usize, usize),
    say: &dyn Fn(&str),
) -> Result<Placement> {
    let (good, bad, gi, bad_idx) = ends;
    say(&format!(
        "{good} is not an ancestor of {bad}: placing the merge base {} ({}) between them first",
        mb.short,
        mb.dates()
    ));
    // GOOD, the merge base and BAD in the same rounds: where does the merge base lie?
    let step = bisect::place(session, 0, gi, bad_idx, cfg, cfg.alpha)?;
    say(&step_line(
        &step,
        mb,
        session.session.metric(),
        &a.tool.thread_counts(),
    ));
    let pos = step
        .position
        .map(|p| format!(" ({:.0}% of the way from {good} to {bad})", p * 100.0))
        .unwrap_or_default();
    let towards_bad = match &step.verdict {
        StepVerdict::Skipped(why) => bail!("cannot measure the merge base {}: {why}", mb.short),
        StepVerdict::Old => false,
        StepVerdict::New => true,
        StepVerdict::Between | StepVerdict::Ambiguous => step.position.is_some_and(|p| p >= 0.5),
    };
    if towards_bad {
        // The merge base already behaves (mostly) like BAD: the change happened on GOOD's
        // branch, after the branches split. Search there instead, ends reversed.
        say(&format!(
            "  the merge base {} behaves like {bad}{pos}: the change is on {good}'s branch; searching {}..{good} (its direction is reversed: {good} is the new end)",
            mb.short, mb.short
        ));
        return Ok(Placement::OnGoodsBranch);
    }
    if step.verdict != StepVerdict::Between {
        say(&format!(
            "  the merge base {} behaves like {good}{pos}{}: searching {}..{bad}",
            mb.short,
            if step.verdict == StepVerdict::Ambiguous {
                " (not told apart at the sample cap)"
            } else {
                ""
            },
            mb.short
        ));
    } else {
        // Significantly different from both ends, but nearer GOOD: a change of GOOD's own
        // branch (a backport, say) beside the one between the merge base and BAD.
        let note = format!(
            "{good}'s own branch differs from the merge base {}{pos}: most of the change lies between the merge base and {bad}, which is searched; to find {good}'s own change run: {}",
            mb.short,
            reproduce(&BisectArgs {
                range: format!("{}..{good}", mb.id),
                ..a.clone()
            })
        );
        say(&format!("  {note}"));
        return Ok(Placement::Search(Some(note)));
    }
    Ok(Placement::Search(None))
}

fn save_state(
    cache: &Cache,
    id: &str,
    a: &BisectArgs,
    state: RunState,
    result: Option<&BisectReport>,
) -> Result<()> {
    let dir = cache.dir("bisects")?;
    let saved = SavedBisect {
        id: id.to_string(),
        state,
        command: reproduce(a),
        updated: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        result: result.cloned(),
    };
    cache::write_atomic(
        &dir.join(format!("{id}.json")),
        serde_json::to_string_pretty(&Versioned::new(&saved))?.as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::alpha::Schedule;

    /// The resume id is a promise to interrupted bisects: if this value
    /// changes, their samples are orphaned. Change it only on purpose.
    #[test]
    fn resume_id_is_pinned() {
        let cfg = Config {
            alpha: 0.01,
            min_effect: 0.03,
            schedule: Schedule {
                initial: 5,
                max: 40,
            },
            max_changes: None,
            min_share: None,
        };
        let key = ResumeKey {
            repo: "/repo",
            good: "0123456789abcdef0123456789abcdef01234567",
            bad: "89abcdef0123456789abcdef0123456789abcdef",
            tool: "pkeyread:format=pem,key=ec",
            threads: "1",
            recipe: "default",
            cfg: &cfg,
            duration: 1.0,
            metric: crate::measure::metric::Metric::Time,
            locate: None,
        };
        assert_eq!(key.id(), "ba7e0700cb066523");
        let located = ResumeKey {
            locate: Some(super::super::args::LocateBy::Instructions),
            ..key
        };
        assert_ne!(located.id(), key.id());
        let instr = ResumeKey {
            metric: crate::measure::metric::Metric::Instructions,
            ..key
        };
        assert_ne!(instr.id(), key.id());
        let other = ResumeKey {
            threads: "2",
            ..key
        };
        assert_ne!(other.id(), key.id());
        let other = ResumeKey {
            threads: "1,2",
            ..key
        };
        assert_ne!(other.id(), key.id());
    }
}
