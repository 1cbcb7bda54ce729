//! The Slurm executor's settings and its record of the jobs it submitted.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// How perfbisect uses a Slurm cluster (flags, or a `[slurm]` table in a config file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SlurmConfig {
    /// Where builds run.
    pub build_partition: String,
    /// Where lanes sample, each on a node it holds exclusively.
    pub measure_partition: String,
    /// Jobs queued or running at once.
    pub max_jobs: usize,
    /// A scan's searches sampled side by side, each on a node of its own. Default: one per
    /// node of the measurement partition (at most `max_jobs`); more than the nodes queue.
    pub lanes: Option<usize>,
    /// Given to every `sbatch` as they are (an account, a QOS, a constraint).
    pub sbatch_args: Vec<String>,
    /// A job that ends without its result is submitted again this many times.
    pub job_retries: usize,
    /// Work trees of build jobs, on each node's own disk.
    pub work_dir: PathBuf,
    /// Build the commits a bisect may probe next while it measures. Default: when no node is
    /// in both partitions (on a shared node the builds would only hold the measurement back).
    pub prefetch: Option<bool>,
    /// Seconds a job may wait for a reason that will not clear by itself (its node drained or
    /// down, a hold, an account or QOS limit) before the run cancels its jobs and stops,
    /// naming the job, the reason and the node.
    pub pending_limit: u64,
    /// Seconds a build job may run (`--time`): a cold OpenSSL build on one core takes
    /// 20–40 minutes.
    pub build_time_limit: u64,
    /// Cores a build job asks for (`--cpus-per-task`) and runs `make -j` of. Default: those of
    /// the build partition's smallest node (at 07d6d4e a job asked for Slurm's default, one
    /// core, and ran `make -j` of every core of the node).
    pub build_cpus: Option<usize>,
    /// Seconds a measurement lane's job may hold its node (`--time`; at least what its first
    /// block may take). A block is handed only to a lane job with the time left to sample it;
    /// otherwise the lane goes on in a new job, on the same node when it is free.
    pub lane_time_limit: u64,
}

impl Default for SlurmConfig {
    fn default() -> Self {
        SlurmConfig {
            build_partition: "build".into(),
            measure_partition: "measure".into(),
            max_jobs: 16,
            lanes: None,
            sbatch_args: Vec::new(),
            job_retries: 2,
            // Per user: one fixed path for everyone gave a second user EACCES, or a
            // planted symbolic link (which the build job now refuses, see
            // builds::private_dir).
            // SAFETY: geteuid has no preconditions and cannot fail.
            work_dir: std::env::temp_dir()
                .join(format!("perfbisect-work-{}", unsafe { libc::geteuid() })),
            prefetch: None,
            pending_limit: 300,
            build_time_limit: 3 * 3600,
            build_cpus: None,
            lane_time_limit: 3600,
        }
    }
}

/// One job this executor submitted, as `jobs.jsonl` records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobRecord {
    pub id: String,
    pub name: String,
    pub partition: String,
    /// What it makes: the build's commit key, or the measurement lane's directory.
    pub what: String,
    /// 1 for the first try.
    pub attempt: usize,
    /// This run's measurement jobs queued or running when it was submitted (a scan's lanes
    /// keep several in flight).
    #[serde(default)]
    pub alongside: usize,
    /// A stopped run's job this run took over (see `runs`), not one it submitted.
    #[serde(default)]
    pub adopted: bool,
}

/// The record of every job of a run (a test checks them against Slurm's own accounting).
pub const JOBS_FILE: &str = "jobs.jsonl";

/// One block handed to a measurement lane's job, as `blocks.jsonl` records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BlockRecord {
    /// The block's number in the run (1 = the first): a block handed again keeps it.
    pub block: usize,
    /// The block's directory (its `block.json` and `answers.jsonl`).
    pub dir: String,
    /// The lane job it was handed to.
    pub job: String,
    /// The search side by side it belongs to; `None`: the run's own.
    pub lane: Option<usize>,
    /// 1 for the first try; a block cut short is handed again, to the lane's next job.
    pub attempt: usize,
    /// This run's blocks handed and not yet answered when it was handed (lanes side by side
    /// keep several in flight).
    pub alongside: usize,
}

/// The record of every block of a run.
pub const BLOCKS_FILE: &str = "blocks.jsonl";
