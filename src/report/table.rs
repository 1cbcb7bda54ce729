//! Rendering: aligned terminal tables, Markdown (pasted into GitHub issues),
//! CSV and JSON.

use anyhow::{bail, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Text,
    Markdown,
    Json,
    Csv,
}

pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Columns right-aligned in text output (numbers).
    pub numeric: Vec<bool>,
}

impl Table {
    pub fn new(headers: &[&str]) -> Table {
        Table {
            headers: headers.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
            numeric: vec![false; headers.len()],
        }
    }

    pub fn numeric_from(mut self, col: usize) -> Table {
        for n in self.numeric.iter_mut().skip(col) {
            *n = true;
        }
        self
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    pub fn text(&self) -> String {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
        let line = |cells: &[String]| -> String {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    if self.numeric[i] {
                        format!("{c:>w$}", w = widths[i])
                    } else {
                        format!("{c:<w$}", w = widths[i])
                    }
                })
                .collect();
            parts.join("  ").trim_end().to_string()
        };
        let mut out = line(&self.headers);
        out.push('\n');
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        out.push_str(&rule.join("  "));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        out
    }

    pub fn markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|");
        let mut out = format!(
            "| {} |\n",
            self.headers
                .iter()
                .map(|h| esc(h))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        let align: Vec<&str> = self
            .numeric
            .iter()
            .map(|n| if *n { "---:" } else { "---" })
            .collect();
        out.push_str(&format!("| {} |\n", align.join(" | ")));
        for r in &self.rows {
            out.push_str(&format!(
                "| {} |\n",
                r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
            ));
        }
        out
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

    pub fn render(&self, f: Format) -> Result<String> {
        Ok(match f {
            Format::Table | Format::Text => self.text(),
            Format::Markdown => self.markdown(),
            Format::Csv => self.csv(),
            Format::Json => bail!("internal: JSON is rendered from data, not from a table"),
        })
    }
}

/// A ratio (new/old) as a signed change, `+15.2%`.
pub fn ratio_pct(ratio: f64) -> String {
    format!("{:+.1}%", (ratio - 1.0) * 100.0)
}

/// What an undecided comparison leaves open: `+4.0% [-8.0%, +17.0%]: a change of up to 17%
/// may hide here`.
pub fn may_hide(r: &crate::analysis::stats::RatioCi) -> String {
    let largest = (r.lo - 1.0).abs().max((r.hi - 1.0).abs());
    format!(
        "{} [{}, {}]: a change of up to {:.0}% may hide here",
        ratio_pct(r.ratio),
        ratio_pct(r.lo),
        ratio_pct(r.hi),
        largest * 100.0
    )
}

/// What a run resolved, in one sentence (text, Markdown and HTML alike).
pub fn resolution_sentence(r: &crate::analysis::resolution::Resolution) -> String {
    let reach = if r.smallest <= r.min_effect {
        format!(
            "changes down to --min-effect ({:.1}%)",
            r.min_effect * 100.0
        )
    } else {
        format!(
            "changes of {:.1}% or more; smaller ones (down to --min-effect, {:.1}%) may hide anywhere in the range unseen",
            r.smallest * 100.0,
            r.min_effect * 100.0
        )
    };
    format!(
        "at this run's noise ({:.1}% per sample, the median of {} commit(s)), a comparison at the cap of {} samples per side resolves {reach}",
        r.noise * 100.0,
        r.subjects,
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
            may_hide(&r),
            "-3.0% [-19.0%, +12.0%]: a change of up to 19% may hide here"
        );
        assert_eq!(ratio_pct(1.152), "+15.2%");
    }

    #[test]
    fn renders_text_markdown_csv() {
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
            t.csv(),
            "tool,threads,mean\npkeyread,1,290.1\n\"a,b|c\",32,0.5800\n"
        );
    }

    #[test]
    fn number_precision_follows_magnitude() {
        assert_eq!(us(290.123), "290.1");
        assert_eq!(us(1.23456), "1.235");
        assert_eq!(us(0.58), "0.5800");
        assert_eq!(us(f64::NAN), "-");
    }
}
