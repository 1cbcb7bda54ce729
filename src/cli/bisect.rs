use anyhow::{bail, Context, Result};
use clap::Args;
use serde::Serialize;
use std::process::ExitCode;
use std::time::Instant;

use super::build::BuildArgs;
use super::{parse_duration, parse_fraction, parse_samples, parse_threads};
use crate::analysis::bisect::{self, ChangePoint, Config, Measurer, Outcome, Step, StepVerdict};
use crate::analysis::stats::{self, Comparison, Verdict};
use crate::build::repo::{self, CommitInfo};
use crate::cache::{self, Cache};
use crate::measure::kernel::Registry;
use crate::measure::oracle::{BuildUse, Oracle};
use crate::report::{us, Format};
use crate::{hashing, progress, Global};

#[derive(Args, Clone)]
pub struct StatArgs {
    /// Samples per commit to start with
    #[arg(long, default_value = "5", value_parser = parse_samples)]
    pub samples: usize,
    /// Most samples per commit before a comparison is called ambiguous
    #[arg(long, default_value = "40", value_parser = parse_samples)]
    pub max_samples: usize,
    /// Seconds each sample measures for
    #[arg(long, default_value = "1", value_parser = parse_duration, allow_negative_numbers = true, value_name = "SECONDS")]
    pub duration: f64,
    /// Kill a sample after this many seconds (default: 30 + 4 x duration)
    #[arg(long, value_parser = parse_duration, allow_negative_numbers = true, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Error rate of the whole search (split across its tests)
    #[arg(long, default_value = "0.01", value_parser = parse_fraction, allow_negative_numbers = true)]
    pub alpha: f64,
    /// Smallest change worth finding, e.g. 3% or 0.03
    #[arg(long, default_value = "3%", value_parser = parse_effect, allow_hyphen_values = true)]
    pub min_effect: f64,
}

/// `3%`, `0.03` → 0.03; must be more than 0.
pub fn parse_effect(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = if let Some(p) = t.strip_suffix('%') {
        p.trim().parse::<f64>().map(|v| v / 100.0)
    } else {
        t.parse::<f64>()
    }
    .map_err(|_| format!("'{s}' is not an effect size such as 3% or 0.03"))?;
    if !(v.is_finite() && v > 0.0) {
        return Err("the minimum effect must be more than 0".into());
    }
    Ok(v)
}

#[derive(Args)]
pub struct BisectArgs {
    /// GOOD..BAD (old..new): tags, branches or shas of --repo
    #[arg(value_name = "GOOD..BAD")]
    range: String,
    /// Tool spec NAME[:key=value,...]
    #[arg(long, value_name = "SPEC")]
    tool: String,
    /// Thread count
    #[arg(long, default_value = "1", value_parser = parse_threads)]
    threads: usize,
    #[command(flatten)]
    stat: StatArgs,
    /// Stop at the oldest change instead of finding every change in the range
    #[arg(long)]
    first_change_only: bool,
    #[command(flatten)]
    build: BuildArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(Serialize)]
struct CommitJson {
    commit: String,
    short: String,
    date: String,
    /// Only when more than a day away from the committer date (`date`).
    #[serde(skip_serializing_if = "Option::is_none")]
    author_date: Option<String>,
    author: String,
    subject: String,
}

impl From<&CommitInfo> for CommitJson {
    fn from(c: &CommitInfo) -> Self {
        CommitJson {
            commit: c.id.clone(),
            short: c.short.clone(),
            date: c.date.clone(),
            author_date: c.author_date.clone(),
            author: c.author.clone(),
            subject: c.summary.clone(),
        }
    }
}

impl CommitJson {
    fn dates(&self) -> String {
        match &self.author_date {
            Some(a) => format!("{} (authored {a})", self.date),
            None => self.date.clone(),
        }
    }
}

