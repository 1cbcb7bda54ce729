//! Profiles of two subjects of one session (`explain`, `bisect --explain`):
//! one callgrind run each, read into folded stacks.

use anyhow::{Context, Result};

use crate::analysis::bisect::Measurer;
use crate::analysis::profile::Profile;
use crate::measure::engine::Session;

/// The profile of subject `i`, or why there is none (a failed build, a
/// kernel that does not apply).
pub fn take(session: &mut Session, i: usize) -> Result<Profile> {
    let dir = tempfile::tempdir().context("cannot create a directory for callgrind's output")?;
    let out = dir.path().join("callgrind.out");
    let sample = match session.profile(i, &out)? {
        Ok(s) => s,
        Err(why) => anyhow::bail!("cannot profile {}: {why}", Measurer::name(session, i)),
    };
    let ops: u64 = sample.ops_per_thread.iter().sum();
    let text = std::fs::read_to_string(&out)
        .with_context(|| format!("cannot read callgrind output {}", out.display()))?;
    let p = Profile::from_callgrind(&text, ops, crate::measure::metric::MEASURED_FN)?;
    if p.total() == 0 {
        anyhow::bail!(
            "the profile of {} holds no instruction (is the perfbisect binary stripped?)",
            Measurer::name(session, i)
        );
    }
    Ok(p)
}
