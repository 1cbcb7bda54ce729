//! Argument groups shared by the commands, each defined once and flattened
//! into the commands that take it, so `--duration` means the same thing
//! (and is validated the same way) everywhere.

use clap::Args;

use crate::analysis::alpha::{RoutingLevel, Schedule};
use crate::drive::plan::Locate;
use crate::measure::engine::Timing;
use crate::measure::metric::Metric;

/// One tool at one or more thread counts (bisect, compare, verify).
#[derive(Args, Clone, Debug)]
pub struct ToolArg {
    /// Tool spec NAME[:key=value,...]
    #[arg(long, value_name = "SPEC")]
    pub tool: String,
    /// Thread counts, comma-separated: every commit is measured at each (interleaved, builds shared); a change at any of them counts, and each is reported
    #[arg(long, default_value = "1", value_parser = parse_thread_list, value_name = "LIST")]
    pub threads: ThreadList,
}

/// `--threads 1,8,32`: positive thread counts, each once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadList(pub Vec<usize>);

/// A comma-separated list of thread counts: each a count [`parse_threads`] accepts, none
/// given twice (`1,1` is a slip, not a request to measure twice).
pub fn parse_thread_list(s: &str) -> Result<ThreadList, String> {
    let v = s
        .split(',')
        .map(parse_threads)
        .collect::<Result<Vec<usize>, String>>()?;
    unique("thread count", &v)?;
    Ok(ThreadList(v))
}

/// Refuses a list that names one item twice.
pub fn unique<T: PartialEq + std::fmt::Display>(what: &str, items: &[T]) -> Result<(), String> {
    match items
        .iter()
        .enumerate()
        .find(|(i, x)| items[..*i].contains(x))
    {
        Some((_, x)) => Err(format!("{what} {x} is listed twice")),
        None => Ok(()),
    }
}

impl ToolArg {
    /// The thread counts, in the order given.
    pub fn thread_counts(&self) -> Vec<usize> {
        self.threads.0.clone()
    }

    /// `1,8,32` as given on the command line.
    pub fn threads_text(&self) -> String {
        let v: Vec<String> = self.thread_counts().iter().map(|t| t.to_string()).collect();
        v.join(",")
    }
}

/// Several tools at several thread counts (run, matrix, gate).
#[derive(Args, Clone, Debug)]
pub struct ToolsArgs {
    /// Tool spec NAME[:key=value,...]; repeatable; `all` for every kernel (see `perfbisect kernels`)
    #[arg(long = "tool", required = true, value_name = "SPEC")]
    pub tools: Vec<String>,
    /// Thread counts, comma-separated [default: 1; matrix: 1,2,4]
    #[arg(long, value_parser = parse_thread_list, value_name = "LIST")]
    pub threads: Option<ThreadList>,
}

impl ToolsArgs {
    /// The thread counts given, else the command's default.
    pub fn threads_or(&self, default: &[usize]) -> Vec<usize> {
        match &self.threads {
            Some(t) => t.0.clone(),
            None => default.to_vec(),
        }
    }
}

/// How long one sample measures, and when it is given up.
#[derive(Args, Clone, Debug)]
pub struct TimingArgs {
    /// Seconds each sample measures for [default: 0.25; --metric instructions: 1]
    #[arg(long, value_parser = parse_duration, allow_negative_numbers = true, value_name = "SECONDS")]
    pub duration: Option<f64>,
    /// Kill a sample after this many seconds (default: 30 + 4 x duration; 300 + 4 x duration with --metric instructions)
    #[arg(long, value_parser = parse_duration, allow_negative_numbers = true, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Take a crashed or timed-out sample again this many times (new process) before giving up
    #[arg(long, default_value = "2", value_name = "N")]
    pub retries: usize,
    #[command(flatten)]
    pub metric: MetricArg,
}

impl TimingArgs {
    pub fn timing(&self) -> Timing {
        Timing {
            duration: self.duration_for(self.metric.metric),
            timeout: self.timeout,
            retries: self.retries,
            metric: self.metric.metric,
        }
    }
}

impl TimingArgs {
    /// The seconds a sample of `metric` measures for: the one given, else the metric's default.
    pub fn duration_for(&self, metric: Metric) -> f64 {
        self.duration.unwrap_or(metric.default_duration())
    }

    /// Refuse thread counts the metric cannot measure before anything is
    /// built (the engine checks again for each subject).
    pub fn check_threads(&self, threads: &[usize]) -> anyhow::Result<()> {
        threads
            .iter()
            .try_for_each(|&t| self.metric.metric.check_threads(t))
    }
}

