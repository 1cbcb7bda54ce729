//! The result of `simulate`: the search's accuracy and cost on simulated
//! commits, with the configuration that produced it.

use anyhow::Result;
use serde::Serialize;

use super::export::{formats, Export, Text};
use crate::analysis::simulate::{SimConfig, SimReport};

formats!(SimulateFormat for Simulated { Text, Json });

/// JSON is the report alone (its shape is pinned); text restates the
/// configuration in its first line.
#[derive(Serialize)]
pub struct Simulated {
    #[serde(skip)]
    pub config: SimConfig,
    #[serde(flatten)]
    pub report: SimReport,
}

impl Export<Simulated> for Text {
    fn export(&self, s: &Simulated) -> Result<String> {
        let (c, r) = (&s.config, &s.report);
        let steps: Vec<String> = c
            .steps
            .iter()
            .map(|s| {
                format!(
                    "{:+.1}%@{}",
                    s.effect * 100.0,
                    s.at.map(|x| x.to_string())
                        .unwrap_or_else(|| "random".into())
                )
            })
            .collect();
        let how = if c.baseline {
            "baseline: 20 samples/commit, t-test at 0.05".to_string()
        } else {
            format!(
                "samples {}..{}, alpha {} (whole search), min effect {:.1}%",
                c.cfg.schedule.initial,
                c.cfg.schedule.max,
                c.cfg.alpha,
                c.cfg.min_effect * 100.0
            )
        };
        let mut out = format!(
            "{} trials, {} commits, steps [{}], noise {:.1}%, {how}\n",
            r.trials,
            c.commits,
            steps.join(", "),
            c.noise * 100.0
        );
        let pct = |v: f64| format!("{:.2}%", v * 100.0);
        for (label, value) in [
            ("accuracy (exact change points):", pct(r.accuracy)),
            ("every step detected:", pct(r.detected_all_rate)),
            ("false alarms on no-change range:", pct(r.false_alarm_rate)),
            ("mean builds per bisect:", format!("{:.1}", r.mean_builds)),
            ("mean samples per bisect:", format!("{:.1}", r.mean_samples)),
            (
                "mean samples per decision:",
                format!("{:.1}", r.mean_samples_per_decision),
            ),
            ("flagged uncertain:", pct(r.uncertain_rate)),
        ] {
            out.push_str(&format!("{label:<33}{value}\n"));
        }
        if r.errors > 0 {
            out.push_str(&format!("{:<33}{}\n", "searches that failed:", r.errors));
        }
        Ok(out)
    }
}
