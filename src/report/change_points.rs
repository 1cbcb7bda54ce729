//! The change points as one table, a bisect's and a scan's alike, for the page and for a PR
//! comment: commit, date, subject, the parent's and the culprit's means, the change with the
//! interval of the test that confirmed it (and how the counts located it), that test's p and
//! the change's share. Written once, so the two results cannot drift apart again (they had
//! shown different tests' p-values under one heading).

use super::bisect::ChangePointJson;
use super::export::{esc, Links};
use super::{us, Table, CHANGE_COLUMN};

/// One change point as the table shows it.
pub struct Row<'a> {
    pub point: &'a ChangePointJson,
    /// Its signed share: of the range's change (a bisect), of the range's movement (a scan).
    pub share: f64,
    /// What its change does not say by itself: how the counts located it, or the tail that
    /// made it a change (`--tail`).
    pub note: Option<String>,
}

/// The rows as an HTML table (cells escaped, commits linked).
pub fn html(rows: &[Row], unit: &str, links: &Links) -> String {
    table(
        rows,
        unit,
        |c| links.html(&c.info.commit, &c.info.short),
        esc,
    )
    .numeric_from(3)
    .cells_html()
    .html()
}

/// The rows as a GitHub Markdown table (commits linked).
pub fn markdown(rows: &[Row], unit: &str, links: &Links) -> String {
    table(
        rows,
        unit,
        |c| links.markdown(&c.info.commit, &c.info.short),
        |s| s.to_string(),
    )
    .right(&[3, 4, 6, 7])
    .markdown()
}

/// The table with each row's commit cell from `commit` and every other text through `text`
/// (escaped for a page, as it is for Markdown).
fn table(
    rows: &[Row],
    unit: &str,
    commit: impl Fn(&ChangePointJson) -> String,
    text: impl Fn(&str) -> String,
) -> Table {
    let cells = rows.iter().map(|r| {
        let c = r.point;
        let range = if c.range { " (range)" } else { "" };
        let change = match &r.note {
            Some(note) => format!("{} ({note})", c.comparison.ratio.pct()),
            None => c.comparison.ratio.pct(),
        };
        vec![
            format!("{}{range}", commit(c)),
            text(&c.info.dates()),
            text(&c.info.subject),
            us(c.parent_mean_us),
            us(c.culprit_mean_us),
            text(&change),
            format!("{:.2e}", c.comparison.p_yuen),
            format!("{:+.0}%", r.share * 100.0),
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
    .with_rows(cells)
}
