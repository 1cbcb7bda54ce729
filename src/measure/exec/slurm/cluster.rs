//! Slurm's commands as the executor uses them: submit (`sbatch --wrap`), look (`squeue`,
//! `sinfo`, `scontrol show hostnames`), cancel (`scancel`). Everything that parses their output
//! is here.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::controller;

/// Where a job may run.
pub enum Placing<'n> {
    /// Any node of its partition, beside other jobs.
    Any,
    /// A node to itself: this one, when given.
    Exclusive(Option<&'n str>),
}

/// A job's command line, environment and time limit.
pub struct Job {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub log: PathBuf,
    /// Slurm ends it after this long (`--time`, whole minutes rounded up): a job that hangs
    /// (a shared filesystem that stopped answering) must not hold its node until the
    /// partition's MaxTime.
    pub time_limit: std::time::Duration,
    /// Cores it asks for (`--cpus-per-task`); `None`: Slurm's default.
    pub cpus: Option<usize>,
}

impl Job {
    /// The shell line `sbatch --wrap` runs.
    pub fn wrap(&self) -> String {
        let env: Vec<String> = self
            .env
            .iter()
            .map(|(k, v)| format!("{k}={}", shell_words::quote(v)))
            .collect();
        let cmd = shell_words::join(&self.argv);
        // The first line of the log names the node (see node_of).
        let head = "echo \"perfbisect job on ${SLURMD_NODENAME:-$(hostname)}\"";
        match env.is_empty() {
            true => format!("{head}; exec {cmd}"),
            false => format!("{head}; export {}; exec {cmd}", env.join(" ")),
        }
    }
}

/// Submits `script` as job `name` on `partition`, with the user's `extra` arguments; returns
/// its id.
pub fn sbatch(
    name: &str,
    partition: &str,
    at: Placing,
    script: &Job,
    extra: &[String],
) -> Result<String> {
    let minutes = script.time_limit.as_secs().div_ceil(60).max(1);
    let make = || {
        let mut cmd = Command::new("sbatch");
        // --no-requeue: after a node failure Slurm would run the job again under the same id,
        // into the same answers file; the executor submits a new attempt of its own instead.
        cmd.args(["--parsable", "--no-requeue", "-p", partition, "-J", name])
            .arg(format!("--time={minutes}"))
            .arg("-o")
            .arg(&script.log);
        if let Some(c) = script.cpus {
            cmd.arg(format!("--cpus-per-task={c}"));
        }
        if let Placing::Exclusive(node) = at {
            cmd.arg("--exclusive");
            if let Some(n) = node {
                cmd.args(["-w", n]);
            }
        }
        cmd.args(extra).args(["--wrap", &script.wrap()]);
        cmd
    };
    // A submission the controller took but did not confirm may exist twice: a lane job that
    // finds its lane held ends at once (node::run_lane), and the run cancels every job with
    // its comment that it does not know when it ends.
    let out = controller::ask("sbatch", make)?;
    if !out.status.success() {
        bail!(
            "sbatch of {name} failed: {}",
            one_line(&String::from_utf8_lossy(&out.stderr))
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let id = text.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() {
        bail!("sbatch of {name} printed no job id");
    }
    Ok(id)
}

/// What the queue says of a job, every Slurm state mapped explicitly (`squeue --help`'s list of
/// 22.05): a job is waiting, held, running, or out of the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobState {
    /// Queued (or queued again after a node failure), with Slurm's reason: it may start.
    Waiting { reason: String },
    /// It will not go on by itself (held, stopped, suspended, requeued on hold).
    Held { state: String, reason: String },
    /// Running (or starting, or ending) on these nodes.
    Running { node: String },
    /// Finished, failed, cancelled, timed out, its node failed, or forgotten by the queue.
    Ended,
}

impl JobState {
    /// From squeue's `%T` (state) and `%R` (the reason, or the nodes for a running job).
    /// An unknown state is an error: guessing "ended" resubmitted jobs still queued.
    pub fn of(state: &str, reason_or_nodes: &str) -> Result<JobState> {
        let reason = reason_or_nodes
            .trim_start_matches('(')
            .trim_end_matches(')')
            .to_string();
        Ok(match state {
            "PENDING" | "REQUEUED" | "REQUEUE_FED" | "CONFIGURING" | "POWER_UP_NODE" => {
                JobState::Waiting { reason }
            }
            "REQUEUE_HOLD" | "RESV_DEL_HOLD" | "SPECIAL_EXIT" | "STOPPED" | "SUSPENDED" => {
                JobState::Held {
                    state: state.into(),
                    reason,
                }
            }
            "RUNNING" | "COMPLETING" | "RESIZING" | "SIGNALING" | "STAGE_OUT" => {
                JobState::Running { node: reason }
            }
            "COMPLETED" | "CANCELLED" | "FAILED" | "TIMEOUT" | "NODE_FAIL" | "PREEMPTED"
            | "BOOT_FAIL" | "DEADLINE" | "OUT_OF_MEMORY" | "REVOKED" => JobState::Ended,
            other => {
                bail!("squeue reports the job state '{other}', which perfbisect does not know")
            }
        })
    }

    /// Why the job will not start by itself, if it will not: held, or queued for a reason
    /// that does not clear without someone (a node down or drained, a partition down, a
    /// limit of the account or QOS, a hold). Reasons that clear by themselves (Resources,
    /// Priority, a dependency) are not.
    pub fn stuck(&self) -> Option<String> {
        const WILL_NOT_CLEAR: &[&str] = &[
            "ReqNodeNotAvail",
            "NodeDown",
            "Nodes required for job are DOWN",
            "PartitionDown",
            "PartitionInactive",
            "PartitionNodeLimit",
            "JobHeld",
            "BadConstraints",
            "DependencyNeverSatisfied",
            "InvalidAccount",
            "InvalidQOS",
            "QOS",
            "Assoc",
            "launch failed requeued held",
        ];
        match self {
            JobState::Held { state, reason } => Some(format!("{state} ({reason})")),
            JobState::Waiting { reason }
                if WILL_NOT_CLEAR.iter().any(|w| reason.starts_with(w)) =>
            {
                Some(reason.clone())
            }
            _ => None,
        }
    }
}

impl JobState {
    /// Whether Slurm's reason says the job waits for nodes that are down, drained or
    /// reserved (as opposed to a hold or a limit).
    pub fn waits_for_nodes(why: &str) -> bool {
        [
            "ReqNodeNotAvail",
            "NodeDown",
            "Nodes required for job are DOWN",
        ]
        .iter()
        .any(|w| why.starts_with(w))
    }
}

/// How many times Slurm started job `id` again (`RestartCnt`; 0 when it cannot say).
pub fn restarts(id: &str) -> u32 {
    let out = controller::ask("squeue", || {
        let mut c = Command::new("squeue");
        c.args(["-h", "-t", "all", "-j", id, "-O", "RestartCnt"]);
        c
    });
    out.ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(0)
}

/// Nodes of `partition` that answer and are neither down nor drained (idle, mixed, allocated
/// or completing; sinfo marks one that does not answer with `*`): those a job sent to no node
/// in particular may yet get.
pub fn usable_nodes(partition: &str) -> Result<usize> {
    let out = controller::ask("sinfo", || {
        let mut c = Command::new("sinfo");
        c.args(["-h", "-N", "-p", partition, "-o", "%T"]);
        c
    })?;
    const USABLE: [&str; 4] = ["idle", "mixed", "allocated", "completing"];
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| USABLE.contains(&l.trim()))
        .count())
}

