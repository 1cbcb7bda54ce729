//! What `bisect` and `scan` share on the command line: their arguments made into the
//! library's [`RangePlan`], and the sink their format sends a search's events to.

use anyhow::Result;

use super::args::{
    CountEffectArg, LocateBy, RoutingArg, SequentialArgs, StatsArgs, TailArg, ToolArg,
};
use super::build::BuildArgs;
use super::exec::ExecArgs;
use super::Global;
use crate::analysis::bisect::Config;
use crate::drive::RangePlan;
use crate::measure::metric::Metric;
use crate::report::events::{Lines, LinesTo};
use crate::report::interrupted::{InterruptedFormat, InterruptedReport};

/// The argument groups of a search of GOOD..BAD.
pub struct RangeArgs<'a> {
    pub range: &'a str,
    pub tool: &'a ToolArg,
    pub sampling: &'a SequentialArgs,
    pub stats: &'a StatsArgs,
    pub routing: &'a RoutingArg,
    pub build: &'a BuildArgs,
    pub exec: &'a ExecArgs,
    pub locate: Option<LocateBy>,
    /// Without --locate, `--locate auto` where the plan allows it (bisect: see
    /// [`RangePlan::locates_by_default`]); the clock alone otherwise.
    pub auto_by_default: bool,
    pub count_effect: &'a CountEffectArg,
    pub tail: &'a TailArg,
}

impl RangeArgs<'_> {
    /// The plan these arguments ask for; `stop` = (--max-changes, --min-share).
    pub fn plan(&self, g: &Global, stop: (Option<usize>, Option<f64>)) -> Result<RangePlan> {
        let timing = self.sampling.timing.timing();
        if self.tail.tail
            && (self.locate.and_then(LocateBy::plan).is_some() || timing.metric != Metric::Time)
        {
            anyhow::bail!(
                "--tail counts slow processes in time: it takes no --locate and no --metric other than time"
            );
        }
        let mut plan = RangePlan {
            range: self.range.to_string(),
            tool: self.tool.tool.clone(),
            threads: self.tool.thread_counts(),
            timing,
            cfg: Config {
                alpha: self.stats.alpha.alpha,
                min_effect: self.stats.min_effect,
                schedule: (self.tail).schedule(&self.sampling.schedule, self.sampling.schedule()),
                max_changes: stop.0,
                min_share: stop.1,
                spread: timing.metric.spread(),
                tail: self.tail.tail,
                routing: self.routing.level(),
            },
            locate: self.locate.and_then(LocateBy::plan),
            count_min_effect: self.count_effect.value(),
            count_duration: (self.sampling.timing).duration_for(Metric::Instructions),
            sources: self.build.sources(),
            slurm: self.exec.slurm()?,
            cache: g.cache(),
            kernels_dir: g.kernels_dir.clone(),
        };
        if self.locate.is_none() && self.auto_by_default {
            plan = plan.with_default_locate();
        }
        self.count_effect.check(plan.locate.is_some())?;
        Ok(plan)
    }
}

/// Where a search's events go: JSON events on stdout with jsonl, else lines on stderr (stdout
/// holds the result alone).
pub fn lines(jsonl: bool) -> Lines {
    Lines::new(if jsonl {
        LinesTo::Jsonl
    } else {
        LinesTo::Stderr
    })
}

/// What a stopped search reports: which search, of what, and how to resume it.
pub struct Stopped<'a> {
    pub search: &'a str,
    pub tool: &'a str,
    pub range: &'a str,
    pub resume: String,
    /// The format asked; `None`: `--format jsonl`.
    pub format: Option<InterruptedFormat>,
}

/// A search's result; or, when a signal stopped it, every change point it had confirmed
/// printed in the format asked, before the interruption goes on to exit 130/143 (a CI
/// `timeout` keeps the answer the search had).
pub fn keeping_confirmed<T>(result: Result<T>, sink: &Lines, s: Stopped) -> Result<T> {
    let e = match result {
        Ok(r) => return Ok(r),
        Err(e) => e,
    };
    if crate::interrupt::is_interrupted(&e) || crate::interrupt::interrupted() {
        if let Ok(text) = stopped_report(sink, s) {
            use std::io::Write;
            print!("{text}");
            let _ = std::io::stdout().flush();
        }
    }
    Err(e)
}

