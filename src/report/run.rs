//! The result of `run`: one line per (OpenSSL, tool, threads).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::export::formats;
use crate::analysis::stats;
use crate::measure::metric::Metric;
use crate::measure::runner::Sample;
use crate::report::{us, Table, Tabular};
use crate::unavailable::Unavailable;

formats!(RunFormat for RunReport { Text alias "table", Markdown, Csv, Json });

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunReport {
    /// What the values are (`mean_us` and friends hold instructions/op for
    /// `instructions`); absent for time.
    #[serde(default, skip_serializing_if = "Metric::is_time")]
    pub metric: Metric,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    pub results: Vec<RunResult>,
}

impl RunReport {
    pub fn new(metric: Metric, results: Vec<RunResult>) -> RunReport {
        RunReport {
            metric,
            unit: (!metric.is_time()).then(|| metric.unit().to_string()),
            results,
        }
    }
}

impl Tabular for RunReport {
    fn table(&self) -> Table {
        run_table(&self.results, self.metric)
    }
}

/// One (target, tool, threads) line of `perfbisect run`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
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
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters_us: BTreeMap<String, f64>,
    /// Why there is no number: the operation does not exist on this version (`kind`: too_old
    /// or not_applicable). Any other reason is an error of `run`, not a result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<Unavailable>,
    pub samples: Vec<Sample>,
}

impl RunResult {
    pub fn new(
        target: &str,
        spec: &crate::measure::kernel::ToolSpec,
        threads: usize,
        samples: Vec<Sample>,
        not_applicable: Option<Unavailable>,
        metric: Metric,
    ) -> RunResult {
        let xs: Vec<f64> = samples.iter().map(|s| s.value(metric)).collect();
        let s = (!xs.is_empty()).then(|| stats::summarize(&xs));
        // Rates and per-counter times are wall-clock figures: meaningless
        // under valgrind.
        let mb: Vec<f64> = if metric.is_time() {
            samples.iter().filter_map(|s| s.mb_per_s).collect()
        } else {
            Vec::new()
        };
        let mut counters_us = BTreeMap::new();
        let counters = if metric.is_time() {
            &spec.kernel.counters[..]
        } else {
            &[]
        };
        for name in counters {
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

fn run_table(results: &[RunResult], metric: Metric) -> Table {
    let multi_target = results
        .iter()
        .any(|r| r.target != results.first().map(|f| f.target.as_str()).unwrap_or(""));
    let with_mb = results.iter().any(|r| r.mb_per_s.is_some());
    let with_counters = results.iter().any(|r| !r.counters_us.is_empty());
    let mean = format!("mean {}", metric.unit_ascii());
    let mut headers = vec![
        "openssl", "tool", "threads", "n", &mean, "std dev", "95% CI",
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
                row.push(why.reason());
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