/// What a sample measures (run, bisect, compare, verify, matrix, gate).
#[derive(Args, Clone, Debug)]
pub struct MetricArg {
    /// What a sample measures: wall-clock time per operation, or user-space instructions per
    /// operation of the timed loop, counted under valgrind (1 thread only;
    /// fewer samples by default)
    #[arg(long, value_enum, default_value = "time")]
    pub metric: Metric,
}

/// A fixed number of samples per cell (run, matrix).
#[derive(Args, Clone, Debug)]
pub struct FixedSamplingArgs {
    /// Samples (fresh processes) per cell [default: 10; --metric instructions: 3]
    #[arg(long, value_parser = parse_samples, value_name = "SAMPLES")]
    pub samples: Option<usize>,
    #[command(flatten)]
    pub timing: TimingArgs,
}

impl FixedSamplingArgs {
    pub fn samples(&self) -> usize {
        self.samples
            .unwrap_or_else(|| self.timing.metric.metric.default_fixed_samples())
    }
}

/// Samples grown until a comparison decides (bisect, compare, gate).
#[derive(Args, Clone, Debug)]
pub struct SequentialArgs {
    #[command(flatten)]
    pub schedule: ScheduleArgs,
    #[command(flatten)]
    pub timing: TimingArgs,
}

impl SequentialArgs {
    pub fn schedule(&self) -> Schedule {
        self.schedule.schedule_for(self.timing.metric.metric)
    }
}

/// The metric a search locates by when the clock confirms (`--locate`): one that counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LocateBy {
    Instructions,
    // By instructions when the noise at the range's ends says the clock cannot resolve
    // --min-effect at --max-samples (a doc comment here would turn every --help into the long
    // form).
    Auto,
    // The clock alone, no counts: what a bisect at more than one thread, with --tail or with
    // --metric instructions does anyway.
    Time,
}

impl LocateBy {
    /// The metric that locates when the counts do.
    pub fn metric(self) -> Metric {
        self.plan().map_or(Metric::Time, Locate::metric)
    }

    /// What the plan locates by: `None` for the clock alone.
    pub fn plan(self) -> Option<Locate> {
        match self {
            LocateBy::Instructions => Some(Locate::By(Metric::Instructions)),
            LocateBy::Auto => Some(Locate::Auto),
            LocateBy::Time => None,
        }
    }
}

/// The looks of a sequential comparison (also simulated).
#[derive(Args, Clone, Debug)]
pub struct ScheduleArgs {
    /// Samples per subject to start with [default: 5; --metric instructions: 3]
    #[arg(long, value_parser = parse_samples, value_name = "SAMPLES")]
    pub samples: Option<usize>,
    /// Most samples per subject before a comparison is called undecided [default: 40; --metric instructions: 10]
    #[arg(long, value_parser = parse_samples, value_name = "MAX_SAMPLES")]
    pub max_samples: Option<usize>,
}

impl ScheduleArgs {
    /// The time metric's schedule (simulations model timing noise).
    pub fn schedule(&self) -> Schedule {
        self.schedule_for(Metric::Time)
    }

    /// The user's numbers, else `metric`'s defaults.
    pub fn schedule_for(&self, metric: Metric) -> Schedule {
        let d = metric.default_schedule();
        Schedule {
            initial: self.samples.unwrap_or(d.initial).max(2),
            max: self.max_samples.unwrap_or(d.max),
        }
    }
}

/// The tail check of a search (bisect, simulate).
#[derive(Args, Clone, Debug, Default)]
pub struct TailArg {
    /// Also test the share of slow processes, which the trimmed test removes as outliers (a commit that makes a tenth of processes 1.5x slower): every comparison runs the tail check at half its alpha and calls two commits the same only at --max-samples, which defaults to 640 with it
    #[arg(long)]
    pub tail: bool,
}

impl TailArg {
    /// `schedule` with the tail check's cap unless the user gave one.
    pub fn schedule(&self, args: &ScheduleArgs, schedule: Schedule) -> Schedule {
        match (self.tail, args.max_samples) {
            (true, None) => Schedule {
                max: crate::analysis::stats::TAIL_MAX_SAMPLES,
                ..schedule
            },
            _ => schedule,
        }
    }
}

/// The error rate a command's decisions together may have.
#[derive(Args, Clone, Debug)]
pub struct AlphaArg {
    /// Error rate of the whole command (split across its tests)
    #[arg(long, default_value = "0.01", value_parser = parse_fraction, allow_negative_numbers = true)]
    pub alpha: f64,
}