#[derive(Serialize)]
struct CulpritJson {
    commit: String,
    parent: String,
    /// True when skipped commits leave a range: the change is in parent..commit.
    range: bool,
    skipped: Vec<String>,
    #[serde(flatten)]
    info: CommitJson,
    ratio: f64,
    ratio_ci: (f64, f64),
    p_welch: f64,
    p_mwu: f64,
    parent_mean_us: f64,
    culprit_mean_us: f64,
    partial: bool,
    uncertain: bool,
    comparison: Comparison,
}

#[derive(Serialize)]
struct StepJson {
    #[serde(flatten)]
    info: CommitJson,
    n: usize,
    mean_us: f64,
    ci95_us: (f64, f64),
    verdict: String,
    position: Option<f64>,
}

#[derive(Serialize)]
pub struct BisectJson {
    tool: String,
    threads: usize,
    range: String,
    repo: String,
    recipe: String,
    good: CommitJson,
    bad: CommitJson,
    merge_base: Option<CommitJson>,
    direction: Verdict,
    ends: Comparison,
    outcome: String,
    culprits: Vec<CulpritJson>,
    steps: Vec<StepJson>,
    builds: Vec<BuildUse>,
    samples: usize,
    samples_taken_now: usize,
    alpha_per_test: f64,
    min_effect: f64,
    wall_s: f64,
    reproduce: String,
}

fn verdict_word(v: &StepVerdict) -> String {
    match v {
        StepVerdict::Old => "old".into(),
        StepVerdict::New => "new".into(),
        StepVerdict::Between => "between (part of the change)".into(),
        StepVerdict::Ambiguous => "ambiguous".into(),
        StepVerdict::Skipped(r) => format!("skipped: {r}"),
    }
}

fn step_line(s: &Step, c: &CommitInfo) -> String {
    let mean = if s.mean.is_finite() {
        format!(
            "n={:<3} {:>10} us [{}, {}]",
            s.n,
            us(s.mean),
            us(s.ci95.0),
            us(s.ci95.1)
        )
    } else {
        format!("n={:<3} {:>10}", s.n, "-")
    };
    format!(
        "  {} {}  {}  {:<8} {}",
        c.short,
        c.dates(),
        mean,
        verdict_word(&s.verdict),
        c.summary
    )
}

fn reproduce(a: &BisectArgs) -> String {
    let mut s = format!(
        "perfbisect bisect --repo {} --recipe {} --tool '{}' --threads {} --samples {} --max-samples {} --duration {} --alpha {} --min-effect {}",
        a.build.repo.display(),
        a.build.recipe,
        a.tool,
        a.threads,
        a.stat.samples,
        a.stat.max_samples,
        a.stat.duration,
        a.stat.alpha,
        a.stat.min_effect
    );
    if a.first_change_only {
        s.push_str(" --first-change-only");
    }
    s.push(' ');
    s.push_str(&a.range);
    s
}

