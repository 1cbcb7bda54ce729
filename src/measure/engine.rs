//! The measurement engine: the only place that turns "n more samples of
//! these subjects" into builds, version checks, kernel compiles, cached
//! samples and fresh child runs taken in interleaved rounds.
//!
//! A *library* is one OpenSSL (a revision to build, or an installed prefix);
//! a *subject* is one (library, tool, threads, side) whose samples are
//! compared with others. Every command (run, bisect, compare/verify, matrix,
//! gate) declares its subjects and asks for samples; none of them builds,
//! compiles, loads cached samples or spawns a child itself.

use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use crate::analysis::bisect::{Measurer, Probe, SeriesProbes, Step, Used};
use crate::analysis::samples::{RoundKey, Samples};
use crate::build::builds::{self, BuildOptions};
use crate::build::prefix::Prefix;
use crate::build::repo::{CommitInfo, Repo};
use crate::build::version::OpenSslVersion;
use crate::cache::Cache;
use crate::interrupt;
use crate::measure::compile::{self, CompiledKernel};
use crate::measure::exec::local::Local;
use crate::measure::exec::{
    Answer, Block, BuildJob, Executor, Placement, Run, Taken, Ticket, Wave,
};
use crate::measure::kernel::ToolSpec;
use crate::measure::metric::{self, Metric};
use crate::measure::runner::{self, Sample, SampleOutcome, SampleRequest};
use crate::measure::samples::SampleSet;
use crate::progress;
use crate::unavailable::Unavailable;

mod build;
mod sampling;

/// One OpenSSL to measure, ready to load: an installed prefix, the
/// system's, or a build.
#[derive(Debug, Clone, Serialize)]
pub struct Target {
    pub label: String,
    pub prefix: Prefix,
    /// For builds: the commit, so samples can be checked against its version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// For builds: the version the source tree declares ("3.2.1").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect_version: Option<OpenSslVersion>,
    /// For builds: one hash of every library and module a kernel loads (reproducible builds
    /// make it equal for commits that change no library source).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binaries: Option<String>,
}

impl Target {
    pub fn installed(prefix: Prefix) -> Target {
        Target {
            label: prefix.label.clone(),
            prefix,
            commit: None,
            expect_version: None,
            binaries: None,
        }
    }

    /// A sample counts only if it came from this library: the loaded
    /// libcrypto lies in the prefix and, for builds, reports the build's
    /// version (a sample of the system library is an error, never a number).
    fn check(&self, s: &Sample) -> Result<()> {
        if !self.prefix.contains_library(Path::new(&s.libcrypto_path)) {
            anyhow::bail!(
                "{}: the kernel loaded {} but the OpenSSL under test is in {}: refusing this sample",
                self.label,
                s.libcrypto_path,
                self.prefix.lib_dir.display()
            );
        }
        if let Some(want) = &self.expect_version {
            if OpenSslVersion::from_version_text(&s.openssl_version).as_ref() != Some(want) {
                anyhow::bail!(
                    "{}: the loaded library reports '{}' but the build is of {want}: refusing this sample",
                    self.label,
                    s.openssl_version
                );
            }
        }
        Ok(())
    }
}

/// Where a library comes from.
pub enum Library {
    Revision { label: String, commit: CommitInfo },
    Installed(Target),
}

/// One build this session used, for the reports.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BuildUse {
    pub commit: String,
    pub fresh: bool,
    pub ok: bool,
    pub duration_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
}

/// The builds several sessions of one command used (a located search's counts and clock), each
/// once, in commit order. A build counts as built now if any of them built it: the session that
/// came second found it in the cache only because the first had just built it.
pub fn builds_used<'s, 'a: 's>(
    sessions: impl IntoIterator<Item = &'s Session<'a>>,
) -> Vec<BuildUse> {
    let mut used: BTreeMap<String, BuildUse> = BTreeMap::new();
    for (k, b) in sessions.into_iter().flat_map(|s| &s.builds) {
        used.entry(k.clone())
            .and_modify(|u| u.fresh |= b.fresh)
            .or_insert_with(|| b.clone());
    }
    used.into_values().collect()
}

