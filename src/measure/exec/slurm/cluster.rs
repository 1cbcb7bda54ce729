//! Slurm's commands as the executor uses them: submit (`sbatch --wrap`), look (`squeue`,
//! `sinfo`, `scontrol show hostnames`), cancel (`scancel`). Everything that parses their output
//! is here.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// Where a job may run.
pub enum Placing<'n> {
    /// Any node of its partition, beside other jobs.
    Any,
    /// A node to itself: this one, when given.
    Exclusive(Option<&'n str>),
}

/// A job's command line and environment.
pub struct Job {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub log: PathBuf,
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
        let head = "echo \"perfbisect job on $(hostname)\"";
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
    let mut cmd = Command::new("sbatch");
    cmd.args(["--parsable", "-p", partition, "-J", name, "-o"])
        .arg(&script.log);
    if let Placing::Exclusive(node) = at {
        cmd.arg("--exclusive");
        if let Some(n) = node {
            cmd.args(["-w", n]);
        }
    }
    cmd.args(extra).args(["--wrap", &script.wrap()]);
    let out = cmd.output().context("cannot run sbatch")?;
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

/// Whether a job is out of the queue: finished, failed, cancelled, or forgotten by Slurm.
pub fn ended(states: &HashMap<String, (String, String)>, id: &str) -> bool {
    !matches!(
        states.get(id).map(|(state, _)| state.as_str()),
        Some(
            "PENDING"
                | "RUNNING"
                | "CONFIGURING"
                | "COMPLETING"
                | "REQUEUED"
                | "RESIZING"
                | "SUSPENDED"
        )
    )
}

/// Job id → (state, node) for the jobs the queue still knows among `ids`.
pub fn states_of(ids: &[String]) -> Result<HashMap<String, (String, String)>> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let out = Command::new("squeue")
        .args(["-h", "-t", "all", "-o", "%i %T %N", "-j", &ids.join(",")])
        .output()
        .context("cannot run squeue")?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && !stderr.contains("Invalid job id") {
        bail!("squeue failed: {}", one_line(&stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (id, state) = (f.next()?, f.next()?);
            let node = f.next().unwrap_or("");
            Some((id.to_string(), (state.to_string(), node.to_string())))
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

/// Cancels jobs, as a last act (errors are not worth reporting then).
pub fn scancel(ids: &[String]) {
    if !ids.is_empty() {
        let _ = Command::new("scancel").args(ids).status();
    }
}
