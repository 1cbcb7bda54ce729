//! The Slurm executor's settings and its record of the jobs it submitted.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// How perfbisect uses a Slurm cluster (flags, or a `[slurm]` table in a config file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SlurmConfig {
    /// Where builds run.
    pub build_partition: String,
    /// Where blocks are sampled, one node each, exclusively.
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
        }
    }
}

/// One job this executor submitted, as `jobs.jsonl` records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobRecord {
    pub id: String,
    pub name: String,
    pub partition: String,
    /// What it makes: the build's commit key, or the block's directory.
    pub what: String,
    /// 1 for the first try.
    pub attempt: usize,
    /// This run's measurement jobs queued or running when it was submitted (a scan's lanes
    /// keep several in flight).
    #[serde(default)]
    pub alongside: usize,
}

/// The record of every job of a run (a test checks them against Slurm's own accounting).
pub const JOBS_FILE: &str = "jobs.jsonl";
