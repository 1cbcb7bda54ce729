use anyhow::Result;
use clap::Args;
use serde::Serialize;
use std::process::ExitCode;

use super::bisect::{sequential_compare, StatArgs};
use super::build::BuildArgs;
use super::parse_threads;
use crate::analysis::bisect::Config;
use crate::analysis::stats::{Comparison, Verdict};
use crate::build::repo::CommitInfo;
use crate::cache::Cache;
use crate::measure::kernel::Registry;
use crate::measure::oracle::Oracle;
use crate::report::{us, Format};
use crate::Global;

#[derive(Args)]
pub struct CompareArgs {
    /// The baseline revision
    #[arg(value_name = "A")]
    a: String,
    /// The revision compared with A
    #[arg(value_name = "B")]
    b: String,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Args)]
pub struct VerifyArgs {
    /// The commit to check against its parent (REV^ vs REV)
    #[arg(value_name = "REV")]
    rev: String,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Args)]
pub struct CommonArgs {
    /// Tool spec NAME[:key=value,...]
    #[arg(long, value_name = "SPEC")]
    tool: String,
    /// Thread count
    #[arg(long, default_value = "1", value_parser = parse_threads)]
    threads: usize,
    #[command(flatten)]
    stat: StatArgs,
    #[command(flatten)]
    build: BuildArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(Serialize)]
pub struct CompareJson {
    pub tool: String,
    pub threads: usize,
    pub a: String,
    pub b: String,
    pub a_commit: String,
    pub b_commit: String,
    pub verdict: Verdict,
    /// mean(B) / mean(A) of µs/op: above 1 means B is slower.
    pub ratio: f64,
    pub ratio_ci: (f64, f64),
    pub p_welch: f64,
    pub p_mwu: f64,
    pub a_mean_us: f64,
    pub b_mean_us: f64,
    pub a_n: usize,
    pub b_n: usize,
    pub tests_disagree: bool,
    pub alpha: f64,
    pub min_effect: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

pub fn run_compare(g: &Global, a: CompareArgs) -> Result<ExitCode> {
    let (ra, rb) = (a.a.clone(), a.b.clone());
    compare_revs(g, &a.common, &ra, &rb)
}

pub fn run_verify(g: &Global, a: VerifyArgs) -> Result<ExitCode> {
    let (repo, _) = a.common.build.open()?;
    let c = repo.resolve(&a.rev)?;
    // Fails with a clear message on a root commit.
    repo.parent(&c)?;
    compare_revs(g, &a.common, &format!("{}^", a.rev), &a.rev)
}

/// Measure two revisions interleaved, growing samples until the verdict is
/// decided (or the cap), and print it.
pub fn compare_revs(g: &Global, o: &CommonArgs, a: &str, b: &str) -> Result<ExitCode> {
    let reg = Registry::load(g.kernels_dir.as_deref())?;
    let spec = reg.parse_spec(&o.tool)?;
    let (repo, recipe) = o.build.open()?;
    let ca = repo.resolve(a)?;
    let cb = repo.resolve(b)?;
    let cache = Cache::open(g.cache.as_deref())?;
    let cfg = Config {
        alpha: o.stat.alpha,
        min_effect: o.stat.min_effect,
        initial_samples: o.stat.samples.max(2),
        max_samples: o.stat.max_samples,
        first_change_only: true,
    };
    cfg.validate(2)?;
    let mut oracle = Oracle::new(
        &cache,
        &repo,
        o.build.options(&recipe),
        &spec,
        o.threads,
        o.stat.duration,
        vec![ca.clone(), cb.clone()],
    );
    oracle.timeout = o.stat.timeout;
    // Fresh, interleaved samples for this comparison (resumable); the two
    // sides never share samples, even in an A/A comparison.
    oracle.context = format!("compare {} {}", ca.id, cb.id);
    oracle.side = vec!["a".into(), "b".into()];
    let looks = cfg.schedule().len() as f64;
    let alpha_look = cfg.alpha / looks;
    let outcome = sequential_compare(&mut oracle, 0, 1, &cfg, alpha_look)?;
    let j = match outcome {
        Ok(c) => to_json(&spec.short(), o.threads, a, b, &ca, &cb, &c, &cfg, None),
        Err(skip) => {
            anyhow::bail!("cannot compare {a} and {b}: {skip}");
        }
    };
    match o.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&j)?),
        Format::Markdown => print!("{}", markdown(&j)),
        _ => print!("{}", text(&j)),
    }
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::too_many_arguments)]
pub fn to_json(
    tool: &str,
    threads: usize,
    a: &str,
    b: &str,
    ca: &CommitInfo,
    cb: &CommitInfo,
    c: &Comparison,
    cfg: &Config,
    skipped: Option<String>,
) -> CompareJson {
    CompareJson {
        tool: tool.to_string(),
        threads,
        a: a.to_string(),
        b: b.to_string(),
        a_commit: ca.id.clone(),
        b_commit: cb.id.clone(),
        verdict: c.verdict,
        ratio: c.ratio.ratio,
        ratio_ci: (c.ratio.lo, c.ratio.hi),
        p_welch: c.p_welch,
        p_mwu: c.p_mwu,
        a_mean_us: c.a.mean,
        b_mean_us: c.b.mean,
        a_n: c.a.n,
        b_n: c.b.n,
        tests_disagree: c.tests_disagree,
        alpha: cfg.alpha,
        min_effect: cfg.min_effect,
        skipped,
    }
}

