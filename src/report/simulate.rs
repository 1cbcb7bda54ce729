//! The result of `simulate`: the search's accuracy and cost on simulated
//! commits, with the configuration that produced it.

use crate::analysis::alpha::RoutingLevel;
use anyhow::Result;
use serde::Serialize;

use super::export::{formats, Export, Text};
use crate::analysis::simulate::noise::NoiseFit;
use crate::analysis::simulate::{SimConfig, SimReport};

formats!(SimulateFormat for Simulated { Text, Json });

/// JSON is the report alone (its shape is pinned); text restates the
/// configuration in its first line.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Simulated {
    #[serde(skip)]
    pub config: SimConfig,
    #[serde(flatten)]
    pub report: SimReport,
    /// What `--noise-from` fitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise_fit: Option<NoiseFit>,
}

impl Export<Simulated> for Text {
    fn export(&self, s: &Simulated) -> Result<String> {
        let (c, r) = (&s.config, &s.report);
        let alarms = if r.alarm_trials == r.trials {
            String::new()
        } else {
            format!(" ({} without steps)", r.alarm_trials)
        };
        let mut out = format!(
            "{} trials{alarms}, {} commits, steps [{}], {}, {}\n",
            r.trials,
            c.commits,
            steps(c),
            c.noise.describe(),
            search(c)
        );
        if let Some(f) = &s.noise_fit {
            out.push_str(&fit_lines(f));
        }
        for (label, value) in figures(r) {
            out.push_str(&format!("{label:<33}{value}\n"));
        }
        let pct = |v: f64| format!("{:.2}%", v * 100.0);
        for f in &r.steps_found {
            let label = format!("reported: {}", f.step);
            let width = 33.max(label.len() + 1);
            out.push_str(&format!("{label:<width$}{}\n", pct(f.found)));
        }
        if r.errors > 0 {
            out.push_str(&format!("{:<33}{}\n", "searches that failed:", r.errors));
        }
        if r.trace_exhausted > 0 {
            out.push_str(&format!(
                "{:<33}{} (needed more samples than the trace holds: scored as failed, never replayed twice)\n",
                "searches out of trace:", r.trace_exhausted
            ));
        }
        Ok(out)
    }
}

/// The simulated steps as the command line gives them (`+10.0%@50/4 undone later`).
fn steps(c: &SimConfig) -> String {
    let steps: Vec<String> = c
        .steps
        .iter()
        .map(|s| {
            let effect = if s.count_only() {
                "count ".to_string()
            } else {
                format!("{:+.1}%", s.effect * 100.0)
            };
            format!(
                "{effect}@{}{}{}{}{}{}",
                s.at.map(|x| x.to_string())
                    .unwrap_or_else(|| "random".into()),
                if s.spread > 1 {
                    format!("/{}", s.spread)
                } else {
                    String::new()
                },
                if s.cancelled { " undone later" } else { "" },
                s.lasts
                    .map(|l| format!(" for {l} commits"))
                    .unwrap_or_default(),
                s.count_label(),
                (s.share)
                    .map(|x| format!(" in {:.0}% of processes", x * 100.0))
                    .unwrap_or_default()
            )
        })
        .collect();
    steps.join(", ")
}

/// The search simulated and its error control.
fn search(c: &SimConfig) -> String {
    let sequential = |whole: &str| {
        format!(
            "samples {}..{}, alpha {} (whole {whole}), routing {}, min effect {:.1}%",
            c.cfg.schedule.initial,
            c.cfg.schedule.max,
            c.cfg.alpha,
            match c.cfg.routing {
                RoutingLevel::Family => "in the family".to_string(),
                level => format!("{level} per decision"),
            },
            c.cfg.min_effect * 100.0
        )
    };
    if let Some(g) = c.scan {
        format!("scan: grid of {g}, then searches at {}", sequential("scan"))
    } else if c.baseline {
        format!("baseline: 20 samples/commit, t-test at {}", c.cfg.alpha)
    } else if let Some(l) = &c.locate {
        format!(
            "located by count{} (noise {:.2}%, min effect {}%, samples {}..{}, {} s each), confirmed by clock at {}",
            if l.auto {
                " where the clock falls short of --min-effect"
            } else {
                ""
            },
            l.noise * 100.0,
            l.min_effect * 100.0,
            l.schedule.initial,
            l.schedule.max,
            l.seconds,
            sequential("search")
        )
    } else {
        sequential("search")
    }
}

