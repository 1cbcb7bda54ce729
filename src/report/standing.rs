//! What a located change point stands as once its fresh block has spoken, and how the reports
//! say it. Only a confirmed one is a change point and goes in the list of change points; the
//! others are said apart, each as what it is: located but unresolved (with the bound its block
//! gives), a candidate the block did not uphold, or a pair of byte-identical binaries (counted on
//! one line: a probe the search could not have told apart, never a change).

use super::bisect::ChangePointJson;
use super::html::esc;
use super::table::{ratio_pct, List};

/// A located change point's standing after its confirmation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Upheld by its fresh block: a change point.
    Confirmed,
    /// The fresh block neither confirmed nor refuted it at twice the cap: the search put a
    /// change here, of a size the block bounds but does not decide.
    Unresolved,
    /// The fresh block showed no change: a candidate, not a culprit (exit 3).
    NotUpheld,
    /// Parent and child load byte-identical binaries: never a change.
    IdenticalBinaries,
}

impl ChangePointJson {
    pub fn standing(&self) -> Standing {
        if self.identical_binaries {
            Standing::IdenticalBinaries
        } else if self.confirmed {
            Standing::Confirmed
        } else if self.unresolved {
            Standing::Unresolved
        } else {
            Standing::NotUpheld
        }
    }

    /// Confirmed: one of the change points a report lists.
    pub fn is_change_point(&self) -> bool {
        self.standing() == Standing::Confirmed
    }

    fn pair(&self) -> String {
        format!(
            "{}..{}",
            &self.parent[..10.min(self.parent.len())],
            self.info.short
        )
    }

    /// "a1..b2 (subject): +0.7% [-3.3%, +4.9%] on a fresh block of 60 samples each: a step of
    /// up to 4.9% may be here, its sign unknown".
    fn unresolved_line(&self) -> String {
        let (lo, hi) = self.ratio_ci;
        let largest = (lo - 1.0).abs().max((hi - 1.0).abs());
        format!(
            "{} ({}): {} [{}, {}] on a fresh block of {} samples each, neither confirmed nor refuted: a step of up to {:.1}% may be here",
            self.pair(),
            self.info.subject,
            ratio_pct(self.ratio),
            ratio_pct(lo),
            ratio_pct(hi),
            self.comparison.a.n,
            largest * 100.0
        )
    }

    fn not_upheld_line(&self) -> String {
        format!(
            "{} ({}): {} [{}, {}] on a fresh block of {} samples each, p(Yuen)={:.2e}",
            self.pair(),
            self.info.subject,
            ratio_pct(self.ratio),
            ratio_pct(self.ratio_ci.0),
            ratio_pct(self.ratio_ci.1),
            self.comparison.a.n,
            self.comparison.p_yuen
        )
    }
}

/// What a report says beside its list of change points: every located point that is not one.
#[derive(Debug, Default)]
pub struct Aside {
    unresolved: Vec<String>,
    not_upheld: Vec<String>,
    identical: Vec<String>,
}

const UNRESOLVED: &str =
    "left unresolved (the search located a change here; its fresh block bounds the size)";
const NOT_UPHELD: &str =
    "candidates not upheld (a fresh block of samples did not show the change; not culprits)";

impl Aside {
    pub fn of<'a>(points: impl IntoIterator<Item = &'a ChangePointJson>) -> Aside {
        let mut a = Aside::default();
        for p in points {
            match p.standing() {
                Standing::Confirmed => {}
                Standing::Unresolved => a.unresolved.push(p.unresolved_line()),
                Standing::NotUpheld => a.not_upheld.push(p.not_upheld_line()),
                Standing::IdenticalBinaries => a.identical.push(p.pair()),
            }
        }
        a
    }

    pub fn is_empty(&self) -> bool {
        self.unresolved.is_empty() && self.not_upheld.is_empty() && self.identical.is_empty()
    }

    /// The one line for located pairs whose binaries are identical.
    fn identical_line(&self) -> Option<String> {
        (!self.identical.is_empty()).then(|| {
            format!(
                "{} located pair(s) load byte-identical binaries, so they are not change points (the search's tests ended there on noise): {}",
                self.identical.len(),
                self.identical.join(", ")
            )
        })
    }

    fn sections(&self) -> impl Iterator<Item = (&'static str, &Vec<String>)> {
        [
            (UNRESOLVED, &self.unresolved),
            (NOT_UPHELD, &self.not_upheld),
        ]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
    }

    pub fn text(&self) -> String {
        let mut s = String::new();
        for (head, items) in self.sections() {
            s.push_str(&format!("{head}:\n{}", List::bullets(items.clone()).text()));
        }
        if let Some(l) = self.identical_line() {
            s.push_str(&format!("{l}\n"));
        }
        s
    }

    pub fn markdown(&self) -> String {
        let mut s = String::new();
        for (head, items) in self.sections() {
            let list = List::bullets(items.clone()).markdown();
            s.push_str(&format!("{}:\n\n{list}\n", cap(head)));
        }
        if let Some(l) = self.identical_line() {
            s.push_str(&format!("{}.\n\n", cap(&l)));
        }
        s
    }

    pub fn html(&self) -> String {
        let mut s = String::new();
        for (head, items) in self.sections() {
            let items = items.iter().map(|i| esc(i));
            s.push_str(&format!(
                "<p>{}:</p>\n{}",
                esc(&cap(head)),
                List::bullets(items).html()
            ));
        }
        if let Some(l) = self.identical_line() {
            s.push_str(&format!("<p>{}.</p>\n", esc(&cap(&l))));
        }
        s
    }
}

fn cap(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}
