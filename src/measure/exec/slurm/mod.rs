//! The Slurm executor: every build and every block of samples is a Slurm job. Builds go to a
//! build partition (any node, `make -j` of that node's cores, work trees on the node's own
//! disk); blocks go to a measurement partition with the node to themselves (`--exclusive`), so
//! nothing else runs beside a measurement and all samples of a block come from one host.
//!
//! The cache is the only channel: it lives on a filesystem every node sees. A build job runs
//! `perfbisect build`, which publishes atomically under the build's lock; its answer is the
//! entry it published. A block job streams its samples into an answers file (see
//! [`node`](super::node)). A job that ends without its result — failed, cancelled, its node
//! lost — is submitted again, up to `job_retries` times, continuing from the samples already
//! answered. Dropping the executor (an error, Ctrl-C) cancels what is still queued or running.

use std::collections::{HashMap, VecDeque};
use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};

mod cluster;
mod config;

pub use config::{JobRecord, SlurmConfig, JOBS_FILE};

use cluster::{ended, node_of, nodes, partitions, states_of, Job, JobState, Placing};

use crate::build::builds::{self, BuildOptions};
use crate::build::repo::Repo;
use crate::cache::Cache;
use crate::interrupt;
use crate::measure::exec::node::{self, Line};
use crate::measure::exec::{Answer, Block, BuildJob, Executor, ExecutorKind, Taken, Ticket, Wave};
use crate::progress;

/// A job in the queue or running.
struct Running {
    id: String,
    attempt: usize,
    log: PathBuf,
    /// What it makes, as an error names it ("the build of 1a2b3c", "a block of …").
    what: String,
    /// The node it was sent to (`-w`), if one.
    on: Option<String>,
}

struct BuildTask {
    job: BuildJob,
    running: Option<Running>,
    answered: bool,
}

struct BlockTask {
    dir: PathBuf,
    block: Block,
    /// Per run the samples answered so far, `None` once it cannot be measured.
    have: Vec<Option<usize>>,
    /// Rounds of earlier attempts: a new attempt's rounds are numbered after them.
    rounds_before: usize,
    rounds_seen: usize,
    read: u64,
    running: Option<Running>,
    done: bool,
}

struct Pending {
    ticket: Ticket,
    builds: Vec<BuildTask>,
    blocks: Vec<BlockTask>,
}

pub struct Slurm<'a> {
    cache: &'a Cache,
    repo: &'a Repo,
    opts: BuildOptions<'a>,
    /// `perfbisect build`'s options, as a build job gives them.
    build_args: Vec<String>,
    cfg: SlurmConfig,
    exe: PathBuf,
    /// This run's job files.
    dir: PathBuf,
    waves: VecDeque<Pending>,
    answered: VecDeque<Answer>,
    next_ticket: u64,
    next_block: usize,
    /// Whether builds are made ahead (see [`SlurmConfig::prefetch`]).
    prefetch: bool,
    /// The nodes of the measurement partition.
    measure_nodes: Vec<String>,
    /// Cores a build job asks for and builds with ([`SlurmConfig::build_cpus`]).
    build_cpus: usize,
    /// Measurement jobs of this run queued or running, as of the last look at the queue and
    /// the submissions since.
    measuring: usize,
    /// The node the first block ran on: every later block runs there too, so that no test
    /// pools samples of two machines.
    measure_node: Option<String>,
    /// Since when each job has been waiting for a reason that will not clear by itself.
    stuck_since: HashMap<String, std::time::Instant>,
    /// The queue as last asked, when, and the gap until the next look.
    queue: Queue,
}

/// The queue's answer about this run's jobs, kept between looks (see `QUEUE_LOOK_MIN`).
struct Queue {
    states: HashMap<String, JobState>,
    /// The jobs asked about at that look.
    asked: Vec<String>,
    at: std::time::Instant,
    every: Duration,
}

impl Queue {
    fn new() -> Queue {
        Queue {
            states: HashMap::new(),
            asked: Vec::new(),
            at: std::time::Instant::now(),
            every: QUEUE_LOOK_MIN,
        }
    }

