//! The answer a bisect's text result opens with, read in ten seconds: the range's change, each
//! confirmed change point on a line, what was left unresolved and what may hide, the cost, the
//! method in one line and the command that reproduces it. The figures behind it are the details
//! (`-v`, [`super::text`]).

use super::*;
use crate::report::answer::{bound_clause, left_open_line, may_hide_sentence, Answer};
use crate::report::change_points::Row;

/// The bisect's answer (see [`Answer`]): its change points the largest share first.
pub(super) fn answer(j: &BisectReport) -> Answer<'_> {
    let mut after: Vec<String> = [unresolved_line(j), may_hide_line(j)]
        .into_iter()
        .flatten()
        .collect();
    if let Some(c) = &j.continue_with {
        after.push(format!("continue: {c}"));
    }
    after.push(format!("cost: {}", cost_clause(j)));
    let points = (j.ranked().into_iter())
        .filter(|c| c.is_change_point())
        .map(|c| Row {
            point: c,
            share: c.share,
            note: j.culprit_located(c),
        })
        .collect();
    Answer {
        head: head_line(j),
        points,
        several_threads: j.thread_counts.len() > 1,
        after,
        method: method_clause(j),
        more: "-v: the method and each change point's figures",
        reproduce: j.reproduce.clone(),
        unit: j.metric.unit(),
    }
}

/// The share of the range's change its change points explain from which nothing is said to be
/// missing.
const EXPLAINED_IN_FULL: f64 = 0.95;

/// "pkeyread:key=ec at 1 thread, 3.0.0..3.2.1 (6 commits): faster, -92.9% [...]; 3 change
/// points, 97% of it".
fn head_line(j: &BisectReport) -> String {
    let threads = if j.thread_counts.len() > 1 {
        format!("{} threads (figures at {})", j.threads_label(), j.threads)
    } else if j.threads == 1 {
        "1 thread".to_string()
    } else {
        format!("{} threads", j.threads)
    };
    let what = format!(
        "{} at {threads}, {} ({} commits)",
        j.tool, j.range, j.commits
    );
    let n = j.change_points().count();
    let ends = j.ends.ratio.pct();
    match (j.direction, n) {
        (Verdict::Same, _) if j.changes.is_empty() => format!(
            "{what}: no change of {:.1}% or more between the ends ({ends}); nothing to bisect",
            j.min_effect * 100.0
        ),
        (Verdict::Undecided, _) if j.changes.is_empty() => format!(
            "{what}: the ends stayed undecided at the sample cap ({ends}); nothing bisected"
        ),
        (_, 0) => format!(
            "{what}: {} {ends}, but no change point confirmed",
            change_word(j.direction)
        ),
        _ => format!(
            "{what}: {} {ends}; {n} change point{}{}",
            change_word(j.direction),
            if n == 1 { "" } else { "s" },
            // Said only where something is missing: shares are of a noisy ends' change.
            j.explained
                .filter(|e| e.is_finite() && *e < EXPLAINED_IN_FULL)
                .map(|e| format!(", {:.0}% of it", e * 100.0))
                .unwrap_or_default()
        ),
    }
}

/// What the search located but could not settle, the parts it left and time the counts do not
/// explain: one line, or none.
fn unresolved_line(j: &BisectReport) -> Option<String> {
    let unexplained = j.located.as_ref().and_then(|l| l.unexplained);
    left_open_line(&j.changes, &j.unexplored, unexplained)
}

fn may_hide_line(j: &BisectReport) -> Option<String> {
    j.resolution.as_ref().map(may_hide_sentence)
}

/// "6 builds (0 built now), 298 samples (298 taken now), 118 s".
fn cost_clause(j: &BisectReport) -> String {
    let (fresh, failed) = j.build_counts();
    let on = (j.placement.line())
        .map(|l| format!("; {l}"))
        .unwrap_or_default();
    format!(
        "{} build(s) ({fresh} built now{}), {} samples ({} taken now), {:.0} s{on}",
        j.builds.len(),
        if failed > 0 {
            format!(", {failed} failed")
        } else {
            String::new()
        },
        j.samples,
        j.samples_taken_now,
        j.wall_s
    )
}

/// How the change points were found and how far a false one is bounded, in one clause.
fn method_clause(j: &BisectReport) -> String {
    let how = match &j.located {
        Some(l) if l.searched_by == SearchedBy::Count => format!(
            "located by {}, each change point confirmed in time on a fresh block",
            l.metric.name()
        ),
        Some(l) => format!(
            "the counts did not move ({}), so searched in time, each change point confirmed on a fresh block",
            l.metric.name()
        ),
        None if j.metric != Metric::Time => format!(
            "bisected on {}, each change point confirmed on a fresh block",
            j.metric.name()
        ),
        None => "bisected in time, each change point confirmed on a fresh block".to_string(),
    };
    format!("{how}{}", bound_clause(j.tests, j.alpha))
}
