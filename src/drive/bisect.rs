//! A bisect of GOOD..BAD, from its plan to its typed result: the range opened, the merge base
//! placed, the sessions made (the clock's, and the counts' when locating), the pure search run
//! through them, its state kept in the cache, each culprit explained when asked.

use std::time::Instant;

use anyhow::Result;

use super::explain::explain_culprits;
use super::ids::bisect_id;
use super::live::Live;
use super::merge_base::{self, Ends, Placement};
use super::plan::{BisectPlan, Locate};
use super::setup::RangeSetup;
use super::state::Record;
use crate::analysis::bisect::{self, LeftBecause, Outcome};
use crate::analysis::locate::{self, Location};
use crate::build::repo;
use crate::measure::engine::{builds_used, Session};
use crate::report::bisect::{
    change_point_json, BisectReport, ChangePointJson, LocatedJson, RunState, StepJson,
    ThreadEffect, UnexploredJson, BISECT_KIND,
};
use crate::report::events::{Event, Sink};

/// Bisects the plan's range, telling `sink` each step and change point as it happens.
pub fn bisect(plan: &BisectPlan, sink: &dyn Sink) -> Result<BisectReport> {
    plan.validate()?;
    let started = Instant::now();
    let r = &plan.range;
    let (good, bad) = r.ends()?;
    let setup = RangeSetup::open(r)?;
    let id = bisect_id(r, &setup);
    let record = Record {
        cache: &setup.cache,
        id: &id,
        command: plan.reproduce(),
    };
    let (commits, good_idx) = searched_commits(&setup.range);
    // The executor is connected (and refuses what it cannot serve) before anything is said.
    let (mut session, mut counting) = setup.sessions(r, format!("bisect {id}"), &commits, &sink)?;
    let describe = format!("bisecting {}", setup.describe(&r.threads_text()));
    sink.send(Event::Said(&describe));
    record.save(RunState::Running, None)?;

    let n = setup.range.commits.len();
    sink.send(Event::Started { commits: n });
    let live = |session, locating| Live {
        session,
        commits: &commits,
        threads: &r.threads,
        sink,
        started,
        deadline: plan.budget.map(|b| started + b),
        locating,
        used: Default::default(),
    };
    let lives = (
        live(&mut session, false),
        counting.as_mut().map(|c| live(c, true)),
    );
    let ends = good_idx.map(|good_idx| Ends {
        good: &good,
        bad: &bad,
        good_idx,
        bad_idx: n - 1,
    });
    let mut notes = Vec::new();
    let searched = search(lives, plan, &setup.range, ends, &mut notes);
    sink.send(Event::Finished);
    let (result, location) = match searched? {
        Searched::Range(Ok(r)) => *r,
        Searched::Range(Err(e)) => return Err(record.failed(e)),
        Searched::OnGoodsBranch(mb) => {
            record.save(RunState::Redirected, None)?;
            return bisect(&plan.over(format!("{mb}..{good}")), sink);
        }
    };
    let counted = (counting.as_ref()).zip(location.as_ref());
    let ran = Ran {
        plan,
        setup: &setup,
        sessions: (&session, counted),
        commits: &commits,
        started,
    };
    let mut report = ran.report(&result, notes);
    if plan.explain {
        let dir = plan.explain_dir.as_deref();
        report.explanations = explain_culprits(&mut session, &setup.repo, &report, dir)?;
    }
    record.save(RunState::Finished, Some(&report))?;
    Ok(report)
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

/// The merge base placed first when GOOD is not an ancestor of BAD, then the search of the
/// range: on the clock (`lives.0`) alone, or located by the counts (`lives.1`) and confirmed
/// on the clock.
fn search<'s, 'a>(
    lives: (Live<'s, 'a>, Option<Live<'s, 'a>>),
    plan: &BisectPlan,
    range: &repo::Range,
    ends: Option<Ends>,
    notes: &mut Vec<String>,
) -> Result<Searched> {
    let (mut clock, mut count) = lives;
    let cfg = &plan.range.cfg;
    let count_cfg = plan.range.count_config();
    // `--locate auto` chooses on the range once the merge base is placed, on the clock.
    let auto = plan.range.locate == Some(Locate::Auto);
    if let (Some(mb), Some(ends)) = (&range.merge_base, ends) {
        let (placing, cfg) = match &mut count {
            Some(c) if !auto => (c, &count_cfg),
            _ => (&mut clock, cfg),
        };
        match merge_base::place(placing, plan, cfg, mb, &ends)? {
            Placement::Search(note) => notes.extend(note),
            Placement::OnGoodsBranch => return Ok(Searched::OnGoodsBranch(mb.id.clone())),
        }
    }
    let n = range.commits.len();
    let count = clock.counts_to_locate((n, cfg, plan.range.locate), count, notes)?;
    let found = match count {
        None => bisect::search(n, cfg, &mut clock).map(|r| (r, None)),
        Some(mut count) => locate::locate(n, &count_cfg, cfg, &mut count, &mut clock)
            .map(|l| (l.result, Some(l.location))),
    };
    Ok(Searched::Range(found.map(Box::new)))
}

/// A finished search, with what its report needs besides the search's result.
struct Ran<'r, 's> {
    plan: &'r BisectPlan,
    setup: &'r RangeSetup,
    /// The clock's session, and the counts' with what they located.
    sessions: (&'r Session<'s>, Option<(&'r Session<'s>, &'r Location)>),
    commits: &'r [repo::CommitInfo],
    started: Instant,
}

impl Ran<'_, '_> {
    /// The typed result: the search's, in the commits' and the session's terms.
    fn report(&self, result: &bisect::SearchResult, notes: Vec<String>) -> BisectReport {
        let (plan, r) = (self.plan, &self.plan.range);
        let (session, counted) = self.sessions;
        let (commits, threads) = (self.commits, &r.threads);
        let range = &self.setup.range;
        BisectReport {
            kind: BISECT_KIND.into(),
            tool: self.setup.spec.short(),
            threads: threads[result.primary],
            thread_counts: if threads.len() > 1 {
                threads.clone()
            } else {
                Vec::new()
            },
            ends_per_threads: (result.ends_series.iter().zip(threads))
                .map(|(c, t)| ThreadEffect::new(*t, c))
                .collect(),
            range: r.range.clone(),
            repo: r.sources.repo.display().to_string(),
            recipe: self.setup.recipe.name.clone(),
            good: (&range.good).into(),
            bad: (&range.bad).into(),
            merge_base: range.merge_base.as_ref().map(|m| m.into()),
            commits: range.commits.len(),
            direction: result.direction,
            ends: result.ends,
            outcome: outcome_text(&result.outcome),
            changes: change_points(&result.outcome, commits, threads),
            steps: (result.steps.iter())
                .map(|s| StepJson::new(s, commits, threads))
                .collect(),
            builds: builds_used(std::iter::once(session).chain(counted.map(|c| c.0))),
            samples: session.samples_held() + counted.map_or(0, |c| c.0.samples_held()),
            samples_taken_now: session.samples_taken + counted.map_or(0, |c| c.0.samples_taken),
            placement: session.placement(),
            shared_probes: session.shared,
            alpha_per_test: result.alpha_per_test,
            notes,
            tests: result.tests,
            family_alpha: result.family_alpha,
            routing: r.cfg.routing,
            alpha: r.cfg.alpha,
            min_effect: r.cfg.min_effect,
            wall_s: self.started.elapsed().as_secs_f64(),
            reproduce: plan.reproduce(),
            metric: session.metric(),
            explanations: Vec::new(),
            resolution: result.resolution.clone(),
            explained: matches!(result.outcome, Outcome::Changes(_)).then_some(result.explained),
            unexplored: (result.unexplored.iter())
                .map(|u| UnexploredJson::new(u, commits))
                .collect(),
            continue_with: continue_with(plan, result),
            located: counted.map(|(s, l)| LocatedJson::new(s.metric(), l, commits)),
        }
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

/// The command that goes on where a spent --budget stopped.
fn continue_with(plan: &BisectPlan, result: &bisect::SearchResult) -> Option<String> {
    (result.unexplored.iter())
        .any(|u| u.because == LeftBecause::Budget)
        .then(|| {
            BisectPlan {
                budget: None,
                ..plan.clone()
            }
            .reproduce()
        })
}