    /// The states of `ids`, asked again once the gap has passed or when one of them was not
    /// asked about; the gap grows while nothing changes and shrinks back when something does.
    fn look(&mut self, ids: Vec<String>) -> Result<&HashMap<String, JobState>> {
        let new = ids.iter().any(|id| !self.asked.contains(id));
        if new || self.at.elapsed() >= self.every {
            let states = states_of(&ids)?;
            self.every = match states == self.states {
                true => (self.every * 3 / 2).min(QUEUE_LOOK_MAX),
                false => QUEUE_LOOK_MIN,
            };
            self.states = states;
            self.asked = ids;
            self.at = std::time::Instant::now();
        }
        Ok(&self.states)
    }
}

/// Time between looks at the answers files (on the shared filesystem: they cost Slurm nothing).
const POLL: Duration = Duration::from_millis(200);
/// The queue is asked (one `squeue` for all the run's jobs) at least this far apart, the gap
/// growing by half each look that changed nothing, up to `QUEUE_LOOK_MAX`: ReFrame's users
/// were told off by their admins for a "very high squeue rate", and a job that has run a minute
/// will rarely end in the next second. A job submitted since the last look is asked about at
/// once (a job the queue was not asked about would read as ended).
const QUEUE_LOOK_MIN: Duration = Duration::from_secs(1);
const QUEUE_LOOK_MAX: Duration = Duration::from_secs(10);
/// How long the probe jobs of `connect` may take before Slurm is called unable to serve.
const PROBE_WAIT: Duration = Duration::from_secs(120);