/// The report's figures, labelled, in the order they are printed.
fn figures(r: &SimReport) -> Vec<(&'static str, String)> {
    let pct = |v: f64| format!("{:.2}%", v * 100.0);
    vec![
        ("accuracy (exact change points):", pct(r.accuracy)),
        ("every step detected:", pct(r.detected_all_rate)),
        ("false alarms on no-change range:", pct(r.false_alarm_rate)),
        ("  of them confirmed culprits:", pct(r.false_culprit_rate)),
        (
            "  of them located, unresolved:",
            pct(r.false_unresolved_rate),
        ),
        ("mean builds per bisect:", format!("{:.1}", r.mean_builds)),
        ("mean samples per bisect:", format!("{:.1}", r.mean_samples)),
        (
            "mean machine time per bisect:",
            format!("{:.0} s of sampling", r.mean_machine_s),
        ),
        (
            "mean samples per decision:",
            format!("{:.1}", r.mean_samples_per_decision),
        ),
        (
            "first printed = largest step:",
            pct(r.first_is_largest_rate),
        ),
        (
            "builds until it is printed:",
            format!("{:.1}", r.mean_builds_to_first),
        ),
        (
            "samples until it is printed:",
            format!("{:.1}", r.mean_samples_to_first),
        ),
        ("flagged uncertain:", pct(r.uncertain_rate)),
        ("wrong culprits reported:", pct(r.wrong_culprit_rate)),
        ("wrong places, unresolved:", pct(r.wrong_unresolved_rate)),
        ("unconfirmed candidates:", pct(r.unconfirmed_rate)),
        (
            "intervals covering true ratio:",
            match r.interval_coverage {
                Some(v) => format!("{} of {}", pct(v), r.intervals_scored),
                None => "-".into(),
            },
        ),
        (
            "misses >= 5% named by a bound:",
            match r.misses_named {
                Some(v) => format!("{} of {}", pct(v), r.misses),
                None => "- (no miss)".into(),
            },
        ),
        (
            "  inside a net-change bound:",
            match r.misses_net_only {
                Some(v) => format!("{} (said: steps that cancel there are not bounded)", pct(v)),
                None => "-".into(),
            },
        ),
        (
            "stated resolution (median):",
            match r.stated_resolution {
                Some(v) => format!(
                    "{} (found with >= 80% per comparison, as the runs said)",
                    pct(v)
                ),
                None => "-".into(),
            },
        ),
    ]
}

fn fit_lines(f: &NoiseFit) -> String {
    let m = &f.model;
    let pct = |v: f64| format!("{:.2}%", v * 100.0);
    let outliers = if m.outlier_rate > 0.0 {
        format!(
            "{} of samples x{:.2}-{:.2}",
            pct(m.outlier_rate),
            m.outlier_size.0,
            m.outlier_size.1
        )
    } else {
        "none".into()
    };
    let few = if f.samples < 100 {
        "  few samples: the fit is rough (`compare X X --samples 50 --max-samples 50` gives 100)\n"
    } else {
        ""
    };
    format!(
        "noise fitted from {} ({} output, {} subject(s), {} samples, {} per round):\n  \
         spread of log us/op without outliers: {}; lag-1 autocorrelation {:.3}\n  \
         -> iid noise {}, AR(1) drift {}/sample at phi {} (assumed), outliers {}\n  \
         not fitted (preset or flags): {}\n{few}",
        f.file,
        f.source,
        f.series,
        f.samples,
        f.per_round,
        pct(f.total_cv),
        f.lag1,
        pct(m.cv),
        pct(m.drift),
        m.drift_phi,
        outliers,
        f.not_fitted.join(", ")
    )
}
