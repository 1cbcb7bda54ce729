//! What a fleet node runs for a measurement *lane*: one job that holds its node for one search
//! (so every block of that search is sampled on one host, with no queue wait between blocks and
//! no other job on the node in between) and samples each block the submitting process hands
//! it, in order, with the local executor. A block is handed as a directory `block-N` whose
//! `block.json` appears whole (written aside, then renamed); its answers are appended to a file
//! there that the submitting process reads as it grows: a line is written whole or not at all,
//! and the last line says the block is done (a block without it was cut short and is handed
//! again). The lane ends when the run closes it, or when the run stopped answering.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::cache::Cache;
use crate::measure::exec::local::Local;
use crate::measure::exec::{Answer, Block, Executor, Taken, Wave};
use crate::measure::runner::SampleOutcome;

/// The hidden subcommand a measurement job runs: `perfbisect __lane DIR`.
pub const HIDDEN_SUBCOMMAND: &str = "__lane";

/// Written by the run when the lane is done: the job ends and frees its node.
pub const CLOSE_FILE: &str = "close";
/// Touched by the run while it is alive (see [`ORPHANED`]).
pub const ALIVE_FILE: &str = "alive";
/// A lane whose run has not touched [`ALIVE_FILE`] for this long ends: its run was killed
/// without cancelling it, and an idle lane must not hold a node until its time limit.
pub const ORPHANED: Duration = Duration::from_secs(300);

/// Names the job that samples the lane: the first to start; any other ends at once.
pub const HOLDER_FILE: &str = "holder";

/// The block a job samples.
pub const BLOCK_FILE: &str = "block.json";
/// Its answers, one JSON line each.
pub const ANSWERS_FILE: &str = "answers.jsonl";

/// One line of a block's answers file.
// Each line is read, moved on as an answer, and dropped: boxing would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Line {
    Sampled {
        run: usize,
        outcome: SampleOutcome,
        retried: usize,
        taken: Taken,
    },
    Done,
}

/// The directory of a lane's `n`-th block (1 = the first).
pub fn block_dir(lane: &Path, n: usize) -> PathBuf {
    lane.join(format!("block-{n}"))
}

/// Hands `block` to the lane job reading `dir`: it appears whole or not at all.
pub fn write_block(dir: &Path, block: &Block) -> Result<PathBuf> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join(BLOCK_FILE);
    let aside = dir.join(format!("{BLOCK_FILE}.part"));
    fs::write(&aside, serde_json::to_vec(block)?)
        .with_context(|| format!("writing {}", aside.display()))?;
    fs::rename(&aside, &path).with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// This node's name as Slurm knows it (`SLURMD_NODENAME`, which on a cluster of FQDN hosts is
/// not the kernel's hostname), else the hostname.
pub fn node_name() -> String {
    std::env::var("SLURMD_NODENAME")
        .ok()
        .filter(|n| !n.is_empty())
        .unwrap_or_else(crate::host::hostname)
}

/// The lane job's side: samples each block handed to `dir`, in order, until the run closes the
/// lane or stops answering.
pub fn run_lane(cache: &Cache, dir: &Path) -> Result<()> {
    let node = node_name();
    if !claim(dir)? {
        return Ok(());
    }
    let mut next = 1;
    loop {
        crate::interrupt::check()?;
        let block = block_dir(dir, next);
        if block.join(BLOCK_FILE).exists() {
            run_block(cache, &block, &node)?;
            next += 1;
            continue;
        }
        // Closed: every block handed before the close is sampled by now.
        if dir.join(CLOSE_FILE).exists() || orphaned(dir) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Whether this job may sample the lane in `dir`: not when Slurm started it again under its
/// id (requeued after a node failure or by an admin: its blocks would be sampled a second time
/// into the answers the run has read, from another host perhaps), nor when another job holds
/// the lane (a submission the controller took twice). The run hands the blocks of a lane job
/// that ended without them to a new job.
fn claim(dir: &Path) -> Result<bool> {
    let restarts = std::env::var("SLURM_RESTART_COUNT").unwrap_or_default();
    if restarts.parse::<u32>().is_ok_and(|n| n > 0) {
        eprintln!("perfbisect: this lane job was started again by Slurm (restart {restarts}); it samples nothing: the run hands its blocks to a new job");
        return Ok(false);
    }
    let me = std::env::var("SLURM_JOB_ID").unwrap_or_else(|_| std::process::id().to_string());
    let path = dir.join(HOLDER_FILE);
    match OpenOptions::new().write(true).create_new(true).open(&path) {
        Ok(mut f) => {
            f.write_all(me.as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let holder = fs::read_to_string(&path).unwrap_or_default();
            if holder.trim() == me {
                return Ok(true);
            }
            eprintln!(
                "perfbisect: the lane {} is held by job {}; this job ({me}) samples nothing",
                dir.display(),
                holder.trim()
            );
            Ok(false)
        }
        Err(e) => Err(e).with_context(|| format!("creating {}", path.display())),
    }
}

/// Whether the run has not shown it is alive for [`ORPHANED`], or its directory is gone (the
/// run made the file before it submitted the job).
fn orphaned(dir: &Path) -> bool {
    let touched = fs::metadata(dir.join(ALIVE_FILE)).and_then(|m| m.modified());
    let age = |t: SystemTime| SystemTime::now().duration_since(t).unwrap_or_default();
    touched.map_or(true, |t| age(t) > ORPHANED)
}

/// Samples the block in `dir` on `node` (the job's side). Its runs' samples so far were taken on
/// `block.host`: on another node every run starts afresh here, so that no test pools two
/// machines' samples (the run sets the other host's aside once this block is answered).
pub fn run_block(cache: &Cache, dir: &Path, node: &str) -> Result<()> {
    let path = dir.join(BLOCK_FILE);
    let text = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut block: Block =
        serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
    if block.host.as_deref().is_some_and(|h| h != node) {
        block.runs.iter_mut().for_each(|r| r.have = 0);
    }
    let out_path = dir.join(ANSWERS_FILE);
    let mut out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&out_path)
        .with_context(|| format!("opening {}", out_path.display()))?;
    let mut local = Local::new(cache).on_host(node);
    local.submit(Wave {
        builds: Vec::new(),
        blocks: vec![block],
    })?;
    while let Some(a) = local.next()? {
        let line = match a {
            Answer::Sampled {
                run,
                outcome,
                retried,
                taken,
                ..
            } => Line::Sampled {
                run,
                outcome,
                retried,
                taken,
            },
            Answer::WaveDone { .. } => Line::Done,
            Answer::Built { .. } => continue,
        };
        append(&mut out, &line).with_context(|| format!("writing {}", out_path.display()))?;
    }
    Ok(())
}

fn append(out: &mut File, line: &Line) -> Result<()> {
    let mut text = serde_json::to_string(line)?;
    text.push('\n');
    // One write per line: a reader sees a line whole or not yet.
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// The complete lines of an answers file after byte `from`, and where the next read starts.
pub fn read_answers(path: &Path, from: u64) -> Result<(Vec<Line>, u64)> {
    let Ok(bytes) = fs::read(path) else {
        return Ok((Vec::new(), from));
    };
    let Some(rest) = bytes.get(from as usize..) else {
        return Ok((Vec::new(), from));
    };
    let complete = rest.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut lines = Vec::new();
    for l in rest[..complete]
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
    {
        lines.push(
            serde_json::from_slice(l)
                .with_context(|| format!("reading an answer line of {}", path.display()))?,
        );
    }
    Ok((lines, from + complete as u64))
}
