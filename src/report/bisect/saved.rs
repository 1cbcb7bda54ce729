//! A bisect as the cache keeps it while it runs and after (`perfbisect log` reads it): its
//! id, where it stands, the command that reproduces it and, once finished, its result.

use super::*;

/// A bisect as kept in the cache (`bisects/ID.json`) and listed by `log`.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
pub struct SavedBisect {
    pub id: String,
    pub state: RunState,
    pub command: String,
    pub updated: u64,
    #[serde(default)]
    pub result: Option<BisectReport>,
}

/// Where a bisect recorded in the cache stands (`perfbisect log`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    Running,
    /// The change lies between the merge base and GOOD: the search went on as a bisect of
    /// that range, recorded under its own id.
    Redirected,
    /// Ctrl-C: the same command resumes.
    Interrupted,
    Failed,
    Finished,
}

impl std::fmt::Display for RunState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RunState::Running => "running",
            RunState::Redirected => "redirected",
            RunState::Interrupted => "interrupted",
            RunState::Failed => "failed",
            RunState::Finished => "finished",
        })
    }
}
