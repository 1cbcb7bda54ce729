//! Where a bisect stands, kept in the cache under its id as it goes (`perfbisect log` reads
//! it): running, redirected to the merge base's branch, interrupted, failed, or finished with
//! its result.

use anyhow::Result;

use crate::cache::{self, Cache};
use crate::report::bisect::{BisectReport, RunState, SavedBisect};
use crate::report::export::Versioned;

/// One bisect's record: its id and the command that reproduces it.
pub(super) struct Record<'a> {
    pub cache: &'a Cache,
    pub id: &'a str,
    pub command: String,
}

impl Record<'_> {
    pub fn save(&self, state: RunState, result: Option<&BisectReport>) -> Result<()> {
        let dir = self.cache.dir("bisects")?;
        let saved = SavedBisect {
            id: self.id.to_string(),
            state,
            command: self.command.clone(),
            updated: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            result: result.cloned(),
        };
        cache::write_atomic(
            &dir.join(format!("{}.json", self.id)),
            serde_json::to_string_pretty(&Versioned::new(&saved))?.as_bytes(),
        )
    }

    /// The search's error, with the run's state saved as interrupted or failed.
    pub fn failed(&self, e: anyhow::Error) -> anyhow::Error {
        // After Ctrl-C, whatever failed on the way out (a child killed by the signal, say) is
        // part of the interruption: exit 130 with the resume hint, not a failure.
        let (state, e) = if crate::interrupt::is_interrupted(&e) || crate::interrupt::interrupted()
        {
            (RunState::Interrupted, crate::interrupt::Interrupted.into())
        } else {
            (RunState::Failed, e)
        };
        match self.save(state, None) {
            Ok(()) => e,
            Err(saving) => saving,
        }
    }
}
