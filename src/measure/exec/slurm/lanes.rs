//! A measurement lane's job: one allocation that holds a node for one search and samples the
//! blocks handed to it (see [`node::run_lane`]). Every block of a search is sampled on that
//! node, none waits in the queue, and no other job takes the node between two of them.

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result};

use super::Running;
use crate::measure::exec::node;

/// Which search a lane samples for: a search side by side's id, or `None` for the run's own.
pub type LaneKey = Option<usize>;

/// How a lane's directory names it.
pub fn label(key: LaneKey) -> String {
    key.map_or_else(|| "run".into(), |k| k.to_string())
}

/// A lane's job, queued or holding its node.
pub struct LaneJob {
    pub key: LaneKey,
    pub run: Running,
    /// Where its blocks are handed (see [`node::block_dir`]).
    pub dir: PathBuf,
    /// Blocks handed to it so far.
    pub handed: usize,
    /// Since when the queue says it runs, and on which node.
    pub since: Option<Instant>,
    pub node: Option<String>,
    /// Its `--time`.
    pub limit: Duration,
    /// Told to end once the blocks handed to it are sampled.
    pub closed: bool,
}

impl LaneJob {
    /// Whether a block that may take `need` can still be handed to it: Slurm would end the job
    /// in the middle of it otherwise.
    pub fn takes(&self, need: Duration) -> bool {
        let used = self.since.map_or(Duration::ZERO, |t| t.elapsed());
        !self.closed && self.limit.saturating_sub(used) >= need
    }

    /// The job ends, freeing its node, once the blocks handed to it are sampled.
    pub fn close(&mut self) -> Result<()> {
        self.closed = true;
        let path = self.dir.join(node::CLOSE_FILE);
        fs::write(&path, "").with_context(|| format!("writing {}", path.display()))
    }

    /// Shows the job that its run is alive (see [`node::ORPHANED`]).
    pub fn touch(&self) -> Result<()> {
        touch_alive(&self.dir)
    }
}

/// Creates or touches a lane directory's [`node::ALIVE_FILE`].
pub fn touch_alive(dir: &std::path::Path) -> Result<()> {
    let path = dir.join(node::ALIVE_FILE);
    let f = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    f.set_modified(SystemTime::now())
        .with_context(|| format!("touching {}", path.display()))
}
