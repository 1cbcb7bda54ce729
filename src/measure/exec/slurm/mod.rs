//! The Slurm executor: every build is a Slurm job, and every search samples in a *lane*: one
//! job on the measurement partition that holds a node to itself (`--exclusive`) for the
//! search's whole life and samples each block the run hands it (see [`lanes`]). So nothing runs
//! beside a measurement, all samples of a search come from one host, and a block pays no queue
//! wait. Builds go to a build partition (any node, `make -j` of the cores Slurm granted, work
//! trees on the node's own disk).
//!
//! The cache is the only channel: it lives on a filesystem every node sees. A build job runs
//! `perfbisect build`, which publishes atomically under the build's lock; its answer is the
//! entry it published. A lane job streams each block's samples into an answers file (see
//! [`node`](super::node)). A build job that ends without its build, or a lane job that ends
//! before a block handed to it is done — failed, cancelled, its node lost — is tried again, up
//! to `job_retries` times, the block continuing from the samples already answered; a lane that
//! must go on on another node samples its block's subjects afresh there. Dropping the executor
//! (an error, Ctrl-C) cancels what is still queued or running.

use std::collections::{HashMap, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};

mod cluster;
mod config;
mod controller;
mod lanes;
mod runs;

pub use config::{BlockRecord, JobRecord, SlurmConfig, BLOCKS_FILE, JOBS_FILE};
use lanes::{LaneJob, LaneKey};

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
    /// Its number in the run.
    number: usize,
    block: Block,
    /// Per run the samples answered so far, `None` once it cannot be measured.
    have: Vec<Option<usize>>,
    /// The node `have`'s samples were taken on: on another, the block starts afresh.
    host: Option<String>,
    /// Rounds of earlier attempts: a new attempt's rounds are numbered after them.
    rounds_before: usize,
    rounds_seen: usize,
    read: u64,
    /// The lane job it is handed to, and its directory there.
    handed: Option<(String, PathBuf)>,
    /// Times it was handed to a lane job that ran.
    attempt: usize,
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
    /// This run's job files, and the lock that says it lives (see [`runs`]).
    dir: PathBuf,
    _alive: crate::cache::Lock,
    /// What every `sbatch` is given: the run's name, then the user's arguments.
    sbatch_args: Vec<String>,
    /// Build jobs of a stopped run of this cache, by the commit key they make: taken over
    /// instead of built again.
    adopted: HashMap<String, runs::Adopted>,
    /// Set once a stop (a signal) has read what the run's jobs answered before they ended.
    drained: bool,
    /// Each lane's job, and lane jobs told to end whose blocks may not all be answered yet.
    lanes: HashMap<LaneKey, LaneJob>,
    closing: Vec<LaneJob>,
    /// Lane jobs and blocks submitted so far (their directories are numbered).
    lane_jobs: usize,
    blocks: usize,
    /// Blocks handed and not yet answered, across the run.
    in_flight: usize,
    /// Nodes a lane's job waited for in vain: a lane goes on elsewhere.
    avoid: Vec<String>,
    /// When the lanes were last shown that the run is alive.
    touched: std::time::Instant,
    waves: VecDeque<Pending>,
    answered: VecDeque<Answer>,
    next_ticket: u64,
    /// Whether builds are made ahead (see [`SlurmConfig::prefetch`]).
    prefetch: bool,
    /// The nodes of the measurement partition, and those of them builds may run on too.
    measure_nodes: Vec<String>,
    shared_nodes: Vec<String>,
    /// Cores a build job asks for and builds with ([`SlurmConfig::build_cpus`]).
    build_cpus: usize,
    /// Since when each job has been waiting for a node (see `make_way`).
    waiting_since: HashMap<String, std::time::Instant>,
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
/// How long a stopped run waits for its lanes' jobs to end before it reads their answers.
const DRAIN_WAIT: Duration = Duration::from_secs(10);
/// How long a job of the run waits for a node before an idle lane of the run lets its own go
/// (see `Slurm::make_way`).
const MAKE_WAY_AFTER: Duration = Duration::from_secs(10);
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
        check_config(&cfg)?;
        let exe = crate::measure::runner::perfbisect_exe()?;
        let (dir, alive) = runs::start(cache)?;
        let adopted = runs::take_over(&cache.dir("jobs")?)?;
        let mut sbatch_args = vec![runs::comment(&dir)];
        sbatch_args.extend(cfg.sbatch_args.iter().cloned());
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
            _alive: alive,
            sbatch_args,
            adopted,
            drained: false,
            waves: VecDeque::new(),
            answered: VecDeque::new(),
            next_ticket: 0,
            lanes: HashMap::new(),
            closing: Vec::new(),
            lane_jobs: 0,
            blocks: 0,
            in_flight: 0,
            avoid: Vec::new(),
            touched: std::time::Instant::now(),
            stuck_since: HashMap::new(),
            waiting_since: HashMap::new(),
            queue: Queue::new(),
            prefetch: false,
            measure_nodes: nodes(&cfg_measure)?,
            shared_nodes: Vec::new(),
        };
        s.check_sees_cache()?;
        let mut s = s;
        let build = nodes(&s.cfg.build_partition)?;
        s.shared_nodes = (s.measure_nodes.iter())
            .filter(|n| build.contains(n))
            .cloned()
            .collect();
        s.prefetch = s.cfg.prefetch.unwrap_or(s.shared_nodes.is_empty());
        progress::info(&format!(
            "Slurm: builds on partition {}{}, measurements on {} (a node held per search); job files in {}",
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
            let id = cluster::sbatch("perfbisect-probe", p, Placing::Any, &job, &self.sbatch_args)?;
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
            let stuck = (ids.iter()).find_map(|id| Some((id, states.get(id)?.stuck()?)));
            if let Some((id, why)) =
                stuck.filter(|_| started.elapsed().as_secs() >= self.cfg.pending_limit)
            {
                cluster::scancel(&ids);
                bail!(
                    "Slurm job {id} (a probe of the partitions) waited {} s for a reason that will not clear by itself: {why}; the run's jobs are cancelled (free the partition's nodes, or raise [slurm] pending_limit)",
                    started.elapsed().as_secs()
                );
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

    /// Appends `r` to the run's record `file` (jobs.jsonl, blocks.jsonl).
    fn record(&self, file: &str, r: &impl serde::Serialize) -> Result<()> {
        use std::io::Write;
        let path = self.dir.join(file);
        let mut f = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        writeln!(f, "{}", serde_json::to_string(r)?)?;
        Ok(())
    }

    /// `perfbisect --cache CACHE [--shared-cache] ARGS…` as a job runs it.
    fn perfbisect(&self, args: impl IntoIterator<Item = String>) -> Vec<String> {
        let mut argv = vec![
            self.exe.to_string_lossy().into_owned(),
            "--cache".into(),
            self.cache.root.to_string_lossy().into_owned(),
        ];
        if self.cache.shared {
            argv.push("--shared-cache".into());
        }
        argv.extend(args);
        argv
    }

    /// Submits `job` and records it in the run's job file; returns its id.
    fn submit_job(&self, job: &Job, at: Placing, record: JobRecord) -> Result<String> {
        let id = cluster::sbatch(&record.name, &record.partition, at, job, &self.sbatch_args)?;
        let record = JobRecord {
            id: id.clone(),
            ..record
        };
        self.record(JOBS_FILE, &record)?;
        Ok(id)
    }

    fn submit_build(&mut self, t: &mut BuildTask, attempt: usize) -> Result<()> {
        let key = t.job.commit.key();
        let short = &t.job.commit.short;
        if let Some(a) = self.adopted.remove(&key) {
            progress::info(&format!(
                "  Slurm job {}: build of {short} by a stopped run ({}), taken over",
                a.id,
                a.run.display()
            ));
            let record = JobRecord {
                id: a.id.clone(),
                name: format!("{}{short}", runs::BUILD_JOB),
                partition: self.cfg.build_partition.clone(),
                what: key,
                attempt,
                alongside: self.lanes.len(),
                adopted: true,
            };
            self.record(JOBS_FILE, &record)?;
            t.running = Some(Running {
                id: a.id,
                attempt,
                log: a.log,
                what: format!("the build of {short}"),
                on: None,
            });
            return Ok(());
        }
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
            name: format!("{}{short}", runs::BUILD_JOB),
            partition: self.cfg.build_partition.clone(),
            what: key,
            attempt,
            alongside: self.lanes.len(),
            adopted: false,
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

    /// Submits a job for lane `key` that holds a node (`at`, when the lane's samples are there)
    /// for at least `need`.
    fn open_lane(&mut self, key: LaneKey, at: Option<String>, need: Duration) -> Result<()> {
        if key.is_some() {
            // The run's own lane, idle while searches side by side sample: its node is theirs.
            self.close_idle(|k| k.is_none())?;
        }
        self.lane_jobs += 1;
        let dir = self
            .dir
            .join(format!("lane-{}-{}", lanes::label(key), self.lane_jobs));
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        lanes::touch_alive(&dir)?;
        let log = dir.join("slurm.out");
        let limit = Duration::from_secs(self.cfg.lane_time_limit).max(need);
        let job = Job {
            argv: self.perfbisect([
                node::HIDDEN_SUBCOMMAND.into(),
                dir.to_string_lossy().into_owned(),
            ]),
            env: Vec::new(),
            log: log.clone(),
            time_limit: limit,
            cpus: None,
        };
        let attempt = 1
            + (self.closing.iter())
                .filter(|l| l.key == key)
                .map(|l| l.run.attempt)
                .max()
                .unwrap_or(0);
        let record = JobRecord {
            id: String::new(),
            name: "perfbisect-measure".into(),
            partition: self.cfg.measure_partition.clone(),
            what: dir.to_string_lossy().into_owned(),
            attempt,
            alongside: self.lanes.len(),
            adopted: false,
        };
        let id = self.submit_job(&job, Placing::Exclusive(at.as_deref()), record)?;
        let what = format!("the measurement lane of {}", describe_lane(key));
        progress::detail(&format!(
            "  Slurm job {id}: {what}, holding a node of partition {}{} (log {})",
            self.cfg.measure_partition,
            at.as_deref().map(|n| format!(" ({n})")).unwrap_or_default(),
            log.display()
        ));
        let run = Running {
            id,
            attempt,
            log,
            what,
            on: at,
        };
        let lane = LaneJob {
            key,
            run,
            dir,
            handed: 0,
            since: None,
            node: None,
            limit,
            closed: false,
        };
        self.lanes.insert(key, lane);
        Ok(())
    }

    /// Hands `t` to its lane's job, from the samples answered so far.
    fn hand(&mut self, t: &mut BlockTask) -> Result<()> {
        let mut block = t.block.clone();
        block.host = t.host.clone();
        for (run, have) in block.runs.iter_mut().zip(&t.have) {
            match have {
                Some(h) => run.have = *h,
                // Out of the rounds: nothing more is wanted of it.
                None => run.want = 0,
            }
        }
        let lane = (self.lanes.get_mut(&t.block.lane)).expect("a block is handed to its lane");
        lane.handed += 1;
        let dir = node::block_dir(&lane.dir, lane.handed);
        let job = lane.run.id.clone();
        node::write_block(&dir, &block)?;
        t.attempt += 1;
        t.read = 0;
        t.rounds_before = t.rounds_seen;
        t.handed = Some((job.clone(), dir.clone()));
        let alongside = self.in_flight;
        self.in_flight += 1;
        progress::detail(&format!(
            "  {} handed to Slurm job {job} ({})",
            describe(&t.block),
            dir.display()
        ));
        let record = BlockRecord {
            block: t.number,
            dir: dir.to_string_lossy().into_owned(),
            job,
            lane: t.block.lane,
            attempt: t.attempt,
            alongside,
        };
        self.record(BLOCKS_FILE, &record)
    }

    /// Blocks handed and not yet answered, across the run.
    fn handed_blocks(&self) -> usize {
        let blocks = self.waves.iter().flat_map(|p| &p.blocks);
        blocks.filter(|t| t.handed.is_some() && !t.done).count()
    }

    /// Closes every lane job whose key `is` and which has no block to sample.
    fn close_idle(&mut self, is: impl Fn(LaneKey) -> bool) -> Result<()> {
        let busy: Vec<String> = (self.waves.iter().flat_map(|p| &p.blocks))
            .filter(|t| !t.done)
            .filter_map(|t| t.handed.as_ref().map(|h| h.0.clone()))
            .collect();
        let idle: Vec<LaneKey> = (self.lanes.values())
            .filter(|l| is(l.key) && !busy.contains(&l.run.id))
            .map(|l| l.key)
            .collect();
        for key in idle {
            self.close_lane(key)?;
        }
        Ok(())
    }

    /// Lane `key`'s job ends once its blocks are sampled; the lane's next block gets a new one.
    fn close_lane(&mut self, key: LaneKey) -> Result<()> {
        if let Some(mut l) = self.lanes.remove(&key) {
            l.close()?;
            self.closing.push(l);
        }
        Ok(())
    }

    /// What the queue says of the lane jobs: where each runs, and which have ended (a block
    /// handed to one of those and not answered is handed again).
    fn lanes_seen(&mut self, states: &HashMap<String, JobState>) -> Result<()> {
        let mut gone = Vec::new();
        for l in self.lanes.values_mut().chain(self.closing.iter_mut()) {
            match states.get(&l.run.id) {
                Some(JobState::Running { node }) => {
                    l.since.get_or_insert_with(std::time::Instant::now);
                    if !node.is_empty() {
                        l.node = Some(node.clone());
                    }
                }
                // Queued again after it ran: Slurm requeued it (an admin, or a node failure
                // where requeueing was turned back on). It would sample its blocks a second
                // time (it samples nothing now, see node::run_lane): cancelled, and its blocks
                // go to a new job.
                Some(JobState::Waiting { reason }) if requeued(l) => {
                    progress::info(&format!(
                        "  Slurm job {} ({}) was queued again after it ran ({reason}): cancelled; its blocks go to a new job",
                        l.run.id, l.run.what
                    ));
                    cluster::scancel(std::slice::from_ref(&l.run.id));
                    gone.push(l.run.id.clone());
                }
                _ if ended(states, &l.run.id) => gone.push(l.run.id.clone()),
                _ => {}
            }
        }
        self.lanes.retain(|_, l| !gone.contains(&l.run.id));
        self.closing.retain(|l| !gone.contains(&l.run.id));
        for id in gone {
            self.blocks_of_ended(&id)?;
        }
        Ok(())
    }

    /// Lane job `id` has ended: each block handed to it is read to its last line, and one it
    /// did not finish is handed again.
    fn blocks_of_ended(&mut self, id: &str) -> Result<()> {
        let mut waves = std::mem::take(&mut self.waves);
        let mut result = Ok(());
        'waves: for p in waves.iter_mut() {
            for (b, t) in p.blocks.iter_mut().enumerate() {
                if t.done || t.handed.as_ref().is_none_or(|h| h.0 != id) {
                    continue;
                }
                result = self.read_block(p.ticket, b, t);
                if result.is_ok() && !t.done {
                    result = self.block_lost(t);
                }
                if result.is_err() {
                    break 'waves;
                }
            }
        }
        self.waves = waves;
        result
    }

    /// Moves every wave on, oldest first: submits what may start, answers what has ended. A
    /// wave whose builds are not done holds back only its own blocks.
    fn step(&mut self, states: &HashMap<String, JobState>) -> Result<()> {
        self.lanes_seen(states)?;
        self.in_flight = self.handed_blocks();
        let jobs = self.waves.iter().map(building).sum::<usize>();
        let jobs = jobs + self.lanes.len() + self.closing.len();
        let mut slots = self.cfg.max_jobs.saturating_sub(jobs);
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
        result?;
        self.make_way(states)
    }

    /// A job of this run that has waited [`MAKE_WAY_AFTER`] for a node while a lane holds one
    /// with nothing to sample: the idle lane lets go, so the run never waits on itself — for a
    /// lane, any idle lane; for a build, a lane on a node builds may use too. (A lane holds its
    /// node between blocks otherwise; a build that a moment's wait would place does not take
    /// it.)
    fn make_way(&mut self, states: &HashMap<String, JobState>) -> Result<()> {
        let now = std::time::Instant::now();
        let waiting: Vec<String> = (states.iter())
            .filter(|(_, s)| matches!(s, JobState::Waiting { .. }))
            .map(|(id, _)| id.clone())
            .collect();
        self.waiting_since.retain(|id, _| waiting.contains(id));
        for id in waiting {
            self.waiting_since.entry(id).or_insert(now);
        }
        let since = self.waiting_since.clone();
        let waits = |id: &String| since.get(id).is_some_and(|t| now - *t >= MAKE_WAY_AFTER);
        if self.lanes.values().any(|l| waits(&l.run.id)) {
            self.close_idle(|_| true)?;
        }
        if run_ids(&self.waves).iter().any(waits) {
            let shared: Vec<LaneKey> = (self.lanes.values())
                .filter(|l| {
                    l.node
                        .as_ref()
                        .is_some_and(|n| self.shared_nodes.contains(n))
                })
                .map(|l| l.key)
                .collect();
            self.close_idle(|k| shared.contains(&k))?;
        }
        Ok(())
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
            if t.handed.is_some() {
                self.read_block(p.ticket, b, t)?;
                continue;
            }
            let need = block_time_limit(&t.block);
            let key = t.block.lane;
            if !self.lanes.get(&key).is_some_and(|l| l.takes(need)) {
                if *slots == 0 {
                    continue;
                }
                // A lane job without the time left ends after its blocks; the lane goes on in
                // a new one, on its node if that is free.
                let at = self.lanes.get(&key).and_then(|l| l.node.clone());
                self.close_lane(key)?;
                let at = (t.host.clone().or(at))
                    .filter(|n| self.measure_nodes.contains(n) && !self.avoid.contains(n));
                self.open_lane(key, at, need)?;
                *slots -= 1;
            }
            self.hand(t)?;
        }
        Ok(())
    }

    /// A build job has left the queue: its entry, or a new attempt.
    fn build_ended(
        &mut self,
        ticket: Ticket,
        job: usize,
        t: &mut BuildTask,
    ) -> Result<Option<Answer>> {
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
                    "  Slurm job {} (build of {}) ended without a build{} (log {}): submitting it again",
                    r.id,
                    t.job.commit.short,
                    said_in(&r.log),
                    r.log.display()
                ));
                self.submit_build(t, r.attempt + 1)?;
                Ok(None)
            }
            None => Ok(Some(Answer::Built {
                ticket,
                job,
                built: Err(anyhow::anyhow!(
                    "the Slurm build job of {} ended without a build {} times{} (last log {})",
                    t.job.label,
                    r.attempt,
                    said_in(&r.log),
                    r.log.display()
                )),
            })),
        }
    }

    /// New answer lines of a block handed to a lane job.
    fn read_block(&mut self, ticket: Ticket, block: usize, t: &mut BlockTask) -> Result<()> {
        let Some((_, dir)) = &t.handed else {
            return Ok(());
        };
        let (lines, read) = node::read_answers(&dir.join(node::ANSWERS_FILE), t.read)?;
        t.read = read;
        for line in lines {
            match line {
                Line::Sampled {
                    run,
                    outcome,
                    retried,
                    taken,
                } => {
                    if t.host.as_ref() != Some(&taken.host) {
                        // Another node: the job started every run afresh (node::run_block).
                        if t.host.is_some() {
                            t.have.iter_mut().flatten().for_each(|h| *h = 0);
                        }
                        t.host = Some(taken.host.clone());
                    }
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
                    t.handed = None;
                    self.in_flight = self.in_flight.saturating_sub(1);
                }
            }
        }
        Ok(())
    }

    /// A lane job ended before a block handed to it was done: the block is handed again (to
    /// the lane's next job), from the samples answered so far.
    fn block_lost(&mut self, t: &mut BlockTask) -> Result<()> {
        let (job, dir) = t.handed.take().expect("a lost block was handed");
        let log = dir.join(node::ANSWERS_FILE);
        if t.attempt > self.cfg.job_retries {
            bail!(
                "the Slurm jobs sampling {} ended before it was done {} times (last answers {})",
                describe(&t.block),
                t.attempt,
                log.display()
            );
        }
        progress::info(&format!(
            "  Slurm job {job} ended before {} was done ({}): handing it to the lane's next job",
            describe(&t.block),
            log.display()
        ));
        Ok(())
    }

    /// An error once a job of this run has waited longer than `pending_limit` for a reason
    /// that will not clear by itself (a drained or down node, a hold, a limit): one line naming
    /// the job, the reason and the node. The caller cancels the run's jobs. A lane's job that
    /// waited so for the node its samples are on is cancelled instead, and the lane goes on
    /// elsewhere (afresh there).
    fn stuck(&mut self, states: &HashMap<String, JobState>) -> Result<()> {
        let now = std::time::Instant::now();
        self.stuck_since
            .retain(|id, _| states.get(id).is_some_and(|s| s.stuck().is_some()));
        let limit = Duration::from_secs(self.cfg.pending_limit);
        let mut lanes_moved = Vec::new();
        let builds = (self.waves.iter())
            .flat_map(|p| p.builds.iter().filter_map(|t| t.running.as_ref()))
            .map(|r| (r, false));
        let lane_jobs = (self.lanes.values().chain(&self.closing)).map(|l| (&l.run, true));
        let mut usable: HashMap<String, bool> = HashMap::new();
        for (r, is_lane) in builds.chain(lane_jobs) {
            let Some(why) = states.get(&r.id).and_then(JobState::stuck) else {
                continue;
            };
            // A job sent to no node in particular that waits while some of its partition's
            // nodes are down or drained waits for the others to free, which they do (a lane
            // lets go for it, see make_way): stuck only when none of them is usable.
            if r.on.is_none() && JobState::waits_for_nodes(&why) {
                let partition = match is_lane {
                    true => &self.cfg.measure_partition,
                    false => &self.cfg.build_partition,
                };
                let any = *(usable.entry(partition.clone()))
                    .or_insert_with(|| cluster::usable_nodes(partition).unwrap_or(1) > 0);
                if any {
                    self.stuck_since.remove(&r.id);
                    continue;
                }
            }
            let since = *self.stuck_since.entry(r.id.clone()).or_insert(now);
            let waited = now.duration_since(since).as_secs();
            if waited < limit.as_secs() {
                continue;
            }
            match (&r.on, is_lane) {
                (Some(node), true) => {
                    progress::info(&format!(
                        "  Slurm job {} ({}) waited {waited} s for node {node}: {why}; the lane goes on on another node, sampling its subjects afresh there",
                        r.id, r.what
                    ));
                    lanes_moved.push((r.id.clone(), node.clone()));
                }
                _ => {
                    let on = (r.on.as_deref())
                        .map(|n| format!(" on node {n}"))
                        .unwrap_or_default();
                    bail!(
                        "Slurm job {} ({}{on}) waited {waited} s for a reason that will not clear by itself: {why}; the run's jobs are cancelled (free the node, or raise [slurm] pending_limit)",
                        r.id,
                        r.what,
                    );
                }
            }
        }
        for (id, node) in lanes_moved {
            self.move_lane(&id, node);
        }
        Ok(())
    }

    /// Lane job `id`, waiting for `node` in vain, is cancelled; its blocks go to the lane's
    /// next job, which goes anywhere but there.
    fn move_lane(&mut self, id: &str, node: String) {
        cluster::scancel(&[id.to_string()]);
        self.avoid.push(node);
        self.lanes.retain(|_, l| l.run.id != id);
        self.closing.retain(|l| l.run.id != id);
        for t in self.waves.iter_mut().flat_map(|p| p.blocks.iter_mut()) {
            if t.handed.as_ref().is_some_and(|h| h.0 == id) && !t.done {
                // It never ran there: not an attempt.
                t.handed = None;
                t.attempt -= 1;
            }
        }
    }

    /// Stops every job of the run, waits (a few seconds at most) until the lanes are out of the
    /// queue, and reads every block's answers to their last line.
    fn drain(&mut self) -> Result<()> {
        let ids = self.job_ids();
        cluster::scancel(&ids);
        let started = std::time::Instant::now();
        while started.elapsed() < DRAIN_WAIT {
            let states = states_of(&ids)?;
            if ids.iter().all(|id| ended(&states, id)) {
                break;
            }
            std::thread::sleep(POLL);
        }
        let mut waves = std::mem::take(&mut self.waves);
        let mut result = Ok(());
        for p in waves.iter_mut() {
            for (b, t) in p.blocks.iter_mut().enumerate() {
                if result.is_ok() {
                    result = self.read_block(p.ticket, b, t);
                }
            }
        }
        self.waves = waves;
        result
    }

    /// Every job of this run queued or running: builds and lanes.
    fn job_ids(&self) -> Vec<String> {
        let mut ids = run_ids(&self.waves);
        ids.extend(
            self.lanes
                .values()
                .chain(&self.closing)
                .map(|l| l.run.id.clone()),
        );
        ids
    }

    /// A stopped run's build jobs this run did not need: cancelled on the way out.
    fn adopted_unused(&mut self) -> Vec<String> {
        self.adopted.drain().map(|(_, a)| a.id).collect()
    }

    /// Shows every lane job that the run is alive, every few seconds.
    fn touch_lanes(&mut self) -> Result<()> {
        if self.touched.elapsed() >= Duration::from_secs(10) {
            for l in self.lanes.values().chain(&self.closing) {
                l.touch()?;
            }
            self.touched = std::time::Instant::now();
        }
        Ok(())
    }

    fn cancel_all(&mut self) {
        let mut ids = self.job_ids();
        ids.extend(self.adopted_unused());
        if !ids.is_empty() {
            cluster::scancel(&ids);
        }
        interrupt::jobs(Vec::new(), cluster::scancel);
        self.waves.clear();
        self.lanes.clear();
        self.closing.clear();
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

    /// The lane's job ends once its blocks are sampled, freeing its node.
    fn release(&mut self, lane: Option<usize>) -> Result<()> {
        self.close_lane(lane)
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
                self.blocks += 1;
                BlockTask {
                    number: self.blocks,
                    have: block.runs.iter().map(|r| Some(r.have)).collect(),
                    host: block.host.clone(),
                    block,
                    rounds_before: 0,
                    rounds_seen: 0,
                    read: 0,
                    handed: None,
                    attempt: 0,
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
                if !self.drained {
                    // What the jobs answered before they stopped is kept: the samples go to
                    // the engine (and its cache) first, then the error.
                    self.drained = true;
                    self.drain()?;
                    continue;
                }
                self.cancel_all();
                return Err(e);
            }
            self.touch_lanes()?;
            let states = self.queue.look(self.job_ids())?.clone();
            if let Err(e) = self.stuck(&states) {
                self.cancel_all();
                return Err(e);
            }
            let stepped = self.step(&states);
            // What a second signal must cancel: it exits without dropping this executor.
            interrupt::jobs(self.job_ids(), cluster::scancel);
            stepped?;
            if self.answered.is_empty() {
                std::thread::sleep(POLL);
            }
        }
    }
}