/// What a stopped search prints: the change points `sink` saw confirmed, in `s`'s format.
fn stopped_report(sink: &Lines, s: Stopped) -> Result<String> {
    let mut r = InterruptedReport::new(s.search, s.tool, s.range, sink.confirmed_so_far());
    r.resume = s.resume;
    match s.format {
        Some(f) => f.render(&r),
        None => r.jsonl(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drive::plan::Locate;
    use crate::drive::BisectPlan;
    use clap::Parser;

    #[derive(Parser)]
    struct Line {
        #[command(flatten)]
        bisect: crate::cli::bisect::BisectArgs,
    }

    /// The library's defaults are the command line's: a plan made by `BisectPlan::new` of
    /// `RangePlan::new` is the one `perfbisect bisect --tool T GOOD..BAD` makes.
    #[test]
    fn the_library_defaults_are_the_command_lines() {
        let line = Line::try_parse_from(["perfbisect", "--tool", "randbytes", "a..b"]).unwrap();
        let g = Global::default();
        let from_line = line.bisect.plan(&g).unwrap();
        let from_library = BisectPlan::new(RangePlan::new(".", "a..b", "randbytes"));
        assert_eq!(
            format!("{:?}", from_line.range),
            format!("{:?}", from_library.range)
        );
        assert_eq!(from_library.range.locate, Some(Locate::Auto));
        // More threads keep the clock; --locate time pins it (and the reproduce line says so).
        assert_eq!(plan_of(&["--threads", "1,2"]).locate, None);
        assert_eq!(plan_of(&["--locate", "time"]).locate, None);
    }

    /// `--count-min-effect` is taken where the bisect counts, by default at one thread too, and
    /// refused where it would change nothing.
    #[test]
    fn a_count_threshold_is_taken_where_the_search_counts() {
        let plan = plan_of(&["--count-min-effect", "0.5%"]);
        assert_eq!(plan.locate, Some(Locate::Auto));
        assert_eq!(plan.count_min_effect, 0.005);
        assert_eq!(plan_of(&[]).count_min_effect, 0.01);
        for keeps_the_clock in [&["--threads", "1,2"][..], &["--locate", "time"]] {
            let args = [keeps_the_clock, &["--count-min-effect", "0.5%"]].concat();
            let line = Line::try_parse_from(
                ["perfbisect", "--tool", "randbytes", "a..b"]
                    .iter()
                    .chain(&args),
            )
            .unwrap();
            let err = line.bisect.plan(&Global::default()).unwrap_err();
            assert!(
                err.to_string().contains("does not locate by counts"),
                "{args:?}: {err}"
            );
        }
    }

    /// A stopped search prints what its sink saw confirmed, in the format asked, and nothing
    /// it did not see.
    #[test]
    fn a_stopped_search_prints_what_it_had_confirmed() {
        use crate::report::interrupted::INTERRUPTED_KIND;
        let sink = lines(false);
        let stopped = |format| Stopped {
            search: "bisect",
            tool: "randbytes",
            range: "a..b",
            resume: "perfbisect bisect --tool randbytes a..b".into(),
            format,
        };
        let none = stopped_report(&sink, stopped(Some(InterruptedFormat::Text))).unwrap();
        assert!(
            none.starts_with("interrupted: the bisect of randbytes over a..b stopped before it finished; no change point confirmed"),
            "{none}"
        );
        let json = stopped_report(&sink, stopped(Some(InterruptedFormat::Json))).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["kind"], INTERRUPTED_KIND);
        assert_eq!(v["changes"].as_array().map(Vec::len), Some(0));
        let jsonl = stopped_report(&sink, stopped(None)).unwrap();
        assert!(
            jsonl.starts_with("{\"data\":") || jsonl.contains("\"event\":\"interrupted\""),
            "{jsonl}"
        );
        let err = anyhow::anyhow!("a build failed");
        let kept: Result<()> = keeping_confirmed(Err(err), &sink, stopped(None));
        assert_eq!(
            kept.unwrap_err().to_string(),
            "a build failed",
            "other errors pass through"
        );
    }

    fn plan_of(args: &[&str]) -> RangePlan {
        let g = Global::default();
        let line = Line::try_parse_from(
            ["perfbisect", "--tool", "randbytes", "a..b"]
                .iter()
                .chain(args),
        )
        .unwrap();
        line.bisect.plan(&g).unwrap().range
    }

    /// Counts keep 1-second samples beside quarter-second time samples unless --duration says
    /// otherwise, and the reproduce line brings back the same durations.
    #[test]
    fn a_located_search_counts_for_longer_than_it_times() {
        let plan = plan_of(&["--locate", "instructions"]);
        assert_eq!(plan.timing.duration, 0.25);
        let count = plan.count_timing(Locate::By(Metric::Instructions));
        assert_eq!((count.duration, count.metric), (1.0, Metric::Instructions));
        let again = crate::drive::BisectPlan {
            range: plan.clone(),
            budget: None,
            explain: false,
            explain_dir: None,
        }
        .reproduce();
        assert!(!again.contains("--duration"), "{again}");

        let given = plan_of(&["--locate", "instructions", "--duration", "0.5"]);
        assert_eq!(
            given
                .count_timing(Locate::By(Metric::Instructions))
                .duration,
            0.5
        );
        let plain = plan_of(&[]);
        assert_eq!(plain.timing.duration, 0.25);
        let metric = plan_of(&["--metric", "instructions"]);
        assert_eq!(metric.timing.duration, 1.0);
    }
}
