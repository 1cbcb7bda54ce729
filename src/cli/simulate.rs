use crate::cli::exit::Exit;
use crate::measure::metric::Metric;
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};

use super::args::{parse_effect, parse_threads, GridArg, ScheduleArgs, StatsArgs, StopArgs};
use crate::analysis::bisect::{Config, Spread};
use crate::analysis::simulate::noise::{self, NoiseFit, NoiseModel};
use crate::analysis::simulate::{self, SimConfig, SimStep};
use crate::report::export::check_schema;
use crate::report::simulate::{SimulateFormat, Simulated};

#[derive(Args)]
pub struct SimulateArgs {
    /// Commits in the simulated range
    #[arg(long, default_value = "1000", value_parser = super::args::parse_count)]
    commits: usize,
    /// A step: EFFECT[@COMMIT][/SPREAD][,count=EFFECT][,share=SHARE], e.g. 10% (random place), -5%@700, 10%/5 (gradual: over 5 consecutive commits), 12%@40,count=2% (with --locate: the count moves 2% where the clock moves 12%), or 50%@250,share=10% (a tenth of processes 1.5x slower, see --tail); repeatable
    #[arg(long = "step", value_name = "EFFECT[@COMMIT][/SPREAD][,count=EFFECT][,share=SHARE]", value_parser = parse_step, allow_hyphen_values = true)]
    steps: Vec<SimStep>,
    /// A transient step, undone exactly LEN commits later: EFFECT[@COMMIT]:LEN, e.g. 150%:40 (a x2.5 bump over 40 commits); repeatable
    #[arg(long = "transient", value_name = "EFFECT[@COMMIT]:LEN", value_parser = parse_transient, allow_hyphen_values = true)]
    transient: Vec<SimStep>,
    /// A step the clock sees and the count does not (memory, cache or contention), as --step: what --locate must find by searching in time; repeatable
    #[arg(long = "time-step", value_name = "EFFECT[@COMMIT][/SPREAD]", value_parser = parse_time_step, allow_hyphen_values = true)]
    time_steps: Vec<SimStep>,
    /// A step the count sees and the clock does not (instructions that cost no time), as
    /// --step: with --locate, a change point confirmed in time there is a wrong culprit;
    /// repeatable
    #[arg(long = "count-step", value_name = "EFFECT[@COMMIT][/SPREAD]", value_parser = parse_count_step, allow_hyphen_values = true)]
    count_steps: Vec<SimStep>,
    /// A step that a later commit undoes exactly (the range's ends agree), e.g. 10%; repeatable
    #[arg(long = "cancelling", value_name = "EFFECT", value_parser = parse_cancelling, allow_hyphen_values = true)]
    cancelling: Vec<SimStep>,
    /// Noise model: iid (log-normal only), realistic (CV 3%, 5% outliers x1.2-2, AR(1) drift 0.5%/sample), harsh (realistic + build offsets, load bursts, bimodal processes, order effects)
    #[arg(long, value_enum, default_value = "iid")]
    noise_model: NoiseModelArg,
    /// Replay the noise of an A/A run of your machine, sample by sample in the order taken: the JSON of `compare X X --format json` or `run --format json`, or a recorded trace of scripts/traces/
    #[arg(long, value_name = "FILE")]
    noise_from: Option<PathBuf>,
    /// With --noise-from: fit CV, outliers and AR(1) drift to it instead of replaying it
    #[arg(long, requires = "noise_from")]
    noise_fit: bool,
    /// Locate by count, confirm by clock: search on instruction counts, confirm every change point in time on the simulated machine; `auto`: only where the clock, at the ends' noise, cannot resolve --min-effect
    #[arg(long, value_enum, value_name = "METRIC")]
    locate: Option<super::args::LocateBy>,
    #[command(flatten)]
    count_effect: super::args::CountEffectArg,
    /// With --locate: sigma of a count's noise
    #[arg(long, default_value = "0.25%", value_parser = parse_rate, requires = "locate")]
    count_noise: f64,
    /// With --locate: machine seconds one count sample costs (a 1-second count sample under callgrind)
    #[arg(long, default_value = "2.5", value_parser = parse_seconds, requires = "locate")]
    count_seconds: f64,
    /// Machine seconds one time sample costs (the reports' machine time)
    #[arg(long, default_value_t = Metric::Time.default_duration(), value_parser = parse_seconds)]
    sample_seconds: f64,
    /// Noise: sigma of log-normal sample noise, e.g. 3% (default: 3%, or the preset's or fitted value)
    #[arg(long, value_parser = parse_effect, allow_hyphen_values = true)]
    noise: Option<f64>,
    /// Machine drift: sigma of its step per sample, e.g. 0.5%
    #[arg(long, value_parser = parse_rate)]
    drift: Option<f64>,
    /// AR(1) coefficient of the drift per sample; 1 = random walk (default: 0.99)
    #[arg(long, value_parser = parse_rate)]
    drift_phi: Option<f64>,
    /// Fraction of samples that are outliers, e.g. 5%
    #[arg(long, value_parser = parse_rate)]
    outliers: Option<f64>,
    /// Outlier factor range LO..HI, e.g. 1.2..2
    #[arg(long, value_parser = parse_range, value_name = "LO..HI")]
    outlier_size: Option<(f64, f64)>,
    /// Sigma of each build's own offset (layout effects), e.g. 0.5%
    #[arg(long, value_parser = parse_rate)]
    build_offset: Option<f64>,
    /// Chance per sample that a load burst (+10-30% for 20-100 samples) starts, e.g. 0.002
    #[arg(long, value_parser = parse_rate)]
    bursts: Option<f64>,
    /// Fraction of processes in the slow mode of a bimodal timing, e.g. 30%
    #[arg(long, value_parser = parse_rate)]
    bimodal: Option<f64>,
    /// How much slower the slow mode is (default: 8%)
    #[arg(long, value_parser = parse_rate)]
    bimodal_size: Option<f64>,
    /// Extra slow-down of the first sample of each round, e.g. 2%
    #[arg(long, value_parser = parse_rate)]
    order_effect: Option<f64>,
    /// Chance that a sample fails (the commit is then skipped), e.g. 0.1%
    #[arg(long, value_parser = parse_rate)]
    fail_rate: Option<f64>,
    /// Searches to run with the steps
    #[arg(long, default_value = "1000", value_parser = super::args::parse_count)]
    trials: usize,
    /// Searches to run on a range without any step, for the false-alarm rate (default: --trials)
    #[arg(long, value_parser = super::args::parse_count)]
    alarm_trials: Option<usize>,
    /// Fraction of commits whose build fails
    #[arg(long, default_value = "0")]
    skip_rate: f64,
    #[arg(long, default_value = "1")]
    seed: u64,
    /// Threads running trials (the results do not depend on it)
    #[arg(long, default_value = "1", value_parser = parse_threads)]
    jobs: usize,
    /// Measurement nodes the search samples on at once: a bisect probes min(N, 4) commits per
    /// wave, a scan searches N intervals side by side (as through Slurm's lanes)
    #[arg(long, default_value = "1", value_parser = super::args::parse_count, value_name = "N", conflicts_with = "baseline")]
    lanes: usize,
    #[command(flatten)]
    schedule: ScheduleArgs,
    #[command(flatten)]
    tail: super::args::TailArg,
    #[command(flatten)]
    stats: StatsArgs,
    #[command(flatten)]
    routing: super::args::RoutingArg,
    #[command(flatten)]
    stop: StopArgs,
    /// Plain bisect for comparison: 20 samples per commit, t-test at --alpha
    #[arg(long)]
    baseline: bool,
    /// Scan instead of bisect: a grid of --grid points, a step fit, then a search of every grid
    /// interval that changed
    #[arg(long, conflicts_with_all = ["baseline", "first_change_only", "max_changes"])]
    scan: bool,
    #[command(flatten)]
    grid: GridArg,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: SimulateFormat,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum NoiseModelArg {
    Iid,
    Realistic,
    Harsh,
}

fn parse_effect_value(eff: &str) -> Result<f64, String> {
    let t = eff.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("'{eff}' is not an effect such as 10% or -5%"))?;
    if v == 0.0 || !v.is_finite() || v <= -1.0 {
        return Err(format!("'{eff}' is not a usable step"));
    }
    Ok(v)
}