/// Significance and the smallest change worth finding (bisect, compare).
#[derive(Args, Clone, Debug)]
pub struct StatsArgs {
    #[command(flatten)]
    pub alpha: AlphaArg,
    /// Smallest change worth finding, e.g. 3% or 0.03
    #[arg(long, default_value = "3%", value_parser = parse_effect, allow_hyphen_values = true)]
    pub min_effect: f64,
}

/// `--routing-level`: how a search's routing decisions are tested (bisect, scan, simulate, plan).
#[derive(Args, Clone, Debug, Default)]
pub struct RoutingArg {
    /// How each routing decision of a search (ends, candidates, sub-range checks) is tested: a level such as 0.1% per decision, outside --alpha (every change point is still confirmed on a fresh block whose tests bound false culprits), or 'family' (inside --alpha with every other test) [default: 0.1%]
    #[arg(long, value_name = "LEVEL|family", value_parser = parse_routing)]
    pub routing_level: Option<RoutingLevel>,
}

impl RoutingArg {
    /// The level asked for, or the default.
    pub fn level(&self) -> RoutingLevel {
        self.routing_level
            .unwrap_or(crate::analysis::alpha::DEFAULT_ROUTING)
    }
}

/// `family`, or a level such as `1%` or `0.01`.
pub fn parse_routing(s: &str) -> Result<RoutingLevel, String> {
    if s.trim() == "family" {
        return Ok(RoutingLevel::Family);
    }
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(RoutingLevel::PerDecision(v)),
        _ => Err(format!(
            "'{s}' is not a routing level: a level between 0 and 100% (exclusive) such as 1%, or 'family'"
        )),
    }
}

/// `--count-min-effect`: the threshold of the count search that locates (with `--locate`, or a
/// bisect's default where it locates).
#[derive(Args, Clone, Debug)]
pub struct CountEffectArg {
    /// When counts locate (--locate, or a bisect's default at one thread): the smallest change in instructions/op worth locating, usually below --min-effect since time can move more than the count [default: 1%]
    #[arg(long, value_parser = parse_effect, value_name = "PCT")]
    pub count_min_effect: Option<f64>,
}

impl CountEffectArg {
    /// The threshold given, else the library's default.
    pub fn value(&self) -> f64 {
        (self.count_min_effect).unwrap_or(crate::drive::RangePlan::DEFAULT_COUNT_MIN_EFFECT)
    }

    /// Refuses a threshold given to a search that does not locate by counts: it would be
    /// accepted and change nothing.
    pub fn check(&self, locates: bool) -> anyhow::Result<()> {
        if self.count_min_effect.is_some() && !locates {
            anyhow::bail!(
                "--count-min-effect is the count search's threshold, and this search does not locate by counts: add --locate instructions or --locate auto (a bisect locates by default only at one thread, in time, without --tail, run here)"
            );
        }
        Ok(())
    }
}

/// When a search stops before it has explained the whole range (bisect, simulate).
#[derive(Args, Clone, Debug)]
pub struct StopArgs {
    /// Stop after N confirmed change points in the range's direction; the search descends into the larger share of the range's change first, so 1 gives the change that explains most of the range (one against the range's direction is reported but never counts)
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub max_changes: Option<usize>,
    /// Alias of --max-changes 1 (it used to stop at the oldest change, which could be a small one against the range's direction)
    #[arg(long, conflicts_with = "max_changes")]
    pub first_change_only: bool,
    /// Skip sub-ranges whose ends differ by less than this share of the range's change, e.g. 10%
    #[arg(long, value_name = "SHARE", value_parser = parse_share)]
    pub min_share: Option<f64>,
}

impl StopArgs {
    /// `--max-changes`, with `--first-change-only` read as 1.
    pub fn max_changes(&self) -> Option<usize> {
        if self.first_change_only {
            Some(1)
        } else {
            self.max_changes
        }
    }
}

/// `10%`, `0.1` → 0.1; strictly between 0 and 1.
pub fn parse_share(s: &str) -> Result<f64, String> {
    let v = parse_effect(s).map_err(|_| format!("'{s}' is not a share such as 10% or 0.1"))?;
    if v >= 1.0 {
        return Err(format!("'{s}': a share must be less than 100%"));
    }
    Ok(v)
}

/// `30m`, `1h30m`, `90s` → seconds (`--budget`).
pub fn parse_budget(s: &str) -> Result<std::time::Duration, String> {
    match humantime::parse_duration(s.trim()) {
        Ok(d) if !d.is_zero() => Ok(d),
        Ok(_) => Err("the budget must be more than 0".into()),
        Err(_) => Err(format!("'{s}' is not a duration such as 30m, 1h30m or 90s")),
    }
}

