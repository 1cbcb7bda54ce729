use crate::cli::exit::Exit;
use anyhow::Result;
use clap::Args;

use super::args::{parse_effect, AlphaArg, SequentialArgs, ToolsArgs};
use super::build::BuildArgs;
use super::Shard;
use crate::analysis::alpha::Schedule;
use crate::analysis::stats::{Comparison, Size, Verdict};
use crate::analysis::{alpha, bisect};
use crate::build::repo::CommitInfo;
use crate::cache::Cache;
use crate::host::Host;
use crate::measure::engine::{Library, Reuse, Session, Side, Subject};
use crate::measure::kernel::{Registry, ToolSpec};
use crate::report::compare::{CompareReport, Sides};

use crate::report::gate::{
    exit_code, GateFormat, GateOutcome, GateReport, GateResult, UndecidedPolicy, GATE_KIND,
};
use crate::{progress, Global};

#[derive(Args)]
pub struct GateArgs {
    /// The revision a pull request is compared against (e.g. its merge base)
    #[arg(long, value_name = "REV")]
    base: String,
    /// The pull request's revision
    #[arg(long, value_name = "REV")]
    head: String,
    #[command(flatten)]
    tools: ToolsArgs,
    /// Fail only on a significant slowdown at least this large
    #[arg(long, default_value = "5%", value_parser = parse_effect, allow_hyphen_values = true)]
    max_regression: f64,
    /// What an undecided comparison (at the sample cap) does to the exit code
    #[arg(long, value_enum, default_value = "pass")]
    undecided: UndecidedPolicy,
    #[command(flatten)]
    alpha: AlphaArg,
    #[command(flatten)]
    sampling: SequentialArgs,
    /// Check only shard I of N of the (tool, threads) comparisons
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    #[command(flatten)]
    build: BuildArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: GateFormat,
}

pub fn run(g: &Global, a: GateArgs) -> Result<Exit> {
    let reg = Registry::load(g.kernels_dir.as_deref())?;
    let specs = reg.parse_specs(&a.tools.tools)?;
    let threads = a.tools.threads_or(&[1]);
    a.sampling.timing.check_threads(&threads)?;
    let (repo, recipe) = a.build.open()?;
    let base = repo.resolve_subject(&a.base)?;
    let head = repo.resolve_subject(&a.head)?;
    let cache = Cache::open(g.cache.as_deref())?;
    let schedule = a.sampling.schedule();
    schedule.validate()?;
    let cells = super::cells(specs.len(), &threads, a.shard.as_ref());
    // Bonferroni over every comparison of the whole gate (all shards) and
    // every sequential look, so an A/A gate fails with probability <= alpha.
    let alpha_look = alpha::per_look(a.alpha.alpha, &schedule, specs.len() * threads.len());
    // Fresh, interleaved samples for this gate (a re-run resumes); base
    // and head never share samples, even when they are one commit.
    let mut session = Session::new(
        &cache,
        a.sampling.timing.timing(),
        Reuse::Context(format!("gate {} {}", base.key(), head.key())),
    )
    .with_repo(&repo, a.build.options(&recipe));
    let lib_base = session.add_library(Library::Revision {
        label: a.base.clone(),
        commit: base.clone(),
    });
    let lib_head = session.add_library(Library::Revision {
        label: a.head.clone(),
        commit: head.clone(),
    });
    let gate = Gate {
        a: &a,
        base: &base,
        head: &head,
        libs: (lib_base, lib_head),
        schedule: &schedule,
        alpha_look,
    };
    let mut results = Vec::new();
    for (s, threads) in cells {
        results.push(gate.check(&mut session, &specs[s], threads)?);
    }
    let report = GateReport {
        kind: GATE_KIND.into(),
        host: Host::current(),
        base: a.base.clone(),
        head: a.head.clone(),
        base_commit: base.id.clone(),
        head_commit: head.id.clone(),
        max_regression: a.max_regression,
        alpha: a.alpha.alpha,
        undecided: a.undecided,
        shard: a.shard.as_ref().map(|s| s.to_string()),
        exit_code: exit_code(&results, a.undecided),
        results,
        metric: session.metric(),
    };
    report.emit(a.format)?;
    Ok(Exit::of_gate(report.exit_code))
}

