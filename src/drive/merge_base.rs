//! GOOD is not an ancestor of BAD: where does their merge base lie between them? GOOD, the
//! merge base and BAD are measured in the same rounds; the search then covers
//! merge-base..BAD, or GOOD's own branch when the merge base already behaves like BAD.

use anyhow::{bail, Result};

use super::live::Live;
use super::plan::BisectPlan;
use crate::analysis::bisect::{self, Config, StepVerdict};
use crate::build::repo;
use crate::report::bisect::step_line;
use crate::report::events::Event;

/// What placing the merge base between GOOD and BAD decided.
pub(super) enum Placement {
    /// Search merge-base..BAD; with a note when GOOD's own branch differs too.
    Search(Option<String>),
    /// The merge base behaves like BAD: the change is on GOOD's branch.
    OnGoodsBranch,
}

/// GOOD's and BAD's names as written and their subjects' indices.
pub(super) struct Ends<'a> {
    pub good: &'a str,
    pub bad: &'a str,
    pub good_idx: usize,
    pub bad_idx: usize,
}

pub(super) fn place(
    live: &mut Live,
    plan: &BisectPlan,
    cfg: &Config,
    mb: &repo::CommitInfo,
    ends: &Ends,
) -> Result<Placement> {
    let Ends { good, bad, .. } = *ends;
    let sink = live.sink;
    let say = |s: &str| sink.send(Event::Said(s));
    say(&format!(
        "{good} is not an ancestor of {bad}: placing the merge base {} ({}) between them first",
        mb.short,
        mb.dates()
    ));
    let step = bisect::place(live, 0, ends.good_idx, ends.bad_idx, cfg, cfg.alpha)?;
    let metric = live.session.metric();
    say(&step_line(&step, mb, metric, &plan.range.threads));
    let pos = step
        .position
        .map(|p| format!(" ({:.0}% of the way from {good} to {bad})", p * 100.0))
        .unwrap_or_default();
    let towards_bad = match &step.verdict {
        StepVerdict::Skipped(why) => bail!("cannot measure the merge base {}: {why}", mb.short),
        StepVerdict::Old => false,
        StepVerdict::New => true,
        StepVerdict::Between | StepVerdict::Ambiguous => step.position.is_some_and(|p| p >= 0.5),
    };
    if towards_bad {
        // The merge base already behaves (mostly) like BAD: the change happened on GOOD's
        // branch, after the branches split. Search there instead, ends reversed.
        say(&format!(
            "  the merge base {} behaves like {bad}{pos}: the change is on {good}'s branch; searching {}..{good} (its direction is reversed: {good} is the new end)",
            mb.short, mb.short
        ));
        return Ok(Placement::OnGoodsBranch);
    }
    if step.verdict == StepVerdict::Between {
        // Significantly different from both ends, but nearer GOOD: a change of GOOD's own
        // branch (a backport, say) beside the one between the merge base and BAD.
        let note = format!(
            "{good}'s own branch differs from the merge base {}{pos}: most of the change lies between the merge base and {bad}, which is searched; to find {good}'s own change run: {}",
            mb.short,
            plan.over(format!("{}..{good}", mb.id)).reproduce()
        );
        say(&format!("  {note}"));
        return Ok(Placement::Search(Some(note)));
    }
    say(&format!(
        "  the merge base {} behaves like {good}{pos}{}: searching {}..{bad}",
        mb.short,
        if step.verdict == StepVerdict::Ambiguous {
            " (not told apart at the sample cap)"
        } else {
            ""
        },
        mb.short
    ));
    Ok(Placement::Search(None))
}