/// Whether a job is out of the queue.
pub fn ended(states: &HashMap<String, JobState>, id: &str) -> bool {
    matches!(states.get(id), None | Some(JobState::Ended))
}

/// Job id → its state, for the jobs the queue still knows among `ids` (one `squeue` for all).
pub fn states_of(ids: &[String]) -> Result<HashMap<String, JobState>> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let list = ids.join(",");
    let out = controller::ask("squeue", || {
        let mut c = Command::new("squeue");
        c.args(["-h", "-t", "all", "-o", "%i|%T|%R", "-j", &list]);
        c
    })?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && !stderr.contains("Invalid job id") {
        bail!("squeue failed: {}", one_line(&stderr));
    }
    let mut states = HashMap::new();
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        let mut f = l.splitn(3, '|');
        let (Some(id), Some(state)) = (f.next(), f.next()) else {
            continue;
        };
        let state = JobState::of(state.trim(), f.next().unwrap_or("").trim())?;
        states.insert(id.trim().to_string(), state);
    }
    Ok(states)
}

/// This user's jobs in the queue (`squeue --me`): id, name and comment each.
/// `patient`: a controller that does not answer is asked again (see [`controller::ask`]);
/// otherwise asked once.
pub fn my_jobs(patient: bool) -> Result<Vec<(String, String, String)>> {
    let make = || {
        let mut c = Command::new("squeue");
        c.args(["--me", "-h", "-o", "%i|%j|%k"]);
        c
    };
    let out = match patient {
        true => controller::ask("squeue", make)?,
        false => controller::once("squeue", make)?,
    };
    if !out.status.success() {
        bail!(
            "squeue failed: {}",
            one_line(&String::from_utf8_lossy(&out.stderr))
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, '|').map(|f| f.trim().to_string());
            Some((f.next()?, f.next()?, f.next()?))
        })
        .collect())
}

