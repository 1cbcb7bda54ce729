use anyhow::{bail, Result};
use clap::Args;
use std::process::ExitCode;
use std::time::Instant;

use super::args::{GridArg, LinkArgs, SequentialArgs, StatsArgs, ToolArg};
use super::build::BuildArgs;
use crate::analysis::bisect::{self, Config, Measurer, Outcome, Probe, Step, StepVerdict};
use crate::build::repo;
use crate::cache::{self, Cache};
use crate::measure::engine::{Library, Reuse, Session, Subject};
use crate::measure::kernel::Registry;
use crate::report::bisect::{
    culprit_json, step_line, BisectFormat, BisectReport, SavedBisect, StepJson, BISECT_KIND,
};
use crate::{hashing, progress, Global};

#[derive(Args, Clone)]
pub struct BisectArgs {
    /// GOOD..BAD (old..new): tags, branches or shas of --repo
    #[arg(value_name = "GOOD..BAD")]
    range: String,
    #[command(flatten)]
    tool: ToolArg,
    #[command(flatten)]
    sampling: SequentialArgs,
    #[command(flatten)]
    stats: StatsArgs,
    /// Stop at the oldest change instead of finding every change in the range
    #[arg(long)]
    first_change_only: bool,
    /// Stop after N change points; the search descends into the larger share of the range's
    /// change first, so 1 gives the change that explains most of the range
    #[arg(long, value_name = "N", value_parser = super::args::parse_count)]
    max_changes: Option<usize>,
    #[command(flatten)]
    build: BuildArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: BisectFormat,
    #[command(flatten)]
    links: LinkArgs,
    /// Also write the profile (µs/op of every tested commit along the range) as an SVG into DIR
    #[arg(long, value_name = "DIR")]
    plot: Option<std::path::PathBuf>,
    /// Scan the range instead: a coarse grid first, then a search of every grid interval that
    /// changed (the same as `perfbisect scan`)
    #[arg(long)]
    scan: bool,
    #[command(flatten)]
    grid: GridArg,
}

/// What identifies one bisect, so a re-run finds its samples (resume) and
/// no other bisect shares them. Every field is named here: a new option that
/// changes what is measured must be added (and the pinned id in the test
/// below changes with it, on purpose).
struct ResumeKey<'a> {
    repo: &'a str,
    good: &'a str,
    bad: &'a str,
    tool: &'a str,
    threads: usize,
    recipe: &'a str,
    cfg: &'a Config,
    duration: f64,
}

impl ResumeKey<'_> {
    fn id(&self) -> String {
        let mut h = hashing::Hasher::new();
        h.field("bisect-v2")
            .field(self.repo)
            .field(self.good)
            .field(self.bad)
            .field(self.tool)
            .field(&self.threads.to_string())
            .field(self.recipe)
            .field(&self.cfg.alpha.to_string())
            .field(&self.cfg.min_effect.to_string())
            .field(&self.cfg.schedule.initial.to_string())
            .field(&self.cfg.schedule.max.to_string())
            .field(&self.cfg.first_change_only.to_string())
            .field(&self.duration.to_string());
        if let Some(m) = self.cfg.max_changes {
            h.field(&format!("max-changes {m}"));
        }
        h.finish_short()
    }
}

fn reproduce(a: &BisectArgs) -> String {
    let mut s = format!(
        "perfbisect bisect --repo {} --recipe {} --tool '{}' --threads {} --samples {} --max-samples {} --duration {} --alpha {} --min-effect {}",
        a.build.repo.display(),
        a.build.recipe,
        a.tool.tool,
        a.tool.threads,
        a.sampling.schedule.samples,
        a.sampling.schedule.max_samples,
        a.sampling.timing.duration,
        a.stats.alpha.alpha,
        a.stats.min_effect
    );
    if a.first_change_only {
        s.push_str(" --first-change-only");
    }
    if let Some(m) = a.max_changes {
        s.push_str(&format!(" --max-changes {m}"));
    }
    s.push(' ');
    s.push_str(&a.range);
    s
}