/// `EFFECT[@COMMIT][/SPREAD][,count=EFFECT]`; `plan --step` takes the same steps.
pub(crate) fn parse_step(s: &str) -> Result<SimStep, String> {
    let mut parts = s.split(',');
    let mut step = parse_plain_step(parts.next().unwrap_or_default())?;
    for option in parts {
        match option.split_once('=') {
            Some(("count", c)) => step.count_effect = Some(parse_count_value(c)?),
            Some(("share", v)) => step.share = Some(parse_share(v)?),
            _ => return Err(format!("'{option}' is not count=EFFECT or share=SHARE")),
        }
    }
    Ok(step)
}

/// The share of processes a tail step hits: in (0, 100%].
fn parse_share(v: &str) -> Result<f64, String> {
    let x = parse_effect_value(v).unwrap_or(f64::NAN);
    if x > 0.0 && x <= 1.0 {
        Ok(x)
    } else {
        Err(format!("'{v}' is not a share of processes in (0, 100%]"))
    }
}

/// A count's effect: as a step's, or 0 (the count does not move).
fn parse_count_value(c: &str) -> Result<f64, String> {
    if c.trim().trim_end_matches('%').trim().parse::<f64>() == Ok(0.0) {
        return Ok(0.0);
    }
    parse_effect_value(c)
}

