//! `compare` and `verify` as library calls: two revisions measured in interleaved rounds,
//! samples grown until the verdict is decided (or the cap), one typed report per thread count.

use std::path::PathBuf;

use anyhow::Result;

use crate::analysis::alpha::{self, Schedule};
use crate::analysis::bisect;
use crate::build::patch;
use crate::build::repo::CommitInfo;
use crate::build::sources::Sources;
use crate::cache::Cache;
use crate::measure::engine::{Library, Reuse, Session, Side, Subject};
use crate::measure::exec::Timing;
use crate::measure::kernel::{Registry, ToolSpec};
use crate::report::compare::{CompareReport, Sides};

/// Two revisions of one repository, compared at every thread count.
#[derive(Debug, Clone)]
pub struct ComparePlan {
    /// The baseline, and the revision compared with it (each may carry patches).
    pub a: String,
    pub b: String,
    /// The tool spec as given.
    pub tool: String,
    pub threads: Vec<usize>,
    pub timing: Timing,
    pub schedule: Schedule,
    /// The error rate of the whole comparison (split over the thread counts and the looks).
    pub alpha: f64,
    pub min_effect: f64,
    pub sources: Sources,
    pub cache: crate::cache::Location,
    pub kernels_dir: Option<PathBuf>,
}

impl ComparePlan {
    /// `verify REV`: REV against its parent, or a patched revision against the revision
    /// without its patches. Fails with a clear message on a root commit.
    pub fn verify(rev: &str, plan: ComparePlan) -> Result<ComparePlan> {
        let (repo, _) = plan.sources.open()?;
        let c = repo.resolve_subject(rev)?;
        let a = match patch::split(rev) {
            Some((base, _)) if !c.patches.is_empty() => base.to_string(),
            _ => {
                repo.parent(&c)?;
                format!("{rev}^")
            }
        };
        Ok(ComparePlan {
            a,
            b: rev.to_string(),
            ..plan
        })
    }

    /// Refuses what cannot be measured before anything is built.
    pub fn validate(&self) -> Result<()> {
        for &t in &self.threads {
            self.timing.metric.check_threads(t)?;
        }
        self.schedule.validate()
    }
}

/// The two revisions measured together; one report per thread count, in the order given.
pub fn compare(plan: &ComparePlan) -> Result<Vec<CompareReport>> {
    plan.validate()?;
    let reg = Registry::load(plan.kernels_dir.as_deref())?;
    let spec = reg.parse_spec(&plan.tool)?;
    let (repo, recipe) = plan.sources.open()?;
    let (a, b) = (plan.a.as_str(), plan.b.as_str());
    let ca = repo.resolve_subject(a)?;
    let cb = repo.resolve_subject(b)?;
    let cache = Cache::open(&plan.cache)?;
    // Fresh, interleaved samples for this comparison (resumable); the two sides never share
    // samples, even in an A/A comparison.
    let mut session = Session::new(
        &cache,
        plan.timing,
        Reuse::Context(format!("compare {} {}", ca.key(), cb.key())),
    )
    .with_repo(&repo, plan.sources.options(&recipe));
    // Every thread count's two sides are subjects of the one session (builds shared); each
    // thread count is compared in its own interleaved rounds, at alpha / k (Bonferroni over the
    // thread counts, see analysis::alpha).
    let pairs = add_pairs(&mut session, &spec, &plan.threads, (a, &ca), (b, &cb))?;
    let alpha_look = alpha::per_look(plan.alpha, &plan.schedule, plan.threads.len());
    let mut reports = Vec::new();
    for (t, sa, sb) in pairs {
        let c = bisect::compare_pair(
            &mut session,
            sa,
            sb,
            &plan.schedule,
            alpha_look,
            plan.min_effect,
        )?
        .map_err(|why| anyhow::anyhow!("cannot compare {a} and {b} at {t} thread(s): {why}"))?;
        let sides = Sides {
            a,
            b,
            a_commit: &ca.id,
            b_commit: &cb.id,
            a_patches: &ca.patches,
            b_patches: &cb.patches,
        };
        let mut report =
            CompareReport::new(&spec.short(), t, sides, &c, plan.alpha, plan.min_effect);
        report.a_samples_us = session.values(sa).unwrap_or_default();
        report.b_samples_us = session.values(sb).unwrap_or_default();
        report.metric = session.metric();
        reports.push(report);
    }
    Ok(reports)
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