pub fn run(g: &Global, a: BisectArgs) -> Result<ExitCode> {
    if a.scan {
        return super::scan::run(g, as_scan(a)?);
    }
    let started = Instant::now();
    let (good, bad) = repo::split_range(&a.range)?;
    let cfg = Config {
        alpha: a.stats.alpha.alpha,
        min_effect: a.stats.min_effect,
        schedule: a.sampling.schedule(),
        first_change_only: a.first_change_only,
        max_changes: a.max_changes,
    };
    cfg.validate(2)?;
    let links = a.links.links()?;
    let reg = Registry::load(g.kernels_dir.as_deref())?;
    let spec = reg.parse_spec(&a.tool.tool)?;
    let (repo, recipe) = a.build.open()?;
    let range = repo.range(&good, &bad)?;
    let cache = Cache::open(g.cache.as_deref())?;
    let n = range.commits.len();
    cfg.validate(n)?;

    let id = ResumeKey {
        repo: &repo
            .path
            .canonicalize()
            .unwrap_or(repo.path.clone())
            .to_string_lossy(),
        good: &range.good.id,
        bad: &range.bad.id,
        tool: &spec.canonical(),
        threads: a.tool.threads,
        recipe: &a.build.recipe,
        cfg: &cfg,
        duration: a.sampling.timing.duration,
    }
    .id();
    let text = a.format == BisectFormat::Text;
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
        a.tool.threads,
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
    // Samples belong to this bisect: a re-run resumes with them, another
    // bisect takes its own, interleaved.
    let mut session = Session::new(
        &cache,
        a.sampling.timing.timing(),
        Reuse::Context(format!("bisect {id}")),
    )
    .with_repo(&repo, a.build.options(&recipe));
    for c in &commits {
        let lib = session.add_library(Library::Revision {
            label: c.short.clone(),
            commit: c.clone(),
        });
        session.add_subject(Subject {
            lib,
            spec: spec.clone(),
            threads: a.tool.threads,
            side: String::new(),
        });
    }
    save_state(&cache, &id, &a, "running", None)?;

    let mut notes = Vec::new();
    if let (Some(mb), Some(gi)) = (&range.merge_base, good_idx) {
        let ends = (good.as_str(), bad.as_str(), gi, n - 1);
        match place_merge_base(&mut session, &a, &cfg, mb, ends, &say)? {
            Placement::Search(note) => notes.extend(note),
            Placement::OnGoodsBranch => {
                save_state(&cache, &id, &a, "redirected", None)?;
                let mut on_branch = a.clone();
                on_branch.range = format!("{}..{good}", mb.id);
                return run(g, on_branch);
            }
        }
    }

    let found = {
        let mut live = Live {
            session: &mut session,
            commits: &commits,
            print_steps: text,
            status: progress::SearchStatus::new(n),
        };
        let found = bisect::search(n, &cfg, &mut live);
        live.status.finish();
        found
    };
    let result = match found {
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
    let commits = &commits;
    // A commit measured as a byte-identical build has no samples of its own.
    let samples_total: usize = (0..commits.len())
        .filter(|&i| session.root(i) == i)
        .filter_map(|i| session.samples(i).ok().map(|s| s.len()))
        .sum();

    let culprits = match &result.outcome {
        Outcome::NoChange => Vec::new(),
        Outcome::Changes(cps) => cps.iter().map(|cp| culprit_json(cp, commits)).collect(),
    };
    let json = BisectReport {
        kind: BISECT_KIND.into(),
        tool: spec.short(),
        threads: a.tool.threads,
        range: a.range.clone(),
        repo: a.build.repo.display().to_string(),
        recipe: recipe.name.clone(),
        good: (&range.good).into(),
        bad: (&range.bad).into(),
        merge_base: range.merge_base.as_ref().map(|m| m.into()),
        commits: n,
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
            .map(|s| StepJson::new(s, commits))
            .collect(),
        builds: session.builds.values().cloned().collect(),
        samples: samples_total,
        samples_taken_now: session.samples_taken,
        shared_probes: session.shared,
        alpha_per_test: result.alpha_per_test,
        notes,
        tests: result.tests,
        family_alpha: result.family_alpha,
        alpha: cfg.alpha,
        min_effect: cfg.min_effect,
        wall_s: started.elapsed().as_secs_f64(),
        reproduce: reproduce(&a),
    };
    save_state(&cache, &id, &a, "finished", Some(&json))?;
    print!("{}", a.format.render_linked(&json, &links)?);
    if let Some(dir) = &a.plot {
        let path = json.write_plot(dir)?;
        progress::info(&format!("wrote {}", path.display()));
    }
    // 3: finished, but a candidate change point did not hold on its fresh block of samples.
    if json.culprits.iter().any(|c| !c.confirmed) {
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

/// `bisect --scan`: the same range, tool, sampling and statistics, scanned.
fn as_scan(a: BisectArgs) -> Result<super::scan::ScanArgs> {
    use crate::report::scan::ScanFormat;
    if a.first_change_only || a.max_changes.is_some() || a.plot.is_some() {
        bail!("--scan reports every change of the range: it takes no --first-change-only, --max-changes or --plot");
    }
    let format = match a.format {
        BisectFormat::Text => ScanFormat::Text,
        BisectFormat::Markdown => ScanFormat::Markdown,
        BisectFormat::Json => ScanFormat::Json,
        BisectFormat::Html => bail!("--scan renders text, markdown or json, not html"),
    };
    Ok(super::scan::ScanArgs {
        range: a.range,
        tool: a.tool,
        grid: a.grid,
        sampling: a.sampling,
        stats: a.stats,
        build: a.build,
        format,
        links: a.links,
    })
}

/// What placing the merge base between GOOD and BAD decided.
enum Placement {
    /// Search merge-base..BAD; with a note when GOOD's own branch differs too.
    Search(Option<String>),
    /// The merge base behaves like BAD: the change is on GOOD's branch.
    OnGoodsBranch,
}

/// GOOD, the merge base and BAD measured in the same rounds: where does the merge base lie?
/// `ends` = (GOOD's name, BAD's name, GOOD's subject index, BAD's subject index).
fn place_merge_base(
    session: &mut Session,
    a: &BisectArgs,
    cfg: &Config,
    mb: &repo::CommitInfo,
    ends: (&str, &str, usize, usize),
    say: &dyn Fn(&str),
) -> Result<Placement> {
    let (good, bad, gi, bad_idx) = ends;
    say(&format!(
        "{good} is not an ancestor of {bad}: placing the merge base {} ({}) between them first",
        mb.short,
        mb.dates()
    ));
    // GOOD, the merge base and BAD in the same rounds: where does the merge base lie?
    let step = bisect::place(session, 0, gi, bad_idx, cfg, cfg.alpha)?;
    say(&step_line(&step, mb));
    let pos = step
        .position
        .map(|p| format!(" ({:.0}% of the way from {good} to {bad})", p * 100.0))
        .unwrap_or_default();
    let towards_bad = match &step.verdict {
        StepVerdict::Skipped(why) => bail!("cannot measure the merge base {}: {why}", mb.short),
        StepVerdict::Old => false,
        StepVerdict::New => true,
        StepVerdict::Between | StepVerdict::Ambiguous => step.position.is_some_and(|p| p >= 0.5),
    };
    if towards_bad {
        // The merge base already behaves (mostly) like BAD: the change happened on GOOD's
        // branch, after the branches split. Search there instead, ends reversed.
        say(&format!(
            "  the merge base {} behaves like {bad}{pos}: the change is on {good}'s branch; searching {}..{good} (its direction is reversed: {good} is the new end)",
            mb.short, mb.short
        ));
        return Ok(Placement::OnGoodsBranch);
    }
    if step.verdict != StepVerdict::Between {
        say(&format!(
            "  the merge base {} behaves like {good}{pos}{}: searching {}..{bad}",
            mb.short,
            if step.verdict == StepVerdict::Ambiguous {
                " (not told apart at the sample cap)"
            } else {
                ""
            },
            mb.short
        ));
    } else {
        // Significantly different from both ends, but nearer GOOD: a change of GOOD's own
        // branch (a backport, say) beside the one between the merge base and BAD.
        let note = format!(
            "{good}'s own branch differs from the merge base {}{pos}: most of the change lies between the merge base and {bad}, which is searched; to find {good}'s own change run: {}",
            mb.short,
            reproduce(&BisectArgs {
                range: format!("{}..{good}", mb.id),
                ..a.clone()
            })
        );
        say(&format!("  {note}"));
        return Ok(Placement::Search(Some(note)));
    }
    Ok(Placement::Search(None))
}

/// The session seen by the search, with live output: each decided step as
/// a line (stdout in text format, else stderr) and, on a terminal, the
/// status line.
pub(super) struct Live<'s, 'a> {
    pub(super) session: &'s mut Session<'a>,
    pub(super) commits: &'s [repo::CommitInfo],
    pub(super) print_steps: bool,
    pub(super) status: progress::SearchStatus,
}

impl Measurer for Live<'_, '_> {
    fn prepare(&mut self, c: usize) -> Result<()> {
        Measurer::prepare(self.session, c)
    }

    fn identical(&self, a: usize, b: usize) -> bool {
        self.session.identical(a, b)
    }

    fn name(&self, i: usize) -> String {
        self.session.name(i)
    }

    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        let shorts: Vec<&str> = wants
            .iter()
            .filter_map(|(i, _)| self.commits.get(*i).map(|c| c.short.as_str()))
            .collect();
        self.status.doing(format!("sampling {}", shorts.join(" ")));
        Measurer::ensure(&mut *self.session, wants)
    }

    fn decided(&mut self, s: &Step) {
        let line = step_line(s, &self.commits[s.commit]);
        if self.print_steps {
            progress::above_status(|| println!("{line}"));
        } else {
            progress::info(&line);
        }
        let b = self.session.builds.values();
        let builds = progress::BuildCounts {
            built: b.clone().filter(|b| b.fresh && b.ok).count(),
            cached: b.clone().filter(|b| !b.fresh && b.ok).count(),
            failed: b.filter(|b| !b.ok).count(),
        };
        let side = match s.verdict {
            StepVerdict::Old => progress::Side::Old,
            StepVerdict::New => progress::Side::New,
            StepVerdict::Skipped(_) => progress::Side::Skipped,
            StepVerdict::Between | StepVerdict::Ambiguous => progress::Side::Both,
        };
        self.status.step(s.commit, side, builds);
    }
}

fn save_state(
    cache: &Cache,
    id: &str,
    a: &BisectArgs,
    state: &str,
    result: Option<&BisectReport>,
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
        result: result.cloned(),
    };
    cache::write_atomic(
        &dir.join(format!("{id}.json")),
        serde_json::to_string_pretty(&saved)?.as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::alpha::Schedule;

    /// The resume id is a promise to interrupted bisects: if this value
    /// changes, their samples are orphaned. Change it only on purpose.
    #[test]
    fn resume_id_is_pinned() {
        let cfg = Config {
            alpha: 0.01,
            min_effect: 0.03,
            schedule: Schedule {
                initial: 5,
                max: 40,
            },
            first_change_only: false,
            max_changes: None,
        };
        let key = ResumeKey {
            repo: "/repo",
            good: "0123456789abcdef0123456789abcdef01234567",
            bad: "89abcdef0123456789abcdef0123456789abcdef",
            tool: "pkeyread:format=pem,key=ec",
            threads: 1,
            recipe: "default",
            cfg: &cfg,
            duration: 1.0,
        };
        assert_eq!(key.id(), "ba7e0700cb066523");
        let other = ResumeKey { threads: 2, ..key };
        assert_ne!(other.id(), key.id());
    }
}