/// Which cached samples a session may reuse. Samples belong to the command
/// that took them: a comparison's sides must be sampled interleaved with
/// each other, not hours apart, so a bisect or a gate reuses only its own
/// (a resumed run), while a matrix cell is a plain description of one
/// library and is shared by every matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reuse {
    /// Take every sample fresh and keep none (`run`).
    Nothing,
    /// Keep samples under this context and reuse them when it comes again.
    Context(String),
}

pub struct Subject {
    pub lib: usize,
    pub spec: ToolSpec,
    pub threads: usize,
    /// Keeps two subjects of the same library apart (the sides of an A/A
    /// comparison).
    pub side: Side,
}

/// Which part of a command's measurement a subject is: part of its samples' key, so the two
/// halves of an A/A comparison of one build never share samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The only subject of its library (run, matrix, a bisect's probes).
    Only,
    /// compare's A and B.
    A,
    B,
    /// gate's base and head.
    Base,
    Head,
    /// A bisect's culprit or parent, profiled by --explain.
    Explain,
    /// A commit as one of a scan's searches side by side measures it, on that lane's node
    /// (see [`crate::analysis::lanes`]): the lane's own samples.
    Lane(usize),
}

impl Side {
    /// The text in the samples' key (the strings these were before they were a type, so
    /// existing caches keep their samples).
    pub fn key(self) -> std::borrow::Cow<'static, str> {
        match self {
            Side::Only => "".into(),
            Side::A => "a".into(),
            Side::B => "b".into(),
            Side::Base => "base".into(),
            Side::Head => "head".into(),
            Side::Explain => "explain".into(),
            Side::Lane(n) => format!("lane {n}").into(),
        }
    }
}

enum LibState {
    Unknown,
    Ready(Box<Target>),
    Unavailable(Unavailable),
}

struct Ready {
    kernel: CompiledKernel,
    store: Option<SampleSet>,
    samples: Vec<Sample>,
}

enum SubjectState {
    Unknown,
    Ready(Box<Ready>),
    Unavailable(Unavailable),
    /// Measured as this other subject: same kernel, threads and side on a build whose
    /// loaded libraries and modules are byte-identical (a commit that changed only apps,
    /// tests or docs), so its samples are that subject's.
    SameAs(usize),
}

/// A wave of samples, answered: how many samples of how many subjects, in how many
/// interleaved rounds, on which hosts, in how long.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WaveDone {
    pub subjects: usize,
    pub samples: usize,
    pub rounds: u64,
    pub hosts: Vec<String>,
    pub seconds: f64,
}

/// Where a session tells each answered wave of samples.
pub trait TellWave {
    fn wave(&self, w: &WaveDone);
}

/// Live output: called with each decided step of a search.
pub type StepCallback<'a> = Box<dyn FnMut(&Step) + 'a>;

pub use crate::measure::exec::Timing;

