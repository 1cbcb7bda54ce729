//! The text result of a bisect.

use super::*;
use crate::analysis::alpha::{false_culprit_bound, RoutingLevel};

pub(super) fn direction_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Slower => "slowdown (regression)",
        Verdict::Faster => "speed-up (fix)",
        Verdict::Same => "no change",
        Verdict::Undecided => "undecided",
    }
}

/// The figures behind the answer (`-v`): the ends, how the range was searched and what it
/// resolved, each change point's comparison, what was left, the costs and the error control.
pub(super) fn details_text(j: &BisectReport, links: &Links) -> String {
    let mut s = text_ends(j);
    let culprits = j.ranked().into_iter().filter(|c| c.is_change_point());
    for (i, c) in culprits.enumerate() {
        s.push_str(&culprit_text(i + 1, c, j, links));
    }
    let aside = Aside::of(&j.changes);
    if !aside.is_empty() {
        s.push('\n');
        s.push_str(&aside.text());
    }
    s.push_str(&unexplored_text(j));
    s.push_str(&costs_text(j));
    s.push_str(&error_control_text(j));
    s
}

/// The ends' comparison, and why there is nothing to bisect when they do not differ.
pub(super) fn text_ends(j: &BisectReport) -> String {
    let u = j.metric.unit_ascii();
    let mut s = format!(
        "\nends{}: {} {} {u} (n={}) -> {} {} {u} (n={}): {} {}, p(Yuen)={:.2e}\n",
        j.at_threads(),
        j.good.short,
        us(j.ends.a.mean),
        j.ends.a.n,
        j.bad.short,
        us(j.ends.b.mean),
        j.ends.b.n,
        direction_word(j.direction),
        j.ends.ratio.pct(),
        j.ends.p_yuen
    );
    if let Some(t) = crate::report::table::tail_note(&j.ends) {
        s.push_str(&format!("  {t}\n"));
    }
    if !j.ends_per_threads.is_empty() {
        s.push_str(&format!(
            "ends per thread count (the figures of the ends, the change points and the steps are at {} thread(s), whose ends moved most):\n",
            j.threads
        ));
        let ends = (j.ends_per_threads.iter()).map(|e| e.text().replace("affected", "changed"));
        s.push_str(&List::bullets(ends).text());
    }
    if let Some(l) = j.located_sentence() {
        s.push_str(&format!("search: {l}\n"));
    }
    if let Some(r) = &j.resolution {
        s.push_str(&format!("resolution: {}\n", resolution_sentence(r)));
    }
    if !j.changes.is_empty() && !j.changes.iter().any(|c| c.is_change_point()) {
        s.push_str("result: no change point confirmed (what the search located is listed below, with what it leaves open)\n");
    } else if j.changes.is_empty() {
        s.push_str(&format!(
            "result: the ends do not differ by at least {:.1}% with significance ({}); nothing to bisect\n",
            j.min_effect * 100.0,
            match j.direction {
                Verdict::Same => "their net change is within that margin; steps that cancel inside are not bounded",
                _ => "undecided at the sample cap: more samples or a larger --min-effect may decide",
            }
        ));
    }
    s
}

/// One change point as the text report's numbered result: what it is, how far to trust it,
/// the commit, and the figures behind it.
pub(super) fn culprit_text(
    number: usize,
    c: &ChangePointJson,
    j: &BisectReport,
    links: &Links,
) -> String {
    let u = j.metric.unit_ascii();
    let head = if c.range {
        format!(
            "the change is in one of {}..{} ({} skipped commit(s) between)",
            &c.parent[..10],
            &c.info.commit[..10],
            c.skipped.len()
        )
    } else {
        format!(
            "culprit {}{}",
            c.info.commit,
            links.text_suffix(&c.info.commit)
        )
    };
    let mut s = format!(
        "\nresult {number}: {head}{}{}\n",
        share_text(c),
        if c.uncertain { " [uncertain]" } else { "" }
    );
    s.push_str(&format!(
        "  author:  {}\n  date:    {}\n  subject: {}\n",
        c.info.author,
        c.info.dates(),
        c.info.subject
    ));
    s.push_str(&format!(
        "  parent{} {} {} {u} (n={}) -> {} {} {u} (n={})\n",
        j.at_threads(),
        &c.parent[..10],
        us(c.parent_mean_us),
        c.comparison.a.n,
        &c.info.commit[..10],
        us(c.culprit_mean_us),
        c.comparison.b.n
    ));
    s.push_str(&format!(
        "  change:  {}  p(Yuen)={:.2e}  p(Welch)={:.2e}  p(Mann-Whitney)={:.2e}{}{}{}\n",
        c.comparison.ratio.pct(),
        c.comparison.p_yuen,
        c.p_welch,
        c.p_mwu,
        pairs_note(&c.comparison),
        if c.comparison.tests_disagree {
            "  (the rank test disagrees: check for outliers)"
        } else {
            ""
        },
        size_note(&c.comparison, j.min_effect)
    ));
    if let Some(note) = crate::report::table::tail_note(&c.comparison) {
        s.push_str(&format!("  {note}\n"));
    }
    if let (Some(l), Some(note)) = (&c.located, j.culprit_located(c)) {
        s.push_str(&format!(
            "  {note}  (parent n={}, culprit n={})\n",
            l.a.n, l.b.n
        ));
    }
    if !c.per_threads.is_empty() {
        s.push_str("  per thread count:\n");
        for e in &c.per_threads {
            s.push_str(&format!("    {}\n", e.text()));
        }
    }
    s
}

