//! `perfbisect scan` (and `bisect --scan`): its arguments, made into the library's plan; the
//! result rendered in the format asked for, with the profile's plot.

use anyhow::Result;
use clap::Args;

use super::args::{GridArg, LinkArgs, SequentialArgs, StatsArgs, ToolArg};
use super::build::BuildArgs;
use super::exit::Exit;
use super::search::{keeping_confirmed, lines, RangeArgs, Stopped};
use super::Global;
use crate::drive::ScanPlan;
use crate::progress;
use crate::report::export::Links;
use crate::report::interrupted::InterruptedFormat;
use crate::report::scan::{ScanFormat, ScanReport};

#[derive(Args, Clone)]
pub struct ScanArgs {
    /// GOOD..BAD (old..new): tags, branches or shas of --repo
    #[arg(value_name = "GOOD..BAD")]
    pub range: String,
    #[command(flatten)]
    pub tool: ToolArg,
    #[command(flatten)]
    pub grid: GridArg,
    #[command(flatten)]
    pub sampling: SequentialArgs,
    #[command(flatten)]
    pub stats: StatsArgs,
    #[command(flatten)]
    pub routing: super::args::RoutingArg,
    #[command(flatten)]
    pub build: BuildArgs,
    #[command(flatten)]
    pub exec: super::exec::ExecArgs,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    pub format: ScanFormat,
    #[command(flatten)]
    pub links: LinkArgs,
    /// Also write the scan's profile (every grid point, every searched commit, the fitted
    /// levels and the change points) as an SVG into DIR
    #[arg(long, value_name = "DIR")]
    pub plot: Option<std::path::PathBuf>,
    /// Locate by count, confirm by clock (1 thread): the grid, its fit and the interval searches on instruction counts under valgrind, then every change point confirmed in time on a fresh interleaved block; time the ends moved beyond those is searched in time between them; `auto`: by instructions only when the noise at the range's ends says the clock cannot resolve --min-effect at --max-samples
    #[arg(long, value_enum, value_name = "METRIC")]
    pub locate: Option<super::args::LocateBy>,
    #[command(flatten)]
    pub count_effect: super::args::CountEffectArg,
}

pub fn run(g: &Global, a: ScanArgs) -> Result<Exit> {
    let range = RangeArgs {
        range: &a.range,
        tool: &a.tool,
        sampling: &a.sampling,
        stats: &a.stats,
        routing: &a.routing,
        build: &a.build,
        exec: &a.exec,
        locate: a.locate,
        auto_by_default: false,
        count_effect: &a.count_effect,
        tail: &Default::default(),
    }
    .plan(g, (None, None))?;
    let plan = ScanPlan {
        range,
        grid: a.grid.grid,
    };
    plan.validate()?;
    let links = a.links.links()?;
    let sink = lines(false);
    let stopped = Stopped {
        search: "scan",
        tool: &plan.range.tool,
        range: &plan.range.range,
        resume: plan.reproduce(),
        format: Some(match a.format {
            ScanFormat::Text => InterruptedFormat::Text,
            ScanFormat::Markdown => InterruptedFormat::Markdown,
            ScanFormat::Json => InterruptedFormat::Json,
            ScanFormat::Html => InterruptedFormat::Html,
        }),
    };
    let report = keeping_confirmed(crate::drive::scan(&plan, &sink), &sink, stopped)?;
    output(&a, &report, &links)
}

fn output(a: &ScanArgs, report: &ScanReport, links: &Links) -> Result<Exit> {
    print!("{}", a.format.render_linked(report, links)?);
    if a.format == ScanFormat::Text && progress::verbose() {
        print!("\ndetails:\n{}", report.details_text(links));
    }
    if let Some(dir) = &a.plot {
        let path = report.write_plot(dir)?;
        progress::info(&format!("wrote {}", path.display()));
    }
    Ok(if report.unconfirmed() {
        Exit::Unconfirmed
    } else {
        Exit::Done
    })
}
