//! The result of `matrix`: the version × thread-count table people paste
//! into issues (text, Markdown, CSV, JSON) and one SVG per tool.

use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

use super::export::{formats, Csv, Export, Markdown, Text};
use super::plot;
use crate::host::Host;
use crate::progress;
use crate::report::{us, Table};

formats!(MatrixFormat for MatrixReport { Text, Markdown, Csv, Json });

pub const MATRIX_KIND: &str = "perfbisect-matrix";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MatrixCell {
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    pub openssl_version: Option<String>,
    pub tool: String,
    pub spec: String,
    pub args: BTreeMap<String, String>,
    pub threads: usize,
    pub n: usize,
    pub mean_us: Option<f64>,
    pub stddev_us: Option<f64>,
    pub ci95_us: Option<(f64, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    pub samples_us: Vec<f64>,
}

impl MatrixCell {
    pub fn key(&self) -> (String, String, usize) {
        (self.target.clone(), self.spec.clone(), self.threads)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MatrixReport {
    pub kind: String,
    pub host: Host,
    pub duration: f64,
    pub samples: usize,
    /// Target labels in the order given (columns).
    pub targets: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    pub cells: Vec<MatrixCell>,
}

/// "pkeyread (key=ec, format=pem)": every argument, defaults included, so a
/// table pasted alone still says what was measured.
fn title(m: &MatrixReport, spec: &str) -> String {
    match m.cells.iter().find(|c| c.spec == spec) {
        Some(c) if !c.args.is_empty() => {
            let args: Vec<String> = c.args.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{} ({})", c.tool, args.join(", "))
        }
        Some(c) => c.tool.clone(),
        None => spec.to_string(),
    }
}

/// Tool specs in first-seen order.
fn spec_order(m: &MatrixReport) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for c in &m.cells {
        if !v.contains(&c.spec) {
            v.push(c.spec.clone());
        }
    }
    v
}

/// The seed-000 table: per tool, a row per thread count, and per version
/// the mean µs/op and its standard deviation.
fn tables(m: &MatrixReport, markdown: bool) -> String {
    let targets: Vec<&String> = m
        .targets
        .iter()
        .filter(|t| m.cells.iter().any(|c| &c.target == *t))
        .collect();
    let mut out = String::new();
    for spec in spec_order(m) {
        let mut headers = vec!["threads".to_string()];
        for t in &targets {
            headers.push(format!("{t} µs/op"));
            headers.push(format!("{t} std dev"));
        }
        let hdr: Vec<&str> = headers.iter().map(|s| s.as_str()).collect();
        let mut table = Table::new(&hdr).numeric_from(0);
        let mut threads: Vec<usize> = m
            .cells
            .iter()
            .filter(|c| c.spec == spec)
            .map(|c| c.threads)
            .collect();
        threads.sort();
        threads.dedup();
        for th in threads {
            let mut row = vec![th.to_string()];
            for t in &targets {
                match m
                    .cells
                    .iter()
                    .find(|c| c.spec == spec && c.threads == th && &&c.target == t)
                {
                    Some(c) if c.not_applicable.is_some() => {
                        row.push("N/A".into());
                        row.push("N/A".into());
                    }
                    Some(c) if c.mean_us.is_some() => {
                        row.push(us(c.mean_us.unwrap_or(f64::NAN)));
                        row.push(us(c.stddev_us.unwrap_or(f64::NAN)));
                    }
                    Some(c) if c.failure.is_some() => {
                        row.push("failed".into());
                        row.push("-".into());
                    }
                    _ => {
                        row.push("-".into());
                        row.push("-".into());
                    }
                }
            }
            table.push(row);
        }
        let n = m
            .cells
            .iter()
            .filter(|c| c.spec == spec)
            .map(|c| c.n)
            .max()
            .unwrap_or(0);
        match markdown {
            true => {
                out.push_str(&format!(
                    "#### {}\n\n{} samples per cell, {} s each; host: {}\n\n",
                    title(m, &spec),
                    n,
                    m.duration,
                    m.host.id()
                ));
                out.push_str(&table.markdown());
                out.push('\n');
            }
            false => {
                out.push_str(&format!(
                    "{} - {n} samples per cell, {} s each\n",
                    title(m, &spec),
                    m.duration
                ));
                out.push_str(&table.text());
                out.push('\n');
            }
        }
    }
    out
}

impl Export<MatrixReport> for Text {
    fn export(&self, m: &MatrixReport) -> Result<String> {
        Ok(tables(m, false))
    }
}

impl Export<MatrixReport> for Markdown {
    fn export(&self, m: &MatrixReport) -> Result<String> {
        Ok(tables(m, true))
    }
}

impl Export<MatrixReport> for Csv {
    fn export(&self, m: &MatrixReport) -> Result<String> {
        let mut t = Table::new(&[
            "tool",
            "threads",
            "openssl",
            "n",
            "mean_us",
            "stddev_us",
            "note",
        ]);
        for c in &m.cells {
            t.push(vec![
                c.spec.clone(),
                c.threads.to_string(),
                c.target.clone(),
                c.n.to_string(),
                c.mean_us.map(|v| v.to_string()).unwrap_or_default(),
                c.stddev_us.map(|v| v.to_string()).unwrap_or_default(),
                c.not_applicable
                    .clone()
                    .or_else(|| c.failure.clone())
                    .unwrap_or_default(),
            ]);
        }
        Ok(t.csv())
    }
}

pub fn write_plots(dir: &Path, m: &MatrixReport) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot create plot directory {}: {e}", dir.display()))?;
    for spec in spec_order(m) {
        let series: Vec<plot::Series> = m
            .targets
            .iter()
            .map(|t| plot::Series {
                label: t.clone(),
                points: m
                    .cells
                    .iter()
                    .filter(|c| &c.target == t && c.spec == spec)
                    .filter_map(|c| Some((c.threads, c.mean_us?, c.stddev_us.unwrap_or(0.0))))
                    .collect(),
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        if series.is_empty() {
            continue;
        }
        let file = plot::file_stem(&spec);
        let path = dir.join(format!("{file}.svg"));
        plot::threads_plot(
            &path,
            &format!("{}: µs/op by threads ({})", title(m, &spec), m.host.id()),
            &series,
        )?;
        progress::info(&format!("wrote {}", path.display()));
    }
    Ok(())
}