impl Drop for Slurm<'_> {
    /// Every wave answered: the lanes are closed and end by themselves; otherwise (an error,
    /// Ctrl-C) every job of the run is cancelled.
    fn drop(&mut self) {
        let unrecorded = runs::unrecorded(&self.dir);
        if !unrecorded.is_empty() {
            progress::info(&format!(
                "  Slurm: cancelling job(s) {} of this run that the controller took without confirming them",
                unrecorded.join(", ")
            ));
            cluster::scancel(&unrecorded);
        }
        if self.waves.is_empty() {
            cluster::scancel(&self.adopted_unused());
            for l in self.lanes.values_mut() {
                let _ = l.close();
            }
            self.lanes.clear();
            self.closing.clear();
            interrupt::jobs(Vec::new(), cluster::scancel);
        } else {
            self.cancel_all();
        }
    }
}

/// Whether lane job `l`, which the queue says is waiting, was requeued: the queue said it ran,
/// or it started (it wrote the lane's holder file) and Slurm counts a restart. The holder file
/// alone is no proof: the queue's answer may be older than the job's start.
fn requeued(l: &lanes::LaneJob) -> bool {
    l.since.is_some()
        || (l.dir.join(node::HOLDER_FILE).exists() && cluster::restarts(&l.run.id) > 0)
}

