//! The pieces every search's answer is made of (bisect and scan alike): the confirmed change
//! points one aligned line each, what was left open, what may hide, the error bound in a
//! clause.

use super::bisect::{ChangePointJson, UnexploredJson};
use super::change_points::{self, Row};
use super::export::esc;
use super::export::Links;
use super::standing::Standing;
use super::{largest_change, Table};
use crate::analysis::alpha::false_culprit_bound;
use crate::analysis::bisect::LeftBecause;
use crate::analysis::resolution::Resolution;
use crate::analysis::stats::RatioCi;

/// Change points as aligned lines: commit (or range), date, change with its interval, with
/// several thread counts where it changed, and subject.
pub fn change_point_rows<'a>(
    points: impl Iterator<Item = &'a ChangePointJson>,
    several_threads: bool,
    links: &Links,
) -> String {
    let rows = points.map(|c| {
        let commit = if c.range {
            format!("{}..{}", &c.parent[..10.min(c.parent.len())], c.info.short)
        } else {
            c.info.short.clone()
        };
        let tail = if c.comparison.by_tail {
            " in the tail"
        } else {
            ""
        };
        let mut row = vec![
            format!("  {commit}"),
            c.info.date.clone(),
            format!("{}{tail}", c.comparison.ratio.pct()),
        ];
        if several_threads {
            row.push(affected_at(c));
        }
        row.push(format!(
            "{}{}",
            c.info.subject,
            links.text_suffix(&c.info.commit)
        ));
        row
    });
    let columns = if several_threads { 5 } else { 4 };
    Table::new(&vec![""; columns]).with_rows(rows).body_text()
}

/// "at t=8,32": the thread counts where a change point's confirmation found the change.
fn affected_at(c: &ChangePointJson) -> String {
    let t: Vec<String> = (c.per_threads.iter())
        .filter(|e| e.affected)
        .map(|e| e.threads.to_string())
        .collect();
    if t.is_empty() {
        "at no single thread count".into()
    } else {
        format!("at t={}", t.join(","))
    }
}

/// One line of what a search left open: located points it could not settle, parts it left,
/// and time the counts' change points do not explain (`unexplained`); none when nothing is.
pub fn left_open_line<'a>(
    points: impl IntoIterator<Item = &'a ChangePointJson>,
    left: &[UnexploredJson],
    unexplained: Option<RatioCi>,
) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for c in points {
        let pair = format!("{}..{}", &c.parent[..10.min(c.parent.len())], c.info.short);
        match c.standing() {
            Standing::Unresolved => parts.push(format!("{pair} located, size unresolved")),
            Standing::NotUpheld => parts.push(format!("{pair} not upheld on a fresh block")),
            Standing::Confirmed | Standing::IdenticalBinaries => {}
        }
    }
    for u in left.iter().filter(|u| u.because != LeftBecause::Same) {
        let why = match u.because {
            LeftBecause::Budget => "budget spent".to_string(),
            LeftBecause::MaxChanges => "--max-changes reached".to_string(),
            LeftBecause::MinShare => "below --min-share".to_string(),
            _ => match u.ratio {
                Some(r) => format!("undecided, up to {:.0}%", largest_change(&r) * 100.0),
                None => "undecided".to_string(),
            },
        };
        parts.push(format!(
            "{}..{} ({why})",
            &u.from[..10.min(u.from.len())],
            &u.to[..10.min(u.to.len())]
        ));
    }
    if let Some(u) = unexplained.filter(|u| u.lo > 1.0 || u.hi < 1.0) {
        parts.push(format!(
            "the time moved {} beyond the change points the counts located",
            u.pct()
        ));
    }
    (!parts.is_empty()).then(|| format!("left open: {}", parts.join("; ")))
}

/// The smallest change the run could be sure to see: smaller ones may hide anywhere.
pub fn may_hide_sentence(r: &Resolution) -> String {
    if r.smallest > r.min_effect {
        format!(
            "may hide: a change under {:.1}% anywhere (what {:.1}% noise per sample resolves at {} samples)",
            r.smallest * 100.0,
            r.noise * 100.0,
            r.cap
        )
    } else {
        format!(
            "may hide: a change under --min-effect {:.1}% (not reported by design)",
            r.min_effect * 100.0
        )
    }
}

/// "; false culprits at most 5.0e-3" (what bounds them at `alpha`, see
/// [`false_culprit_bound`]), or nothing when no test ran.
pub fn bound_clause(tests: usize, alpha: f64) -> String {
    if tests > 0 {
        format!(
            "; false culprits at most {:.1e}",
            false_culprit_bound(alpha)
        )
    } else {
        String::new()
    }
}

/// A result's answer, built once and written in every format: the head line, its change points
/// (largest share first), one line each for what was left open, what may hide and what it cost,
/// the method in one clause, and the command that reproduces it. What the answer does not say
/// goes one level down: `-v` in text, "method and figures" in Markdown and on the page.
pub struct Answer<'a> {
    pub head: String,
    pub points: Vec<Row<'a>>,
    /// Change points are said at several thread counts (where each changed).
    pub several_threads: bool,
    pub after: Vec<String>,
    pub method: String,
    /// What `-v` adds to the text, said after the method.
    pub more: &'static str,
    pub reproduce: String,
    /// The unit of the means in the change-point table.
    pub unit: &'static str,
}

impl Answer<'_> {
    /// Aligned lines, at most a dozen for a handful of change points.
    pub fn text(&self, links: &Links) -> String {
        let mut s = format!("{}\n", self.head);
        let points = self.points.iter().map(|r| r.point);
        s.push_str(&change_point_rows(points, self.several_threads, links));
        for line in &self.after {
            s.push_str(&format!("{line}\n"));
        }
        s.push_str(&format!("method: {} ({})\n", self.method, self.more));
        s.push_str(&format!("reproduce: {}\n", self.reproduce));
        s
    }

    /// For a PR comment: the head in bold, the change points as a table, the lines after; the
    /// caller folds the figures under it.
    pub fn markdown(&self, links: &Links) -> String {
        let mut s = format!("**{}**\n\n", self.head);
        if !self.points.is_empty() {
            s.push_str(&change_points::table(&self.points, self.unit, links).markdown());
            s.push('\n');
        }
        for line in &self.after {
            s.push_str(&format!("{line}  \n"));
        }
        s.push_str(&format!("method: {} (details below)\n", self.method));
        s
    }

    /// For the page: the same, escaped.
    pub fn html(&self, links: &Links) -> String {
        let mut s = format!("<p><strong>{}</strong></p>\n", esc(&self.head));
        if !self.points.is_empty() {
            s.push_str(&change_points::table(&self.points, self.unit, links).html());
        }
        let lines: Vec<String> = (self.after.iter())
            .chain(std::iter::once(&format!("method: {}", self.method)))
            .map(|l| esc(l))
            .collect();
        s.push_str(&format!("<p>{}</p>\n", lines.join("<br>\n")));
        s
    }
}