/// The coarse grid of a scan (scan, bisect --scan, simulate --scan).
#[derive(Args, Clone, Debug)]
pub struct GridArg {
    /// Grid points of a scan, ends included, evenly spaced by commit count (moved by a few
    /// commits to ones already built)
    #[arg(long, default_value = "16", value_parser = parse_grid, value_name = "N")]
    pub grid: usize,
}

/// A grid of at least 3 points (2 would be the ends: a bisect).
pub fn parse_grid(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (3..=1000).contains(&n) => Ok(n),
        _ => Err(format!("'{s}' is not a grid size from 3 to 1000")),
    }
}

/// `3%`, `0.03` → 0.03; must be more than 0.
pub fn parse_effect(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = if let Some(p) = t.strip_suffix('%') {
        p.trim().parse::<f64>().map(|v| v / 100.0)
    } else {
        t.parse::<f64>()
    }
    .map_err(|_| format!("'{s}' is not an effect size such as 3% or 0.03"))?;
    if !(v.is_finite() && v > 0.0) {
        return Err("the minimum effect must be more than 0".into());
    }
    Ok(v)
}

/// `--threads 1,2,4`: every entry a positive integer.
pub fn parse_threads(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("thread counts must be at least 1".into()),
        Ok(n) if n > 4096 => Err(format!("{n} threads is more than perfbisect allows (4096)")),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("'{s}' is not a thread count")),
    }
}

/// The longest sample or timeout perfbisect accepts: a day. A sample is one process's
/// window (perftools' runs are 5 s); beyond this it is a typo (`--duration 100000000` is three
/// years), and a timeout of 30 + 4 x that would never fire.
pub const MAX_SECONDS: f64 = 86_400.0;

/// A positive, finite number of seconds, at most [`MAX_SECONDS`].
pub fn parse_duration(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= MAX_SECONDS => Ok(v),
        Ok(v) if v > MAX_SECONDS => Err(format!(
            "{s} seconds is longer than perfbisect allows ({MAX_SECONDS:.0} s, a day)"
        )),
        Ok(_) => Err("the duration must be more than 0 seconds".into()),
        Err(_) => Err(format!("'{s}' is not a number of seconds")),
    }
}

/// A count of at least 1 (`--max-changes`).
pub fn parse_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("'{s}' is not a count of at least 1")),
    }
}

pub fn parse_samples(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("'{s}' is not a positive number of samples")),
    }
}

/// A probability strictly between 0 and 1 (alpha).
pub fn parse_fraction(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        Ok(_) => Err("alpha must be between 0 and 1 (exclusive)".into()),
        Err(_) => Err(format!("'{s}' is not a number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_parsers_reject_nonsense() {
        assert!(parse_threads("0").is_err());
        assert!(parse_threads("8").is_ok());
        assert!(parse_duration("0").is_err());
        assert!(parse_duration("inf").is_err());
        assert!(parse_fraction("1").is_err());
        assert!(parse_fraction("0.05").is_ok());
        assert_eq!(parse_routing("family"), Ok(RoutingLevel::Family));
        assert_eq!(parse_routing("1%"), Ok(RoutingLevel::PerDecision(0.01)));
        assert!(parse_routing("0").is_err());
        assert!(parse_routing("100%").is_err());
        assert!(parse_routing("often").is_err());
        // --routing-level's help states the default as a literal.
        assert_eq!(RoutingArg::default().level().to_string(), "0.1%");
        assert_eq!(RoutingLevel::PerDecision(0.0125).to_string(), "1.25%");
        assert_eq!(parse_effect("3%"), Ok(0.03));
        assert!(parse_effect("-3%").is_err());
        assert_eq!(parse_share("10%"), Ok(0.1));
        assert!(parse_share("100%").is_err() && parse_share("x").is_err());
        assert_eq!(parse_budget("30m").unwrap().as_secs(), 1800);
        assert_eq!(parse_budget("1h 30m").unwrap().as_secs(), 5400);
        assert!(parse_budget("0s").is_err() && parse_budget("soon").is_err());
    }
}

/// `--commit-url`: shas as links in HTML and Markdown (and the URL after a
/// culprit's sha in text).
#[derive(Args, Clone, Debug)]
pub struct LinkArgs {
    /// Link commits to this URL, {sha} replaced by the full commit id, e.g. https://github.com/openssl/openssl/commit/{sha}
    #[arg(long, value_name = "TEMPLATE", env = "PERFBISECT_COMMIT_URL")]
    pub commit_url: Option<String>,
}

impl LinkArgs {
    pub fn links(&self) -> anyhow::Result<crate::report::export::Links> {
        crate::report::export::Links::new(self.commit_url.as_deref())
    }
}