pub fn run(g: &Global, a: BisectArgs) -> Result<ExitCode> {
    let started = Instant::now();
    let (good, bad) = repo::split_range(&a.range)?;
    let cfg = Config {
        alpha: a.stat.alpha,
        min_effect: a.stat.min_effect,
        initial_samples: a.stat.samples.max(2),
        max_samples: a.stat.max_samples,
        first_change_only: a.first_change_only,
    };
    cfg.validate(2)?;
    let reg = Registry::load(g.kernels_dir.as_deref())?;
    let spec = reg.parse_spec(&a.tool)?;
    let (repo, recipe) = a.build.open()?;
    let range = repo.range(&good, &bad)?;
    let cache = Cache::open(g.cache.as_deref())?;
    let n = range.commits.len();
    cfg.validate(n)?;

    let id = {
        let mut h = hashing::Hasher::new();
        h.field(
            &repo
                .path
                .canonicalize()
                .unwrap_or(repo.path.clone())
                .to_string_lossy(),
        )
        .field(&range.good.id)
        .field(&range.bad.id)
        .field(&spec.canonical())
        .field(&a.threads.to_string())
        .field(&a.build.recipe)
        .field(&format!("{:?}", cfg))
        .field(&a.stat.duration.to_string());
        h.finish_short()
    };
    let text = a.format == Format::Text || a.format == Format::Table;
    let say = |s: &str| {
        if text {
            println!("{s}");
        } else {
            progress::info(s);
        }
    };
    say(&format!(
        "bisecting {} at {} thread(s) over {} commits ({}..{}), recipe {}",
        spec.short(),
        a.threads,
        n,
        range.good.short,
        range.bad.short,
        recipe.name
    ));
    let mut commits = range.commits.clone();
    // GOOD itself, when the list starts at a merge base: kept past the end
    // of the searched indices.
    let good_idx = range.merge_base.as_ref().map(|_| {
        commits.push(range.good.clone());
        commits.len() - 1
    });
    let mut oracle = Oracle::new(
        &cache,
        &repo,
        a.build.options(&recipe),
        &spec,
        a.threads,
        a.stat.duration,
        commits,
    );
    oracle.timeout = a.stat.timeout;
    // Samples belong to this bisect: a re-run resumes with them, another
    // bisect takes its own, interleaved.
    oracle.context = format!("bisect {id}");
    save_state(&cache, &id, &a, "running", None)?;

    if let (Some(mb), Some(gi)) = (&range.merge_base, good_idx) {
        say(&format!(
            "{good} is not an ancestor of {bad}: testing the merge base {} ({}) first, as git bisect does",
            mb.short,
            mb.dates()
        ));
        let cmp = sequential_compare(&mut oracle, gi, 0, &cfg, cfg.alpha / 4.0)?;
        match cmp {
            Err(skip) => bail!("cannot measure the merge base or {good}: {skip}"),
            Ok(c) if matches!(c.verdict, Verdict::Slower | Verdict::Faster) => {
                bail!(
                    "the merge base {} already differs from {good} ({}): the change is on {good}'s branch, not between the merge base and {bad}",
                    mb.short,
                    c.ratio.pct()
                );
            }
            Ok(c) => say(&format!(
                "  merge base {} behaves like {good} ({}): searching {}..{bad}",
                mb.short,
                c.ratio.pct(),
                mb.short
            )),
        }
    }

    {
        let print_steps = text;
        oracle.on_step = Some(Box::new(move |s: &Step, c: &CommitInfo| {
            let line = step_line(s, c);
            if print_steps {
                println!("{line}");
            } else {
                progress::info(&line);
            }
        }));
    }
    let result = match bisect::search(n, &cfg, &mut oracle) {
        Ok(r) => r,
        Err(e) => {
            // After Ctrl-C, whatever failed on the way out (a child killed by
            // the signal, say) is part of the interruption: exit 130 with the
            // resume hint, not a failure.
            if crate::interrupt::is_interrupted(&e) || crate::interrupt::interrupted() {
                save_state(&cache, &id, &a, "interrupted", None)?;
                return Err(crate::interrupt::Interrupted.into());
            }
            save_state(&cache, &id, &a, "failed", None)?;
            return Err(e);
        }
    };
    oracle.on_step = None;
    let commits = &oracle.commits;
    let samples_total: usize = (0..commits.len())
        .filter_map(|i| oracle.samples_of(i).map(|s| s.len()))
        .sum();

    let culprits: Vec<CulpritJson> = match &result.outcome {
        Outcome::NoChange => Vec::new(),
        Outcome::Changes(cps) => cps.iter().map(|cp| culprit_json(cp, commits)).collect(),
    };
    let json = BisectJson {
        tool: spec.short(),
        threads: a.threads,
        range: a.range.clone(),
        repo: a.build.repo.display().to_string(),
        recipe: recipe.name.clone(),
        good: (&range.good).into(),
        bad: (&range.bad).into(),
        merge_base: range.merge_base.as_ref().map(|m| m.into()),
        direction: result.direction,
        ends: result.ends,
        outcome: match &result.outcome {
            Outcome::NoChange => "no_change".into(),
            Outcome::Changes(c) => format!("{} change(s)", c.len()),
        },
        culprits,
        steps: result
            .steps
            .iter()
            .map(|s| StepJson {
                info: (&commits[s.commit]).into(),
                n: s.n,
                mean_us: s.mean,
                ci95_us: s.ci95,
                verdict: verdict_word(&s.verdict),
                position: s.position,
            })
            .collect(),
        builds: oracle.builds.values().cloned().collect(),
        samples: samples_total,
        samples_taken_now: oracle.samples_taken,
        alpha_per_test: result.alpha_per_test,
        min_effect: cfg.min_effect,
        wall_s: started.elapsed().as_secs_f64(),
        reproduce: reproduce(&a),
    };
    save_state(&cache, &id, &a, "finished", Some(&json))?;
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&json)?),
        Format::Markdown => print!("{}", markdown(&json)),
        _ => print!("{}", text_result(&json)),
    }
    Ok(ExitCode::SUCCESS)
}

