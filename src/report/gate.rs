//! The result of `gate`: one cell per (tool, threads), the exit code, and
//! its renderers (text, Markdown for GITHUB_STEP_SUMMARY, JSON, JUnit).

use crate::measure::metric::Metric;
use anyhow::Result;
use clap::ValueEnum;
use serde::{Deserialize, Serialize};
use std::io::Write;

use super::compare::CompareReport;
use super::export::{esc, formats, Export, Junit, Links, Markdown, Text};
use super::html::{self, HtmlSections, Section};
use crate::host::Host;
use crate::report::{us, List, Table};

formats!(GateFormat for GateReport { Text, Markdown, Json, Junit, Html });

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum UndecidedPolicy {
    Pass,
    Fail,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GateOutcome {
    Regression,
    Improvement,
    Same,
    Undecided,
    NotApplicable,
    Error,
}

impl GateOutcome {
    pub fn word(self) -> &'static str {
        match self {
            GateOutcome::Regression => "regression",
            GateOutcome::Improvement => "improvement",
            GateOutcome::Same => "same",
            GateOutcome::Undecided => "undecided",
            GateOutcome::NotApplicable => "not_applicable",
            GateOutcome::Error => "error",
        }
    }

    /// Whether this outcome fails the gate under the policy.
    pub fn fails(self, undecided: UndecidedPolicy) -> bool {
        self == GateOutcome::Regression
            || (self == GateOutcome::Undecided && undecided == UndecidedPolicy::Fail)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GateResult {
    pub outcome: GateOutcome,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<CompareReport>,
    pub tool: String,
    pub threads: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GateReport {
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
    /// What the values are (instructions/op for `instructions`).
    #[serde(default, skip_serializing_if = "Metric::is_time")]
    pub metric: Metric,
}

pub const GATE_KIND: &str = "perfbisect-gate";

/// 1 when a regression (or, by policy, an undecided result) fails the gate,
/// else 2 when something could not be measured, else 0.
pub fn exit_code(results: &[GateResult], undecided: UndecidedPolicy) -> u8 {
    if results.iter().any(|r| r.outcome.fails(undecided)) {
        1
    } else if results.iter().any(|r| r.outcome == GateOutcome::Error) {
        2
    } else {
        0
    }
}

fn table(g: &GateReport) -> Table {
    let (base, head) = (
        format!("base {}", g.metric.unit_ascii()),
        format!("head {}", g.metric.unit_ascii()),
    );
    let mut t = Table::new(&[
        "tool",
        "threads",
        &base,
        &head,
        "change",
        "p (Welch)",
        "result",
    ])
    .numeric_from(1);
    for r in &g.results {
        let c = r.comparison.as_ref();
        let dash = || "-".to_string();
        t.push(vec![
            r.tool.clone(),
            r.threads.to_string(),
            c.map(|c| us(c.a_mean_us)).unwrap_or_else(dash),
            c.map(|c| us(c.b_mean_us)).unwrap_or_else(dash),
            c.map(|c| c.comparison.ratio.pct()).unwrap_or_else(dash),
            c.map(|c| format!("{:.2e}", c.p_welch)).unwrap_or_else(dash),
            match r.outcome {
                GateOutcome::Error | GateOutcome::NotApplicable => {
                    format!("{}: {}", r.outcome.word(), r.message)
                }
                o => o.word().to_string(),
            },
        ]);
    }
    t
}

fn summary_line(g: &GateReport) -> String {
    let n = |o: GateOutcome| g.results.iter().filter(|r| r.outcome == o).count();
    format!(
        "gate: {} regression(s), {} improvement(s), {} same, {} undecided, {} error(s) (threshold {:.1}%, {} vs {}) -> exit {}",
        n(GateOutcome::Regression),
        n(GateOutcome::Improvement),
        n(GateOutcome::Same),
        n(GateOutcome::Undecided),
        n(GateOutcome::Error),
        g.max_regression * 100.0,
        g.head,
        g.base,
        g.exit_code
    )
}

impl Export<GateReport> for Text {
    fn export(&self, g: &GateReport) -> Result<String> {
        // The verdict first, the table of what it was drawn from after it.
        Ok(format!("{}\n{}", summary_line(g), table(g).text()))
    }
}

impl Export<GateReport> for Markdown {
    fn export(&self, g: &GateReport) -> Result<String> {
        Ok(format!(
            "### perfbisect gate: `{}` vs `{}`\n\n{}\n\n{}",
            g.head,
            g.base,
            summary_line(g),
            table(g).markdown()
        ))
    }
}

/// One test case per (tool, threads), written by quick-junit (it counts the suite's tests,
/// failures, errors and skips, and escapes).
impl Export<GateReport> for Junit {
    fn export(&self, g: &GateReport) -> Result<String> {
        use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
        let mut suite = TestSuite::new(format!("perfbisect gate {} vs {}", g.head, g.base));
        for r in &g.results {
            let mut status = match r.outcome {
                o if o.fails(g.undecided) => TestCaseStatus::non_success(NonSuccessKind::Failure),
                GateOutcome::Error => TestCaseStatus::non_success(NonSuccessKind::Error),
                GateOutcome::NotApplicable => TestCaseStatus::skipped(),
                _ => TestCaseStatus::success(),
            };
            let passed = matches!(status, TestCaseStatus::Success { .. });
            if !passed {
                status.set_message(r.message.as_str());
            }
            let mut case = TestCase::new(format!("{} threads={}", r.tool, r.threads), status);
            case.set_classname("perfbisect.gate");
            if passed {
                case.set_system_out(r.message.as_str());
            }
            suite.add_test_case(case);
        }
        let mut report = Report::unnamed();
        report.add_test_suite(suite);
        Ok(report.to_string()?)
    }
}

impl HtmlSections for GateReport {
    fn section(&self, links: &Links) -> Result<Section> {
        let g = self;
        let heading = format!(
            "gate: <code>{}</code> against <code>{}</code>",
            esc(&g.head),
            esc(&g.base)
        );
        let word = match g.exit_code {
            0 => "pass",
            1 => "regression",
            _ => "error",
        };
        let mut summary = format!(
            "<p>{} {} (head {} against base {}).</p>\n",
            html::badge(word),
            esc(&summary_line(g)),
            links.html(
                &g.head_commit,
                g.head_commit.get(..10).unwrap_or(&g.head_commit)
            ),
            links.html(
                &g.base_commit,
                g.base_commit.get(..10).unwrap_or(&g.base_commit)
            ),
        );
        let notable: Vec<&GateResult> = g
            .results
            .iter()
            .filter(|r| r.outcome != GateOutcome::Same)
            .collect();
        if !notable.is_empty() {
            let items = notable.iter().map(|r| {
                format!(
                    "{} <code>{}</code> at {} thread(s): {}",
                    html::badge(r.outcome.word()),
                    esc(&r.tool),
                    r.threads,
                    esc(&r.message)
                )
            });
            summary.push_str(&List::bullets(items).html());
        }
        let tables = format!(
            "{}<p>Threshold {:.1}%, alpha {}, undecided results {}; host {}.</p>\n",
            table(g).html(),
            g.max_regression * 100.0,
            g.alpha,
            match g.undecided {
                UndecidedPolicy::Pass => "pass",
                UndecidedPolicy::Fail => "fail",
            },
            esc(&g.host.id())
        );
        Ok(Section {
            heading,
            summary,
            tables,
            plots: String::new(),
            reproduce: html::command(&reproduce_command(g)),
        })
    }
}

/// The `perfbisect gate` command line that checks these cells again.
fn reproduce_command(g: &GateReport) -> String {
    let mut cmd = format!("perfbisect gate --base {} --head {}", g.base, g.head);
    let mut tools: Vec<&str> = Vec::new();
    let mut threads: Vec<usize> = Vec::new();
    for r in &g.results {
        if !tools.contains(&r.tool.as_str()) {
            tools.push(&r.tool);
        }
        if !threads.contains(&r.threads) {
            threads.push(r.threads);
        }
    }
    for t in tools {
        cmd.push_str(&format!(" --tool '{t}'"));
    }
    let threads: Vec<String> = threads.iter().map(|t| t.to_string()).collect();
    cmd.push_str(&format!(
        " --threads {} --max-regression {} --alpha {}",
        threads.join(","),
        g.max_regression,
        g.alpha
    ));
    cmd
}

/// Print the gate's result, warn about undecided cells that pass, and
/// append the Markdown table to GitHub's step summary when there is one.
impl GateReport {
    pub fn emit(&self, format: GateFormat) -> Result<()> {
        let report = self;
        if let Ok(path) = std::env::var("GITHUB_STEP_SUMMARY") {
            if !path.is_empty() {
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .map_err(|e| {
                        anyhow::anyhow!("cannot append to GITHUB_STEP_SUMMARY {path}: {e}")
                    })?;
                f.write_all(Markdown.export(report)?.as_bytes())?;
            }
        }
        if report.undecided == UndecidedPolicy::Pass {
            for r in report
                .results
                .iter()
                .filter(|r| r.outcome == GateOutcome::Undecided)
            {
                eprintln!(
                "perfbisect: warning: {} at {} thread(s) is undecided; passing (--undecided fail to fail instead)",
                r.tool, r.threads
            );
            }
        }
        print!("{}", format.render(report)?);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use GateOutcome::*;

    fn result(outcome: GateOutcome) -> GateResult {
        GateResult {
            outcome,
            message: format!("{} <&>", outcome.word()),
            comparison: None,
            tool: "pkeyread".into(),
            threads: 1,
        }
    }

    #[test]
    fn exit_codes_follow_the_outcomes() {
        use UndecidedPolicy::*;
        assert_eq!(exit_code(&[result(Same), result(Improvement)], Pass), 0);
        assert_eq!(exit_code(&[result(Same), result(Regression)], Pass), 1);
        assert_eq!(exit_code(&[result(Undecided)], Pass), 0);
        assert_eq!(exit_code(&[result(Undecided)], Fail), 1);
        assert_eq!(exit_code(&[result(Error), result(Same)], Pass), 2);
        assert_eq!(exit_code(&[result(Error), result(Regression)], Pass), 1);
        assert_eq!(exit_code(&[result(NotApplicable)], Pass), 0);
    }

    #[test]
    fn junit_has_one_case_per_comparison_and_escapes() {
        let j = GateReport {
            metric: Metric::Time,
            kind: GATE_KIND.into(),
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
            results: vec![result(Regression), result(Same), result(Error)],
            exit_code: 1,
        };
        let x = Junit.export(&j).unwrap();
        assert_eq!(x.matches("<testcase ").count(), 3);
        assert!(x.contains("failures=\"1\" errors=\"1\""), "{x}");
        assert!(x.contains("regression &lt;&amp;&gt;"), "{x}");
        assert!(!x.contains("<&>"));
        // read back as written
        let back: GateReport = serde_json::from_str(&serde_json::to_string(&j).unwrap()).unwrap();
        assert_eq!(back.results[2].outcome, Error);
    }
}