pub struct Session<'a> {
    cache: &'a Cache,
    /// Where builds and samples are made.
    exec: Box<dyn Executor + 'a>,
    duration: f64,
    timeout: Option<f64>,
    metric: Metric,
    /// valgrind was found (instruction samples on this machine need it).
    valgrind_checked: bool,
    reuse: Reuse,
    libs: Vec<(Library, LibState)>,
    subjects: Vec<(Subject, SubjectState)>,
    kernels: HashMap<(usize, String), CompiledKernel>,
    /// Samples taken by this session (not from the cache).
    pub samples_taken: usize,
    /// Samples an earlier run of the same command left in the cache, taken up by this one.
    pub samples_reused: usize,
    pub builds: BTreeMap<String, BuildUse>,
    pub on_step: Option<StepCallback<'a>>,
    /// Told each wave of samples once it is answered (a search's sink).
    pub on_wave: Option<&'a dyn TellWave>,
    /// Show a progress bar over the samples `ensure` takes (tables of many
    /// cells); a search prints its decided steps instead.
    pub progress_bar: bool,
    retries: usize,
    /// Samples that failed and were retried.
    pub retried: usize,
    /// Subjects measured as another one with byte-identical binaries (probes saved).
    pub shared: usize,
    /// Rounds of the blocks answered so far: a block's rounds are numbered after them.
    rounds: u64,
    /// Wall time spent waiting for samples (from a block's submission to its last answer).
    sampling_s: f64,
    /// This session's id in its samples (with `rounds`, what makes samples pairs).
    session: u64,
    /// Hosts that took this session's samples.
    hosts: std::collections::BTreeSet<String>,
    /// The CPU capability vector of the session's samples (the first one's): every sample must
    /// have run the same code paths.
    cpu_caps: Option<String>,
    /// Build waves in flight: the commit key of each job.
    ahead: HashMap<Ticket, Vec<String>>,
    /// Commit keys being built and not answered yet.
    in_flight: std::collections::HashSet<String>,
    /// Builds made ahead by [`builds::ensure_all`], taken by `prepare_library`.
    prebuilt: HashMap<String, Result<builds::Built>>,
    /// (subject, lane) → the subject that lane measures it as ([`Session::lane_subject`]).
    lane_subjects: HashMap<(usize, usize), usize>,
    /// Blocks of samples submitted and not ended.
    blocks: HashMap<Ticket, InFlight>,
    /// Blocks ended and not yet waited for.
    ended: std::collections::VecDeque<Ended>,
    /// Lanes whose next block waits for its builds.
    lanes_building: Vec<Building>,
    /// What searches on these subjects read ([`Measurer::used`]).
    used: Used,
}

/// A lane's block waiting for its builds.
struct Building {
    lane: usize,
    wants: Vec<(usize, usize)>,
    /// Commit keys of the builds it waits for.
    builds: Vec<String>,
}

/// A block of samples in flight.
struct InFlight {
    /// The lane it samples for, if any.
    lane: Option<usize>,
    /// The subjects as asked for, and as sampled (through those they are measured as).
    asked: Vec<usize>,
    subjects: Vec<usize>,
    /// Its rounds are numbered after this one.
    base: u64,
    done: WaveDone,
    started: std::time::Instant,
    bar: Option<indicatif::ProgressBar>,
}

/// A block that has ended.
struct Ended {
    /// `None`: nothing was missing, so nothing was submitted.
    ticket: Option<Ticket>,
    lane: Option<usize>,
    asked: Vec<usize>,
}

impl<'a> Session<'a> {
    pub fn new(cache: &'a Cache, timing: Timing, reuse: Reuse) -> Self {
        Session {
            cache,
            exec: Box::new(Local::new(cache)),
            duration: timing.duration,
            timeout: timing.timeout,
            metric: timing.metric,
            valgrind_checked: false,
            reuse,
            libs: Vec::new(),
            subjects: Vec::new(),
            kernels: HashMap::new(),
            samples_taken: 0,
            samples_reused: 0,
            on_wave: None,
            builds: BTreeMap::new(),
            on_step: None,
            progress_bar: false,
            retries: timing.retries,
            retried: 0,
            shared: 0,
            rounds: 0,
            sampling_s: 0.0,
            session: rand::random(),
            hosts: Default::default(),
            cpu_caps: None,
            ahead: HashMap::new(),
            in_flight: Default::default(),
            prebuilt: HashMap::new(),
            lane_subjects: HashMap::new(),
            blocks: HashMap::new(),
            ended: Default::default(),
            lanes_building: Vec::new(),
            used: Default::default(),
        }
    }

    /// Revisions are built from this repository with these options.
    pub fn with_repo(mut self, repo: &'a Repo, build: BuildOptions<'a>) -> Self {
        self.exec = Box::new(Local::new(self.cache).with_repo(repo, build));
        self
    }

    /// Builds and samples are made by `exec` when given (else by the local executor).
    pub fn with_executor(mut self, exec: Option<Box<dyn Executor + 'a>>) -> Self {
        if let Some(e) = exec {
            self.exec = e;
        }
        self
    }

