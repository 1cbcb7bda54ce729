//! `gate` as a library call: HEAD against BASE for every (tool, thread count) cell of this
//! shard, each compared in its own interleaved rounds with one schedule, judged against the
//! largest slowdown allowed.

use std::path::PathBuf;

use anyhow::Result;

use super::shard::{cells, Shard};
use crate::analysis::alpha::{self, Schedule};
use crate::analysis::bisect;
use crate::analysis::stats::{Comparison, Size, Verdict};
use crate::build::repo::CommitInfo;
use crate::build::sources::Sources;
use crate::cache::Cache;
use crate::host::Host;
use crate::measure::engine::{Library, Reuse, Session, Side, Subject};
use crate::measure::exec::Timing;
use crate::measure::kernel::{Registry, ToolSpec};
use crate::progress;
use crate::report::compare::{CompareReport, Sides};
use crate::report::gate::{
    exit_code, GateOutcome, GateReport, GateResult, UndecidedPolicy, GATE_KIND,
};

/// A pull request's revision against the one it is compared with.
#[derive(Debug, Clone)]
pub struct GatePlan {
    pub base: String,
    pub head: String,
    /// Tool specs as given (`all` for every kernel).
    pub tools: Vec<String>,
    pub threads: Vec<usize>,
    /// Fail only on a significant slowdown at least this large.
    pub max_regression: f64,
    pub undecided: UndecidedPolicy,
    /// The error rate of the whole gate, all shards together.
    pub alpha: f64,
    pub timing: Timing,
    pub schedule: Schedule,
    pub shard: Option<Shard>,
    pub sources: Sources,
    pub cache: crate::cache::Location,
    pub kernels_dir: Option<PathBuf>,
}

/// Runs the gate; its report carries the exit code it asks for.
pub fn gate(plan: &GatePlan) -> Result<GateReport> {
    let reg = Registry::load(plan.kernels_dir.as_deref())?;
    let specs = reg.parse_specs(&plan.tools)?;
    for &t in &plan.threads {
        plan.timing.metric.check_threads(t)?;
    }
    let (repo, recipe) = plan.sources.open()?;
    let base = repo.resolve_subject(&plan.base)?;
    let head = repo.resolve_subject(&plan.head)?;
    let cache = Cache::open(&plan.cache)?;
    plan.schedule.validate()?;
    let cells = cells(specs.len(), &plan.threads, plan.shard.as_ref());
    // Bonferroni over every comparison of the whole gate (all shards) and every sequential
    // look, so an A/A gate fails with probability <= alpha.
    let alpha_look = alpha::per_look(plan.alpha, &plan.schedule, specs.len() * plan.threads.len());
    // Fresh, interleaved samples for this gate (a re-run resumes); base and head never share
    // samples, even when they are one commit.
    let mut session = Session::new(
        &cache,
        plan.timing,
        Reuse::Context(format!("gate {} {}", base.key(), head.key())),
    )
    .with_repo(&repo, plan.sources.options(&recipe));
    let mut library = |label: &str, commit: &CommitInfo| {
        session.add_library(Library::Revision {
            label: label.to_string(),
            commit: commit.clone(),
        })
    };
    let libs = (library(&plan.base, &base), library(&plan.head, &head));
    let gate = Gate {
        plan,
        base: &base,
        head: &head,
        libs,
        schedule: &plan.schedule,
        alpha_look,
    };
    let mut results = Vec::new();
    for (s, threads) in cells {
        results.push(gate.check(&mut session, &specs[s], threads)?);
    }
    Ok(GateReport {
        kind: GATE_KIND.into(),
        host: Host::current(),
        base: plan.base.clone(),
        head: plan.head.clone(),
        base_commit: base.id.clone(),
        head_commit: head.id.clone(),
        max_regression: plan.max_regression,
        alpha: plan.alpha,
        undecided: plan.undecided,
        shard: plan.shard.as_ref().map(|s| s.to_string()),
        exit_code: exit_code(&results, plan.undecided),
        results,
        metric: session.metric(),
    })
}

/// One gate: base against head, every (tool, threads) cell compared with the same schedule.
struct Gate<'a> {
    plan: &'a GatePlan,
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
        let a = self.plan;
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
                    a.alpha,
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
