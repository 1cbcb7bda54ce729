use crate::cli::exit::Exit;
use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;

use super::args::parse_duration;
use super::build::BuildArgs;
use super::Global;
use crate::cache::Cache;
use crate::measure::engine::{self, Library, Reuse, Session, Subject, Timing};
use crate::measure::kernel::Registry;
use crate::measure::metric::Metric;
use crate::measure::profile;
use crate::report::explain::{ExplainFormat, ExplainReport, Side};
use crate::report::plot::file_stem;

#[derive(Args)]
pub struct ExplainArgs {
    /// REV (compared with REV^), or A B
    #[arg(value_name = "REV", required = true, num_args = 1..=2)]
    revs: Vec<String>,
    /// Tool spec NAME[:key=value,...] (profiled at one thread)
    #[arg(long, value_name = "SPEC")]
    tool: String,
    /// Seconds of operations each profile covers (under callgrind)
    #[arg(long, default_value = "1", value_parser = parse_duration, value_name = "SECONDS")]
    duration: f64,
    /// Functions to list
    #[arg(long, default_value = "20", value_parser = super::args::parse_count, value_name = "N")]
    top: usize,
    /// Write the differential flame graph here [default: explain-TOOL-A-B.svg]
    #[arg(long, value_name = "FILE")]
    flamegraph: Option<PathBuf>,
    #[command(flatten)]
    build: BuildArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: ExplainFormat,
}

/// Profile the tool's operation under callgrind on both builds and show the
/// functions whose instructions per operation changed most.
pub fn run(g: &Global, a: ExplainArgs) -> Result<Exit> {
    let reg = Registry::load(g.kernels_dir.as_deref())?;
    let spec = reg.parse_spec(&a.tool)?;
    let (repo, recipe) = a.build.open()?;
    let (ra, rb) = match a.revs.as_slice() {
        [r] => {
            let c = repo.resolve_subject(r)?;
            // A patched revision is explained against the revision without its patches.
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
    };
    let (ca, cb) = (repo.resolve_subject(&ra)?, repo.resolve_subject(&rb)?);
    let cache = Cache::open(&g.cache())?;
    let timing = Timing {
        duration: a.duration,
        timeout: None,
        retries: 0,
        metric: Metric::Instructions,
    };
    let mut session =
        Session::new(&cache, timing, Reuse::Nothing).with_repo(&repo, a.build.options(&recipe));
    let mut subject = |label: &str, commit: &crate::build::repo::CommitInfo| {
        let lib = session.add_library(Library::Revision {
            label: label.to_string(),
            commit: commit.clone(),
        });
        session.add_subject(Subject {
            lib,
            spec: spec.clone(),
            threads: 1,
            side: engine::Side::Only,
        })
    };
    let (sa, sb) = (subject(&ra, &ca)?, subject(&rb, &cb)?);
    let pa = profile::take(&mut session, sa)?;
    let pb = profile::take(&mut session, sb)?;
    let mut report = ExplainReport::new(
        &spec.short(),
        Side {
            label: &ra,
            commit: &ca.id,
        },
        Side {
            label: &rb,
            commit: &cb.id,
        },
        (&pa, &pb),
        a.top,
    );
    let svg = a.flamegraph.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "explain-{}-{}-{}.svg",
            file_stem(&spec.short()),
            ca.short,
            cb.short
        ))
    });
    report.write_flamegraph(&svg, (&pa, &pb))?;
    print!("{}", a.format.render(&report)?);
    Ok(Exit::Done)
}
