//! `explain` and `bisect --explain` as library calls: two builds of one tool profiled under
//! callgrind at one thread, the functions whose instructions per operation changed most, and
//! a differential flame graph beside them.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use crate::build::repo::{self, CommitInfo};
use crate::build::sources::Sources;
use crate::cache::Cache;
use crate::measure::engine::{Library, Reuse, Session, Side, Subject, Timing};
use crate::measure::kernel::{Registry, ToolSpec};
use crate::measure::metric::Metric;
use crate::measure::profile;
use crate::progress;
use crate::report::bisect::BisectReport;
use crate::report::explain::{ExplainReport, Side as ExplainSide};
use crate::report::plot::file_stem;

/// Functions `bisect --explain` lists per culprit.
const CULPRIT_TOP: usize = 20;

/// `explain REV` (against REV^, or a patched revision against the revision without its
/// patches) or `explain A B`.
#[derive(Debug, Clone)]
pub struct ExplainPlan {
    /// One revision, or two.
    pub revs: Vec<String>,
    /// The tool spec as given.
    pub tool: String,
    /// Seconds of operations each profile covers.
    pub duration: f64,
    /// Functions listed.
    pub top: usize,
    /// The flame graph's file (None: `explain-TOOL-A-B.svg` here).
    pub flamegraph: Option<PathBuf>,
    pub sources: Sources,
    pub cache: crate::cache::Location,
    pub kernels_dir: Option<PathBuf>,
}

impl ExplainPlan {
    /// The two revisions compared: A and B, REV^ and REV, or the base of a patched REV and REV.
    fn revisions(&self, repo: &repo::Repo) -> Result<(String, String)> {
        Ok(match self.revs.as_slice() {
            [r] => {
                let c = repo.resolve_subject(r)?;
                match (c.patches.is_empty(), crate::build::patch::split(r)) {
                    (false, Some((rev, _))) => (rev.to_string(), r.clone()),
                    _ => {
                        repo.parent(&c)?;
                        (format!("{r}^"), r.clone())
                    }
                }
            }
            [x, y] => (x.clone(), y.clone()),
            _ => bail!("explain takes REV or A B"),
        })
    }
}

/// The plan's two revisions profiled and compared; the flame graph written.
pub fn explain(plan: &ExplainPlan) -> Result<ExplainReport> {
    let reg = Registry::load(plan.kernels_dir.as_deref())?;
    let spec = reg.parse_spec(&plan.tool)?;
    let (repo, recipe) = plan.sources.open()?;
    let (ra, rb) = plan.revisions(&repo)?;
    let (ca, cb) = (repo.resolve_subject(&ra)?, repo.resolve_subject(&rb)?);
    let cache = Cache::open(&plan.cache)?;
    let timing = Timing {
        duration: plan.duration,
        timeout: None,
        retries: 0,
        metric: Metric::Instructions,
    };
    let mut session = Session::new(&cache, timing, Reuse::Nothing)
        .with_repo(&repo, plan.sources.options(&recipe));
    let pair = Pair {
        spec: &spec,
        side: Side::Only,
        top: plan.top,
    };
    let svg = plan
        .flamegraph
        .clone()
        .unwrap_or_else(|| pair.svg_name(&ca, &cb).into());
    pair.profile(&mut session, (&ra, &ca), (&rb, &cb), &svg)
}

/// `--explain`: each confirmed culprit against its parent, profiled at one thread in the
/// bisect's session (its builds and kernels are already there); the flame graphs in `dir`.
pub(super) fn explain_culprits(
    session: &mut Session,
    repo: &repo::Repo,
    report: &BisectReport,
    dir: Option<&Path>,
) -> Result<Vec<ExplainReport>> {
    if report.changes.is_empty() {
        return Ok(Vec::new());
    }
    // Every subject of a bisect measures the same tool.
    let spec = session.subject(0).spec.clone();
    let pair = Pair {
        spec: &spec,
        side: Side::Explain,
        top: CULPRIT_TOP,
    };
    let mut out = Vec::new();
    for c in report.changes.iter().filter(|c| c.confirmed) {
        let parent = repo.resolve(&c.parent)?;
        let culprit = repo.resolve(&c.info.commit)?;
        progress::info(&format!(
            "explaining {}..{} under callgrind",
            parent.short, culprit.short
        ));
        let name = pair.svg_name(&parent, &culprit);
        let path = dir.map(|d| d.join(&name)).unwrap_or_else(|| name.into());
        let before = (parent.short.as_str(), &parent);
        out.push(pair.profile(session, before, (&culprit.short, &culprit), &path)?);
    }
    Ok(out)
}

/// What every pair of one explanation shares: the tool, the subjects' side, the list's length.
struct Pair<'s> {
    spec: &'s ToolSpec,
    side: Side,
    top: usize,
}

impl Pair<'_> {
    /// `before` and `after` (each a label and its commit) profiled in `session` and compared,
    /// the flame graph written to `svg`.
    fn profile(
        &self,
        session: &mut Session,
        before: (&str, &CommitInfo),
        after: (&str, &CommitInfo),
        svg: &Path,
    ) -> Result<ExplainReport> {
        let mut subject = |(label, commit): (&str, &CommitInfo)| {
            let lib = session.add_library(Library::Revision {
                label: label.to_string(),
                commit: commit.clone(),
            });
            session.add_subject(Subject {
                lib,
                spec: self.spec.clone(),
                threads: 1,
                side: self.side,
            })
        };
        let (sa, sb) = (subject(before)?, subject(after)?);
        let pa = profile::take(session, sa)?;
        let pb = profile::take(session, sb)?;
        let mut e = ExplainReport::new(
            &self.spec.short(),
            side(before),
            side(after),
            (&pa, &pb),
            self.top,
        );
        e.write_flamegraph(svg, (&pa, &pb))?;
        Ok(e)
    }

    /// `explain-TOOL-A-B.svg`.
    fn svg_name(&self, a: &CommitInfo, b: &CommitInfo) -> String {
        format!(
            "explain-{}-{}-{}.svg",
            file_stem(&self.spec.short()),
            a.short,
            b.short
        )
    }
}

/// A labelled commit as the report names it.
fn side<'a>((label, commit): (&'a str, &'a CommitInfo)) -> ExplainSide<'a> {
    ExplainSide {
        label,
        commit: &commit.id,
    }
}
