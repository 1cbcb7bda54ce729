//! The HTML result of a bisect.

use super::*;
use crate::report::Cell;

pub(super) fn direction_badge(v: Verdict) -> String {
    html::badge(match v {
        Verdict::Slower => "slowdown",
        Verdict::Faster => "speed-up",
        Verdict::Same => "no change",
        Verdict::Undecided => "undecided",
    })
}

impl HtmlSections for BisectReport {
    fn section(&self, links: &Links) -> Result<Section> {
        let j = self;
        let heading = format!(
            "bisect: <code>{}</code> at {} thread(s), <code>{}</code>",
            esc(&j.tool),
            j.threads_label(),
            esc(&j.range)
        );
        let mut tables = String::new();
        if j.change_points().any(|c| !c.per_threads.is_empty()) {
            tables.push_str(&per_threads_table_html(j, links));
        }
        tables.push_str(&steps_table_html(j, links));
        tables.push_str(&costs_html(j));
        let mut plots = String::new();
        for (t, svg) in j.profile_svgs()? {
            plots.push_str(&html::figure(
                &svg,
                &format!(
                    "{} at {t} thread(s): {u} (95% interval) of every tested commit along {}, each in the colour of the level it sits on between the change points; dashed red lines are change points, grey dotted ones located changes of unresolved size, shaded stretches were not tested.",
                    j.tool, j.range, u = j.steps_metric().unit()
                ),
            ));
        }
        Ok(Section {
            heading,
            summary: format!(
                "{}<details><summary>method and figures</summary>\n{}</details>\n",
                answer(j).html(links),
                summary_html(j, links)
            ),
            tables,
            plots,
            reproduce: html::command(&j.reproduce),
        })
    }
}

/// The section's opening prose: the ends, the resolution, and the change points as a list.
pub(super) fn summary_html(j: &BisectReport, links: &Links) -> String {
    let u = j.metric.unit();
    let mut summary = format!(
        "<p>Ends{}: {} {} {u} → {} {} {u}: {} {} (p = {:.2e}).</p>\n",
        j.at_threads(),
        links.html(&j.good.commit, &j.good.short),
        us(j.ends.a.mean),
        links.html(&j.bad.commit, &j.bad.short),
        us(j.ends.b.mean),
        direction_badge(j.direction),
        esc(&j.ends.ratio.pct()),
        j.ends.p_welch
    );
    if let Some(l) = j.located_sentence() {
        summary.push_str(&format!("<p>Search: {}</p>\n", esc(&l)));
    }
    if let Some(r) = &j.resolution {
        summary.push_str(&format!(
            "<p>Resolution: {}</p>\n",
            esc(&resolution_sentence(r))
        ));
    }
    if j.changes.is_empty() {
        summary.push_str(&format!(
            "<p>No change point: the ends do not differ by at least {:.1}% with significance.</p>\n",
            j.min_effect * 100.0
        ));
    } else {
        let items =
            (j.change_points()).map(|c| culprit_item_html(c, u, j.culprit_located(c), links));
        let list = List::numbered(items);
        if list.items.is_empty() {
            summary.push_str("<p>No change point confirmed.</p>\n");
        } else {
            summary.push_str(&list.html());
        }
        summary.push_str(&Aside::of(&j.changes).html());
    }
    let left = unexplored_text(j);
    if !left.is_empty() {
        summary.push_str(&format!("<pre>{}</pre>\n", esc(left.trim_start())));
    }
    summary
}

pub(super) fn culprit_item_html(
    c: &ChangePointJson,
    u: &str,
    located: Option<String>,
    links: &Links,
) -> String {
    let what = if c.range {
        format!(
            "the change is in {}..{} ({} skipped commit(s) between)",
            links.html(&c.parent, &c.parent[..10.min(c.parent.len())]),
            links.html(&c.info.commit, &c.info.short),
            c.skipped.len()
        )
    } else {
        format!("culprit {}", links.html(&c.info.commit, &c.info.short))
    };
    let located = located
        .map(|l| format!(" ({})", esc(&l)))
        .unwrap_or_default();
    format!(
        "{what}: <b>{}</b> ({}, {}): {} → {} {u}, <b>{}</b>{located}, p = {:.2e}{}",
        esc(&c.info.subject),
        esc(&c.info.dates()),
        esc(&c.info.author),
        us(c.parent_mean_us),
        us(c.culprit_mean_us),
        esc(&c.comparison.ratio.pct()),
        c.p_welch,
        culprit_badges_html(c)
    )
}

