use anyhow::{bail, Result};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::build::BuildArgs;
use super::run::targets_for_revs;
use super::{parse_duration, parse_samples, parse_threads, Shard};
use crate::analysis::stats;
use crate::cache::Cache;
use crate::host::Host;
use crate::measure::cells::{self as measure, Target};
use crate::measure::compile;
use crate::measure::kernel::{Registry, ToolSpec};
use crate::measure::prefix::Prefix;
use crate::measure::runner::{self, Outcome, SampleRequest};
use crate::measure::samples::SampleSet;
use crate::report::plot;
use crate::report::{us, Format, Table};
use crate::{interrupt, progress, Global};

#[derive(Args)]
pub struct MatrixArgs {
    /// Revisions of --repo to build and measure, comma-separated
    #[arg(long, value_delimiter = ',', value_name = "REV,REV,...")]
    revs: Vec<String>,
    /// Installed OpenSSL prefixes to measure (instead of, or beside, --revs)
    #[arg(long = "openssl-dir", value_name = "PREFIX")]
    openssl_dirs: Vec<PathBuf>,
    /// Tool spec NAME[:key=value,...]; repeatable; `all` for every kernel with its defaults
    #[arg(long = "tool", required = true, value_name = "SPEC")]
    tools: Vec<String>,
    /// Thread counts, comma-separated
    #[arg(long, value_delimiter = ',', default_value = "1,2,4", value_parser = parse_threads, value_name = "LIST")]
    threads: Vec<usize>,
    /// Samples per cell (cached: a re-run only measures what is missing)
    #[arg(long, default_value = "10", value_parser = parse_samples)]
    samples: usize,
    /// Seconds each sample measures for
    #[arg(long, default_value = "1", value_parser = parse_duration, allow_negative_numbers = true, value_name = "SECONDS")]
    duration: f64,
    /// Kill a sample after this many seconds (default: 30 + 4 x duration)
    #[arg(long, value_parser = parse_duration, allow_negative_numbers = true, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Write one SVG per tool (µs/op against threads) into this directory
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Measure only shard I of N of the (revision, tool, threads) cells
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    #[command(flatten)]
    build: BuildArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

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
pub struct MatrixJson {
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

struct Plan {
    target: usize,
    spec: usize,
    threads: usize,
}

pub fn run(g: &Global, a: MatrixArgs) -> Result<ExitCode> {
    if a.revs.is_empty() && a.openssl_dirs.is_empty() {
        bail!("matrix needs --revs REV,REV,... or --openssl-dir PREFIX");
    }
    let reg = Registry::load(g.kernels_dir.as_deref())?;
    let specs = reg.parse_specs(&a.tools)?;
    let labels: Vec<String> = a
        .revs
        .iter()
        .cloned()
        .chain(a.openssl_dirs.iter().map(|d| d.display().to_string()))
        .collect();
    // Cells in a fixed order, so --shard I/N splits them the same way on
    // every runner.
    let mut plan = Vec::new();
    for t in 0..labels.len() {
        for s in 0..specs.len() {
            for &threads in &a.threads {
                plan.push(Plan {
                    target: t,
                    spec: s,
                    threads,
                });
            }
        }
    }
    if let Some(sh) = &a.shard {
        plan = plan
            .into_iter()
            .enumerate()
            .filter(|(i, _)| sh.owns(*i))
            .map(|(_, p)| p)
            .collect();
    }
    let cache = Cache::open(g.cache.as_deref())?;
    // Only what this shard needs is built.
    let needed: Vec<usize> = {
        let mut v: Vec<usize> = plan.iter().map(|p| p.target).collect();
        v.sort();
        v.dedup();
        v
    };
    let mut targets: Vec<Option<Target>> = vec![None; labels.len()];
    let rev_needed: Vec<String> = needed
        .iter()
        .filter(|&&t| t < a.revs.len())
        .map(|&t| a.revs[t].clone())
        .collect();
    if !rev_needed.is_empty() {
        for t in targets_for_revs(&cache, &a.build, &rev_needed)? {
            let i = labels
                .iter()
                .position(|l| *l == t.label)
                .expect("label of a rev");
            targets[i] = Some(t);
        }
    }
    for &t in needed.iter().filter(|&&t| t >= a.revs.len()) {
        let d = &a.openssl_dirs[t - a.revs.len()];
        targets[t] = Some(Target {
            label: labels[t].clone(),
            prefix: Prefix::from_dir(d, &labels[t])?,
            commit: None,
            expect_version: None,
        });
    }

    let cells = measure_cells(&cache, &a, &specs, &targets, &plan)?;
    let json = MatrixJson {
        kind: "perfbisect-matrix".into(),
        host: Host::current(),
        duration: a.duration,
        samples: a.samples,
        targets: labels,
        shard: a.shard.as_ref().map(|s| s.to_string()),
        cells,
    };
    if let Some(dir) = &a.plot {
        write_plots(dir, &json)?;
    }
    print!("{}", render(&json, a.format)?);
    Ok(ExitCode::SUCCESS)
}

/// Take the missing samples of every cell, round-robin, reusing what the
/// cache already has.
fn measure_cells(
    cache: &Cache,
    a: &MatrixArgs,
    specs: &[ToolSpec],
    targets: &[Option<Target>],
    plan: &[Plan],
) -> Result<Vec<MatrixCell>> {
    struct Work {
        kernel: Option<compile::CompiledKernel>,
        store: Option<SampleSet>,
        samples: Vec<f64>,
        version: Option<String>,
        not_applicable: Option<String>,
        failure: Option<String>,
    }
    let mut work = Vec::new();
    for p in plan {
        let target = targets[p.target]
            .as_ref()
            .expect("needed target is prepared");
        let spec = &specs[p.spec];
        let mut w = Work {
            kernel: None,
            store: None,
            samples: Vec::new(),
            version: target.prefix.version().map(|v| v.to_string()),
            not_applicable: None,
            failure: None,
        };
        if let Some(v) = target.prefix.version() {
            if v < spec.kernel.min_version {
                w.not_applicable = Some(format!("needs OpenSSL {}", spec.kernel.min_version));
                work.push(w);
                continue;
            }
        }
        w.kernel = Some(compile::compile(cache, &spec.kernel, &target.prefix)?);
        let store = SampleSet::open(
            cache,
            &target.prefix.identity()?,
            spec,
            p.threads,
            a.duration,
            "",
        )?;
        for s in store.load()? {
            if target.prefix.contains_library(Path::new(&s.libcrypto_path))
                && measure::check_version(target, &s).is_ok()
            {
                w.samples.push(s.us_per_op);
            }
        }
        w.samples.truncate(a.samples);
        w.store = Some(store);
        work.push(w);
    }
    let missing: usize = work
        .iter()
        .filter(|w| w.kernel.is_some())
        .map(|w| a.samples.saturating_sub(w.samples.len()))
        .sum();
    let cached: usize = work.iter().map(|w| w.samples.len()).sum();
    progress::info(&format!(
        "matrix: {} cells, {missing} samples to take, {cached} from the cache",
        plan.len()
    ));
    let bar = progress::bar(missing as u64, "sampling");
    loop {
        let mut progressed = false;
        for (p, w) in plan.iter().zip(work.iter_mut()) {
            if w.samples.len() >= a.samples || w.not_applicable.is_some() || w.failure.is_some() {
                continue;
            }
            let Some(kernel) = &w.kernel else { continue };
            interrupt::check()?;
            let target = targets[p.target].as_ref().expect("prepared");
            let spec = &specs[p.spec];
            bar.set_message(format!("{} {} t={}", target.label, spec.short(), p.threads));
            let req = SampleRequest {
                cache,
                kernel,
                spec,
                prefix: &target.prefix,
                threads: p.threads,
                duration: a.duration,
                timeout: a.timeout,
            };
            match runner::take_sample(&req)? {
                Outcome::Sample(s) => {
                    measure::check_version(target, &s)?;
                    if let Some(st) = &w.store {
                        st.append(&s)?;
                    }
                    w.samples.push(s.us_per_op);
                }
                Outcome::NotApplicable(m) => w.not_applicable = Some(m),
                Outcome::Failed(m) => {
                    progress::info(&format!(
                        "matrix: {} {} threads={}: {m}",
                        target.label,
                        spec.short(),
                        p.threads
                    ));
                    w.failure = Some(m)
                }
            }
            bar.inc(1);
            progressed = true;
        }
        if !progressed {
            break;
        }
    }
    bar.finish_and_clear();
    Ok(plan
        .iter()
        .zip(work)
        .map(|(p, w)| {
            let target = targets[p.target].as_ref().expect("prepared");
            let spec = &specs[p.spec];
            let s = (!w.samples.is_empty()).then(|| stats::summarize(&w.samples));
            MatrixCell {
                target: target.label.clone(),
                commit: target.commit.clone(),
                openssl_version: w.version,
                tool: spec.kernel.name.clone(),
                spec: spec.short(),
                args: spec.args.clone(),
                threads: p.threads,
                n: w.samples.len(),
                mean_us: s.as_ref().map(|s| s.mean),
                stddev_us: s.as_ref().map(|s| s.sd),
                ci95_us: s.as_ref().map(|s| s.ci95),
                not_applicable: w.not_applicable,
                failure: w.failure,
                samples_us: w.samples,
            }
        })
        .collect())
}

/// "pkeyread (key=ec, format=pem)": every argument, defaults included, so a
/// table pasted alone still says what was measured.
fn title(m: &MatrixJson, spec: &str) -> String {
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
fn spec_order(m: &MatrixJson) -> Vec<String> {
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
pub fn render(m: &MatrixJson, f: Format) -> Result<String> {
    if f == Format::Json {
        return Ok(serde_json::to_string_pretty(m)? + "\n");
    }
    if f == Format::Csv {
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
        return Ok(t.csv());
    }
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
        match f {
            Format::Markdown => {
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
            _ => {
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
    Ok(out)
}

pub fn write_plots(dir: &Path, m: &MatrixJson) -> Result<()> {
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
        let file: String = spec
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
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
