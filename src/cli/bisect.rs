//! `perfbisect bisect`: its arguments, made into the library's plan; the result rendered in
//! the format asked for, with each culprit's explanation and the profile's plot.

use anyhow::{bail, Result};
use clap::Args;

use super::args::{GridArg, LinkArgs, SequentialArgs, StatsArgs, StopArgs, ToolArg};
use super::build::BuildArgs;
use super::exit::Exit;
use super::scan::ScanArgs;
use super::search::{keeping_confirmed, lines, RangeArgs, Stopped};
use super::Global;
use crate::drive::BisectPlan;
use crate::progress;
use crate::report::bisect::{BisectFormat, BisectReport};
use crate::report::explain::ExplainFormat;
use crate::report::export::Links;
use crate::report::interrupted::InterruptedFormat;

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
    #[command(flatten)]
    routing: super::args::RoutingArg,
    #[command(flatten)]
    stop: StopArgs,
    /// Stop exploring smaller changes once this much time is spent (e.g. 30m, 1h30m), after the first change point in the range's direction; the result lists what was left and the command that continues from the cache
    #[arg(long, value_name = "DURATION", value_parser = super::args::parse_budget)]
    budget: Option<std::time::Duration>,
    #[command(flatten)]
    build: BuildArgs,
    #[command(flatten)]
    exec: crate::cli::exec::ExecArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: BisectFormat,
    #[command(flatten)]
    links: LinkArgs,
    /// Also write the profile (µs/op of every tested commit along the range) as an SVG into DIR
    #[arg(long, value_name = "DIR")]
    plot: Option<std::path::PathBuf>,
    /// Then profile each confirmed culprit against its parent under callgrind (as `explain`,
    /// one thread): the functions whose instructions/op changed most, and a differential
    /// flame graph in the --plot DIR (else the current directory)
    #[arg(long)]
    explain: bool,
    /// Scan the range instead: a coarse grid first, then a search of every grid interval that
    /// changed (the same as `perfbisect scan`)
    #[arg(long)]
    scan: bool,
    #[command(flatten)]
    grid: GridArg,
    /// How the range is searched (1 thread): `instructions` locates on counts under valgrind and confirms every change point in time on a fresh block; `auto` does so only where the ends' noise says the clock cannot resolve --min-effect at --max-samples; `time` searches on the clock alone [default: auto at 1 thread in time on this machine without --tail; else time]
    #[arg(long, value_enum, value_name = "METRIC")]
    locate: Option<super::args::LocateBy>,
    #[command(flatten)]
    count_effect: super::args::CountEffectArg,
    #[command(flatten)]
    tail: super::args::TailArg,
}

pub fn run(g: &Global, a: BisectArgs) -> Result<Exit> {
    if a.scan {
        return super::scan::run(g, as_scan(a)?);
    }
    let plan = a.plan(g)?;
    plan.validate()?;
    let links = a.links.links()?;
    let sink = lines(a.format == BisectFormat::Jsonl);
    let stopped = Stopped {
        search: "bisect",
        tool: &plan.range.tool,
        range: &plan.range.range,
        resume: plan.reproduce(),
        format: match a.format {
            BisectFormat::Text => Some(InterruptedFormat::Text),
            BisectFormat::Markdown => Some(InterruptedFormat::Markdown),
            BisectFormat::Json => Some(InterruptedFormat::Json),
            BisectFormat::Html => Some(InterruptedFormat::Html),
            BisectFormat::Jsonl => None,
        },
    };
    let report = keeping_confirmed(crate::drive::bisect(&plan, &sink), &sink, stopped)?;
    output(&a, &report, &links)
}

impl BisectArgs {
    /// The library's plan of this bisect.
    pub fn plan(&self, g: &Global) -> Result<BisectPlan> {
        let a = self;
        let range = RangeArgs {
            range: &a.range,
            tool: &a.tool,
            sampling: &a.sampling,
            stats: &a.stats,
            routing: &a.routing,
            build: &a.build,
            exec: &a.exec,
            locate: a.locate,
            auto_by_default: true,
            count_effect: &a.count_effect,
            tail: &a.tail,
        }
        .plan(g, (a.stop.max_changes(), a.stop.min_share))?;
        Ok(BisectPlan {
            range,
            budget: a.budget,
            explain: a.explain,
            explain_dir: a.plot.clone(),
        })
    }
}

/// The result in its format on stdout, each explanation after it, the plot; the exit code.
fn output(a: &BisectArgs, json: &BisectReport, links: &Links) -> Result<Exit> {
    print!("{}", a.format.render_linked(json, links)?);
    if a.format == BisectFormat::Text && progress::verbose() {
        print!("\ndetails:\n{}", json.details_text(links));
    }
    let explain_format = match a.format {
        BisectFormat::Text => Some(ExplainFormat::Text),
        BisectFormat::Markdown => Some(ExplainFormat::Markdown),
        // JSON carries them; HTML names the flame graphs only.
        _ => None,
    };
    for e in &json.explanations {
        match explain_format {
            Some(f) => print!("\n{}", f.render(e)?),
            None => progress::info(&format!(
                "explained {}..{}: {}",
                e.before,
                e.after,
                e.flamegraph.as_deref().unwrap_or("-")
            )),
        }
    }
    if let Some(dir) = &a.plot {
        for path in json.write_plots(dir)? {
            progress::info(&format!("wrote {}", path.display()));
        }
    }
    Ok(if json.unconfirmed() {
        Exit::Unconfirmed
    } else {
        Exit::Done
    })
}

/// `bisect --scan`: the same range, tool, sampling and statistics, scanned.
fn as_scan(a: BisectArgs) -> Result<ScanArgs> {
    use crate::report::scan::ScanFormat;
    if a.stop.max_changes().is_some() {
        bail!("--scan reports every change of the range: it takes no --first-change-only or --max-changes");
    }
    // A scan has no budget, no share to skip below, and explains nothing: refused, not ignored.
    for (given, flag) in [
        (a.budget.is_some(), "--budget"),
        (a.stop.min_share.is_some(), "--min-share"),
        (a.explain, "--explain"),
        (a.tail.tail, "--tail"),
    ] {
        if given {
            bail!("--scan searches every interval of its grid: it takes no {flag}");
        }
    }
    let format = match a.format {
        BisectFormat::Text => ScanFormat::Text,
        BisectFormat::Markdown => ScanFormat::Markdown,
        BisectFormat::Json => ScanFormat::Json,
        BisectFormat::Html => ScanFormat::Html,
        BisectFormat::Jsonl => bail!("--scan renders text, markdown, json or html, not jsonl"),
    };
    Ok(ScanArgs {
        range: a.range,
        tool: a.tool,
        grid: a.grid,
        sampling: a.sampling,
        stats: a.stats,
        routing: a.routing,
        build: a.build,
        exec: a.exec,
        format,
        links: a.links,
        plot: a.plot,
        locate: a.locate,
        count_effect: a.count_effect,
    })
}
