//! What a fleet node runs for a measurement job: one block, sampled by the local executor on
//! this node, each answer appended to a file the submitting process reads as it grows. The
//! file is the job's only output: a line is written whole or not at all, and the last line
//! says the block is done (a job that ends without it was killed and is run again).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::cache::Cache;
use crate::measure::exec::local::Local;
use crate::measure::exec::{Answer, Block, Executor, Taken, Wave};
use crate::measure::runner::SampleOutcome;

/// The hidden subcommand a measurement job runs: `perfbisect __block DIR`.
pub const HIDDEN_SUBCOMMAND: &str = "__block";

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

/// Writes `block` where a job will read it.
pub fn write_block(dir: &Path, block: &Block) -> Result<PathBuf> {
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join(BLOCK_FILE);
    fs::write(&path, serde_json::to_vec(block)?)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// Samples the block in `dir` (the job's side).
pub fn run_block(cache: &Cache, dir: &Path) -> Result<()> {
    let path = dir.join(BLOCK_FILE);
    let text = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let block: Block =
        serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
    let out_path = dir.join(ANSWERS_FILE);
    let mut out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&out_path)
        .with_context(|| format!("opening {}", out_path.display()))?;
    let mut local = Local::new(cache);
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
