//! What a search had confirmed when a signal stopped it (a CI `timeout`, Ctrl-C): printed in
//! the format asked before the run exits 130/143, so the answer it had is not lost. Only
//! confirmed change points: the search did not finish, so nothing is said of the rest.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::answer::change_point_rows;
use super::bisect::ChangePointJson;
use super::export::{formats, Export, Jsonl, Links, Markdown, Text, Versioned};
use super::html::{esc, HtmlSections, Section};
use super::{Table, CHANGE_COLUMN};

formats!(InterruptedFormat for InterruptedReport { Text, Markdown, Json, Html });

pub const INTERRUPTED_KIND: &str = "perfbisect-interrupted";

/// A search stopped by a signal, with the change points it had confirmed.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InterruptedReport {
    /// [`INTERRUPTED_KIND`].
    pub kind: String,
    /// `bisect` or `scan`.
    pub search: String,
    pub tool: String,
    pub range: String,
    /// The change points confirmed before the stop, in the order they were confirmed.
    pub changes: Vec<ChangePointJson>,
    /// The command that resumes the search from the cache.
    pub resume: String,
}

impl InterruptedReport {
    pub fn new(search: &str, tool: &str, range: &str, changes: Vec<ChangePointJson>) -> Self {
        InterruptedReport {
            kind: INTERRUPTED_KIND.into(),
            search: search.into(),
            tool: tool.into(),
            range: range.into(),
            changes,
            resume: String::new(),
        }
    }

    /// "interrupted: the bisect of pkeyread over A..B stopped before it finished; 1 change
    /// point confirmed before the stop".
    fn head(&self) -> String {
        let n = self.changes.len();
        format!(
            "interrupted: the {} of {} over {} stopped before it finished; {}",
            self.search,
            self.tool,
            self.range,
            match n {
                0 => "no change point confirmed before the stop".to_string(),
                1 => "1 change point confirmed before the stop".to_string(),
                n => format!("{n} change points confirmed before the stop"),
            }
        )
    }

    /// With `--format jsonl`: one event, `interrupted`, after those the search told as it went.
    pub fn jsonl(&self) -> Result<String> {
        Jsonl::event("interrupted", &Versioned::new(self))
    }

    /// The text and Markdown forms' closing line.
    fn resume_line(&self) -> String {
        format!(
            "resume (builds and samples come from the cache): {}",
            self.resume
        )
    }
}

impl Export<InterruptedReport> for Text {
    fn export(&self, r: &InterruptedReport) -> Result<String> {
        let rows = change_point_rows(r.changes.iter(), false, &Links::default());
        Ok(format!("{}\n{rows}{}\n", r.head(), r.resume_line()))
    }
}

impl Export<InterruptedReport> for Markdown {
    fn export(&self, r: &InterruptedReport) -> Result<String> {
        let mut s = format!("**{}**\n\n", r.head());
        if !r.changes.is_empty() {
            s.push_str(&(table(r).markdown() + "\n"));
        }
        s.push_str(&format!("{}\n", r.resume_line()));
        Ok(s)
    }
}

impl HtmlSections for InterruptedReport {
    fn section(&self, _links: &Links) -> Result<Section> {
        Ok(Section {
            heading: format!("interrupted: <code>{}</code>", esc(&self.range)),
            summary: format!("<p>{}.</p>\n", esc(&self.head())),
            tables: if self.changes.is_empty() {
                String::new()
            } else {
                table(self).html()
            },
            plots: String::new(),
            reproduce: super::html::command(&self.resume),
        })
    }
}

/// The confirmed change points as a table: commit, date, change, subject.
fn table(r: &InterruptedReport) -> Table {
    let rows = r.changes.iter().map(|c| {
        vec![
            c.info.short.clone(),
            c.info.date.clone(),
            c.comparison.ratio.pct(),
            c.info.subject.clone(),
        ]
    });
    Table::new(&["commit", "date", CHANGE_COLUMN, "subject"]).with_rows(rows)
}