/// How much of the range's change a change point carries, when it is not simply all of it.
pub(super) fn share_text(c: &ChangePointJson) -> String {
    if c.comparison.by_tail {
        // A share of the ends' trimmed ratio means nothing for a change the ratio does not show.
        " [a change in the tail]".to_string()
    } else if c.share.is_finite() && c.share < 0.0 {
        format!(
            " [{}, against the range's direction: {:.0}% of its change]",
            change_word(c.comparison.verdict),
            c.share * 100.0
        )
    } else if c.partial && c.share.is_finite() {
        format!(" [part of the range's change: {:.0}%]", c.share * 100.0)
    } else if c.partial {
        " [part of the range's change]".to_string()
    } else {
        String::new()
    }
}

/// What the search spent: builds, samples, time, where it ran, the probes it saved, its notes.
pub(super) fn costs_text(j: &BisectReport) -> String {
    let (fresh, failed) = j.build_counts();
    let mut s = format!(
        "\nbuilds used: {} ({} built now, {} failed)  samples: {} ({} taken now)  wall time: {:.0} s\n",
        j.builds.len(),
        fresh,
        failed,
        j.samples,
        j.samples_taken_now,
        j.wall_s
    );
    if let Some(line) = j.placement.line() {
        s.push_str(&format!("{line}\n"));
    }
    if j.shared_probes > 0 {
        s.push_str(&format!(
            "probes saved: {} tested commit(s) load byte-identical binaries to another tested commit and shared its samples\n",
            j.shared_probes
        ));
    }
    for n in &j.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}

/// What bounds false culprits (the confirmations' allocation, whatever the run found), which
/// tests lie outside that bound and at what level, and what the tests made add up to.
pub(super) fn error_control_text(j: &BisectReport) -> String {
    if j.tests == 0 {
        return String::new();
    }
    let bound = false_culprit_bound(j.alpha);
    let over = if j.family_alpha > j.alpha {
        ": OVER BUDGET, a defect"
    } else {
        ""
    };
    let mut s = format!(
        "error control: false culprits at most {bound:.1e} per run: every confirmation it may make shares at most half of --alpha {}, the j-th at 6/(π²j²) of that share (the first --max-changes alike), each on a fresh block taken after every sample the run read before it\n",
        j.alpha
    );
    let (routing, threads_tail) = match j.routing {
        RoutingLevel::Family => (
            format!("routing decisions (the ends, candidates, sub-range checks) share the other half, in blocks whose levels halve; {} tests made, their levels add up to {:.2e}{over}", j.tests, j.family_alpha),
            ": a change at any of them is found within --alpha",
        ),
        level => (
            format!("routing decisions (the ends, candidates, sub-range checks) at {level} each, outside it: a wrong turn costs samples or leaves a part undecided with its bound, never a culprit on its own; {} tests made, the confirmations' levels add up to {:.2e}{over}", j.tests, j.family_alpha),
            "",
        ),
    };
    s.push_str(&format!("  {routing}\n"));
    let placed = j
        .merge_base
        .is_some()
        .then_some("the merge base's placement (at --alpha)");
    let auto = (j.notes.iter().any(|n| n.starts_with(AUTO_NOTE)))
        .then_some("--locate auto's look at the ends");
    let uncounted: Vec<&str> = placed.into_iter().chain(auto).collect();
    if !uncounted.is_empty() {
        s.push_str(&format!(
            "  routing too, in every mode, and counted nowhere: {}\n",
            uncounted.join(" and ")
        ));
    }
    s.push_str(&format!(
        "  not in it: a sub-range passed as the same (its ends' net change within +-min-effect at {} each) can hide steps that cancel, never report one\n",
        j.alpha
    ));
    if j.thread_counts.len() > 1 {
        let k = j.thread_counts.len();
        s.push_str(&format!(
            "  every decision tests each of the {k} thread counts at 1/{k} of its level (Bonferroni){threads_tail}\n"
        ));
    }
    s
}

/// What the search left and how to go on: empty when it searched everything.
pub(super) fn unexplored_text(j: &BisectReport) -> String {
    if j.unexplored.is_empty() {
        return String::new();
    }
    let mut s = String::new();
    if let Some(e) = j.explained {
        let n = j.changes.iter().filter(|c| c.confirmed).count();
        s.push_str(&format!(
            "\nexplained: {:.0}% of the range's change by {n} confirmed change point(s)\n",
            e * 100.0
        ));
    }
    for (because, why) in [
        (LeftBecause::Budget, "the time budget was spent"),
        (LeftBecause::MaxChanges, "--max-changes was reached"),
        (LeftBecause::MinShare, "below --min-share"),
        (
            LeftBecause::Undecided,
            "its ends were undecided at --max-samples",
        ),
        (
            LeftBecause::Same,
            "passed as the same: only the net change between its ends is bounded",
        ),
    ] {
        let left = List::bullets(
            (j.unexplored.iter())
                .filter(|u| u.because == because)
                .map(UnexploredJson::text),
        );
        if !left.items.is_empty() {
            s.push_str(&format!("left unexplored ({why}):\n{}", left.text()));
        }
    }
    if let Some(c) = &j.continue_with {
        s.push_str(&format!(
            "continue (builds and samples come from the cache): {c}\n"
        ));
    }
    s
}