fn culprit_json(cp: &ChangePoint, commits: &[CommitInfo]) -> CulpritJson {
    let c = &commits[cp.first_new];
    let p = &commits[cp.last_old];
    CulpritJson {
        commit: c.id.clone(),
        parent: p.id.clone(),
        range: cp.first_new > cp.last_old + 1,
        skipped: cp
            .skipped_between
            .iter()
            .map(|i| commits[*i].id.clone())
            .collect(),
        info: c.into(),
        ratio: cp.comparison.ratio.ratio,
        ratio_ci: (cp.comparison.ratio.lo, cp.comparison.ratio.hi),
        p_welch: cp.comparison.p_welch,
        p_mwu: cp.comparison.p_mwu,
        parent_mean_us: cp.comparison.a.mean,
        culprit_mean_us: cp.comparison.b.mean,
        partial: cp.partial,
        uncertain: cp.uncertain,
        comparison: cp.comparison,
    }
}

fn direction_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Slower => "slowdown (regression)",
        Verdict::Faster => "speed-up (fix)",
        Verdict::Same => "no change",
        Verdict::Undecided => "undecided",
    }
}

fn text_result(j: &BisectJson) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "\nends: {} {} us/op (n={}) -> {} {} us/op (n={}): {} {}, p(Welch)={:.2e}\n",
        j.good.short,
        us(j.ends.a.mean),
        j.ends.a.n,
        j.bad.short,
        us(j.ends.b.mean),
        j.ends.b.n,
        direction_word(j.direction),
        j.ends.ratio.pct(),
        j.ends.p_welch
    ));
    if j.culprits.is_empty() {
        s.push_str(&format!(
            "result: the ends do not differ by at least {:.1}% with significance ({}); nothing to bisect\n",
            j.min_effect * 100.0,
            match j.direction {
                Verdict::Same => "they are the same within that margin",
                _ => "undecided at the sample cap: more samples or a larger --min-effect may decide",
            }
        ));
    }
    for (i, c) in j.culprits.iter().enumerate() {
        let head = if c.range {
            format!(
                "the change is in one of {}..{} ({} skipped commit(s) between)",
                &c.parent[..10],
                &c.commit[..10],
                c.skipped.len()
            )
        } else {
            format!("culprit {}", c.info.commit)
        };
        s.push_str(&format!(
            "\nresult {}: {head}{}{}\n",
            i + 1,
            if c.partial {
                " [part of the range's change]"
            } else {
                ""
            },
            if c.uncertain { " [uncertain]" } else { "" }
        ));
        s.push_str(&format!(
            "  author:  {}\n  date:    {}\n  subject: {}\n",
            c.info.author,
            c.info.dates(),
            c.info.subject
        ));
        s.push_str(&format!(
            "  parent {} {} us/op (n={}) -> {} {} us/op (n={})\n",
            &c.parent[..10],
            us(c.parent_mean_us),
            c.comparison.a.n,
            &c.commit[..10],
            us(c.culprit_mean_us),
            c.comparison.b.n
        ));
        s.push_str(&format!(
            "  change:  {}  p(Welch)={:.2e}  p(Mann-Whitney)={:.2e}{}\n",
            c.comparison.ratio.pct(),
            c.p_welch,
            c.p_mwu,
            if c.comparison.tests_disagree {
                "  (the two tests disagree: check for outliers)"
            } else {
                ""
            }
        ));
    }
    let fresh = j.builds.iter().filter(|b| b.fresh).count();
    let failed = j.builds.iter().filter(|b| !b.ok).count();
    s.push_str(&format!(
        "\nbuilds used: {} ({} built now, {} failed)  samples: {} ({} taken now)  wall time: {:.0} s\n",
        j.builds.len(),
        fresh,
        failed,
        j.samples,
        j.samples_taken_now,
        j.wall_s
    ));
    s.push_str(&format!("reproduce: {}\n", j.reproduce));
    s
}

