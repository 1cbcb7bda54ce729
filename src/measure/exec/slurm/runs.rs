//! A run's identity on the cluster. Every job of a run carries it (`--comment`), and the run
//! holds a lock in its job directory while it lives. A run that finds jobs of a stopped run of
//! the same cache still queued or running (killed where it could not cancel them: SIGKILL, a
//! lost login node) cancels that run's lanes, whose answers nobody reads, and adopts its
//! builds, which publish into the cache as they would have.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::cluster;
use super::config::{JobRecord, JOBS_FILE};
use crate::cache::{Cache, Lock};
use crate::progress;

/// What a job's `--comment` starts with; the run's directory name follows.
const COMMENT_PREFIX: &str = "perfbisect-run:";
/// Held by a run while it lives, in its job directory.
pub const LOCK_FILE: &str = "run.lock";
/// How a build job is named: this, then the commit's short id.
pub const BUILD_JOB: &str = "perfbisect-build-";

/// A new run's job directory in `cache`, and the lock it holds there while it lives.
pub fn start(cache: &Cache) -> Result<(PathBuf, Lock)> {
    let dir = cache.dir("jobs")?.join(format!(
        "{}-{}",
        chrono::Local::now().format("%Y%m%dT%H%M%S"),
        std::process::id()
    ));
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let alive = Lock::at(&dir.join(LOCK_FILE))?;
    Ok((dir, alive))
}

/// The `sbatch` argument that names run `dir` on each of its jobs.
pub fn comment(dir: &Path) -> String {
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    format!("--comment={COMMENT_PREFIX}{name}")
}

/// A stopped run's build job, as another run adopts it.
pub struct Adopted {
    pub id: String,
    pub log: PathBuf,
    /// The stopped run's job directory.
    pub run: PathBuf,
}

/// The jobs of stopped runs of this cache: their lanes and probes, and their builds by the
/// commit key they make.
#[derive(Default)]
struct Stopped {
    cancel: Vec<String>,
    builds: HashMap<String, Adopted>,
}

/// Cancels the lanes of stopped runs whose job directories are in `jobs`; their build jobs,
/// by the commit key each makes, for this run to take over.
pub fn take_over(jobs: &Path) -> Result<HashMap<String, Adopted>> {
    let found = stopped(jobs)?;
    if !found.cancel.is_empty() {
        progress::info(&format!(
            "Slurm: cancelling {} measurement job(s) of a stopped run of this cache ({}): nobody reads their answers",
            found.cancel.len(),
            found.cancel.join(", ")
        ));
        cluster::scancel(&found.cancel);
    }
    Ok(found.builds)
}

/// This user's queued and running jobs of stopped runs whose job directories are in `jobs`.
fn stopped(jobs: &Path) -> Result<Stopped> {
    let mut found = Stopped::default();
    let mut alive: HashMap<PathBuf, bool> = HashMap::new();
    for (id, name, comment) in cluster::my_jobs(true)? {
        let Some(run) = comment.strip_prefix(COMMENT_PREFIX) else {
            continue;
        };
        let dir = jobs.join(run);
        if !dir.is_dir() {
            // Another cache's run.
            continue;
        }
        let live = match alive.get(&dir) {
            Some(&live) => live,
            None => {
                let live = Lock::try_at(&dir.join(LOCK_FILE))?.is_none();
                alive.insert(dir.clone(), live);
                live
            }
        };
        if live {
            continue;
        }
        match build_of(&dir, &id, &name) {
            Some((key, log)) => {
                found.builds.insert(key, Adopted { id, log, run: dir });
            }
            None => found.cancel.push(id),
        }
    }
    Ok(found)
}

/// The commit key and log of build job `id` of the run in `dir`, from its record.
fn build_of(dir: &Path, id: &str, name: &str) -> Option<(String, PathBuf)> {
    let short = name.strip_prefix(BUILD_JOB)?;
    let text = fs::read_to_string(dir.join(JOBS_FILE)).ok()?;
    let r: JobRecord = text
        .lines()
        .filter_map(|l| serde_json::from_str::<JobRecord>(l).ok())
        .find(|r| r.id == id)?;
    let log = dir.join(format!("build-{short}-{}.out", r.attempt));
    Some((r.what, log))
}

/// This user's jobs carrying the comment of the run in `dir` that the run's record does not
/// name: a submission the controller took without confirming it (sbatch timed out and was
/// asked again). A lane job of those samples nothing (see `node::run_lane`), but it may wait
/// in the queue. Asked once: the run is ending.
pub fn unrecorded(dir: &Path) -> Vec<String> {
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    let ours = format!("{COMMENT_PREFIX}{name}");
    let recorded: Vec<String> = fs::read_to_string(dir.join(JOBS_FILE))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<JobRecord>(l).ok())
        .map(|r| r.id)
        .collect();
    let jobs = cluster::my_jobs(false).unwrap_or_default();
    (jobs.into_iter())
        .filter(|(id, _, comment)| *comment == ours && !recorded.contains(id))
        .map(|(id, ..)| id)
        .collect()
}