impl<'a> Slurm<'a> {
    /// Checks that Slurm answers, that both partitions exist and that their nodes can write
    /// the cache (one tiny job on each); any failure is one line for the user.
    pub fn connect(
        cache: &'a Cache,
        repo: &'a Repo,
        opts: BuildOptions<'a>,
        build_args: Vec<String>,
        cfg: SlurmConfig,
    ) -> Result<Slurm<'a>> {
        if cfg.max_jobs == 0 {
            bail!("the Slurm executor needs max_jobs of at least 1");
        }
        if cfg.lanes == Some(0) {
            bail!("the Slurm executor needs lanes of at least 1");
        }
        let partitions = partitions()?;
        for p in [&cfg.build_partition, &cfg.measure_partition] {
            if !partitions.contains(p) {
                bail!(
                    "unknown Slurm partition '{p}' (the cluster has: {})",
                    partitions.join(", ")
                );
            }
        }
        let exe = std::env::current_exe().context("cannot find the perfbisect executable")?;
        let dir = cache.dir("jobs")?.join(format!(
            "{}-{}",
            chrono::Local::now().format("%Y%m%dT%H%M%S"),
            std::process::id()
        ));
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let cfg_measure = cfg.measure_partition.clone();
        let build_cpus = (cfg.build_cpus)
            .or_else(|| cluster::cpus(&cfg.build_partition))
            .unwrap_or(1);
        let s = Slurm {
            build_cpus,
            cache,
            repo,
            opts,
            build_args,
            cfg,
            exe,
            dir,
            waves: VecDeque::new(),
            answered: VecDeque::new(),
            next_ticket: 0,
            next_block: 0,
            measure_node: None,
            stuck_since: HashMap::new(),
            queue: Queue::new(),
            measuring: 0,
            prefetch: false,
            measure_nodes: nodes(&cfg_measure)?,
        };
        s.check_sees_cache()?;
        let mut s = s;
        s.prefetch = match s.cfg.prefetch {
            Some(on) => on,
            None => {
                let build = nodes(&s.cfg.build_partition)?;
                s.measure_nodes.iter().all(|n| !build.contains(n))
            }
        };
        progress::info(&format!(
            "Slurm: builds on partition {}{}, measurements on {} (exclusive nodes); job files in {}",
            s.cfg.build_partition,
            if s.prefetch { " (ahead of the search)" } else { "" },
            s.cfg.measure_partition,
            s.dir.display()
        ));
        Ok(s)
    }

    /// A job on each partition writes a file into the cache, which this process must then see.
    fn check_sees_cache(&self) -> Result<()> {
        let mut probes = Vec::new();
        for p in [&self.cfg.build_partition, &self.cfg.measure_partition] {
            let file = self.dir.join(format!("probe-{p}"));
            let job = Job {
                argv: vec!["touch".into(), file.to_string_lossy().into_owned()],
                env: Vec::new(),
                log: self.dir.join(format!("probe-{p}.out")),
                time_limit: Duration::from_secs(300),
                cpus: None,
            };
            let id = cluster::sbatch(
                "perfbisect-probe",
                p,
                Placing::Any,
                &job,
                &self.cfg.sbatch_args,
            )?;
            probes.push((p.clone(), id, file, job.log));
        }
        let ids: Vec<String> = probes.iter().map(|(_, id, ..)| id.clone()).collect();
        interrupt::jobs(ids.clone(), cluster::scancel);
        let started = std::time::Instant::now();
        loop {
            if let Err(e) = interrupt::check() {
                cluster::scancel(&ids);
                return Err(e);
            }
            let states = states_of(&ids)?;
            if ids.iter().all(|id| ended(&states, id)) {
                break;
            }
            if started.elapsed() > PROBE_WAIT {
                cluster::scancel(&ids);
                bail!(
                    "Slurm ran no probe job within {} s (jobs {}): are the partitions' nodes up?",
                    PROBE_WAIT.as_secs(),
                    ids.join(", ")
                );
            }
            std::thread::sleep(POLL);
        }
        for (p, _, file, log) in probes {
            if !file.exists() {
                bail!(
                    "the nodes of Slurm partition {p} cannot write the cache {} (a probe job could not; see {}): the cache must be on a filesystem every node sees",
                    self.cache.root.display(),
                    log.display()
                );
            }
        }
        Ok(())
    }

    fn record(&self, r: &JobRecord) -> Result<()> {
        use std::io::Write;
        let path = self.dir.join(JOBS_FILE);
        let mut f = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        writeln!(f, "{}", serde_json::to_string(r)?)?;
        Ok(())
    }

    /// `perfbisect --cache CACHE ARGS…` as a job runs it.
    fn perfbisect(&self, args: impl IntoIterator<Item = String>) -> Vec<String> {
        let mut argv = vec![
            self.exe.to_string_lossy().into_owned(),
            "--cache".into(),
            self.cache.root.to_string_lossy().into_owned(),
        ];
        argv.extend(args);
        argv
    }

    /// Submits `job` and records it in the run's job file; returns its id.
    fn submit_job(&self, job: &Job, at: Placing, record: JobRecord) -> Result<String> {
        let id = cluster::sbatch(
            &record.name,
            &record.partition,
            at,
            job,
            &self.cfg.sbatch_args,
        )?;
        self.record(&JobRecord {
            id: id.clone(),
            ..record
        })?;
        Ok(id)
    }

    fn submit_build(&self, t: &mut BuildTask, attempt: usize) -> Result<()> {
        let key = t.job.commit.key();
        let short = &t.job.commit.short;
        let log = self
            .dir
            .join(format!("build-{}-{attempt}.out", t.job.commit.short));
        let args = ["build".into(), rev_spec(&t.job)];
        let job = Job {
            argv: self.perfbisect(args.into_iter().chain(self.build_args.iter().cloned())),
            env: vec![(
                builds::WORK_DIR_ENV.into(),
                self.cfg.work_dir.to_string_lossy().into_owned(),
            )],
            log: log.clone(),
            time_limit: Duration::from_secs(self.cfg.build_time_limit),
            // Slurm sets SLURM_CPUS_PER_TASK, which the build's `make -j` follows.
            cpus: Some(self.build_cpus),
        };
        let record = JobRecord {
            id: String::new(),
            name: format!("perfbisect-build-{short}"),
            partition: self.cfg.build_partition.clone(),
            what: key,
            attempt,
            alongside: self.measuring,
        };
        let id = self.submit_job(&job, Placing::Any, record)?;
        progress::detail(&format!(
            "  Slurm job {id}: build of {short} (log {})",
            log.display()
        ));
        t.running = Some(Running {
            id,
            attempt,
            log,
            what: format!("the build of {short}"),
            on: None,
        });
        Ok(())
    }

    fn submit_block(&mut self, t: &mut BlockTask, attempt: usize) -> Result<()> {
        let mut block = t.block.clone();
        for (run, have) in block.runs.iter_mut().zip(&t.have) {
            match have {
                Some(h) => run.have = *h,
                // Out of the rounds: nothing more is wanted of it.
                None => run.want = 0,
            }
        }
        let dir = t.dir.join(format!("attempt-{attempt}"));
        node::write_block(&dir, &block)?;
        let log = dir.join("slurm.out");
        let job = Job {
            argv: self.perfbisect([
                node::HIDDEN_SUBCOMMAND.into(),
                dir.to_string_lossy().into_owned(),
            ]),
            env: Vec::new(),
            log: log.clone(),
            time_limit: block_time_limit(&block),
            cpus: None,
        };
        let host = t
            .block
            .host
            .clone()
            .filter(|h| self.measure_nodes.contains(h));
        // A resumed run measures where its cached samples were taken, while that node is in
        // the partition; a lane's block where its lane's samples were, else anywhere.
        let node = if t.block.own_node {
            host
        } else {
            if self.measure_node.is_none() {
                self.measure_node = host;
            }
            self.measure_node.clone()
        };
        let record = JobRecord {
            id: String::new(),
            name: "perfbisect-measure".into(),
            partition: self.cfg.measure_partition.clone(),
            what: dir.to_string_lossy().into_owned(),
            attempt,
            alongside: self.measuring,
        };
        let at = Placing::Exclusive(node.as_deref());
        let id = self.submit_job(&job, at, record)?;
        self.measuring += 1;
        progress::detail(&format!(
            "  Slurm job {id}: {} sampled on partition {} (log {})",
            describe(&t.block),
            self.cfg.measure_partition,
            log.display()
        ));
        t.read = 0;
        t.rounds_before = t.rounds_seen;
        t.running = Some(Running {
            id,
            attempt,
            log,
            what: describe(&t.block),
            on: node,
        });
        Ok(())
    }

    /// Moves every wave on, oldest first: submits what may start, answers what has ended. A
    /// wave whose builds are not done holds back only its own blocks.
    fn step(&mut self, states: &HashMap<String, JobState>) -> Result<()> {
        let mut slots = self
            .cfg
            .max_jobs
            .saturating_sub(self.waves.iter().map(running).sum());
        self.measuring = self
            .waves
            .iter()
            .flat_map(|p| &p.blocks)
            .filter_map(|b| b.running.as_ref())
            .filter(|r| !ended(states, &r.id))
            .count();
        let mut result = Ok(());
        for mut p in std::mem::take(&mut self.waves) {
            if result.is_ok() {
                result = self.step_wave(&mut p, states, &mut slots);
            }
            let complete = p.builds.iter().all(|b| b.answered) && p.blocks.iter().all(|b| b.done);
            if complete && result.is_ok() {
                self.answered
                    .push_back(Answer::WaveDone { ticket: p.ticket });
            } else {
                // Kept on an error too: dropping the executor cancels its jobs.
                self.waves.push_back(p);
            }
        }
        result
    }

    fn step_wave(
        &mut self,
        p: &mut Pending,
        states: &HashMap<String, JobState>,
        slots: &mut usize,
    ) -> Result<()> {
        for (job, t) in p.builds.iter_mut().enumerate() {
            if t.answered {
                continue;
            }
            match &t.running {
                None if *slots > 0 => {
                    self.submit_build(t, 1)?;
                    *slots -= 1;
                }
                None => {}
                Some(r) if ended(states, &r.id) => {
                    if let Some(a) = self.build_ended(p.ticket, job, t)? {
                        self.answered.push_back(a);
                        t.answered = true;
                    }
                }
                Some(_) => {}
            }
        }
        if !p.builds.iter().all(|b| b.answered) {
            return Ok(());
        }
        for (b, t) in p.blocks.iter_mut().enumerate() {
            if t.done {
                continue;
            }
            match &t.running {
                None if *slots > 0 => {
                    self.submit_block(t, 1)?;
                    *slots -= 1;
                }
                None => {}
                Some(r) => {
                    let shared = !t.block.own_node && self.measure_node.is_none();
                    if let (true, Some(JobState::Running { node })) = (shared, states.get(&r.id)) {
                        if !node.is_empty() {
                            self.measure_node = Some(node.clone());
                        }
                    }
                    let finished = ended(states, &r.id);
                    self.read_block(p.ticket, b, t)?;
                    if finished && !t.done {
                        // Its last lines may have landed after the look above.
                        self.read_block(p.ticket, b, t)?;
                        if !t.done {
                            self.block_lost(t)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A build job has left the queue: its entry, or a new attempt.
    fn build_ended(&self, ticket: Ticket, job: usize, t: &mut BuildTask) -> Result<Option<Answer>> {
        let r = t.running.take().expect("an ended job was running");
        match builds::published(self.cache, self.repo, &t.job.commit, &self.opts)? {
            Some(mut built) => {
                // Not in the cache when the job was submitted: the job made it.
                built.fresh = true;
                let node = node_of(&r.log);
                self.opts.tell(builds::BuildNotice::Built {
                    short: &t.job.commit.short,
                    built: &built,
                    on: Some(&format!("{node} (Slurm job {})", r.id)),
                });
                Ok(Some(Answer::Built {
                    ticket,
                    job,
                    built: Ok(built),
                }))
            }
            None if r.attempt <= self.cfg.job_retries => {
                progress::info(&format!(
                    "  Slurm job {} (build of {}) ended without a build (log {}): submitting it again",
                    r.id,
                    t.job.commit.short,
                    r.log.display()
                ));
                self.submit_build(t, r.attempt + 1)?;
                Ok(None)
            }
            None => Ok(Some(Answer::Built {
                ticket,
                job,
                built: Err(anyhow::anyhow!(
                    "the Slurm build job of {} ended without a build {} times (last log {})",
                    t.job.label,
                    r.attempt,
                    r.log.display()
                )),
            })),
        }
    }

    /// New answer lines of a block's running attempt.
    fn read_block(&mut self, ticket: Ticket, block: usize, t: &mut BlockTask) -> Result<()> {
        let Some(r) = &t.running else {
            return Ok(());
        };
        let path = r.log.with_file_name(node::ANSWERS_FILE);
        let (lines, read) = node::read_answers(&path, t.read)?;
        t.read = read;
        for line in lines {
            match line {
                Line::Sampled {
                    run,
                    outcome,
                    retried,
                    taken,
                } => {
                    t.have[run] = match (&outcome, t.have[run]) {
                        (Ok(_), Some(h)) => Some(h + 1),
                        _ => None,
                    };
                    let round = t.rounds_before + taken.round;
                    t.rounds_seen = t.rounds_seen.max(round);
                    self.answered.push_back(Answer::Sampled {
                        ticket,
                        block,
                        run,
                        outcome,
                        retried,
                        taken: Taken { round, ..taken },
                    });
                }
                Line::Done => {
                    t.done = true;
                    t.running = None;
                }
            }
        }
        Ok(())
    }

    /// A block job ended before its last line: again, from the samples answered so far.
    fn block_lost(&mut self, t: &mut BlockTask) -> Result<()> {
        let r = t.running.take().expect("a lost block was running");
        if r.attempt > self.cfg.job_retries {
            bail!(
                "the Slurm job sampling {} ended before it was done {} times (last log {})",
                describe(&t.block),
                r.attempt,
                r.log.display()
            );
        }
        progress::info(&format!(
            "  Slurm job {} ({}) ended before it was done (log {}): submitting it again",
            r.id,
            describe(&t.block),
            r.log.display()
        ));
        self.submit_block(t, r.attempt + 1)
    }

    /// An error once a job of this run has waited longer than `pending_limit` for a reason
    /// that will not clear by itself (a drained or down node, a hold, a limit): one line naming
    /// the job, the reason and the node. The caller cancels the run's jobs.
    fn stuck(&mut self, states: &HashMap<String, JobState>) -> Result<()> {
        let now = std::time::Instant::now();
        self.stuck_since
            .retain(|id, _| states.get(id).is_some_and(|s| s.stuck().is_some()));
        let limit = Duration::from_secs(self.cfg.pending_limit);
        for r in self.waves.iter().flat_map(|p| {
            let b = p.builds.iter().filter_map(|t| t.running.as_ref());
            b.chain(p.blocks.iter().filter_map(|t| t.running.as_ref()))
        }) {
            let Some(why) = states.get(&r.id).and_then(JobState::stuck) else {
                continue;
            };
            let since = *self.stuck_since.entry(r.id.clone()).or_insert(now);
            if now.duration_since(since) >= limit {
                let on =
                    r.on.as_deref()
                        .map(|n| format!(" on node {n}"))
                        .unwrap_or_default();
                bail!(
                    "Slurm job {} ({}{on}) waited {} s for a reason that will not clear by itself: {why}; the run's jobs are cancelled (free the node, or raise [slurm] pending_limit)",
                    r.id,
                    r.what,
                    now.duration_since(since).as_secs()
                );
            }
        }
        Ok(())
    }

    fn cancel_all(&mut self) {
        let ids = run_ids(&self.waves);
        if !ids.is_empty() {
            cluster::scancel(&ids);
        }
        interrupt::jobs(Vec::new(), cluster::scancel);
        self.waves.clear();
    }
}

impl Executor for Slurm<'_> {
    fn kind(&self) -> ExecutorKind {
        ExecutorKind::Slurm
    }

    /// A measurement job has its node to itself, so a build never runs beside it; building
    /// ahead pays when builds have nodes of their own (see [`SlurmConfig::prefetch`]).
    fn builds_apart(&self) -> bool {
        self.prefetch
    }

    fn lanes(&self) -> usize {
        let nodes = self.measure_nodes.len().max(1);
        self.cfg.lanes.unwrap_or(nodes).min(self.cfg.max_jobs)
    }

    fn submit(&mut self, wave: Wave) -> Result<Ticket> {
        let ticket = Ticket(self.next_ticket);
        self.next_ticket += 1;
        let mut builds = Vec::new();
        for (job, j) in wave.builds.into_iter().enumerate() {
            let cached = builds::cached(self.cache, self.repo, &j.commit, &self.opts)?;
            let answered = cached.is_some();
            if let Some(built) = cached {
                self.answered.push_back(Answer::Built {
                    ticket,
                    job,
                    built: Ok(built),
                });
            }
            builds.push(BuildTask {
                job: j,
                running: None,
                answered,
            });
        }
        let blocks = wave
            .blocks
            .into_iter()
            .map(|block| {
                self.next_block += 1;
                BlockTask {
                    dir: self.dir.join(format!("block-{}", self.next_block)),
                    have: block.runs.iter().map(|r| Some(r.have)).collect(),
                    block,
                    rounds_before: 0,
                    rounds_seen: 0,
                    read: 0,
                    running: None,
                    done: false,
                }
            })
            .collect();
        self.waves.push_back(Pending {
            ticket,
            builds,
            blocks,
        });
        Ok(ticket)
    }

    fn next(&mut self) -> Result<Option<Answer>> {
        loop {
            if let Some(a) = self.answered.pop_front() {
                return Ok(Some(a));
            }
            if self.waves.is_empty() {
                return Ok(None);
            }
            if let Err(e) = interrupt::check() {
                self.cancel_all();
                return Err(e);
            }
            let states = self.queue.look(run_ids(&self.waves))?.clone();
            if let Err(e) = self.stuck(&states) {
                self.cancel_all();
                return Err(e);
            }
            let stepped = self.step(&states);
            // What a second signal must cancel: it exits without dropping this executor.
            interrupt::jobs(run_ids(&self.waves), cluster::scancel);
            stepped?;
            if self.answered.is_empty() {
                std::thread::sleep(POLL);
            }
        }
    }
}

impl Drop for Slurm<'_> {
    fn drop(&mut self) {
        self.cancel_all();
    }
}

/// How `perfbisect build` names the job's revision: the commit and its patches' files.
fn rev_spec(j: &BuildJob) -> String {
    let mut s = j.commit.id.clone();
    for p in &j.commit.patches {
        s.push('+');
        s.push_str(&p.path.to_string_lossy());
    }
    s
}

/// What a block may take at most: each sample it still wants at three times its expected cost
/// (its measuring window, plus a process's start: 2 s in time, 20 s under callgrind), each run's
/// allowance for samples that hang until their own timeout and are taken again, and two minutes
/// to start. Generous on purpose: a job that reaches it is ended by Slurm and submitted again.
fn block_time_limit(b: &Block) -> Duration {
    let t = &b.timing;
    let start = if t.metric.is_time() { 2.0 } else { 20.0 };
    let hang = crate::measure::runner::sample_timeout(t.metric, t.duration, t.timeout);
    let secs: f64 = (b.runs.iter())
        .map(|r| {
            let wanted = r.want.saturating_sub(r.have) as f64;
            wanted * 3.0 * (t.duration + start) + (1 + t.retries) as f64 * hang
        })
        .sum();
    Duration::from_secs_f64(secs + 120.0)
}

fn describe(b: &Block) -> String {
    let labels: Vec<&str> = b.runs.iter().map(|r| r.label.as_str()).collect();
    format!("a block of {}", labels.join(" "))
}

fn running(p: &Pending) -> usize {
    let b = p.builds.iter().filter(|t| t.running.is_some()).count();
    b + p.blocks.iter().filter(|t| t.running.is_some()).count()
}

/// The ids of every job of `waves` that was submitted and not seen to end.
fn run_ids(waves: &VecDeque<Pending>) -> Vec<String> {
    waves
        .iter()
        .flat_map(|p| {
            let b = p.builds.iter().filter_map(|t| t.running.as_ref());
            let m = p.blocks.iter().filter_map(|t| t.running.as_ref());
            b.chain(m).map(|r| r.id.clone()).collect::<Vec<_>>()
        })
        .collect()
}
