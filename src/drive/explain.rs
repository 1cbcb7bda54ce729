//! `bisect --explain`: each confirmed culprit against its parent under callgrind, in the
//! bisect's own session (its builds and kernels are there already).

use std::path::Path;

use anyhow::Result;

use crate::build::repo;
use crate::measure::engine::{Library, Session, Side, Subject};
use crate::progress;
use crate::report::bisect::BisectReport;
use crate::report::explain::{ExplainReport, Side as ExplainSide};

/// `--explain`: each confirmed culprit against its parent, profiled at one
/// thread in this session (builds and kernels are already there).
pub(super) fn explain_culprits(
    session: &mut Session,
    repo: &repo::Repo,
    report: &BisectReport,
    dir: Option<&Path>,
) -> Result<Vec<ExplainReport>> {
    if report.changes.is_empty() {
        return Ok(Vec::new());
    }
    let spec_text = report.tool.clone();
    // Every subject of a bisect measures the same tool.
    let spec = session.subject(0).spec.clone();
    let mut out = Vec::new();
    for c in report.changes.iter().filter(|c| c.confirmed) {
        let parent = repo.resolve(&c.parent)?;
        let culprit = repo.resolve(&c.info.commit)?;
        progress::info(&format!(
            "explaining {}..{} under callgrind",
            parent.short, culprit.short
        ));
        let mut subject = |commit: &repo::CommitInfo| {
            let lib = session.add_library(Library::Revision {
                label: commit.short.clone(),
                commit: commit.clone(),
            });
            session.add_subject(Subject {
                lib,
                spec: spec.clone(),
                threads: 1,
                side: Side::Explain,
            })
        };
        let (sa, sb) = (subject(&parent)?, subject(&culprit)?);
        let pa = crate::measure::profile::take(session, sa)?;
        let pb = crate::measure::profile::take(session, sb)?;
        let mut e = ExplainReport::new(
            &spec_text,
            ExplainSide {
                label: &parent.short,
                commit: &parent.id,
            },
            ExplainSide {
                label: &culprit.short,
                commit: &culprit.id,
            },
            (&pa, &pb),
            20,
        );
        let name = format!(
            "explain-{}-{}-{}.svg",
            crate::report::plot::file_stem(&spec_text),
            parent.short,
            culprit.short
        );
        let path = dir.map(|d| d.join(&name)).unwrap_or_else(|| name.into());
        e.write_flamegraph(&path, (&pa, &pb))?;
        out.push(e);
    }
    Ok(out)
}