fn parse_plain_step(s: &str) -> Result<SimStep, String> {
    let (rest, spread) = match s.split_once('/') {
        Some((r, k)) => match k.trim().parse::<usize>() {
            Ok(k) if k >= 1 => (r, k),
            _ => return Err(format!("'{k}' is not a number of commits to spread over")),
        },
        None => (s, 1),
    };
    let (eff, at) = match rest.split_once('@') {
        Some((e, a)) => (
            e,
            Some(
                a.trim()
                    .parse::<usize>()
                    .map_err(|_| format!("'{a}' is not a commit index"))?,
            ),
        ),
        None => (rest, None),
    };
    Ok(SimStep {
        spread,
        ..SimStep::at(parse_effect_value(eff)?, at)
    })
}

fn parse_time_step(s: &str) -> Result<SimStep, String> {
    Ok(SimStep {
        count_effect: Some(0.0),
        ..parse_plain_step(s)?
    })
}

fn parse_count_step(s: &str) -> Result<SimStep, String> {
    let step = parse_plain_step(s)?;
    Ok(SimStep {
        effect: 0.0,
        count_effect: Some(step.effect),
        ..step
    })
}

fn parse_transient(s: &str) -> Result<SimStep, String> {
    let (step, len) = s
        .rsplit_once(':')
        .ok_or_else(|| format!("'{s}' is not EFFECT[@COMMIT]:LEN, e.g. 150%:40"))?;
    let lasts = match len.trim().parse::<usize>() {
        Ok(l) if l >= 1 => l,
        _ => return Err(format!("'{len}' is not a number of commits the step lasts")),
    };
    if step.contains('/') {
        return Err(format!("'{s}': a transient step is not spread"));
    }
    Ok(SimStep {
        lasts: Some(lasts),
        ..parse_step(step)?
    })
}

fn parse_cancelling(s: &str) -> Result<SimStep, String> {
    Ok(SimStep {
        cancelled: true,
        ..SimStep::at(parse_effect_value(s)?, None)
    })
}

/// `5%`, `0.05`, `0` → a non-negative fraction.
fn parse_rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("'{s}' is not a number such as 5% or 0.05"))?;
    if !(v.is_finite() && v >= 0.0) {
        return Err(format!("'{s}' must be a non-negative number"));
    }
    Ok(v)
}

/// Positive seconds, e.g. 5 or 0.5.
fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("'{s}' is not a positive number of seconds")),
    }
}

