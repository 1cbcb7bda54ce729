use anyhow::Result;
use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::process::ExitCode;

use super::bisect::{parse_effect, sequential_compare};
use super::build::BuildArgs;
use super::compare::{to_json, CompareJson};
use super::{parse_duration, parse_fraction, parse_samples, parse_threads, Shard};
use crate::analysis::bisect::Config;
use crate::analysis::stats::Verdict;
use crate::cache::Cache;
use crate::host::Host;
use crate::measure::kernel::Registry;
use crate::measure::oracle::Oracle;
use crate::report::{us, Table};
use crate::{progress, Global};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GateFormat {
    Text,
    Markdown,
    Json,
    Junit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UndecidedPolicy {
    Pass,
    Fail,
}

#[derive(Args)]
pub struct GateArgs {
    /// The revision a pull request is compared against (e.g. its merge base)
    #[arg(long, value_name = "REV")]
    base: String,
    /// The pull request's revision
    #[arg(long, value_name = "REV")]
    head: String,
    /// Tool spec NAME[:key=value,...]; repeatable; `all` for every kernel
    #[arg(long = "tool", required = true, value_name = "SPEC")]
    tools: Vec<String>,
    /// Thread counts, comma-separated
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = parse_threads, value_name = "LIST")]
    threads: Vec<usize>,
    /// Fail only on a significant slowdown at least this large
    #[arg(long, default_value = "5%", value_parser = parse_effect, allow_hyphen_values = true)]
    max_regression: f64,
    /// What an undecided comparison (at the sample cap) does to the exit code
    #[arg(long, value_enum, default_value = "pass")]
    undecided: UndecidedPolicy,
    /// Error rate of the whole gate (split across its comparisons)
    #[arg(long, default_value = "0.01", value_parser = parse_fraction, allow_negative_numbers = true)]
    alpha: f64,
    /// Samples per revision to start with
    #[arg(long, default_value = "5", value_parser = parse_samples)]
    samples: usize,
    /// Most samples per revision before a comparison is called undecided
    #[arg(long, default_value = "40", value_parser = parse_samples)]
    max_samples: usize,
    /// Seconds each sample measures for
    #[arg(long, default_value = "1", value_parser = parse_duration, allow_negative_numbers = true, value_name = "SECONDS")]
    duration: f64,
    /// Kill a sample after this many seconds (default: 30 + 4 x duration)
    #[arg(long, value_parser = parse_duration, allow_negative_numbers = true, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Check only shard I of N of the (tool, threads) comparisons
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    #[command(flatten)]
    build: BuildArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: GateFormat,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GateResult {
    /// regression | improvement | same | undecided | not_applicable | error
    pub outcome: String,
    pub message: String,
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<CompareJsonOwned>,
    pub tool: String,
    pub threads: usize,
}

/// CompareJson as read back (for `report merge`).
pub type CompareJsonOwned = serde_json::Map<String, serde_json::Value>;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GateJson {
    pub kind: String,
    pub host: Host,
    pub base: String,
    pub head: String,
    pub base_commit: String,
    pub head_commit: String,
    pub max_regression: f64,
    pub alpha: f64,
    pub undecided: UndecidedPolicy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    pub results: Vec<GateResult>,
    pub exit_code: u8,
}

