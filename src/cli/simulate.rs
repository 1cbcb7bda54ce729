use anyhow::Result;
use clap::Args;
use std::process::ExitCode;

use super::args::{parse_effect, ScheduleArgs, StatsArgs};
use crate::analysis::bisect::Config;
use crate::analysis::simulate::{self, SimConfig, SimStep};
use crate::report::simulate::{SimulateFormat, Simulated};

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
    #[command(flatten)]
    schedule: ScheduleArgs,
    #[command(flatten)]
    stats: StatsArgs,
    /// Stop at the oldest change instead of finding every change in the range
    #[arg(long)]
    first_change_only: bool,
    /// Plain bisect for comparison: 20 samples per commit, t-test at 0.05
    #[arg(long)]
    baseline: bool,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: SimulateFormat,
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
            alpha: a.stats.alpha.alpha,
            min_effect: a.stats.min_effect,
            schedule: a.schedule.schedule(),
            first_change_only: a.first_change_only,
        },
        baseline: a.baseline,
    };
    sc.cfg.validate(a.commits)?;
    let report = simulate::simulate(&sc)?;
    print!("{}", a.format.render(&Simulated { config: sc, report })?);
    Ok(ExitCode::SUCCESS)
}