pub fn verdict_sentence(j: &CompareJson) -> String {
    let pct = |r: f64| format!("{:+.1}%", (r - 1.0) * 100.0);
    match j.verdict {
        Verdict::Slower => format!("B is slower: {}", pct(j.ratio)),
        Verdict::Faster => format!("B is faster: {}", pct(j.ratio)),
        Verdict::Same => format!(
            "no significant change (any change is within ±{:.1}%)",
            j.min_effect * 100.0
        ),
        Verdict::Undecided => format!(
            "no significant change, but undecided: a change of ±{:.1}% cannot be ruled out with {} samples",
            j.min_effect * 100.0,
            j.a_n.min(j.b_n)
        ),
    }
}

fn text(j: &CompareJson) -> String {
    format!(
        "{} at {} thread(s)\n  A {} ({}): {} us/op (n={})\n  B {} ({}): {} us/op (n={})\n  B/A: {:+.1}% [{:+.1}%, {:+.1}%]  p(Welch)={:.2e}  p(Mann-Whitney)={:.2e}{}\nverdict: {}\n",
        j.tool,
        j.threads,
        j.a,
        &j.a_commit[..10],
        us(j.a_mean_us),
        j.a_n,
        j.b,
        &j.b_commit[..10],
        us(j.b_mean_us),
        j.b_n,
        (j.ratio - 1.0) * 100.0,
        (j.ratio_ci.0 - 1.0) * 100.0,
        (j.ratio_ci.1 - 1.0) * 100.0,
        j.p_welch,
        j.p_mwu,
        if j.tests_disagree { "  (the two tests disagree)" } else { "" },
        verdict_sentence(j)
    )
}

fn markdown(j: &CompareJson) -> String {
    format!(
        "| tool | threads | A µs/op | B µs/op | B/A | p (Welch) | verdict |\n| --- | ---: | ---: | ---: | --- | ---: | --- |\n| `{}` | {} | {} (`{}`) | {} (`{}`) | {:+.1}% [{:+.1}%, {:+.1}%] | {:.2e} | {:?} |\n",
        j.tool,
        j.threads,
        us(j.a_mean_us),
        j.a,
        us(j.b_mean_us),
        j.b,
        (j.ratio - 1.0) * 100.0,
        (j.ratio_ci.0 - 1.0) * 100.0,
        (j.ratio_ci.1 - 1.0) * 100.0,
        j.p_welch,
        j.verdict
    )
}