/// One gate: base against head, every (tool, threads) cell compared with the same schedule.
struct Gate<'a> {
    a: &'a GateArgs,
    base: &'a CommitInfo,
    head: &'a CommitInfo,
    /// The session's libraries of base and head.
    libs: (usize, usize),
    schedule: &'a Schedule,
    alpha_look: f64,
}

impl Gate<'_> {
    /// Compares head with base for one cell. Only an interruption is an error: any other
    /// failure is the cell's result.
    fn check(&self, session: &mut Session, spec: &ToolSpec, threads: usize) -> Result<GateResult> {
        let a = self.a;
        progress::info(&format!("gate: {} at {} thread(s)", spec.short(), threads));
        let mut subject = |lib, side: Side| {
            session.add_subject(Subject {
                lib,
                spec: spec.clone(),
                threads,
                side,
            })
        };
        let (sb, sh) = (
            subject(self.libs.0, Side::Base)?,
            subject(self.libs.1, Side::Head)?,
        );
        let compared = bisect::compare_pair(
            session,
            sb,
            sh,
            self.schedule,
            self.alpha_look,
            a.max_regression,
        );
        let cell = |outcome, message, comparison| GateResult {
            outcome,
            message,
            comparison,
            tool: spec.short(),
            threads,
        };
        Ok(match compared {
            Err(e) if crate::interrupt::is_interrupted(&e) => return Err(e),
            Err(e) => cell(GateOutcome::Error, format!("{e:#}"), None),
            Ok(Err(why)) => {
                let outcome = if why.is_not_applicable() {
                    GateOutcome::NotApplicable
                } else {
                    GateOutcome::Error
                };
                cell(outcome, why.reason(), None)
            }
            Ok(Ok(c)) => {
                let (outcome, message) = judge(&c, a.max_regression);
                let mut report = CompareReport::new(
                    &spec.short(),
                    threads,
                    Sides {
                        a: &a.base,
                        b: &a.head,
                        a_commit: &self.base.id,
                        b_commit: &self.head.id,
                        a_patches: &self.base.patches,
                        b_patches: &self.head.patches,
                    },
                    &c,
                    a.alpha.alpha,
                    a.max_regression,
                );
                report.metric = session.metric();
                cell(outcome, message, Some(report))
            }
        })
    }
}

/// What a finished comparison of head with base means for the gate, and the sentence that
/// says so.
fn judge(c: &Comparison, max_regression: f64) -> (GateOutcome, String) {
    let pct = c.ratio.pct();
    match c.verdict {
        // Significant, but the interval still reaches below the allowed slowdown at
        // the sample cap: failing would rest on a point estimate.
        Verdict::Slower if c.size != Size::AtLeast => (
            GateOutcome::Undecided,
            format!(
                "head is significantly slower ({pct}), but whether by more than the allowed {:.1}% is uncertain after {} samples",
                max_regression * 100.0,
                c.a.n.min(c.b.n)
            ),
        ),
        Verdict::Slower => (
            GateOutcome::Regression,
            format!(
                "head is slower by {pct} (more than the allowed {:.1}%)",
                max_regression * 100.0
            ),
        ),
        Verdict::Faster => (GateOutcome::Improvement, format!("head is faster: {pct}")),
        Verdict::Same => (GateOutcome::Same, format!("no significant change: {pct}")),
        Verdict::Undecided => (
            GateOutcome::Undecided,
            format!(
                "undecided after {} samples: {pct} (a change of {:.1}% cannot be ruled out)",
                c.a.n.min(c.b.n),
                max_regression * 100.0
            ),
        ),
    }
}
