//! The text result of a scan.

use super::*;
use crate::report::answer::{left_open_line, Answer};

/// The answer, read in ten seconds: what changed where and by how much, what was left open and
/// may hide, the cost, the method in one line and the command that reproduces it.
pub(super) fn text(r: &ScanReport, links: &Links) -> String {
    answer(r).text(links)
}

/// The scan's answer (see [`Answer`]): its change points by position.
pub(super) fn answer(r: &ScanReport) -> Answer<'_> {
    let found = match r.change_points().count() {
        0 => "no change point confirmed".to_string(),
        1 => "1 change point".to_string(),
        n => format!("{n} change points"),
    };
    let threads = match r.threads {
        1 => "1 thread".to_string(),
        t => format!("{t} threads"),
    };
    let unexplained = r.located.as_ref().and_then(|l| l.unexplained);
    let points = r.changes.iter().map(|c| &c.point);
    // The parts each interval's search left, and those the search in time left.
    let left: Vec<UnexploredJson> = (r.intervals.iter())
        .flat_map(|i| i.left.iter())
        .chain(&r.left)
        .cloned()
        .collect();
    let after = [left_open_line(points, &left, unexplained), r.may_hide()]
        .into_iter()
        .flatten()
        .chain(std::iter::once(r.cost()))
        .collect();
    Answer {
        head: format!(
            "{} at {threads}, {} ({} commits): {found}",
            r.tool, r.range, r.commits
        ),
        points: r.change_rows(),
        several_threads: false,
        after,
        method: r.method(),
        more: "-v: the method, the grid and its intervals",
        reproduce: r.reproduce.clone(),
        unit: r.metric.unit(),
    }
}

/// The figures behind the answer (`-v`): the grid, its levels and intervals, the search and
/// what it resolved, each change point's test, what was left and the error control.
pub(super) fn details(r: &ScanReport, links: &Links) -> String {
    let mut s = grid_text(r);
    s.push_str(&levels_and_intervals_text(r));
    if let Some(l) = &r.located {
        s.push_str(&format!("\nsearch: {}\n", l.sentence()));
    }
    if let Some(res) = &r.resolution {
        s.push_str(&format!("\nresolution: {}\n", resolution_sentence(res)));
    }
    s.push_str(&changes_text(r, links));
    s.push('\n');
    if let Some(n) = r.hidden_note() {
        s.push_str(&format!("note: {n}\n"));
    }
    for n in &r.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    let left = r.left_lines();
    if !left.is_empty() {
        s.push_str(&format!("{LEFT_IN_TIME}:\n{}", List::bullets(left).text()));
    }
    s.push_str(&r.error_control());
    s.push('\n');
    s
}

pub(super) fn grid_text(r: &ScanReport) -> String {
    let mut s = String::from("\ngrid (old end first):\n");
    let u = r.grid_metric().unit_short();
    for g in &r.grid {
        let level = match (g.mean_us, g.ci95_us) {
            (Some(m), Some(ci)) => {
                format!(
                    "n={:<3} {:>10} {u} [{}, {}]",
                    g.n,
                    us(m),
                    us(ci.0),
                    us(ci.1)
                )
            }
            _ => format!("n={:<3} {:>10}", g.n, "-"),
        };
        let moved = if g.moved_by != 0 {
            format!(" (moved {:+} to a built commit)", g.moved_by)
        } else {
            String::new()
        };
        let seg = g
            .segment
            .map(|i| format!("level {}", i + 1))
            .unwrap_or_else(|| format!("skipped: {}", g.skipped_text()));
        s.push_str(&format!(
            "  #{:<5} {} {}  {}  {}{}\n",
            g.index, g.info.short, g.info.date, level, seg, moved
        ));
    }
    s
}

/// What the step fit made of the grid: its levels, and each interval between grid points.
pub(super) fn levels_and_intervals_text(r: &ScanReport) -> String {
    let u = r.grid_metric().unit_short();
    let levels = r.segments.iter().enumerate().map(|(i, g)| {
        format!(
            "level {}: {}..{} ({} point(s))  {} {u} [{}, {}]",
            i + 1,
            g.first_short,
            g.last_short,
            g.points,
            us(g.level_us),
            us(g.ci95_us.0),
            us(g.ci95_us.1)
        )
    });
    let intervals = r.intervals.iter().map(|iv| {
        format!(
            "{}..{} ({} commits, fitted {}): {}",
            iv.lo_short,
            iv.hi_short,
            iv.hi - iv.lo,
            ratio_pct(iv.fitted_ratio),
            iv.outcome
        )
    });
    format!(
        "\nfitted levels:\n{}\ngrid intervals:\n{}",
        List::bullets(levels).text(),
        List::bullets(intervals).text()
    )
}

/// The change points by position, then by size, then which undo which.
pub(super) fn changes_text(r: &ScanReport, links: &Links) -> String {
    let mut s = String::from("\nchange points (by position):\n");
    let lines = (r.change_points())
        .map(|c| ScanReport::change_line(c, &links.text_suffix(&c.point.info.commit)));
    let lines = List::numbered(lines);
    if lines.items.is_empty() {
        s.push_str("  none: the grid's points lie on one level, or no search confirmed a change\n");
    }
    s.push_str(&lines.text());
    s.push_str(&r.aside().text());
    if !r.by_share.is_empty() {
        let parts: Vec<String> = r
            .by_share
            .iter()
            .map(|&i| {
                let c = &r.changes[i];
                format!(
                    "{} at {} ({:.0}%)",
                    ratio_pct(c.point.ratio),
                    c.point.info.short,
                    c.share_of_movement.abs() * 100.0
                )
            })
            .collect();
        s.push_str(&format!("\nlasting effect first: {}\n", parts.join(", ")));
    }
    for c in &r.cancels {
        s.push_str(&format!("cancelling: {}\n", c.text));
    }
    for x in &r.series {
        s.push_str(&format!("series: {}\n", x.text));
    }
    s
}
