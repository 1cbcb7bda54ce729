//! What identifies one search's samples, so that a re-run finds them (resume) and no other
//! search shares them. Every field that changes what is measured or decided is named here: a
//! new option that does must be added (and the pinned ids in the tests change with it, on
//! purpose).

use super::plan::RangePlan;
use super::setup::{repo_key, RangeSetup};
use crate::analysis::bisect::Config;
use crate::hashing;
use crate::measure::metric::Metric;

/// What identifies one bisect.
pub(super) struct ResumeKey<'a> {
    pub repo: &'a str,
    pub good: &'a str,
    pub bad: &'a str,
    pub tool: &'a str,
    /// "1", or "1,8,32" for several thread counts.
    pub threads: &'a str,
    pub recipe: &'a str,
    pub cfg: &'a Config,
    pub duration: f64,
    pub metric: Metric,
    pub locate: Option<Metric>,
}

impl ResumeKey<'_> {
    pub fn id(&self) -> String {
        let mut h = hashing::Hasher::new();
        h.field("bisect-v2")
            .field(self.repo)
            .field(self.good)
            .field(self.bad)
            .field(self.tool)
            .field(self.threads)
            .field(self.recipe)
            .field(&self.cfg.alpha.to_string())
            .field(&self.cfg.min_effect.to_string())
            .field(&self.cfg.schedule.initial.to_string())
            .field(&self.cfg.schedule.max.to_string())
            // what `--first-change-only` was before it became --max-changes 1: kept so that
            // existing ids stay what they were
            .field("false")
            .field(&self.duration.to_string());
        if let Some(m) = self.cfg.max_changes {
            h.field(&format!("max-changes {m}"));
        }
        // Time keeps the id it had before metrics existed (resumes still work).
        if !self.metric.is_time() {
            h.field(&format!("metric {}", self.metric.name()));
        }
        if let Some(by) = self.locate {
            h.field(&format!("locate {}", by.name()));
        }
        h.finish_short()
    }
}

/// The id of a bisect of `plan` over the opened range.
pub(super) fn bisect_id(plan: &RangePlan, setup: &RangeSetup) -> String {
    ResumeKey {
        repo: &repo_key(&setup.repo),
        good: &setup.range.good.id,
        bad: &setup.range.bad.id,
        tool: &setup.spec.canonical(),
        threads: &plan.threads_text(),
        recipe: &plan.sources.recipe,
        cfg: &plan.cfg,
        duration: plan.timing.duration,
        metric: plan.timing.metric,
        locate: plan.locate,
    }
    .id()
}

/// The id of a scan of `plan` over the opened range, with a grid of `grid` points.
pub(super) fn scan_id(plan: &RangePlan, setup: &RangeSetup, grid: usize) -> String {
    let cfg = &plan.cfg;
    let mut h = hashing::Hasher::new();
    h.field("scan-v1")
        .field(&repo_key(&setup.repo))
        .field(&setup.range.good.id)
        .field(&setup.range.bad.id)
        .field(&setup.spec.canonical())
        .field(&plan.threads_text())
        .field(&plan.sources.recipe)
        .field(&grid.to_string())
        .field(&cfg.alpha.to_string())
        .field(&cfg.min_effect.to_string())
        .field(&cfg.schedule.initial.to_string())
        .field(&cfg.schedule.max.to_string())
        .field(&plan.timing.duration.to_string());
    // Only when given, so that every scan id from before --locate stays what it was.
    if let Some(by) = plan.locate {
        h.field(&format!("locate {}", by.name()));
    }
    h.finish_short()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::alpha::Schedule;

    /// The resume id is a promise to interrupted bisects: if this value
    /// changes, their samples are orphaned. Change it only on purpose.
    #[test]
    fn resume_id_is_pinned() {
        let cfg = Config {
            alpha: 0.01,
            min_effect: 0.03,
            schedule: Schedule {
                initial: 5,
                max: 40,
            },
            max_changes: None,
            min_share: None,
        };
        let key = ResumeKey {
            repo: "/repo",
            good: "0123456789abcdef0123456789abcdef01234567",
            bad: "89abcdef0123456789abcdef0123456789abcdef",
            tool: "pkeyread:format=pem,key=ec",
            threads: "1",
            recipe: "default",
            cfg: &cfg,
            duration: 1.0,
            metric: Metric::Time,
            locate: None,
        };
        assert_eq!(key.id(), "ba7e0700cb066523");
        let located = ResumeKey {
            locate: Some(Metric::Instructions),
            ..key
        };
        assert_ne!(located.id(), key.id());
        let instr = ResumeKey {
            metric: Metric::Instructions,
            ..key
        };
        assert_ne!(instr.id(), key.id());
        let other = ResumeKey {
            threads: "2",
            ..key
        };
        assert_ne!(other.id(), key.id());
        let other = ResumeKey {
            threads: "1,2",
            ..key
        };
        assert_ne!(other.id(), key.id());
    }
}