fn parse_range(s: &str) -> Result<(f64, f64), String> {
    let (lo, hi) = s
        .split_once("..")
        .ok_or_else(|| format!("'{s}' is not a range such as 1.2..2"))?;
    let num = |v: &str| {
        v.trim()
            .parse::<f64>()
            .map_err(|_| format!("'{v}' is not a number"))
    };
    Ok((num(lo)?, num(hi)?))
}

/// Each subject's samples in the order taken, and how many subjects shared a round, from the
/// JSON of `compare --format json`, `run --format json`, or a recorded trace of this machine
/// (`scripts/traces/*-run-*.json`).
fn read_series(path: &Path) -> Result<(Vec<Vec<f64>>, usize, &'static str)> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    series_of(&text, path)
}

/// [`read_series`] of a file's text (`path` names it in errors).
pub(super) fn series_of(text: &str, path: &Path) -> Result<(Vec<Vec<f64>>, usize, &'static str)> {
    let v: serde_json::Value =
        serde_json::from_str(text).with_context(|| format!("{} is not JSON", path.display()))?;
    check_schema(path, &v)?;
    let nums = |v: Option<&serde_json::Value>| -> Vec<f64> {
        v.and_then(|v| v.as_array())
            .map(|a| a.iter().filter_map(|x| x.as_f64()).collect())
            .unwrap_or_default()
    };
    if v.get("verdict").is_some() && v.get("a_commit").is_some() {
        let series = vec![nums(v.get("a_samples_us")), nums(v.get("b_samples_us"))];
        if series.iter().any(Vec::is_empty) {
            bail!(
                "{} holds no raw samples (a_samples_us / b_samples_us): it was written by an older perfbisect; run `perfbisect compare X X --format json` again",
                path.display()
            );
        }
        return Ok((series, 2, "compare"));
    }
    // scripts/traces/*-run-*.json: one subject's samples, one after another.
    if v.get("kind").and_then(|k| k.as_str()) == Some("perfbisect-trace") {
        let series = nums(v.get("samples_us"));
        if series.is_empty() {
            bail!("{} holds no samples_us", path.display());
        }
        return Ok((vec![series], 1, "trace"));
    }
    if let Some(results) = v.get("results").and_then(|r| r.as_array()) {
        let series: Vec<Vec<f64>> = results
            .iter()
            .map(|r| {
                r.get("samples")
                    .and_then(|s| s.as_array())
                    .map(|s| {
                        s.iter()
                            .filter_map(|x| x.get("us_per_op")?.as_f64())
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .filter(|s: &Vec<f64>| !s.is_empty())
            .collect();
        if series.is_empty() {
            bail!("{} holds no samples", path.display());
        }
        let k = series.len();
        return Ok((series, k, "run"));
    }
    bail!(
        "{} is neither `perfbisect compare --format json`, `perfbisect run --format json` nor a recorded trace (scripts/traces/*-run-*.json)",
        path.display()
    )
}

/// The preset, or the fit, then every flag given on top.
fn noise_model(a: &SimulateArgs) -> Result<(NoiseModel, Option<NoiseFit>)> {
    let mut m = match a.noise_model {
        NoiseModelArg::Iid => NoiseModel::iid(0.03),
        NoiseModelArg::Realistic => NoiseModel::realistic(),
        NoiseModelArg::Harsh => NoiseModel::harsh(),
    };
    let mut fitted = None;
    if let Some(path) = &a.noise_from {
        let (series, per_round, source) = read_series(path)?;
        let phi = a.drift_phi.unwrap_or(noise::DEFAULT_PHI);
        let mut f = noise::fit(&series, per_round, phi, &m, source)?;
        f.file = path.display().to_string();
        if !a.noise_fit {
            f.model.trace = Some(noise::Trace::of(&series)?);
        }
        m = f.model.clone();
        fitted = Some(f);
    }
    let set = |field: &mut f64, v: Option<f64>| {
        if let Some(v) = v {
            *field = v;
        }
    };
    set(&mut m.cv, a.noise);
    set(&mut m.drift, a.drift);
    set(&mut m.drift_phi, a.drift_phi);
    set(&mut m.outlier_rate, a.outliers);
    set(&mut m.build_offset, a.build_offset);
    set(&mut m.burst_rate, a.bursts);
    set(&mut m.bimodal_rate, a.bimodal);
    set(&mut m.bimodal_size, a.bimodal_size);
    set(&mut m.order_effect, a.order_effect);
    set(&mut m.fail_rate, a.fail_rate);
    if let Some(r) = a.outlier_size {
        m.outlier_size = r;
    }
    m.validate()?;
    Ok((m, fitted))
}

pub fn run(a: SimulateArgs) -> Result<Exit> {
    a.count_effect
        .check(a.locate.is_some_and(|by| by.plan().is_some()))?;
    if a.commits < 2 {
        anyhow::bail!("--commits must be at least 2");
    }
    if !(0.0..1.0).contains(&a.skip_rate) {
        anyhow::bail!("--skip-rate must be in [0, 1)");
    }
    for s in a.steps.iter().chain(&a.time_steps).chain(&a.count_steps) {
        if let Some(at) = s.at {
            if at == 0 || at >= a.commits {
                anyhow::bail!("step position {at} is outside 1..{}", a.commits - 1);
            }
        }
    }
    let (noise, noise_fit) = noise_model(&a)?;
    let mut steps = a.steps.clone();
    steps.extend(a.time_steps.iter().cloned());
    steps.extend(a.count_steps.iter().cloned());
    steps.extend(a.transient.iter().cloned());
    steps.extend(a.cancelling.iter().cloned());
    let sc = SimConfig {
        commits: a.commits,
        steps,
        noise,
        trials: a.trials,
        alarm_trials: a.alarm_trials.unwrap_or(a.trials),
        seed: a.seed,
        skip_rate: a.skip_rate,
        cfg: Config {
            alpha: a.stats.alpha.alpha,
            min_effect: a.stats.min_effect,
            schedule: a.tail.schedule(&a.schedule, a.schedule.schedule()),
            max_changes: a.stop.max_changes(),
            min_share: a.stop.min_share,
            spread: Spread::Clock,
            tail: a.tail.tail,
            routing: a.routing.level(),
        },
        baseline: a.baseline,
        jobs: a.jobs,
        lanes: a.lanes,
        scan: a.scan.then_some(a.grid.grid),
        locate: (a.locate.filter(|by| by.plan().is_some())).map(|by| simulate::CountSim {
            noise: a.count_noise,
            min_effect: a.count_effect.value(),
            schedule: by.metric().default_schedule(),
            seconds: a.count_seconds,
            auto: by == super::args::LocateBy::Auto,
        }),
        sample_seconds: a.sample_seconds,
    };
    sc.cfg.validate(a.commits)?;
    let report = simulate::simulate(&sc)?;
    print!(
        "{}",
        a.format.render(&Simulated {
            config: sc,
            report,
            noise_fit
        })?
    );
    Ok(Exit::Done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cmd {
        #[command(flatten)]
        a: SimulateArgs,
    }

    fn args(v: &[&str]) -> SimulateArgs {
        Cmd::try_parse_from(std::iter::once("simulate").chain(v.iter().copied()))
            .unwrap()
            .a
    }

    #[test]
    fn steps_gradual_and_cancelling() {
        let s = parse_step("-5%@700/2").unwrap();
        assert_eq!(
            (s.effect, s.at, s.spread, s.cancelled),
            (-0.05, Some(700), 2, false)
        );
        assert_eq!(parse_step("10%/5").unwrap().spread, 5);
        assert!(parse_step("10%/0").is_err());
        assert!(parse_step("0%").is_err());
        assert!(parse_cancelling("8%").unwrap().cancelled);
        assert_eq!(parse_range("1.2..2"), Ok((1.2, 2.0)));
        assert!(parse_range("1.2-2").is_err());
    }

    #[test]
    fn flags_override_the_preset() {
        let (m, fit) = noise_model(&args(&["--noise-model", "realistic"])).unwrap();
        assert_eq!((m, fit), (NoiseModel::realistic(), None));
        let (m, _) = noise_model(&args(&[
            "--noise-model",
            "realistic",
            "--outliers",
            "0",
            "--noise",
            "2%",
            "--drift-phi",
            "1",
        ]))
        .unwrap();
        assert_eq!(
            (m.outlier_rate, m.cv, m.drift_phi, m.drift),
            (0.0, 0.02, 1.0, 0.005)
        );
        let (m, _) = noise_model(&args(&[])).unwrap();
        assert_eq!(m, NoiseModel::iid(0.03));
        assert!(noise_model(&args(&["--outlier-size", "0.5..2", "--outliers", "1%"])).is_err());
    }

    /// An A/A run of the realistic machine, as `compare X X --format json` and `run --format json`
    /// would write it.
    fn a_a_files(dir: &Path) -> (PathBuf, PathBuf) {
        use crate::analysis::bisect::{Measurer, Probe};
        use crate::analysis::simulate::SimMeasurer;
        let mut m = SimMeasurer::new(2, &[], &NoiseModel::realistic(), 0.0, 4).unwrap();
        let sides: Vec<Vec<f64>> = m
            .ensure(&[(0, 1500), (1, 1500)])
            .unwrap()
            .into_iter()
            .map(|p| match p {
                Probe::Samples(v) => v.values,
                Probe::Skip(r) => panic!("{r}"),
            })
            .collect();
        let compare = serde_json::json!({
            "tool": "randbytes", "a_commit": "x", "b_commit": "x", "verdict": "same",
            "a_samples_us": sides[0], "b_samples_us": sides[1],
        });
        let run = serde_json::json!({"results": sides.iter().map(|s| serde_json::json!({
            "target": "x",
            "samples": s.iter().map(|v| serde_json::json!({"us_per_op": v})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>()});
        let (c, r) = (dir.join("aa.json"), dir.join("run.json"));
        std::fs::write(&c, compare.to_string()).unwrap();
        std::fs::write(&r, run.to_string()).unwrap();
        (c, r)
    }

    #[test]
    fn noise_from_a_compare_or_run_file() {
        let d = tempfile::tempdir().unwrap();
        let (c, r) = a_a_files(d.path());
        for (path, source) in [(&c, "compare"), (&r, "run")] {
            let p = path.to_str().unwrap();
            let (m, fit) = noise_model(&args(&["--noise-from", p])).unwrap();
            let fit = fit.unwrap();
            assert_eq!(
                (fit.source.as_str(), fit.per_round, fit.samples),
                (source, 2, 3000)
            );
            assert_eq!(fit.file, p);
            assert!((m.outlier_rate - 0.05).abs() < 0.02, "{m:?}");
            assert!(m.drift > 0.002 && (m.cv - 0.03).abs() < 0.01, "{m:?}");
            // a flag still wins over the fit
            let (m, _) = noise_model(&args(&["--noise-from", p, "--outliers", "0"])).unwrap();
            assert_eq!(m.outlier_rate, 0.0);
        }
        let old = d.path().join("old.json");
        std::fs::write(
            &old,
            r#"{"verdict": "same", "a_commit": "x", "a_mean_us": 1.0}"#,
        )
        .unwrap();
        let e = noise_model(&args(&["--noise-from", old.to_str().unwrap()]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no raw samples"), "{e}");
        let other = d.path().join("other.json");
        std::fs::write(&other, "[1, 2]").unwrap();
        let e = noise_model(&args(&["--noise-from", other.to_str().unwrap()]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("neither"), "{e}");
    }

    /// The recorded traces kept in the repository replay as they were taken.
    #[test]
    fn noise_from_a_recorded_trace() {
        let t = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/traces/pkeyread-3.2.1-run-2026-12-04.json"
        );
        let (series, per_round, kind) = read_series(Path::new(t)).unwrap();
        assert_eq!(
            (series.len(), series[0].len(), per_round, kind),
            (1, 480, 1, "trace")
        );
        let (m, _) = noise_model(&args(&["--noise-from", t])).unwrap();
        assert_eq!(m.trace.map(|t| t.samples), Some(480));
    }
}