/// The partitions of the cluster (`sinfo`), or why Slurm cannot be asked.
pub fn partitions() -> Result<Vec<String>> {
    let out = Command::new("sinfo")
        .args(["-h", "-o", "%P"])
        .output()
        .context("Slurm is not reachable: cannot run sinfo (is slurm-wlm installed?)")?;
    if !out.status.success() {
        bail!(
            "Slurm is not reachable: sinfo: {}",
            one_line(&String::from_utf8_lossy(&out.stderr))
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().trim_end_matches('*').to_string())
        .filter(|l| !l.is_empty())
        .collect())
}

/// The cores of the partition's smallest node (`sinfo %c`), when Slurm says.
pub fn cpus(partition: &str) -> Option<usize> {
    let out = Command::new("sinfo")
        .args(["-h", "-p", partition, "-o", "%c"])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().trim_end_matches('+').parse::<usize>().ok())
        .filter(|&c| c > 0)
        .min()
}

/// The nodes of a partition, one name each.
pub fn nodes(partition: &str) -> Result<Vec<String>> {
    let out = Command::new("sinfo")
        .args(["-h", "-p", partition, "-o", "%N"])
        .output()
        .context("cannot run sinfo")?;
    let list = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if list.is_empty() {
        return Ok(Vec::new());
    }
    let out = Command::new("scontrol")
        .args(["show", "hostnames", &list])
        .output()
        .context("cannot run scontrol")?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect())
}

/// The node a job ran on, from the first line its log starts with (see `Job::wrap`).
pub fn node_of(log: &Path) -> String {
    fs::read_to_string(log)
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("perfbisect job on ").map(str::to_string))
        })
        .unwrap_or_else(|| "a node".into())
}

pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Cancels jobs, as a last act (errors are not worth reporting then; `--quiet`: a job that
/// ended meanwhile is no news).
pub fn scancel(ids: &[String]) {
    if !ids.is_empty() {
        let _ = Command::new("scancel").arg("--quiet").args(ids).status();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every state squeue can report is mapped by name; one it cannot is an error, never
    /// "ended" (which resubmitted a job still queued).
    #[test]
    fn every_slurm_state_is_mapped_by_name() {
        let waiting = [
            "PENDING",
            "REQUEUED",
            "REQUEUE_FED",
            "CONFIGURING",
            "POWER_UP_NODE",
        ];
        let held = [
            "REQUEUE_HOLD",
            "RESV_DEL_HOLD",
            "SPECIAL_EXIT",
            "STOPPED",
            "SUSPENDED",
        ];
        let running = [
            "RUNNING",
            "COMPLETING",
            "RESIZING",
            "SIGNALING",
            "STAGE_OUT",
        ];
        let ended = [
            "COMPLETED",
            "CANCELLED",
            "FAILED",
            "TIMEOUT",
            "NODE_FAIL",
            "PREEMPTED",
            "BOOT_FAIL",
            "DEADLINE",
            "OUT_OF_MEMORY",
            "REVOKED",
        ];
        for s in waiting {
            assert!(
                matches!(
                    JobState::of(s, "(Priority)").unwrap(),
                    JobState::Waiting { .. }
                ),
                "{s}"
            );
        }
        for s in held {
            assert!(
                matches!(
                    JobState::of(s, "(JobHeldUser)").unwrap(),
                    JobState::Held { .. }
                ),
                "{s}"
            );
        }
        for s in running {
            assert_eq!(
                JobState::of(s, "n2").unwrap(),
                JobState::Running { node: "n2".into() },
                "{s}"
            );
        }
        for s in ended {
            assert_eq!(JobState::of(s, "n2").unwrap(), JobState::Ended, "{s}");
        }
        assert!(JobState::of("MYSTERY", "").is_err());
    }

    /// A drained node, a hold or a limit will not clear by itself; resources and priority do.
    #[test]
    fn only_reasons_that_will_not_clear_are_stuck() {
        let waiting = |r: &str| JobState::of("PENDING", r).unwrap();
        let drained = waiting("(ReqNodeNotAvail, UnavailableNodes:n2)");
        assert_eq!(
            drained.stuck().as_deref(),
            Some("ReqNodeNotAvail, UnavailableNodes:n2")
        );
        for r in [
            "(PartitionDown)",
            "(QOSMaxJobsPerUserLimit)",
            "(AssocGrpCpuLimit)",
            "(JobHeldAdmin)",
        ] {
            assert!(waiting(r).stuck().is_some(), "{r}");
        }
        for r in [
            "(Resources)",
            "(Priority)",
            "(Dependency)",
            "(None)",
            "(BeginTime)",
        ] {
            assert_eq!(waiting(r).stuck(), None, "{r}");
        }
        assert!(JobState::of("SUSPENDED", "(None)")
            .unwrap()
            .stuck()
            .is_some());
        assert_eq!(JobState::of("RUNNING", "n1").unwrap().stuck(), None);
    }
}
