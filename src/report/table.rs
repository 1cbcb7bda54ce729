//! Rendering: aligned terminal tables, Markdown (pasted into GitHub issues),
//! CSV and JSON.

use anyhow::{bail, Result};
use serde::Serialize;
use std::collections::BTreeMap;

use crate::analysis::stats;
use crate::measure::runner::Sample;

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

/// µs/op with precision that suits its size (0.0123, 1.234, 290.1).
pub fn us(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

/// One (target, tool, threads) line of `perfbisect run`.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub target: String,
    pub tool: String,
    pub spec: String,
    pub args: BTreeMap<String, String>,
    pub threads: usize,
    pub n: usize,
    pub mean_us: Option<f64>,
    pub stddev_us: Option<f64>,
    pub ci95_us: Option<(f64, f64)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mb_per_s: Option<f64>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub counters_us: BTreeMap<String, f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<String>,
    pub samples: Vec<Sample>,
}

impl RunResult {
    pub fn new(
        target: &str,
        spec: &crate::measure::kernel::ToolSpec,
        threads: usize,
        samples: Vec<Sample>,
        not_applicable: Option<String>,
    ) -> RunResult {
        let xs: Vec<f64> = samples.iter().map(|s| s.us_per_op).collect();
        let s = (!xs.is_empty()).then(|| stats::summarize(&xs));
        let mb: Vec<f64> = samples.iter().filter_map(|s| s.mb_per_s).collect();
        let mut counters_us = BTreeMap::new();
        for name in &spec.kernel.counters {
            let v: Vec<f64> = samples
                .iter()
                .filter_map(|s| s.counters.get(name).and_then(|c| c.us_per_op))
                .collect();
            if !v.is_empty() {
                counters_us.insert(name.clone(), v.iter().sum::<f64>() / v.len() as f64);
            }
        }
        RunResult {
            target: target.to_string(),
            tool: spec.kernel.name.clone(),
            spec: spec.short(),
            args: spec.args.clone(),
            threads,
            n: xs.len(),
            mean_us: s.as_ref().map(|s| s.mean),
            stddev_us: s.as_ref().map(|s| s.sd),
            ci95_us: s.as_ref().map(|s| s.ci95),
            mb_per_s: (!mb.is_empty()).then(|| mb.iter().sum::<f64>() / mb.len() as f64),
            counters_us,
            not_applicable,
            samples,
        }
    }
}

pub fn run_table(results: &[RunResult]) -> Table {
    let multi_target = results
        .iter()
        .any(|r| r.target != results.first().map(|f| f.target.as_str()).unwrap_or(""));
    let with_mb = results.iter().any(|r| r.mb_per_s.is_some());
    let with_counters = results.iter().any(|r| !r.counters_us.is_empty());
    let mut headers = vec![
        "openssl",
        "tool",
        "threads",
        "n",
        "mean us/op",
        "std dev",
        "95% CI",
    ];
    if !multi_target {
        headers.remove(0);
    }
    if with_mb {
        headers.push("MB/s");
    }
    if with_counters {
        headers.push("counters (us/op)");
    }
    let first_num = if multi_target { 2 } else { 1 };
    let mut t = Table::new(&headers).numeric_from(first_num);
    for r in results {
        let mut row = Vec::new();
        if multi_target {
            row.push(r.target.clone());
        }
        row.push(r.spec.clone());
        row.push(r.threads.to_string());
        row.push(r.n.to_string());
        match (&r.not_applicable, r.mean_us) {
            (Some(why), _) => {
                row.push("n/a".into());
                row.push("-".into());
                row.push(why.clone());
            }
            (None, Some(m)) => {
                row.push(us(m));
                row.push(us(r.stddev_us.unwrap_or(f64::NAN)));
                let (lo, hi) = r.ci95_us.unwrap_or((f64::NAN, f64::NAN));
                row.push(format!("[{}, {}]", us(lo), us(hi)));
            }
            (None, None) => {
                row.extend(["-".into(), "-".into(), "-".into()]);
            }
        }
        if with_mb {
            row.push(
                r.mb_per_s
                    .map(|v| format!("{v:.1}"))
                    .unwrap_or_else(|| "-".into()),
            );
        }
        if with_counters {
            let c: Vec<String> = r
                .counters_us
                .iter()
                .map(|(k, v)| format!("{k}={}", us(*v)))
                .collect();
            row.push(c.join(" "));
        }
        t.push(row);
    }
    t
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