pub fn run(g: &Global, a: GateArgs) -> Result<ExitCode> {
    let reg = Registry::load(g.kernels_dir.as_deref())?;
    let specs = reg.parse_specs(&a.tools)?;
    let (repo, recipe) = a.build.open()?;
    let base = repo.resolve(&a.base)?;
    let head = repo.resolve(&a.head)?;
    let cache = Cache::open(g.cache.as_deref())?;
    let mut cells = Vec::new();
    for s in 0..specs.len() {
        for &t in &a.threads {
            cells.push((s, t));
        }
    }
    let all_cells = cells.len();
    if let Some(sh) = &a.shard {
        cells = cells
            .into_iter()
            .enumerate()
            .filter(|(i, _)| sh.owns(*i))
            .map(|(_, c)| c)
            .collect();
    }
    let cfg = Config {
        alpha: a.alpha,
        min_effect: a.max_regression,
        initial_samples: a.samples.max(2),
        max_samples: a.max_samples,
        first_change_only: true,
    };
    cfg.validate(2)?;
    // Bonferroni over every comparison of the whole gate (all shards) and
    // every sequential look, so an A/A gate fails with probability <= alpha.
    let alpha_look = cfg.alpha / (cfg.schedule().len() * all_cells.max(1)) as f64;
    let mut results = Vec::new();
    for (s, threads) in cells {
        let spec = &specs[s];
        progress::info(&format!("gate: {} at {} thread(s)", spec.short(), threads));
        let mut oracle = Oracle::new(
            &cache,
            &repo,
            a.build.options(&recipe),
            spec,
            threads,
            a.duration,
            vec![base.clone(), head.clone()],
        );
        oracle.timeout = a.timeout;
        // Fresh, interleaved samples for this gate (a re-run resumes); base
        // and head never share samples, even when they are one commit.
        oracle.context = format!("gate {} {}", base.id, head.id);
        oracle.side = vec!["base".into(), "head".into()];
        let r = match sequential_compare(&mut oracle, 0, 1, &cfg, alpha_look) {
            Err(e) if e.downcast_ref::<crate::interrupt::Interrupted>().is_some() => return Err(e),
            Err(e) => GateResult {
                outcome: "error".into(),
                message: format!("{e:#}"),
                comparison: None,
                tool: spec.short(),
                threads,
            },
            Ok(Err(skip)) => {
                let na = skip.starts_with("not applicable");
                GateResult {
                    outcome: if na { "not_applicable" } else { "error" }.into(),
                    message: skip,
                    comparison: None,
                    tool: spec.short(),
                    threads,
                }
            }
            Ok(Ok(c)) => {
                let j: CompareJson = to_json(
                    &spec.short(),
                    threads,
                    &a.base,
                    &a.head,
                    &base,
                    &head,
                    &c,
                    &cfg,
                    None,
                );
                let (outcome, message) = match c.verdict {
                    Verdict::Slower => (
                        "regression",
                        format!(
                            "head is slower by {} (more than the allowed {:.1}%)",
                            c.ratio.pct(),
                            a.max_regression * 100.0
                        ),
                    ),
                    Verdict::Faster => ("improvement", format!("head is faster: {}", c.ratio.pct())),
                    Verdict::Same => ("same", format!("no significant change: {}", c.ratio.pct())),
                    Verdict::Undecided => (
                        "undecided",
                        format!(
                            "undecided after {} samples: {} (a change of {:.1}% cannot be ruled out)",
                            c.a.n.min(c.b.n),
                            c.ratio.pct(),
                            a.max_regression * 100.0
                        ),
                    ),
                };
                let map = match serde_json::to_value(&j)? {
                    serde_json::Value::Object(m) => m,
                    _ => serde_json::Map::new(),
                };
                GateResult {
                    outcome: outcome.into(),
                    message,
                    comparison: Some(map),
                    tool: spec.short(),
                    threads,
                }
            }
        };
        results.push(r);
    }
    let json = GateJson {
        kind: "perfbisect-gate".into(),
        host: Host::current(),
        base: a.base.clone(),
        head: a.head.clone(),
        base_commit: base.id.clone(),
        head_commit: head.id.clone(),
        max_regression: a.max_regression,
        alpha: a.alpha,
        undecided: a.undecided,
        shard: a.shard.as_ref().map(|s| s.to_string()),
        exit_code: exit_code(&results, a.undecided),
        results,
    };
    emit(&json, a.format)?;
    Ok(ExitCode::from(json.exit_code))
}

/// 1 when a regression (or, by policy, an undecided result) fails the gate,
/// else 2 when something could not be measured, else 0.
pub fn exit_code(results: &[GateResult], undecided: UndecidedPolicy) -> u8 {
    let failed = results.iter().any(|r| {
        r.outcome == "regression"
            || (r.outcome == "undecided" && undecided == UndecidedPolicy::Fail)
    });
    if failed {
        1
    } else if results.iter().any(|r| r.outcome == "error") {
        2
    } else {
        0
    }
}

pub fn emit(json: &GateJson, format: GateFormat) -> Result<()> {
    if let Ok(path) = std::env::var("GITHUB_STEP_SUMMARY") {
        if !path.is_empty() {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| anyhow::anyhow!("cannot append to GITHUB_STEP_SUMMARY {path}: {e}"))?;
            f.write_all(markdown(json).as_bytes())?;
        }
    }
    for r in json.results.iter().filter(|r| r.outcome == "undecided") {
        if json.undecided == UndecidedPolicy::Pass {
            eprintln!(
                "perfbisect: warning: {} at {} thread(s) is undecided; passing (--undecided fail to fail instead)",
                r.tool, r.threads
            );
        }
    }
    match format {
        GateFormat::Json => println!("{}", serde_json::to_string_pretty(json)?),
        GateFormat::Markdown => print!("{}", markdown(json)),
        GateFormat::Junit => print!("{}", junit(json)),
        GateFormat::Text => {
            print!("{}", table(json).text());
            println!("{}", summary_line(json));
        }
    }
    Ok(())
}

fn num(r: &GateResult, key: &str) -> Option<f64> {
    r.comparison.as_ref()?.get(key)?.as_f64()
}