/// The badges after a change point: against the range, part of it, uncertain, and at which
/// thread counts it shows.
pub(super) fn culprit_badges_html(c: &ChangePointJson) -> String {
    let mut notes = String::new();
    if c.share < 0.0 {
        notes.push_str(&format!(
            " <span class=\"badge neutral\">{}</span>",
            esc(&format!(
                "{}, against the range's direction",
                change_word(c.comparison.verdict)
            ))
        ));
    } else if c.partial {
        notes.push_str(" <span class=\"badge neutral\">part of the range's change</span>");
    }
    if c.uncertain {
        notes.push_str(&format!(" {}", html::badge("uncertain")));
    }
    if !c.per_threads.is_empty() {
        let at = |affected: bool| {
            c.per_threads
                .iter()
                .filter(|e| e.affected == affected)
                .map(|e| e.threads.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        notes.push_str(&format!(
            " (threads affected: {}; not affected: {})",
            esc(&at(true)),
            esc(&at(false))
        ));
    }
    notes
}

pub(super) fn per_threads_table_html(j: &BisectReport, links: &Links) -> String {
    let rows = j.change_points().flat_map(|c| {
        c.per_threads.iter().map(move |e| {
            vec![
                Cell::commit(&c.info.commit, &c.info.short),
                e.threads.to_string().into(),
                us(e.a_mean_us).into(),
                us(e.b_mean_us).into(),
                e.comparison.ratio.pct().into(),
                (if e.affected {
                    "affected"
                } else {
                    "not affected"
                })
                .to_string()
                .into(),
            ]
        })
    });
    let mut s = String::from("<p>Change points per thread count:</p>\n");
    s.push_str(
        &Table::new(&[
            "commit",
            "threads",
            "parent µs/op",
            "commit µs/op",
            CHANGE_COLUMN,
            "",
        ])
        .numeric_from(2)
        .with_cells(links, rows)
        .html(),
    );
    s
}

/// Every tested commit in range order, with the order the search tested it in.
pub(super) fn steps_table_html(j: &BisectReport, links: &Links) -> String {
    let u = j.steps_metric().unit();
    let (tested, commits) = j.tested();
    let order = |id: &str| {
        j.steps
            .iter()
            .position(|s| s.info.commit == id)
            .map(|i| (i + 1).to_string())
            .unwrap_or_default()
    };
    let rows = tested.iter().map(|(x, s)| {
        vec![
            Cell::commit(&s.info.commit, &s.info.short),
            s.info.dates().into(),
            s.info.subject.clone().into(),
            s.verdict.clone().into(),
            x.to_string().into(),
            order(&s.info.commit).into(),
            s.n.to_string().into(),
            us(s.mean_us).into(),
            format!("{} – {}", us(s.ci95_us.0), us(s.ci95_us.1)).into(),
        ]
    });
    let mut s = format!(
        "<p>Tested commits in range order ({} of {commits}):</p>\n",
        tested.len()
    );
    s.push_str(
        &Table::new(&[
            "commit",
            "date",
            "subject",
            "verdict",
            "position",
            "tested as",
            "n",
            &format!("mean {u}"),
            "95% CI",
        ])
        .numeric_from(4)
        .with_cells(links, rows)
        .html(),
    );
    s
}

pub(super) fn costs_html(j: &BisectReport) -> String {
    let (fresh, failed) = j.build_counts();
    format!(
        "<p>Builds used: {} ({fresh} built now, {failed} failed); samples: {} ({} taken now); wall time {:.0} s; recipe <code>{}</code>; alpha per test {:.2e}.</p>\n",
        j.builds.len(),
        j.samples,
        j.samples_taken_now,
        j.wall_s,
        esc(&j.recipe),
        j.alpha_per_test
    )
}

pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        s.chars().take(max - 1).collect::<String>() + "…"
    }
}
