use crate::cli::exit::Exit;
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use std::path::PathBuf;

use super::args::LinkArgs;
use super::Global;
use crate::progress;
use crate::report::bisect::{BisectReport, SavedBisect, BISECT_KIND};
use crate::report::compare::{CompareReport, COMPARE_KIND};
use crate::report::export::check_schema;
use crate::report::gate::{exit_code, GateFormat, GateReport, GATE_KIND};
use crate::report::html::{self, HtmlSections};
use crate::report::matrix::{MatrixFormat, MatrixReport, MATRIX_KIND};
use crate::report::scan::{ScanReport, SCAN_KIND};

/// What a merged result can be rendered as; each kind renders a subset
/// (a matrix has no JUnit, a gate no CSV) and says so when asked for more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum MergeFormat {
    Text,
    Markdown,
    Csv,
    Json,
    Junit,
}

#[derive(Args)]
pub struct ReportCmd {
    #[command(subcommand)]
    action: ReportAction,
}

#[derive(Subcommand)]
enum ReportAction {
    /// Join the JSON results of `matrix --shard` (or `gate --shard`) runs into one
    Merge {
        /// JSON files written by `matrix --format json` or `gate --format json`
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Allow results measured on different machines in one table
        #[arg(long)]
        allow_mixed_hosts: bool,
        /// Output format (matrix: text, markdown, csv, json; gate: text, markdown, json, junit)
        #[arg(long, value_enum, default_value = "text")]
        format: MergeFormat,
    },
    /// One self-contained HTML page (DIR/index.html) from bisect, scan, compare/verify, matrix and gate results
    Html {
        /// JSON files written with --format json (a bisect's cache entry from `perfbisect log` too)
        #[arg(required = true, value_name = "RESULT.json")]
        files: Vec<PathBuf>,
        /// Directory to write index.html into (created if missing)
        #[arg(short, long, value_name = "DIR")]
        output: PathBuf,
        #[command(flatten)]
        links: LinkArgs,
    },
}

pub fn run(_g: &Global, a: ReportCmd) -> Result<Exit> {
    let (files, allow_mixed_hosts, format) = match a.action {
        ReportAction::Merge {
            files,
            allow_mixed_hosts,
            format,
        } => (files, allow_mixed_hosts, format),
        ReportAction::Html {
            files,
            output,
            links,
        } => return html_page(&files, &output, &links),
    };
    let docs = read_results(&files)?;
    let kind = one_kind(&docs)?;
    match kind.as_str() {
        MATRIX_KIND => {
            let parts: Vec<(PathBuf, MatrixReport)> = parse_parts(docs, "matrix")?;
            let mf = match format {
                MergeFormat::Text => MatrixFormat::Text,
                MergeFormat::Markdown => MatrixFormat::Markdown,
                MergeFormat::Csv => MatrixFormat::Csv,
                MergeFormat::Json => MatrixFormat::Json,
                MergeFormat::Junit => {
                    bail!("matrix results have no JUnit form (text, markdown, csv or json)")
                }
            };
            let merged = merge_matrix(parts, allow_mixed_hosts)?;
            print!("{}", mf.render(&merged)?);
            Ok(Exit::Done)
        }
        GATE_KIND => {
            let parts: Vec<(PathBuf, GateReport)> = parse_parts(docs, "gate")?;
            let gf = match format {
                MergeFormat::Text => GateFormat::Text,
                MergeFormat::Markdown => GateFormat::Markdown,
                MergeFormat::Json => GateFormat::Json,
                MergeFormat::Junit => GateFormat::Junit,
                MergeFormat::Csv => {
                    bail!("gate results have no CSV form (text, markdown, json or junit)")
                }
            };
            let merged = merge_gate(parts, allow_mixed_hosts)?;
            merged.emit(gf)?;
            Ok(Exit::of_gate(merged.exit_code))
        }
        _ => bail!(
            "{} is not a matrix or gate result (no \"kind\")",
            docs[0].0.display()
        ),
    }
}