    /// Adds a library; a revision already added (GOOD beside its merge
    /// base, the two sides of an A/A comparison) is built and loaded once.
    pub fn add_library(&mut self, lib: Library) -> usize {
        if let Library::Revision { commit, .. } = &lib {
            let same = self.libs.iter().position(
                |(l, _)| matches!(l, Library::Revision { commit: c, .. } if c.key() == commit.key()),
            );
            if let Some(i) = same {
                return i;
            }
        }
        self.libs.push((lib, LibState::Unknown));
        self.libs.len() - 1
    }

    /// Add a library that must be measurable (run, parity): built or checked now, with its
    /// label; an error names it and why not.
    pub fn add_ready_library(&mut self, lib: Library) -> Result<(usize, String)> {
        let label = match &lib {
            Library::Revision { label, .. } => label.clone(),
            Library::Installed(t) => t.label.clone(),
        };
        let l = self.add_library(lib);
        if let Err(why) = self.prepare_library(l)? {
            anyhow::bail!("cannot measure {label}: {why}");
        }
        Ok((l, label))
    }

    /// Adds a subject; refuses one the session's metric cannot measure
    /// (instructions at more than one thread), before anything is built.
    pub fn add_subject(&mut self, s: Subject) -> Result<usize> {
        self.metric.check_threads(s.threads)?;
        if self.exec.kind() == crate::measure::exec::ExecutorKind::Local {
            warn_oversubscribed(s.threads);
        }
        if self.metric == Metric::Instructions && !self.valgrind_checked {
            metric::valgrind_version()?;
            self.valgrind_checked = true;
        }
        self.subjects.push((s, SubjectState::Unknown));
        Ok(self.subjects.len() - 1)
    }

    /// What this session's samples measure.
    pub fn metric(&self) -> Metric {
        self.metric
    }

    /// Seconds each sample measures for (`--duration`).
    pub fn duration(&self) -> f64 {
        self.duration
    }

    pub fn subject(&self, i: usize) -> &Subject {
        &self.subjects[i].0
    }

    /// The library's loadable form, once prepared.
    pub fn target(&self, lib: usize) -> Option<&Target> {
        match &self.libs[lib].1 {
            LibState::Ready(t) => Some(t),
            _ => None,
        }
    }

    /// The subject whose samples `i` has (itself, or the one it is measured as).
    pub fn root(&self, i: usize) -> usize {
        match self.subjects[i].1 {
            SubjectState::SameAs(j) => j,
            _ => i,
        }
    }

    /// Samples of subject `i` (all it holds, in the order taken), or why it
    /// has none.
    pub fn samples(&self, i: usize) -> std::result::Result<&[Sample], Unavailable> {
        let i = self.root(i);
        match &self.subjects[i].1 {
            SubjectState::Ready(r) => Ok(&r.samples),
            SubjectState::Unavailable(u) => Err(u.clone()),
            SubjectState::Unknown | SubjectState::SameAs(_) => Err(Unavailable::KernelFailed {
                kernel: self.subjects[i].0.spec.kernel.name.clone(),
                message: "not prepared".into(),
            }),
        }
    }

    /// Subject `i`'s samples in the session's metric (µs/op or instructions/op).
    pub fn values(&self, i: usize) -> std::result::Result<Vec<f64>, Unavailable> {
        self.taken(i).map(|s| s.values)
    }

    /// Subject `i`'s samples in the session's metric with the round each was taken in.
    pub fn taken(&self, i: usize) -> std::result::Result<Samples, Unavailable> {
        let mut out = Samples::default();
        for s in self.samples(i)? {
            let round = match (s.session, s.round) {
                (Some(session), Some(round)) => Some(RoundKey { session, round }),
                _ => None,
            };
            out.push(s.value(self.metric), round);
        }
        Ok(out)
    }

    /// Wall seconds one sample has cost in this session, process start and waiting for a
    /// node included; `None` before the first sample.
    pub fn seconds_per_sample(&self) -> Option<f64> {
        (self.samples_taken > 0).then(|| self.sampling_s / self.samples_taken as f64)
    }

    /// Searches that may sample at once, one per node: the executor's.
    pub fn lanes(&self) -> usize {
        self.exec.lanes()
    }

