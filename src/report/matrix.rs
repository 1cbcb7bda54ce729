//! The result of `matrix`: the version × thread-count table people paste
//! into issues (text, Markdown, CSV, JSON) and one SVG per tool.

use crate::measure::metric::Metric;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

use super::export::{formats, Csv, Export, Links, Markdown, Text};
use super::html::{self, esc, HtmlSections, Section};
use super::plot;
use crate::host::Host;
use crate::progress;
use crate::report::{us, List, Table};
use crate::unavailable::{typed_or_text, Unavailable};

formats!(MatrixFormat for MatrixReport { Text, Markdown, Csv, Json, Html });

pub const MATRIX_KIND: &str = "perfbisect-matrix";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Why the cell has no number when the operation does not exist on this version
    /// (`kind`: too_old or not_applicable): a result, drawn N/A.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "typed_or_text"
    )]
    pub not_applicable: Option<Unavailable>,
    /// Why the cell has no number when something failed (build, crash, timeout, …).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "typed_or_text"
    )]
    pub failure: Option<Unavailable>,
    pub samples_us: Vec<f64>,
}

impl MatrixCell {
    pub fn key(&self) -> (String, String, usize) {
        (self.target.clone(), self.spec.clone(), self.threads)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// What the values are (`mean_us`/`stddev_us` hold instructions/op for `instructions`).
    #[serde(default, skip_serializing_if = "Metric::is_time")]
    pub metric: Metric,
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
/// the mean µs/op and its standard deviation; with the tool's title and
/// samples per cell.
fn tool_tables(m: &MatrixReport) -> Vec<(String, usize, Table)> {
    let targets: Vec<&String> = m
        .targets
        .iter()
        .filter(|t| m.cells.iter().any(|c| &c.target == *t))
        .collect();
    let mut out = Vec::new();
    for spec in spec_order(m) {
        let mut headers = vec!["threads".to_string()];
        for t in &targets {
            headers.push(format!("{t} {}", m.metric.unit()));
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
        out.push((title(m, &spec), n, table));
    }
    out
}

fn tables(m: &MatrixReport, markdown: bool) -> String {
    let mut out = String::new();
    for (title, n, table) in tool_tables(m) {
        if markdown {
            out.push_str(&format!(
                "#### {title}\n\n{n} samples per cell, {} s each; host: {}\n\n",
                m.duration,
                m.host.id()
            ));
            out.push_str(&table.markdown());
        } else {
            out.push_str(&format!(
                "{title} - {n} samples per cell, {} s each\n",
                m.duration
            ));
            out.push_str(&table.text());
        }
        out.push('\n');
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
                (c.not_applicable.as_ref().map(Unavailable::reason))
                    .or_else(|| c.failure.as_ref().map(Unavailable::to_string))
                    .unwrap_or_default(),
            ]);
        }
        Ok(t.csv())
    }
}

/// One SVG per tool: (file stem, title, SVG).
fn plots(m: &MatrixReport) -> Result<Vec<(String, String, String)>> {
    let mut out = Vec::new();
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
        let title = format!(
            "{}: {} by threads ({})",
            title(m, &spec),
            m.metric.unit(),
            m.host.id()
        );
        let svg = plot::threads_svg(&title, m.metric.axis(), &series)?;
        out.push((plot::file_stem(&spec), title, svg));
    }
    Ok(out)
}

pub fn write_plots(dir: &Path, m: &MatrixReport) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot create plot directory {}: {e}", dir.display()))?;
    for (file, _, svg) in plots(m)? {
        let path = dir.join(format!("{file}.svg"));
        std::fs::write(&path, svg)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        progress::info(&format!("wrote {}", path.display()));
    }
    Ok(())
}

impl HtmlSections for MatrixReport {
    fn section(&self, links: &Links) -> Result<Section> {
        let m = self;
        let heading = format!(
            "matrix: {}",
            m.targets
                .iter()
                .map(|t| format!("<code>{}</code>", esc(t)))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let mut summary = format!(
            "<p>{} tool(s) on {}; host {}, {} s per sample.</p>\n",
            spec_order(m).len(),
            html_targets(m, links).join(", "),
            esc(&m.host.id()),
            m.duration
        );
        let items = spec_order(m).into_iter().map(|s| first_row_item(m, &s));
        summary.push_str(&List::bullets(items).html());
        let mut tables = String::new();
        for (title, n, table) in tool_tables(m) {
            tables.push_str(&format!(
                "<p><b>{}</b>: {n} samples per cell, {} s each.</p>\n{}",
                esc(&title),
                m.duration,
                table.html()
            ));
        }
        let plots = plots(m)?
            .into_iter()
            .map(|(_, title, svg)| html::figure(&svg, &title))
            .collect();
        Ok(Section {
            heading,
            summary,
            tables,
            plots,
            reproduce: html::command(&reproduce_command(m)),
        })
    }
}

/// The targets as the page names them: each with its commit (linked) where it has one.
fn html_targets(m: &MatrixReport, links: &Links) -> Vec<String> {
    m.targets
        .iter()
        .map(|t| {
            let commit = m
                .cells
                .iter()
                .find(|c| &c.target == t)
                .and_then(|c| c.commit.clone());
            match commit {
                Some(c) => format!(
                    "<code>{}</code> ({})",
                    esc(t),
                    links.html(&c, c.get(..10).unwrap_or(&c))
                ),
                None => format!("<code>{}</code>", esc(t)),
            }
        })
        .collect()
}

/// A tool's means at the fewest threads measured, one per target: the row people quote
/// first. Empty when the tool has no cell.
fn first_row_item(m: &MatrixReport, spec: &str) -> String {
    let Some(t0) = m
        .cells
        .iter()
        .filter(|c| c.spec == spec)
        .map(|c| c.threads)
        .min()
    else {
        return String::new();
    };
    let means: Vec<String> = m
        .targets
        .iter()
        .filter_map(|t| {
            let c = m
                .cells
                .iter()
                .find(|c| &c.target == t && c.spec == spec && c.threads == t0)?;
            Some(format!(
                "{} {}",
                esc(t),
                match (c.mean_us, &c.not_applicable) {
                    (Some(v), _) => format!("{} {}", us(v), m.metric.unit()),
                    (None, Some(_)) => "N/A".into(),
                    _ => "failed".into(),
                }
            ))
        })
        .collect();
    format!(
        "<code>{}</code> at {t0} thread(s): {}",
        esc(&title(m, spec)),
        means.join("; ")
    )
}

/// The `perfbisect matrix` command line that measures this table again.
fn reproduce_command(m: &MatrixReport) -> String {
    let threads = {
        let mut t: Vec<usize> = m.cells.iter().map(|c| c.threads).collect();
        t.sort();
        t.dedup();
        t.iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut cmd = String::from("perfbisect matrix");
    if m.cells.iter().any(|c| c.commit.is_some()) {
        cmd.push_str(&format!(" --revs {}", m.targets.join(",")));
    } else {
        for t in &m.targets {
            cmd.push_str(&format!(" --openssl-dir {t}"));
        }
    }
    for spec in spec_order(m) {
        cmd.push_str(&format!(" --tool '{spec}'"));
    }
    cmd.push_str(&format!(
        " --threads {threads} --samples {} --duration {}",
        m.samples, m.duration
    ));
    cmd
}