/// Each file's JSON and its `kind` ("" when it has none).
fn read_results(files: &[PathBuf]) -> Result<Vec<(PathBuf, String, serde_json::Value)>> {
    let mut docs = Vec::new();
    for f in files {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("cannot read {}", f.display()))?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{} is not a perfbisect JSON result: {e}", f.display()))?;
        check_schema(f, &v)?;
        let kind = v["kind"].as_str().unwrap_or("").to_string();
        docs.push((f.clone(), kind, v));
    }
    Ok(docs)
}

/// The one kind of result all `docs` are; results of two kinds are not merged.
fn one_kind(docs: &[(PathBuf, String, serde_json::Value)]) -> Result<String> {
    let kind = docs[0].1.clone();
    let named = |k: &str| {
        if k.is_empty() {
            "not a perfbisect result".to_string()
        } else {
            k.to_string()
        }
    };
    if let Some((f, k, _)) = docs.iter().find(|(_, k, _)| *k != kind) {
        bail!(
            "cannot merge {} ({}) with {} ({})",
            f.display(),
            named(k),
            docs[0].0.display(),
            named(&kind)
        );
    }
    Ok(kind)
}

/// Every result read as a `what` result (a matrix's, a gate's).
fn parse_parts<T: serde::de::DeserializeOwned>(
    docs: Vec<(PathBuf, String, serde_json::Value)>,
    what: &str,
) -> Result<Vec<(PathBuf, T)>> {
    let mut parts = Vec::new();
    for (f, _, v) in docs {
        let r: T = serde_json::from_value(v)
            .map_err(|e| anyhow::anyhow!("{} is not a {what} result: {e}", f.display()))?;
        parts.push((f, r));
    }
    Ok(parts)
}

fn check_hosts<'a>(
    hosts: impl Iterator<Item = (&'a PathBuf, &'a crate::host::Host)>,
    allow: bool,
) -> Result<()> {
    let all: Vec<_> = hosts.collect();
    if let Some((f, h)) = all.iter().find(|(_, h)| *h != all[0].1) {
        if !allow {
            bail!(
                "{} was measured on '{}' but {} on '{}': refusing to compare results from different machines (--allow-mixed-hosts to merge anyway)",
                f.display(),
                h.id(),
                all[0].0.display(),
                all[0].1.id()
            );
        }
    }
    Ok(())
}

pub fn merge_matrix(
    parts: Vec<(PathBuf, MatrixReport)>,
    allow_mixed: bool,
) -> Result<MatrixReport> {
    check_hosts(parts.iter().map(|(f, m)| (f, &m.host)), allow_mixed)?;
    let first = &parts[0].1;
    if let Some((f, m)) = parts.iter().find(|(_, m)| {
        m.duration != first.duration || m.samples != first.samples || m.metric != first.metric
    }) {
        bail!(
            "{} used --duration {} --samples {} --metric {}, but {} used --duration {} --samples {} --metric {}: not one matrix",
            f.display(),
            m.duration,
            m.samples,
            m.metric.name(),
            parts[0].0.display(),
            first.duration,
            first.samples,
            first.metric.name()
        );
    }
    let mut merged = first.clone();
    merged.shard = None;
    merged.cells.clear();
    for (_, m) in &parts {
        for t in &m.targets {
            if !merged.targets.contains(t) {
                merged.targets.push(t.clone());
            }
        }
        for c in &m.cells {
            if let Some(prev) = merged.cells.iter().find(|p| p.key() == c.key()) {
                if prev.samples_us != c.samples_us {
                    bail!(
                        "two files hold different results for {} {} threads={}",
                        c.target,
                        c.spec,
                        c.threads
                    );
                }
                continue;
            }
            merged.cells.push(c.clone());
        }
    }
    // The unsharded order: targets, then tools, then threads.
    let target_pos = |t: &str| {
        merged
            .targets
            .iter()
            .position(|x| x == t)
            .unwrap_or(usize::MAX)
    };
    let mut spec_order: Vec<String> = Vec::new();
    for (_, m) in &parts {
        for c in &m.cells {
            if !spec_order.contains(&c.spec) {
                spec_order.push(c.spec.clone());
            }
        }
    }
    let spec_pos = |s: &str| spec_order.iter().position(|x| x == s).unwrap_or(usize::MAX);
    let mut cells = std::mem::take(&mut merged.cells);
    cells.sort_by_key(|c| (target_pos(&c.target), spec_pos(&c.spec), c.threads));
    merged.cells = cells;
    Ok(merged)
}