fn markdown(j: &BisectJson) -> String {
    let mut s = format!(
        "### perfbisect: `{}` at {} thread(s), `{}`\n\n",
        j.tool, j.threads, j.range
    );
    s.push_str(&format!(
        "Ends: `{}` {} µs/op → `{}` {} µs/op: **{}** {} (p={:.2e})\n\n",
        j.good.short,
        us(j.ends.a.mean),
        j.bad.short,
        us(j.ends.b.mean),
        direction_word(j.direction),
        j.ends.ratio.pct(),
        j.ends.p_welch
    ));
    if !j.culprits.is_empty() {
        s.push_str(
            "| commit | date | subject | parent µs/op | commit µs/op | change | p (Welch) |\n",
        );
        s.push_str("| --- | --- | --- | ---: | ---: | --- | ---: |\n");
        for c in &j.culprits {
            s.push_str(&format!(
                "| `{}`{} | {} | {} | {} | {} | {} | {:.2e} |\n",
                &c.commit[..10],
                if c.range { " (range)" } else { "" },
                c.info.dates(),
                c.info.subject.replace('|', "\\|"),
                us(c.parent_mean_us),
                us(c.culprit_mean_us),
                c.comparison.ratio.pct(),
                c.p_welch
            ));
        }
        s.push('\n');
    }
    s.push_str("<details><summary>steps</summary>\n\n| commit | n | mean µs/op | verdict |\n| --- | ---: | ---: | --- |\n");
    for st in &j.steps {
        s.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            st.info.short,
            st.n,
            us(st.mean_us),
            st.verdict
        ));
    }
    s.push_str(&format!("\n</details>\n\nReproduce: `{}`\n", j.reproduce));
    s
}

/// Grow samples of two commits together until `compare` decides or the cap.
/// Err(reason) when either side cannot be measured.
pub fn sequential_compare(
    m: &mut dyn Measurer,
    a: usize,
    b: usize,
    cfg: &Config,
    alpha_look: f64,
) -> Result<std::result::Result<Comparison, String>> {
    let mut last = None;
    for n in cfg.schedule() {
        let probes = m.ensure(&[(a, n), (b, n)])?;
        let (xa, xb) = match (&probes[0], &probes[1]) {
            (bisect::Probe::Samples(x), bisect::Probe::Samples(y)) => (x.clone(), y.clone()),
            (bisect::Probe::Skip(r), _) | (_, bisect::Probe::Skip(r)) => return Ok(Err(r.clone())),
        };
        let c = stats::compare(&xa, &xb, alpha_look, cfg.min_effect);
        let done = c.verdict != Verdict::Undecided;
        last = Some(c);
        if done {
            break;
        }
    }
    last.map(Ok).context("empty sampling schedule")
}

#[derive(Serialize, serde::Deserialize)]
pub struct SavedBisect {
    pub id: String,
    pub state: String,
    pub command: String,
    pub updated: u64,
    #[serde(default)]
    pub result: Option<serde_json::Value>,
}

fn save_state(
    cache: &Cache,
    id: &str,
    a: &BisectArgs,
    state: &str,
    result: Option<&BisectJson>,
) -> Result<()> {
    let dir = cache.dir("bisects")?;
    let saved = SavedBisect {
        id: id.to_string(),
        state: state.to_string(),
        command: reproduce(a),
        updated: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        result: result.map(serde_json::to_value).transpose()?,
    };
    cache::write_atomic(
        &dir.join(format!("{id}.json")),
        serde_json::to_string_pretty(&saved)?.as_bytes(),
    )
}
