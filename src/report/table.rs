//! The one table model every renderer fills (as hyperfine's `export/markup.rs`): headers,
//! rows of plain-text cells (some naming a commit, linked where the format links) and each
//! column's alignment, written once by the renderer as aligned text, a GitHub
//! Markdown table, an HTML `<table>` or CSV; and [`List`], its bulleted or numbered kin. Only
//! the syntax differs between formats, so a result's table is built once and each format is
//! one call; `--format` itself is chosen in [`super::export`].

use super::export::{esc, Csv, Export, Links, Markdown, Text};
use anyhow::Result;

/// How a column's cells line up: text pads them on that side, Markdown writes `---` or
/// `---:`, HTML gives them the `num` class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    /// Numbers.
    Right,
}

pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub align: Vec<Align>,
    /// Per row, per cell, the full id of the commit the cell names, and how commits are
    /// linked: Markdown and HTML link such a cell's text, text and CSV show it as it is.
    commits: Vec<Vec<Option<String>>>,
    links: Links,
}

/// A cell as [`Table::with_cells`] takes it: its text, and the commit it names, if any.
pub struct Cell {
    pub text: String,
    pub commit: Option<String>,
}

impl Cell {
    /// A cell naming commit `id`, showing `shown` (a short id).
    pub fn commit(id: &str, shown: &str) -> Cell {
        Cell {
            text: shown.to_string(),
            commit: Some(id.to_string()),
        }
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell { text, commit: None }
    }
}

impl Table {
    pub fn new(headers: &[&str]) -> Table {
        Table {
            headers: headers.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
            align: vec![Align::Left; headers.len()],
            commits: Vec::new(),
            links: Links::default(),
        }
    }

    /// Right-aligns every column from `col` on.
    pub fn numeric_from(mut self, col: usize) -> Table {
        for a in self.align.iter_mut().skip(col) {
            *a = Align::Right;
        }
        self
    }

    /// Right-aligns these columns.
    pub fn right(mut self, cols: &[usize]) -> Table {
        for &c in cols {
            self.align[c] = Align::Right;
        }
        self
    }

    /// Rows of [`Cell`]s, some naming commits, which `links` links in Markdown and HTML. Every
    /// cell is plain text, escaped by the format that writes it.
    pub fn with_cells(mut self, links: &Links, rows: impl IntoIterator<Item = Vec<Cell>>) -> Table {
        self.links = links.clone();
        for row in rows {
            self.commits.resize(self.rows.len(), Vec::new());
            self.commits
                .push(row.iter().map(|c| c.commit.clone()).collect());
            self.rows.push(row.into_iter().map(|c| c.text).collect());
        }
        self
    }

    /// The commit row `r`'s cell `i` names, if any.
    fn commit_of(&self, r: usize, i: usize) -> Option<&str> {
        self.commits.get(r)?.get(i)?.as_deref()
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    pub fn with_rows(mut self, rows: impl IntoIterator<Item = Vec<String>>) -> Table {
        self.rows.extend(rows);
        self
    }

    pub fn text(&self) -> String {
        let widths = self.widths(true);
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        let mut out = format!(
            "{}\n{}\n",
            self.text_line(&self.headers, &widths),
            rule.join("  ")
        );
        out.push_str(&self.body_text_at(&widths));
        out
    }

    /// The rows alone, aligned as [`Table::text`] aligns them, without headers: lines of
    /// prose whose columns line up.
    pub fn body_text(&self) -> String {
        self.body_text_at(&self.widths(false))
    }

    /// Each column's width: its widest cell, and its header's `with_headers`.
    fn widths(&self, with_headers: bool) -> Vec<usize> {
        let mut widths: Vec<usize> = (self.headers.iter())
            .map(|h| if with_headers { h.chars().count() } else { 0 })
            .collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
        widths
    }

    fn body_text_at(&self, widths: &[usize]) -> String {
        let mut out = String::new();
        for r in &self.rows {
            out.push_str(&self.text_line(r, widths));
            out.push('\n');
        }
        out
    }

    fn text_line(&self, cells: &[String], widths: &[usize]) -> String {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| match self.align[i] {
                Align::Right => format!("{c:>w$}", w = widths[i]),
                Align::Left => format!("{c:<w$}", w = widths[i]),
            })
            .collect();
        parts.join("  ").trim_end().to_string()
    }