    /// Subject `i` as lane `lane` measures it: the same library, kernel and threads, samples
    /// of its own (added the first time it is asked for).
    pub fn lane_subject(&mut self, i: usize, lane: usize) -> Result<usize> {
        if let Some(&j) = self.lane_subjects.get(&(i, lane)) {
            return Ok(j);
        }
        let s = &self.subjects[i].0;
        let j = self.add_subject(Subject {
            lib: s.lib,
            spec: s.spec.clone(),
            threads: s.threads,
            side: Side::Lane(lane),
        })?;
        self.lane_subjects.insert((i, lane), j);
        Ok(j)
    }

    /// Samples every subject holds (lanes' included); one measured as a byte-identical build
    /// has none of its own.
    pub fn samples_held(&self) -> usize {
        (0..self.subjects.len())
            .filter(|&i| self.root(i) == i)
            .filter_map(|i| self.samples(i).ok().map(<[Sample]>::len))
            .sum()
    }

    /// What subject `i` holds, as the search reads it.
    fn probe(&self, i: usize) -> Probe {
        match self.taken(i) {
            Ok(v) => Probe::Samples(v),
            Err(u) => Probe::Skip(u),
        }
    }

    /// Where this session's samples were taken, for reports.
    pub fn placement(&self) -> Placement {
        Placement {
            executor: self.exec.kind(),
            hosts: self.hosts.iter().cloned().collect(),
            cpu_caps: self.cpu_caps.clone(),
        }
    }
}

/// The search measures subjects by index: a bisect adds one subject per
/// commit, in history order.
impl Measurer for Session<'_> {
    fn used(&mut self) -> &mut Used {
        &mut self.used
    }

    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        Session::ensure(self, wants)?;
        Ok(wants.iter().map(|&(i, _)| self.probe(i)).collect())
    }

    fn lanes(&self) -> usize {
        Session::lanes(self)
    }

    fn start_lane(&mut self, lane: usize, wants: &[(usize, usize)]) -> Result<()> {
        let mut own = Vec::with_capacity(wants.len());
        for &(i, n) in wants {
            own.push((self.lane_subject(i, lane)?, n));
        }
        self.start_lane_block(lane, &own)
    }

    fn lane_done(&mut self, lane: usize) -> Result<()> {
        self.exec.release(Some(lane))
    }

    fn next_lane(&mut self) -> Result<(usize, SeriesProbes)> {
        let (lane, asked) = self.next_lane_block()?;
        Ok((lane, asked.iter().map(|&j| vec![self.probe(j)]).collect()))
    }

    fn prepare(&mut self, i: usize) -> Result<()> {
        Session::prepare(self, i)
    }

    fn prepare_all(&mut self, subjects: &[usize]) -> Result<()> {
        Session::prepare_all(self, subjects)
    }

    fn prefetch(&mut self, subjects: &[usize]) {
        Session::prefetch(self, subjects)
    }

    fn decided(&mut self, step: &Step) {
        if let Some(cb) = self.on_step.as_mut() {
            cb(step);
        }
    }

    fn identical(&self, a: usize, b: usize) -> bool {
        // Asked for every claimed commit at each step of a search (see bisect::pool_key): no
        // copies of the hash maps.
        let binaries = |i: usize| {
            self.target(self.subjects[i].0.lib)
                .and_then(|t| t.binaries.as_ref())
        };
        matches!((binaries(a), binaries(b)), (Some(x), Some(y)) if x == y)
    }

    fn name(&self, i: usize) -> String {
        match &self.libs[self.subjects[i].0.lib].0 {
            Library::Revision { commit, .. } => commit.short.clone(),
            Library::Installed(t) => t.label.clone(),
        }
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;

/// One line on stderr, once per process, when a subject runs more threads than this machine
/// has cores: oversubscribed threads measure the scheduler too. Said when the first such subject
/// is added, after the command's input was checked, so a bad invocation still gets one line.
fn warn_oversubscribed(threads: usize) {
    static SAID: std::sync::Once = std::sync::Once::new();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads > cores {
        SAID.call_once(|| {
            crate::progress::info(&format!(
                "warning: {threads} threads on {cores} cores oversubscribe this machine: such figures measure the scheduler too"
            ))
        });
    }
}
