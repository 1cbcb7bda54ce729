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

use crate::analysis::bisect::{Measurer, Probe, Step};
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
}

impl Side {
    /// The text in the samples' key (the strings these were before they were a type, so
    /// existing caches keep their samples).
    pub fn key(self) -> &'static str {
        match self {
            Side::Only => "",
            Side::A => "a",
            Side::B => "b",
            Side::Base => "base",
            Side::Head => "head",
            Side::Explain => "explain",
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
    pub builds: BTreeMap<String, BuildUse>,
    pub on_step: Option<StepCallback<'a>>,
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

    /// Build (cached) a revision, or take an installed prefix as it is.
    pub fn prepare_library(
        &mut self,
        lib: usize,
    ) -> Result<std::result::Result<&Target, Unavailable>> {
        if matches!(self.libs[lib].1, LibState::Unknown) {
            interrupt::check()?;
            let state = match &self.libs[lib].0 {
                Library::Installed(t) => LibState::Ready(Box::new(t.clone())),
                Library::Revision { label, commit } => {
                    let job = BuildJob {
                        label: label.clone(),
                        commit: commit.clone(),
                    };
                    let built = match self.prebuilt.remove(&commit.key()) {
                        Some(b) => b?,
                        None => self.build(vec![job])?.swap_remove(0)?,
                    };
                    let Library::Revision { label, commit } = &self.libs[lib].0 else {
                        unreachable!("matched above")
                    };
                    self.builds.insert(
                        commit.key(),
                        BuildUse {
                            commit: commit.id.clone(),
                            fresh: built.fresh,
                            ok: built.meta.ok,
                            duration_s: built.meta.duration_s,
                            log: (!built.meta.ok).then(|| built.log_path().display().to_string()),
                        },
                    );
                    match built.prefix.clone() {
                        Some(prefix) => LibState::Ready(Box::new(Target {
                            label: label.clone(),
                            prefix,
                            commit: Some(commit.id.clone()),
                            expect_version: Some(built.meta.version.clone()),
                            binaries: built.meta.binaries_id(),
                        })),
                        None => LibState::Unavailable(Unavailable::BuildFailed {
                            log: built.log_path().display().to_string(),
                        }),
                    }
                }
            };
            self.libs[lib].1 = state;
        }
        Ok(match &self.libs[lib].1 {
            LibState::Ready(t) => Ok(t),
            LibState::Unavailable(u) => Err(u.clone()),
            LibState::Unknown => unreachable!("prepared above"),
        })
    }

    /// The revisions the wanted subjects need and that are not known yet, built together where
    /// [`builds::ensure_all`] can (a bisect's two ends). Errors are kept for `prepare_library`,
    /// which reports them as it would its own.
    fn build_ahead(&mut self, wants: &[(usize, usize)]) -> Result<()> {
        let mut jobs: Vec<BuildJob> = Vec::new();
        for &(i, _) in wants {
            let lib = &self.libs[self.subjects[i].0.lib];
            if let (Library::Revision { label, commit }, LibState::Unknown) = (&lib.0, &lib.1) {
                if !jobs.iter().any(|j| j.commit.key() == commit.key()) {
                    jobs.push(BuildJob {
                        label: label.clone(),
                        commit: commit.clone(),
                    });
                }
            }
        }
        if jobs.len() < 2 {
            return Ok(());
        }
        let ids: Vec<String> = jobs.iter().map(|j| j.commit.key()).collect();
        let built = self.build(jobs)?;
        self.prebuilt.extend(ids.into_iter().zip(built));
        Ok(())
    }

    /// One wave of builds, answered in the order of `jobs`.
    /// Builds made ahead are taken as they are (or waited for), the rest go out as one wave.
    fn build(&mut self, jobs: Vec<BuildJob>) -> Result<Vec<Result<builds::Built>>> {
        let keys: Vec<String> = jobs.iter().map(|j| j.commit.key()).collect();
        let (ahead, now): (Vec<BuildJob>, Vec<BuildJob>) = jobs
            .into_iter()
            .partition(|j| self.in_flight.contains(&j.commit.key()));
        let ahead_keys: Vec<String> = ahead.iter().map(|j| j.commit.key()).collect();
        let now_keys: Vec<String> = now.iter().map(|j| j.commit.key()).collect();
        if !now.is_empty() {
            let ticket = self.exec.submit(Wave {
                builds: now,
                blocks: Vec::new(),
            })?;
            self.ahead.insert(ticket, now_keys.clone());
            self.in_flight.extend(now_keys.iter().cloned());
        }
        while !now_keys
            .iter()
            .chain(&ahead_keys)
            .all(|k| self.prebuilt.contains_key(k))
        {
            let a = self.exec.next()?.ok_or_else(|| {
                anyhow::anyhow!("the executor stopped answering before its builds were done")
            })?;
            self.stash(a)?;
        }
        Ok(keys
            .iter()
            .map(|k| self.prebuilt.remove(k).expect("waited for above"))
            .collect())
    }

    /// Keeps a build's answer until its library is prepared.
    fn stash(&mut self, a: Answer) -> Result<()> {
        match a {
            Answer::Built { ticket, job, built } => {
                let key = self
                    .ahead
                    .get(&ticket)
                    .and_then(|keys| keys.get(job))
                    .cloned()
                    .ok_or_else(|| {
                        anyhow::anyhow!("the executor answered a build not asked for")
                    })?;
                self.in_flight.remove(&key);
                self.prebuilt.insert(key, built);
            }
            Answer::WaveDone { ticket } if self.ahead.remove(&ticket).is_some() => {}
            _ => anyhow::bail!("the executor answered a wave that is not waited for"),
        }
        Ok(())
    }

    /// Builds the search may ask for next, made now where builds do not disturb measurements
    /// ([`Executor::builds_apart`]); elsewhere nothing is built before it is needed.
    pub fn prefetch(&mut self, subjects: &[usize]) {
        if !self.exec.builds_apart() {
            return;
        }
        let mut jobs: Vec<BuildJob> = Vec::new();
        for &i in subjects {
            let lib = &self.libs[self.subjects[i].0.lib];
            if let (Library::Revision { label, commit }, LibState::Unknown) = (&lib.0, &lib.1) {
                let key = commit.key();
                let known = self.in_flight.contains(&key) || self.prebuilt.contains_key(&key);
                if !known && !jobs.iter().any(|j| j.commit.key() == key) {
                    jobs.push(BuildJob {
                        label: label.clone(),
                        commit: commit.clone(),
                    });
                }
            }
        }
        if jobs.is_empty() {
            return;
        }
        let keys: Vec<String> = jobs.iter().map(|j| j.commit.key()).collect();
        match self.exec.submit(Wave {
            builds: jobs,
            blocks: Vec::new(),
        }) {
            Ok(ticket) => {
                self.in_flight.extend(keys.iter().cloned());
                self.ahead.insert(ticket, keys);
            }
            // A hint only: the build is made when it is needed.
            Err(e) => progress::detail(&format!("  cannot build ahead: {e:#}")),
        }
    }

    /// Library, version check, kernel compile and cached samples of subject `i`.
    pub fn prepare(&mut self, i: usize) -> Result<()> {
        if !matches!(self.subjects[i].1, SubjectState::Unknown) {
            return Ok(());
        }
        let lib = self.subjects[i].0.lib;
        let target = match self.prepare_library(lib)? {
            Ok(t) => t.clone(),
            Err(u) => {
                self.subjects[i].1 = SubjectState::Unavailable(u);
                return Ok(());
            }
        };
        let (spec, threads, side) = {
            let s = &self.subjects[i].0;
            (s.spec.clone(), s.threads, s.side)
        };
        if let Some(v) = target.prefix.version() {
            if v < spec.kernel.min_version {
                self.subjects[i].1 = SubjectState::Unavailable(Unavailable::TooOld {
                    kernel: spec.kernel.name.clone(),
                    needs: spec.kernel.min_version.to_string(),
                    have: v.to_string(),
                });
                return Ok(());
            }
        }
        if let Some(j) = self.same_binaries(i, &target) {
            self.subjects[i].1 = SubjectState::SameAs(j);
            self.shared += 1;
            return Ok(());
        }
        let key = (lib, spec.kernel.name.clone());
        let kernel = match self.kernels.get(&key) {
            Some(k) => k.clone(),
            None => {
                let sp = progress::spinner(&format!(
                    "compiling {} for {}",
                    spec.kernel.name, target.label
                ));
                let k = compile::compile(self.cache, &spec.kernel, &target.prefix)?;
                sp.finish_and_clear();
                self.kernels.insert(key, k.clone());
                k
            }
        };
        let (store, samples) = match &self.reuse {
            Reuse::Nothing => (None, Vec::new()),
            Reuse::Context(context) => {
                let store = SampleSet::open(
                    self.cache,
                    &target.prefix.identity()?,
                    &spec,
                    threads,
                    self.duration,
                    self.metric,
                    &format!("{context}|{}", side.key()),
                )?;
                // A stored sample must pass the same checks as a fresh one.
                let mut samples: Vec<Sample> = store
                    .load()?
                    .into_iter()
                    .filter(|s| target.check(s).is_ok())
                    .collect();
                samples.retain(|s| self.same_code_path(s).is_ok());
                (Some(store), samples)
            }
        };
        self.subjects[i].1 = SubjectState::Ready(Box::new(Ready {
            kernel,
            store,
            samples,
        }));
        Ok(())
    }

    /// A prepared subject that measures what subject `i` would: same kernel spec, threads and
    /// side, on a build with the same loaded binaries.
    fn same_binaries(&self, i: usize, target: &Target) -> Option<usize> {
        let binaries = target.binaries.as_ref()?;
        let s = &self.subjects[i].0;
        self.subjects
            .iter()
            .enumerate()
            .find_map(|(j, (o, state))| {
                let same = j != i
                    && matches!(state, SubjectState::Ready(_))
                    && o.threads == s.threads
                    && o.side == s.side
                    && o.spec.canonical() == s.spec.canonical()
                    && self.target(o.lib).and_then(|t| t.binaries.as_ref()) == Some(binaries);
                same.then_some(j)
            })
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

    /// Bring every (subject, n) to at least n samples, taken in interleaved
    /// rounds. A subject that cannot be measured stays so; callers read why
    /// from [`Session::samples`].
    pub fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<()> {
        self.build_ahead(wants)?;
        for &(i, _) in wants {
            self.prepare(i)?;
        }
        // Subjects measured as another are filled through it, once.
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for &(i, n) in wants {
            let r = self.root(i);
            match merged.iter_mut().find(|(j, _)| *j == r) {
                Some(w) => w.1 = w.1.max(n),
                None => merged.push((r, n)),
            }
        }
        let (block, subjects) = self.block(&merged);
        let missing: usize = block
            .runs
            .iter()
            .map(|r| r.want.saturating_sub(r.have))
            .sum();
        if missing == 0 {
            return Ok(());
        }
        let bar = self
            .progress_bar
            .then(|| progress::bar(missing as u64, "sampling"));
        let started = std::time::Instant::now();
        let ticket = self.exec.submit(Wave {
            builds: Vec::new(),
            blocks: vec![block],
        })?;
        let mut last_round = 0;
        while let Some(a) = self.exec.next()? {
            match a {
                Answer::Sampled {
                    ticket: t,
                    run,
                    outcome,
                    retried,
                    taken,
                    ..
                } if t == ticket => {
                    self.retried += retried;
                    last_round = last_round.max(taken.round as u64);
                    self.took(subjects[run], outcome, taken)?;
                    if let Some(b) = &bar {
                        b.inc(1);
                    }
                }
                Answer::WaveDone { ticket: t } if t == ticket => break,
                other => self.stash(other)?,
            }
        }
        self.rounds += last_round;
        self.sampling_s += started.elapsed().as_secs_f64();
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        Ok(())
    }

    /// Wall seconds one sample has cost in this session, process start and waiting for a
    /// node included; `None` before the first sample.
    pub fn seconds_per_sample(&self) -> Option<f64> {
        (self.samples_taken > 0).then(|| self.sampling_s / self.samples_taken as f64)
    }

    /// Where this session's samples were taken, for reports.
    pub fn placement(&self) -> Placement {
        Placement {
            executor: self.exec.kind(),
            hosts: self.hosts.iter().cloned().collect(),
            cpu_caps: self.cpu_caps.clone(),
        }
    }

    /// Whether `s` ran the code paths of the session's other samples (the first one sets them):
    /// counts or times of different paths are never compared.
    fn same_code_path(&mut self, s: &Sample) -> std::result::Result<(), String> {
        let Some(caps) = &s.cpu_caps else {
            return Ok(());
        };
        match &self.cpu_caps {
            None => {
                self.cpu_caps = Some(caps.clone());
                Ok(())
            }
            Some(first) if first == caps => Ok(()),
            Some(first) => Err(format!(
                "this sample's libcrypto ran with CPU capabilities {caps}, the session's first with {first}: samples of different code paths are never compared (pin one with {}=…)",
                crate::measure::runner::CPU_CAPS_VARS[0]
            )),
        }
    }

    /// The block that brings each measurable (subject, n) to n samples, and the subject of
    /// each of its runs.
    fn block(&self, wants: &[(usize, usize)]) -> (Block, Vec<usize>) {
        let mut runs = Vec::new();
        let mut subjects = Vec::new();
        for &(i, want) in wants {
            let (subject, SubjectState::Ready(r)) = &self.subjects[i] else {
                continue;
            };
            let LibState::Ready(target) = &self.libs[subject.lib].1 else {
                continue;
            };
            runs.push(Run {
                label: target.label.clone(),
                kernel: r.kernel.clone(),
                spec: subject.spec.clone(),
                prefix: target.prefix.clone(),
                threads: subject.threads,
                have: r.samples.len(),
                want,
            });
            subjects.push(i);
        }
        let timing = Timing {
            duration: self.duration,
            timeout: self.timeout,
            retries: self.retries,
            metric: self.metric,
        };
        let host = self.host_of(&subjects);
        (Block { timing, runs, host }, subjects)
    }

    /// The host that took most of these subjects' samples so far (a resumed run's, from the
    /// cache): new samples should come from it too.
    fn host_of(&self, subjects: &[usize]) -> Option<String> {
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for &i in subjects {
            if let SubjectState::Ready(r) = &self.subjects[i].1 {
                for h in r.samples.iter().filter_map(|s| s.host.as_deref()) {
                    *count.entry(h).or_default() += 1;
                }
            }
        }
        let most = count.into_iter().max_by_key(|(_, n)| *n)?;
        Some(most.0.to_string())
    }

    /// One callgrind profile of subject `i` (single thread), written to
    /// `out`, whatever the session's metric; never cached. The sample it
    /// comes with passed the same identity checks as any other.
    pub fn profile(
        &mut self,
        i: usize,
        out: &Path,
    ) -> Result<std::result::Result<Sample, Unavailable>> {
        self.prepare(i)?;
        let i = self.root(i);
        let (subject, state) = &self.subjects[i];
        let r = match state {
            SubjectState::Ready(r) => r,
            SubjectState::Unavailable(u) => return Ok(Err(u.clone())),
            SubjectState::Unknown | SubjectState::SameAs(_) => unreachable!("prepared above"),
        };
        let LibState::Ready(target) = &self.libs[subject.lib].1 else {
            unreachable!("a ready subject has a ready library")
        };
        Metric::Instructions.check_threads(subject.threads)?;
        metric::valgrind_version()?;
        let req = SampleRequest {
            cache: self.cache,
            kernel: &r.kernel,
            spec: &subject.spec,
            prefix: &target.prefix,
            threads: subject.threads,
            duration: self.duration,
            timeout: self.timeout,
            metric: Metric::Instructions,
            profile: Some(out),
        };
        let outcome = runner::take_sample(&req)?;
        if let Ok(s) = &outcome {
            target.check(s)?;
        }
        Ok(outcome)
    }

    /// A sample of subject `i` has come back (or why it cannot be measured any more): it counts
    /// only if it passes the library's checks, and is kept in the sample cache.
    fn took(&mut self, i: usize, outcome: SampleOutcome, taken: Taken) -> Result<()> {
        let (subject, state) = &self.subjects[i];
        let (SubjectState::Ready(_), LibState::Ready(target)) = (state, &self.libs[subject.lib].1)
        else {
            return Ok(());
        };
        let what = format!(
            "{} {} t={}",
            target.label,
            subject.spec.short(),
            subject.threads
        );
        let mut s = match outcome {
            Ok(s) => s,
            Err(u) => {
                progress::detail(&format!("  {what}: {u}"));
                self.subjects[i].1 = SubjectState::Unavailable(u);
                return Ok(());
            }
        };
        target.check(&s)?;
        if let Err(why) = self.same_code_path(&s) {
            anyhow::bail!("{}: {why}", what);
        }
        s.round = Some(self.rounds + taken.round as u64);
        s.session = Some(self.session);
        self.hosts.insert(taken.host.clone());
        s.host = Some(taken.host);
        let SubjectState::Ready(r) = &mut self.subjects[i].1 else {
            unreachable!("matched above")
        };
        if let Some(store) = &r.store {
            store.append(&s)?;
        }
        self.samples_taken += 1;
        progress::detail(&format!(
            "  sample {what} #{}: {:.4} {}",
            r.samples.len() + 1,
            s.value(self.metric),
            self.metric.unit_ascii()
        ));
        r.samples.push(s);
        Ok(())
    }
}

/// The search measures subjects by index: a bisect adds one subject per
/// commit, in history order.
impl Measurer for Session<'_> {
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        Session::ensure(self, wants)?;
        Ok(wants
            .iter()
            .map(|&(i, _)| match self.taken(i) {
                Ok(v) => Probe::Samples(v),
                Err(u) => Probe::Skip(u),
            })
            .collect())
    }

    fn prepare(&mut self, i: usize) -> Result<()> {
        Session::prepare(self, i)
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