fn merge_gate(parts: Vec<(PathBuf, GateReport)>, allow_mixed: bool) -> Result<GateReport> {
    check_hosts(parts.iter().map(|(f, g)| (f, &g.host)), allow_mixed)?;
    let first = parts[0].1.clone();
    if let Some((f, _)) = parts.iter().find(|(_, g)| {
        g.base_commit != first.base_commit
            || g.head_commit != first.head_commit
            || g.max_regression != first.max_regression
    }) {
        bail!(
            "{} is a gate of other revisions or threshold than {}: not one gate",
            f.display(),
            parts[0].0.display()
        );
    }
    let mut merged = first;
    merged.shard = None;
    merged.results = parts.into_iter().flat_map(|(_, g)| g.results).collect();
    merged.exit_code = exit_code(&merged.results, merged.undecided);
    Ok(merged)
}

/// A result `report html` can render.
enum Loaded {
    Bisect(Box<BisectReport>),
    Compare(Box<CompareReport>),
    Matrix(Box<MatrixReport>),
    Gate(Box<GateReport>),
    Scan(Box<ScanReport>),
}

/// Which result a JSON file holds: by its "kind", or, for bisect and
/// compare results written before they had one, by the fields only that
/// result has.
fn load(f: &std::path::Path) -> Result<Loaded> {
    let text =
        std::fs::read_to_string(f).with_context(|| format!("cannot read {}", f.display()))?;
    let not_ours = || {
        anyhow::anyhow!(
            "{} is not a perfbisect bisect, scan, compare/verify, matrix or gate result (their --format json)",
            f.display()
        )
    };
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|_| not_ours())?;
    check_schema(f, &v)?;
    let has = |k: &str| v.get(k).is_some();
    let kind = v.get("kind").and_then(|k| k.as_str()).unwrap_or("");
    let bad = |what: &str, e: serde_json::Error| {
        anyhow::anyhow!("{} is not a readable {what} result: {e}", f.display())
    };
    Ok(match kind {
        BISECT_KIND => Loaded::Bisect(serde_json::from_value(v).map_err(|e| bad("bisect", e))?),
        COMPARE_KIND => Loaded::Compare(serde_json::from_value(v).map_err(|e| bad("compare", e))?),
        MATRIX_KIND => Loaded::Matrix(serde_json::from_value(v).map_err(|e| bad("matrix", e))?),
        GATE_KIND => Loaded::Gate(serde_json::from_value(v).map_err(|e| bad("gate", e))?),
        SCAN_KIND => Loaded::Scan(serde_json::from_value(v).map_err(|e| bad("scan", e))?),
        "" if has("state") && has("command") && has("id") => {
            let saved: SavedBisect = serde_json::from_value(v).map_err(|e| bad("bisect", e))?;
            match saved.result {
                Some(r) => Loaded::Bisect(Box::new(r)),
                None => bail!(
                    "{} is a bisect that has no result ({}): run it to the end first",
                    f.display(),
                    saved.state
                ),
            }
        }
        "" if (has("changes") || has("culprits")) && has("steps") => {
            Loaded::Bisect(serde_json::from_value(v).map_err(|e| bad("bisect", e))?)
        }
        "" if has("verdict") && has("a_commit") && has("b_commit") => {
            Loaded::Compare(serde_json::from_value(v).map_err(|e| bad("compare", e))?)
        }
        _ => return Err(not_ours()),
    })
}

fn html_page(files: &[PathBuf], dir: &std::path::Path, links: &LinkArgs) -> Result<Exit> {
    let links = links.links()?;
    let mut sections = Vec::new();
    for f in files {
        let r: Box<dyn HtmlSections> = match load(f)? {
            Loaded::Bisect(r) => r,
            Loaded::Compare(r) => r,
            Loaded::Matrix(r) => r,
            Loaded::Gate(r) => r,
            Loaded::Scan(r) => r,
        };
        sections.push(r.section(&links)?);
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join("index.html");
    crate::cache::write_atomic(&path, html::page(&sections).as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    progress::info(&format!("wrote {}", path.display()));
    Ok(Exit::Done)
}
