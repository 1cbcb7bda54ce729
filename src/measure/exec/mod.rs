//! The executor seam: where builds and samples are made. The engine turns a search's needs into
//! *waves* — builds to have, and blocks of subjects to sample together — and hands them to an
//! [`Executor`], which answers one [`Answer`] at a time, as each is ready. The engine keeps
//! everything a decision depends on (which samples count, the sample cache, the identity checks);
//! an executor only runs things: here in this process ([`local::Local`]), or as jobs elsewhere.
//!
//! A block is the unit of trust: its subjects are sampled on one host, in interleaved rounds
//! whose order is drawn afresh per round (see [`crate::analysis::rounds`]), so a comparison
//! between them is not biased by drift or by where it ran.

pub mod local;
pub mod node;
pub mod slurm;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::build::builds::Built;
use crate::build::prefix::Prefix;
use crate::build::repo::CommitInfo;
use crate::measure::compile::CompiledKernel;
use crate::measure::kernel::ToolSpec;
use crate::measure::metric::Metric;
use crate::measure::runner::SampleOutcome;

/// Which executor made a run's builds and samples.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    Serialize,
    Deserialize,
    clap::ValueEnum,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ExecutorKind {
    #[default]
    Local,
    Slurm,
}

/// Where a run's samples were taken, for its report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Placement {
    pub executor: ExecutorKind,
    /// Every host that took a sample in this run, sorted.
    pub hosts: Vec<String>,
    /// What decided libcrypto's code paths in every sample: the CPU's flags and any pin (see
    /// `runner::CPU_CAPS_VARS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_caps: Option<String>,
}

impl Placement {
    /// A line for text reports; none for the local executor (this machine, as always).
    pub fn line(&self) -> Option<String> {
        match self.executor {
            ExecutorKind::Local => None,
            ExecutorKind::Slurm => Some(format!(
                "measured on: {} (Slurm jobs)",
                self.hosts.join(", ")
            )),
        }
    }
}

/// How each sample is taken.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Timing {
    /// Seconds each sample measures for.
    pub duration: f64,
    /// Kill a sample after this long (None: derived from the duration).
    pub timeout: Option<f64>,
    /// A crashed or timed-out sample is taken again this many times, in a new process, before
    /// its subject is given up: one bad moment must not skip a commit for good.
    pub retries: usize,
    /// What a sample measures.
    pub metric: Metric,
}

impl Timing {
    /// The command line's defaults for `metric`: its default duration, the timeout derived
    /// from it, two retries.
    pub fn of(metric: Metric) -> Timing {
        Timing {
            duration: metric.default_duration(),
            timeout: None,
            retries: 2,
            metric,
        }
    }
}

/// One revision to have built (from the cache, or made now).
#[derive(Debug, Clone)]
pub struct BuildJob {
    /// How errors name it (the label the user gave).
    pub label: String,
    pub commit: CommitInfo,
}

/// One subject of a block: a compiled kernel on a library, at a thread count.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    /// How progress lines name the library.
    pub label: String,
    pub kernel: CompiledKernel,
    pub spec: ToolSpec,
    pub prefix: Prefix,
    pub threads: usize,
    /// Samples the subject holds already.
    pub have: usize,
    /// Samples it should hold when the block is done.
    pub want: usize,
}

/// Subjects sampled together: on one host, in interleaved randomized rounds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Block {
    pub timing: Timing,
    pub runs: Vec<Run>,
    /// The host that took the samples its runs hold already, if any: an executor with several
    /// measures there when it can, so one test does not pool two machines' samples.
    #[serde(default)]
    pub host: Option<String>,
    /// The search side by side whose subjects these are (see [`crate::analysis::lanes`]);
    /// `None`: the run's own. An executor with several nodes samples each lane on a node of
    /// its own, held for the lane's whole search.
    #[serde(default)]
    pub lane: Option<usize>,
}

/// What the engine needs now: builds (of the probes it measures next, or ahead of them) and
/// blocks to sample. An executor makes a wave's builds before its blocks' samples.
#[derive(Debug, Clone, Default)]
pub struct Wave {
    pub builds: Vec<BuildJob>,
    pub blocks: Vec<Block>,
}

/// A submitted wave, as its answers name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ticket(pub u64);

/// Where a sample was taken: every sample of a block has the same one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Taken {
    pub host: String,
    /// The block's round the sample belongs to (1 = the first).
    pub round: usize,
}

/// One thing an executor has finished.
// Each answer is moved once, from the executor to the engine: boxing would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Answer {
    /// `wave.builds[job]` is built, from the cache or now, or could not be tried.
    Built {
        ticket: Ticket,
        job: usize,
        built: Result<Built>,
    },
    /// One sample of `wave.blocks[block].runs[run]`, or why that run cannot be measured (it then
    /// leaves its block's rounds). `retried` failed samples were taken again first.
    Sampled {
        ticket: Ticket,
        block: usize,
        run: usize,
        outcome: SampleOutcome,
        retried: usize,
        taken: Taken,
    },
    /// Every build and sample of the wave is answered.
    WaveDone { ticket: Ticket },
}

/// Runs waves and answers them. Answers of one block come in the order the samples were taken
/// (those taken side by side, in the order they were picked); nothing else about
/// their order is promised.
pub trait Executor {
    fn kind(&self) -> ExecutorKind;
    /// Whether builds run where no measurement is taken at the time, so that builds the search
    /// may need next can be made while it measures (see [`Measurer::prefetch`]). Default: no —
    /// on one machine a build beside a measurement doubles its noise.
    ///
    /// [`Measurer::prefetch`]: crate::analysis::bisect::Measurer::prefetch
    fn builds_apart(&self) -> bool {
        false
    }
    /// The host every sample of this executor is taken on, when that is known before any is
    /// taken (this machine); `None` where each block finds its node.
    fn measures_on(&self) -> Option<&str> {
        None
    }
    /// How many blocks of searches side by side may be sampled at once, each on a node of its
    /// own (see [`crate::analysis::lanes`]). Default: one — on one machine a second block
    /// beside the first doubles both their noise.
    fn lanes(&self) -> usize {
        1
    }
    /// The search `lane` (`None`: the run's own) will sample no more: an executor that holds
    /// a node for it lets it go. Default: nothing held.
    fn release(&mut self, lane: Option<usize>) -> Result<()> {
        let _ = lane;
        Ok(())
    }
    /// Hand a wave over; its answers come from [`Executor::next`].
    fn submit(&mut self, wave: Wave) -> Result<Ticket>;
    /// The next answer of any submitted wave, waiting until one is ready; `None` once every
    /// submitted wave is answered. An error (Ctrl-C, a machine that cannot run children) ends
    /// the command.
    fn next(&mut self) -> Result<Option<Answer>>;
}
