//! The change points as one table, a bisect's and a scan's alike, for the page and for a PR
//! comment: commit, date, subject, the parent's and the culprit's means, the change with the
//! interval of the test that confirmed it (and how the counts located it), that test's p and
//! the change's share. Written once, so the two results cannot drift apart again (they had
//! shown different tests' p-values under one heading).

use super::bisect::ChangePointJson;
use super::export::Links;
use super::{us, Cell, Table, CHANGE_COLUMN};

/// One change point as the table shows it.
pub struct Row<'a> {
    pub point: &'a ChangePointJson,
    /// Its signed share: of the range's change (a bisect), of the range's movement (a scan).
    pub share: f64,
    /// What its change does not say by itself: how the counts located it, or the tail that
    /// made it a change (`--tail`).
    pub note: Option<String>,
}

/// The rows as a table, commits linked by `links` where the format links.
pub fn table(rows: &[Row], unit: &str, links: &Links) -> Table {
    let cells = rows.iter().map(|r| {
        let c = r.point;
        let range = if c.range { " (range)" } else { "" };
        let change = match &r.note {
            Some(note) => format!("{} ({note})", c.comparison.ratio.pct()),
            None => c.comparison.ratio.pct(),
        };
        vec![
            Cell::commit(&c.info.commit, &format!("{}{range}", c.info.short)),
            c.info.dates().into(),
            c.info.subject.clone().into(),
            us(c.parent_mean_us).into(),
            us(c.culprit_mean_us).into(),
            change.into(),
            format!("{:.2e}", c.comparison.p_yuen).into(),
            format!("{:+.0}%", r.share * 100.0).into(),
        ]
    });
    Table::new(&[
        "commit",
        "date",
        "subject",
        &format!("parent {unit}"),
        &format!("commit {unit}"),
        CHANGE_COLUMN,
        "p (Yuen)",
        "share",
    ])
    .right(&[3, 4, 6, 7])
    .with_cells(links, cells)
}
