use anyhow::Result;
use clap::Args;
use std::process::ExitCode;

use super::bisect::parse_effect;
use super::{parse_fraction, parse_samples};
use crate::analysis::bisect::Config;
use crate::analysis::simulate::{self, SimConfig, SimStep};
use crate::report::Format;

#[derive(Args)]
pub struct SimulateArgs {
    /// Commits in the simulated range
    #[arg(long, default_value = "1000")]
    commits: usize,
    /// A step: EFFECT[@COMMIT], e.g. 10% (random place) or -5%@700; repeatable
    #[arg(long = "step", value_name = "EFFECT[@COMMIT]", value_parser = parse_step, allow_hyphen_values = true)]
    steps: Vec<SimStep>,
    /// Noise: sigma of log-normal sample noise, e.g. 3%
    #[arg(long, default_value = "3%", value_parser = parse_effect, allow_hyphen_values = true)]
    noise: f64,
    /// Searches to run (and as many again on a no-change range for the false-alarm rate)
    #[arg(long, default_value = "1000")]
    trials: usize,
    /// Fraction of commits whose build fails
    #[arg(long, default_value = "0")]
    skip_rate: f64,
    #[arg(long, default_value = "1")]
    seed: u64,
    #[arg(long, default_value = "5", value_parser = parse_samples)]
    samples: usize,
    #[arg(long, default_value = "40", value_parser = parse_samples)]
    max_samples: usize,
    #[arg(long, default_value = "0.01", value_parser = parse_fraction, allow_negative_numbers = true)]
    alpha: f64,
    #[arg(long, default_value = "3%", value_parser = parse_effect, allow_hyphen_values = true)]
    min_effect: f64,
    #[arg(long)]
    first_change_only: bool,
    /// Plain bisect for comparison: 20 samples per commit, t-test at 0.05
    #[arg(long)]
    baseline: bool,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

fn parse_step(s: &str) -> Result<SimStep, String> {
    let (eff, at) = match s.split_once('@') {
        Some((e, a)) => (
            e,
            Some(
                a.trim()
                    .parse::<usize>()
                    .map_err(|_| format!("'{a}' is not a commit index"))?,
            ),
        ),
        None => (s, None),
    };
    let t = eff.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("'{eff}' is not an effect such as 10% or -5%"))?;
    if v == 0.0 || !v.is_finite() || v <= -1.0 {
        return Err(format!("'{eff}' is not a usable step"));
    }
    Ok(SimStep { effect: v, at })
}

pub fn run(a: SimulateArgs) -> Result<ExitCode> {
    if a.commits < 2 {
        anyhow::bail!("--commits must be at least 2");
    }
    if !(0.0..1.0).contains(&a.skip_rate) {
        anyhow::bail!("--skip-rate must be in [0, 1)");
    }
    for s in &a.steps {
        if let Some(at) = s.at {
            if at == 0 || at >= a.commits {
                anyhow::bail!("step position {at} is outside 1..{}", a.commits - 1);
            }
        }
    }
    let sc = SimConfig {
        commits: a.commits,
        steps: a.steps.clone(),
        noise: a.noise,
        trials: a.trials,
        seed: a.seed,
        skip_rate: a.skip_rate,
        cfg: Config {
            alpha: a.alpha,
            min_effect: a.min_effect,
            initial_samples: a.samples,
            max_samples: a.max_samples,
            first_change_only: a.first_change_only,
        },
        baseline: a.baseline,
    };
    sc.cfg.validate(a.commits)?;
    let r = simulate::simulate(&sc)?;
    if a.format == Format::Json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(ExitCode::SUCCESS);
    }
    let steps: Vec<String> = a
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
    println!(
        "{} trials, {} commits, steps [{}], noise {:.1}%, {}",
        r.trials,
        a.commits,
        steps.join(", "),
        a.noise * 100.0,
        if a.baseline {
            "baseline: 20 samples/commit, t-test at 0.05".to_string()
        } else {
            format!(
                "samples {}..{}, alpha {} (whole search), min effect {:.1}%",
                a.samples,
                a.max_samples,
                a.alpha,
                a.min_effect * 100.0
            )
        }
    );
    println!(
        "accuracy (exact change points):  {:.2}%",
        r.accuracy * 100.0
    );
    println!(
        "every step detected:             {:.2}%",
        r.detected_all_rate * 100.0
    );
    println!(
        "false alarms on no-change range: {:.2}%",
        r.false_alarm_rate * 100.0
    );
    println!("mean builds per bisect:          {:.1}", r.mean_builds);
    println!("mean samples per bisect:         {:.1}", r.mean_samples);
    println!(
        "mean samples per decision:       {:.1}",
        r.mean_samples_per_decision
    );
    println!(
        "flagged uncertain:               {:.2}%",
        r.uncertain_rate * 100.0
    );
    if r.errors > 0 {
        println!("searches that failed:            {}", r.errors);
    }
    Ok(ExitCode::SUCCESS)
}