/// What a job's log says went wrong, as ": WHY" (its last `perfbisect: error:` line), so the
/// run's one line names the cause, not only the log; empty when it says nothing.
fn said_in(log: &Path) -> String {
    let text = fs::read_to_string(log).unwrap_or_default();
    (text.lines().rev())
        .find_map(|l| l.strip_prefix("perfbisect: error: "))
        .map(|why| format!(": {}", why.trim()))
        .unwrap_or_default()
}

/// Settings Slurm cannot serve, and partitions the cluster does not have, in one line each.
fn check_config(cfg: &SlurmConfig) -> Result<()> {
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
    Ok(())
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

/// Build jobs of a wave queued or running.
fn building(p: &Pending) -> usize {
    p.builds.iter().filter(|t| t.running.is_some()).count()
}

/// The ids of every build job of `waves` that was submitted and not seen to end.
fn run_ids(waves: &VecDeque<Pending>) -> Vec<String> {
    let builds = waves.iter().flat_map(|p| &p.builds);
    builds
        .filter_map(|t| t.running.as_ref().map(|r| r.id.clone()))
        .collect()
}

/// How progress lines name a lane.
fn describe_lane(key: LaneKey) -> String {
    match key {
        None => "the run's own search".into(),
        Some(k) => format!("search {k} side by side"),
    }
}