    /// A GitHub Markdown table; a `|` in a cell is escaped (links and code spans included,
    /// as GitHub splits the row before it reads them).
    pub fn markdown(&self) -> String {
        let row = |cells: &[String]| {
            let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let rule: Vec<String> = (self.align.iter())
            .map(|a| match a {
                Align::Left => "---".to_string(),
                Align::Right => "---:".to_string(),
            })
            .collect();
        let mut out = row(&self.headers) + &format!("| {} |\n", rule.join(" | "));
        for (ri, r) in self.rows.iter().enumerate() {
            let cells: Vec<String> = (r.iter().enumerate())
                .map(|(i, c)| match self.commit_of(ri, i) {
                    Some(id) => self.links.markdown(id, c),
                    None => c.clone(),
                })
                .collect();
            out.push_str(&row(&cells));
        }
        out
    }

    pub fn html(&self) -> String {
        let cell = |tag: &str, i: usize, c: &str| {
            let class = match self.align[i] {
                Align::Right => " class=\"num\"",
                Align::Left => "",
            };
            format!("<{tag}{class}>{c}</{tag}>")
        };
        let mut s = String::from("<table>\n<thead><tr>");
        for (i, h) in self.headers.iter().enumerate() {
            s.push_str(&cell("th", i, &esc(h)));
        }
        s.push_str("</tr></thead>\n<tbody>\n");
        for (ri, row) in self.rows.iter().enumerate() {
            s.push_str("<tr>");
            for (i, c) in row.iter().enumerate() {
                let c = match self.commit_of(ri, i) {
                    Some(id) => self.links.html(id, c),
                    None => esc(c),
                };
                s.push_str(&cell("td", i, &c));
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</tbody>\n</table>\n");
        s
    }

    pub fn csv(&self) -> String {
        let field = |s: &str| {
            if s.contains([',', '"', '\n']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        };
        let mut out = String::new();
        for r in std::iter::once(&self.headers).chain(self.rows.iter()) {
            out.push_str(&r.iter().map(|c| field(c)).collect::<Vec<_>>().join(","));
            out.push('\n');
        }
        out
    }
}

/// A list whose items are already text, Markdown or HTML of the one format it is written in:
/// indented lines in text (`  1. item` when numbered), `- item` or `1. item` in Markdown,
/// `<ul>` or `<ol>` in HTML.
pub struct List {
    pub items: Vec<String>,
    pub numbered: bool,
}

impl List {
    pub fn bullets(items: impl IntoIterator<Item = String>) -> List {
        List {
            items: items.into_iter().collect(),
            numbered: false,
        }
    }

    pub fn numbered(items: impl IntoIterator<Item = String>) -> List {
        List {
            numbered: true,
            ..List::bullets(items)
        }
    }

    fn lines(&self, indent: &str, bullet: &str) -> String {
        let mut out = String::new();
        for (i, item) in self.items.iter().enumerate() {
            match self.numbered {
                true => out.push_str(&format!("{indent}{}. {item}\n", i + 1)),
                false => out.push_str(&format!("{indent}{bullet}{item}\n")),
            }
        }
        out
    }

    pub fn text(&self) -> String {
        self.lines("  ", "")
    }

    pub fn markdown(&self) -> String {
        self.lines("", "- ")
    }

    pub fn html(&self) -> String {
        let tag = if self.numbered { "ol" } else { "ul" };
        let items: String = (self.items.iter())
            .map(|i| format!("<li>{i}</li>\n"))
            .collect();
        format!("<{tag}>\n{items}</{tag}>\n")
    }
}

/// A result that is one table and nothing else (a list, `run`'s lines): its text, Markdown
/// and CSV are that table's.
pub trait Tabular {
    fn table(&self) -> Table;
}

impl<R: Tabular> Export<R> for Text {
    fn export(&self, r: &R) -> Result<String> {
        Ok(r.table().text())
    }
}

impl<R: Tabular> Export<R> for Markdown {
    fn export(&self, r: &R) -> Result<String> {
        Ok(r.table().markdown())
    }
}

impl<R: Tabular> Export<R> for Csv {
    fn export(&self, r: &R) -> Result<String> {
        Ok(r.table().csv())
    }
}

/// A ratio (new/old) as a signed change, `+15.2%`.
pub fn ratio_pct(ratio: f64) -> String {
    format!("{:+.1}%", (ratio - 1.0) * 100.0)
}

/// What an undecided comparison of a part's ends leaves open: `+4.0% [-8.0%, +17.0%]: a net
/// change of up to 17% may hide here (steps that cancel inside can be larger)`. The ends bound
/// their net change only: two steps inside that cancel are not bounded by it. Between adjacent
/// commits (`net` false) the one step there is the whole change.
pub fn may_hide(r: &crate::analysis::stats::RatioCi, net: bool) -> String {
    let largest = largest_change(r);
    format!(
        "{} [{}, {}]: a {}change of up to {:.0}% may hide here{}",
        ratio_pct(r.ratio),
        ratio_pct(r.lo),
        ratio_pct(r.hi),
        if net { "net " } else { "" },
        largest * 100.0,
        if net {
            " (steps that cancel inside can be larger)"
        } else {
            ""
        }
    )
}

/// The column of a change point's change with its interval. The interval is the one of the test
/// that decided it, at that test's confidence (1 − its level, which the confirmation's share of
/// `--alpha` split over its looks makes 99.9% or so), not a fixed 95%.
pub const CHANGE_COLUMN: &str = "change [interval of its test]";

/// The largest change an interval leaves possible, either way (0.17 for [-8%, +17%]).
pub fn largest_change(r: &crate::analysis::stats::RatioCi) -> f64 {
    (r.lo - 1.0).abs().max((r.hi - 1.0).abs())
}

/// What a part passed as the same bounds: `its ends' net change is +0.4% [-1.9%, +2.8%]
/// (steps that cancel inside are not bounded)`.
pub fn net_same(r: &crate::analysis::stats::RatioCi) -> String {
    format!(
        "passed as the same: its ends' net change is {} [{}, {}] (steps that cancel inside are not bounded)",
        ratio_pct(r.ratio),
        ratio_pct(r.lo),
        ratio_pct(r.hi)
    )
}

/// What a run resolved, in one sentence (text, Markdown and HTML alike).
pub fn resolution_sentence(r: &crate::analysis::resolution::Resolution) -> String {
    use crate::analysis::resolution::{NoiseBasis, POWER};
    let reach = if r.smallest <= r.min_effect {
        format!(
            "a change down to --min-effect ({:.1}%) is found",
            r.min_effect * 100.0
        )
    } else {
        format!("a change of {:.1}% or more is found", r.smallest * 100.0)
    };
    let basis = match r.basis {
        NoiseBasis::Tests => format!(
            "the upper quartile of the standard errors of the {} tests that decided, paired where they had pairs",
            r.subjects
        ),
        NoiseBasis::Samples => format!("the median of {} commit(s)' samples", r.subjects),
    };
    let unseen = if r.smallest > r.min_effect {
        format!(
            "; smaller ones (down to --min-effect, {:.1}%) may hide anywhere in the range unseen",
            r.min_effect * 100.0
        )
    } else {
        String::new()
    };
    format!(
        "at this run's noise ({:.1}% per sample: {basis}), {reach} with at least {:.0}% probability per comparison at the cap of {} samples per side{unseen}",
        r.noise * 100.0,
        POWER * 100.0,
        r.cap
    )
}

/// How many rounds a comparison's paired test had (`  paired on 12 rounds`), or nothing when
/// it ran unpaired.
pub fn pairs_note(c: &crate::analysis::stats::Comparison) -> String {
    match c.pairs {
        0 => String::new(),
        n => format!("  paired on {n} rounds"),
    }
}

/// What the tail check (`--tail`) counted, when it ran: the share of each side's processes that
/// were slow, and whether the verdict is its (the trimmed ratio, the headline, does not count
/// the slow processes).
pub fn tail_note(c: &crate::analysis::stats::Comparison) -> Option<String> {
    let t = c.tail?;
    let how = if t.paired {
        "rounds with one side far slower"
    } else {
        "processes above the pooled threshold"
    };
    Some(format!(
        "{}slow {how}: {:.1}% of the new side's against {:.1}% of the old's (p={:.2e})",
        if c.by_tail {
            "a change in the tail: "
        } else {
            "tail: "
        },
        t.share(1) * 100.0,
        t.share(0) * 100.0,
        t.p
    ))
}

/// µs/op with precision that suits its size (0.0123, 1.234, 290.1).
pub fn us(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 100_000.0 {
        // instructions/op
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demo() -> Table {
        let mut t = Table::new(&["tool", "threads", "mean"]).numeric_from(1);
        t.push(vec!["pkeyread".into(), "1".into(), "290.1".into()]);
        t.push(vec!["a,b|c".into(), "32".into(), "0.5800".into()]);
        t
    }

    #[test]
    fn an_undecided_interval_says_what_may_hide() {
        let r = crate::analysis::stats::RatioCi {
            ratio: 0.97,
            lo: 0.81,
            hi: 1.12,
        };
        assert_eq!(
            may_hide(&r, true),
            "-3.0% [-19.0%, +12.0%]: a net change of up to 19% may hide here (steps that cancel inside can be larger)"
        );
        assert_eq!(ratio_pct(1.152), "+15.2%");
    }

    #[test]
    fn renders_text_markdown_html_csv() {
        let t = demo();
        assert_eq!(
            t.text(),
            "tool      threads    mean\n--------  -------  ------\npkeyread        1   290.1\na,b|c          32  0.5800\n"
        );
        assert_eq!(
            t.markdown(),
            "| tool | threads | mean |\n| --- | ---: | ---: |\n| pkeyread | 1 | 290.1 |\n| a,b\\|c | 32 | 0.5800 |\n"
        );
        assert_eq!(
            t.html(),
            "<table>\n<thead><tr><th>tool</th><th class=\"num\">threads</th><th class=\"num\">mean</th></tr></thead>\n<tbody>\n<tr><td>pkeyread</td><td class=\"num\">1</td><td class=\"num\">290.1</td></tr>\n<tr><td>a,b|c</td><td class=\"num\">32</td><td class=\"num\">0.5800</td></tr>\n</tbody>\n</table>\n"
        );
        assert_eq!(
            t.csv(),
            "tool,threads,mean\npkeyread,1,290.1\n\"a,b|c\",32,0.5800\n"
        );
    }

    /// A cell naming a commit is a link where the format links (escaped like every cell on
    /// the page) and its text elsewhere; plain rows beside it stay plain.
    #[test]
    fn commit_cells_are_links_in_markdown_and_html_only() {
        let links = Links::new(Some("https://x.test/c/{sha}")).unwrap();
        let id = "0123456789abcdef0123456789abcdef01234567";
        let t = Table::new(&["commit", "subject"])
            .with_rows([vec!["-".to_string(), "plain".to_string()]])
            .with_cells(
                &links,
                [vec![
                    Cell::commit(id, "0123456789"),
                    "a<b".to_string().into(),
                ]],
            );
        assert_eq!(
            t.text(),
            "commit      subject\n----------  -------\n-           plain\n0123456789  a<b\n"
        );
        assert_eq!(t.csv(), "commit,subject\n-,plain\n0123456789,a<b\n");
        let md = t.markdown();
        assert!(
            md.ends_with(&format!(
                "| [`0123456789`](https://x.test/c/{id}) | a<b |\n"
            )),
            "{md}"
        );
        assert!(md.contains("| - | plain |\n"), "{md}");
        let html = t.html();
        assert!(html.contains(&format!("<tr><td><a href=\"https://x.test/c/{id}\"><code>0123456789</code></a></td><td>a&lt;b</td></tr>")), "{html}");
        assert!(html.contains("<tr><td>-</td><td>plain</td></tr>"), "{html}");
    }

    #[test]
    fn lists_in_every_format() {
        let b = List::bullets(["a".to_string(), "b".to_string()]);
        assert_eq!(b.text(), "  a\n  b\n");
        assert_eq!(b.markdown(), "- a\n- b\n");
        assert_eq!(b.html(), "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n");
        let n = List::numbered(["a".to_string(), "b".to_string()]);
        assert_eq!(n.text(), "  1. a\n  2. b\n");
        assert_eq!(n.markdown(), "1. a\n2. b\n");
        assert_eq!(n.html(), "<ol>\n<li>a</li>\n<li>b</li>\n</ol>\n");
    }

    #[test]
    fn number_precision_follows_magnitude() {
        assert_eq!(us(290.123), "290.1");
        assert_eq!(us(1.23456), "1.235");
        assert_eq!(us(0.58), "0.5800");
        assert_eq!(us(f64::NAN), "-");
    }
}
