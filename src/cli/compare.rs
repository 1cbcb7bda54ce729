use crate::build::patch;
use crate::build::repo::CommitInfo;
use crate::cli::exit::Exit;
use anyhow::Result;
use clap::Args;

use super::args::{LinkArgs, SequentialArgs, StatsArgs, ToolArg};
use super::build::BuildArgs;
use crate::analysis::{alpha, bisect};
use crate::cache::Cache;
use crate::measure::engine::{Library, Reuse, Session, Side, Subject};
use crate::measure::kernel::{Registry, ToolSpec};
use crate::report::compare::{CompareFormat, CompareReport, Sides};
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
    #[command(flatten)]
    tool: ToolArg,
    #[command(flatten)]
    sampling: SequentialArgs,
    #[command(flatten)]
    stats: StatsArgs,
    #[command(flatten)]
    build: BuildArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: CompareFormat,
    #[command(flatten)]
    links: LinkArgs,
}

pub fn run_compare(g: &Global, a: CompareArgs) -> Result<Exit> {
    compare_revs(g, &a.common, &a.a, &a.b)
}

pub fn run_verify(g: &Global, a: VerifyArgs) -> Result<Exit> {
    let (repo, _) = a.common.build.open()?;
    let c = repo.resolve_subject(&a.rev)?;
    // A patched revision is checked against the revision without its patches.
    if let (false, Some((rev, _))) = (c.patches.is_empty(), patch::split(&a.rev)) {
        return compare_revs(g, &a.common, rev, &a.rev);
    }
    // Fails with a clear message on a root commit.
    repo.parent(&c)?;
    compare_revs(g, &a.common, &format!("{}^", a.rev), &a.rev)
}

/// The two sides' subjects at every thread count: (threads, side A, side B).
fn add_pairs(
    session: &mut Session,
    spec: &ToolSpec,
    threads: &[usize],
    (a, ca): (&str, &CommitInfo),
    (b, cb): (&str, &CommitInfo),
) -> Result<Vec<(usize, usize, usize)>> {
    let mut pairs = Vec::new();
    for &t in threads {
        let mut side = |label: &str, commit: &CommitInfo, side: Side| {
            let lib = session.add_library(Library::Revision {
                label: label.to_string(),
                commit: commit.clone(),
            });
            session.add_subject(Subject {
                lib,
                spec: spec.clone(),
                threads: t,
                side,
            })
        };
        pairs.push((t, side(a, ca, Side::A)?, side(b, cb, Side::B)?));
    }
    Ok(pairs)
}

/// Measure two revisions interleaved, growing samples until the verdict is
/// decided (or the cap), and print it.
fn compare_revs(g: &Global, o: &CommonArgs, a: &str, b: &str) -> Result<Exit> {
    let links = o.links.links()?;
    o.sampling.timing.check_threads(&o.tool.thread_counts())?;
    let reg = Registry::load(g.kernels_dir.as_deref())?;
    let spec = reg.parse_spec(&o.tool.tool)?;
    let (repo, recipe) = o.build.open()?;
    let ca = repo.resolve_subject(a)?;
    let cb = repo.resolve_subject(b)?;
    let cache = Cache::open(g.cache.as_deref())?;
    let schedule = o.sampling.schedule();
    schedule.validate()?;
    // Fresh, interleaved samples for this comparison (resumable); the two
    // sides never share samples, even in an A/A comparison.
    let mut session = Session::new(
        &cache,
        o.sampling.timing.timing(),
        Reuse::Context(format!("compare {} {}", ca.key(), cb.key())),
    )
    .with_repo(&repo, o.build.options(&recipe));
    // Every thread count's two sides are subjects of the one session (builds shared); each
    // thread count is compared in its own interleaved rounds, at alpha / k (Bonferroni over the
    // thread counts, see analysis::alpha).
    let threads = o.tool.thread_counts();
    o.tool.warn_oversubscribed();
    let pairs = add_pairs(&mut session, &spec, &threads, (a, &ca), (b, &cb))?;
    let alpha = o.stats.alpha.alpha;
    let alpha_look = alpha::per_look(alpha, &schedule, threads.len());
    let mut out = String::new();
    for (t, sa, sb) in pairs {
        let c = bisect::compare_pair(
            &mut session,
            sa,
            sb,
            &schedule,
            alpha_look,
            o.stats.min_effect,
        )?
        .map_err(|why| anyhow::anyhow!("cannot compare {a} and {b} at {t} thread(s): {why}"))?;
        let mut report = CompareReport::new(
            &spec.short(),
            t,
            Sides {
                a,
                b,
                a_commit: &ca.id,
                b_commit: &cb.id,
                a_patches: &ca.patches,
                b_patches: &cb.patches,
            },
            &c,
            alpha,
            o.stats.min_effect,
        );
        report.a_samples_us = session.values(sa).unwrap_or_default();
        report.b_samples_us = session.values(sb).unwrap_or_default();
        report.metric = session.metric();
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&o.format.render_linked(&report, &links)?);
    }
    // With several thread counts: one report per thread count, one after the other (JSON: one
    // object each).
    print!("{out}");
    Ok(Exit::Done)
}