fn table(json: &GateJson) -> Table {
    let mut t = Table::new(&[
        "tool",
        "threads",
        "base us/op",
        "head us/op",
        "change",
        "p (Welch)",
        "result",
    ])
    .numeric_from(1);
    for r in &json.results {
        let change = match (
            num(r, "ratio"),
            r.comparison.as_ref().and_then(|c| c.get("ratio_ci")),
        ) {
            (Some(ratio), Some(ci)) => format!(
                "{:+.1}% [{:+.1}%, {:+.1}%]",
                (ratio - 1.0) * 100.0,
                (ci[0].as_f64().unwrap_or(f64::NAN) - 1.0) * 100.0,
                (ci[1].as_f64().unwrap_or(f64::NAN) - 1.0) * 100.0
            ),
            _ => "-".into(),
        };
        t.push(vec![
            r.tool.clone(),
            r.threads.to_string(),
            num(r, "a_mean_us").map(us).unwrap_or_else(|| "-".into()),
            num(r, "b_mean_us").map(us).unwrap_or_else(|| "-".into()),
            change,
            num(r, "p_welch")
                .map(|p| format!("{p:.2e}"))
                .unwrap_or_else(|| "-".into()),
            if r.outcome == "error" || r.outcome == "not_applicable" {
                format!("{}: {}", r.outcome, r.message)
            } else {
                r.outcome.clone()
            },
        ]);
    }
    t
}

fn summary_line(json: &GateJson) -> String {
    let n = |o: &str| json.results.iter().filter(|r| r.outcome == o).count();
    format!(
        "gate: {} regression(s), {} improvement(s), {} same, {} undecided, {} error(s) (threshold {:.1}%, {} vs {}) -> exit {}",
        n("regression"),
        n("improvement"),
        n("same"),
        n("undecided"),
        n("error"),
        json.max_regression * 100.0,
        json.head,
        json.base,
        json.exit_code
    )
}

pub fn markdown(json: &GateJson) -> String {
    format!(
        "### perfbisect gate: `{}` vs `{}`\n\n{}\n{}\n",
        json.head,
        json.base,
        table(json).markdown(),
        summary_line(json)
    )
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One test case per (tool, threads).
pub fn junit(json: &GateJson) -> String {
    let failures = json
        .results
        .iter()
        .filter(|r| {
            r.outcome == "regression"
                || (r.outcome == "undecided" && json.undecided == UndecidedPolicy::Fail)
        })
        .count();
    let errors = json.results.iter().filter(|r| r.outcome == "error").count();
    let mut s = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"perfbisect gate {} vs {}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\">\n",
        xml(&json.head),
        xml(&json.base),
        json.results.len()
    );
    for r in &json.results {
        s.push_str(&format!(
            "    <testcase classname=\"perfbisect.gate\" name=\"{} threads={}\">\n",
            xml(&r.tool),
            r.threads
        ));
        match r.outcome.as_str() {
            "regression" => s.push_str(&format!(
                "      <failure message=\"{}\"/>\n",
                xml(&r.message)
            )),
            "undecided" if json.undecided == UndecidedPolicy::Fail => s.push_str(&format!(
                "      <failure message=\"{}\"/>\n",
                xml(&r.message)
            )),
            "error" => s.push_str(&format!("      <error message=\"{}\"/>\n", xml(&r.message))),
            "not_applicable" => s.push_str(&format!(
                "      <skipped message=\"{}\"/>\n",
                xml(&r.message)
            )),
            _ => s.push_str(&format!(
                "      <system-out>{}</system-out>\n",
                xml(&r.message)
            )),
        }
        s.push_str("    </testcase>\n");
    }
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(outcome: &str) -> GateResult {
        GateResult {
            outcome: outcome.into(),
            message: format!("{outcome} <&>"),
            comparison: None,
            tool: "pkeyread".into(),
            threads: 1,
        }
    }

    #[test]
    fn exit_codes_follow_the_outcomes() {
        use UndecidedPolicy::*;
        assert_eq!(exit_code(&[result("same"), result("improvement")], Pass), 0);
        assert_eq!(exit_code(&[result("same"), result("regression")], Pass), 1);
        assert_eq!(exit_code(&[result("undecided")], Pass), 0);
        assert_eq!(exit_code(&[result("undecided")], Fail), 1);
        assert_eq!(exit_code(&[result("error"), result("same")], Pass), 2);
        assert_eq!(exit_code(&[result("error"), result("regression")], Pass), 1);
        assert_eq!(exit_code(&[result("not_applicable")], Pass), 0);
    }

    #[test]
    fn junit_has_one_case_per_comparison_and_escapes() {
        let j = GateJson {
            kind: "perfbisect-gate".into(),
            host: Host {
                cpu_model: "cpu".into(),
                cores: 2,
            },
            base: "main".into(),
            head: "pr".into(),
            base_commit: "a".into(),
            head_commit: "b".into(),
            max_regression: 0.05,
            alpha: 0.01,
            undecided: UndecidedPolicy::Pass,
            shard: None,
            results: vec![result("regression"), result("same"), result("error")],
            exit_code: 1,
        };
        let x = junit(&j);
        assert_eq!(x.matches("<testcase ").count(), 3);
        assert!(x.contains("failures=\"1\" errors=\"1\""), "{x}");
        assert!(x.contains("regression &lt;&amp;&gt;"), "{x}");
        assert!(!x.contains("<&>"));
    }
}
