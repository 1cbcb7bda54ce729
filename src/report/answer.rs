//! The pieces every search's answer is made of (bisect and scan alike): the confirmed change
//! points one aligned line each, what was left open, what may hide, the error bound in a
//! clause.

use super::bisect::{ChangePointJson, UnexploredJson};
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
