//! What identifies one search's samples, so that a re-run finds them (resume) and no other
//! search shares them. Every field that changes what is measured or decided is named here: a
//! new option that does must be added (and the pinned ids in the tests change with it, on
//! purpose).

use super::plan::{Locate, RangePlan};
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
    pub locate: Option<Locate>,
}

impl ResumeKey<'_> {
    /// A hasher that holds `kind` and what names the range, the tool and how it is built.
    fn hasher(&self, kind: &str) -> hashing::Hasher {
        let mut h = hashing::Hasher::new();
        h.field(kind)
            .field(self.repo)
            .field(self.good)
            .field(self.bad)
            .field(self.tool)
            .field(self.threads)
            .field(self.recipe);
        h
    }

    /// What was measured: kept out of time ids, which had no metric field before metrics existed
    /// (so their resumes still work).
    fn metric_fields(&self, h: &mut hashing::Hasher) {
        if !self.metric.is_time() {
            h.field(&format!("metric {}", self.metric.name()));
        }
        if let Some(by) = self.locate {
            h.field(&format!("locate {}", by.name()));
        }
    }

    pub fn id(&self) -> String {
        let mut h = self.hasher("bisect-v2");
        h.field(&self.cfg.alpha.to_string())
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
        routing_field(self.cfg, &mut h);
        self.metric_fields(&mut h);
        h.finish_short()
    }

    /// The id of a scan of this key's range with a grid of `grid` points. Its fields are in the
    /// order scan ids always had, so that time scans from before keep theirs.
    pub fn scan_id(&self, grid: usize) -> String {
        let cfg = self.cfg;
        let mut h = self.hasher("scan-v1");
        h.field(&grid.to_string())
            .field(&cfg.alpha.to_string())
            .field(&cfg.min_effect.to_string())
            .field(&cfg.schedule.initial.to_string())
            .field(&cfg.schedule.max.to_string())
            .field(&self.duration.to_string());
        // Without it, a scan in counts and one in time with the same settings had one id.
        self.metric_fields(&mut h);
        routing_field(cfg, &mut h);
        h.finish_short()
    }
}

/// `f` of the key that identifies a search of `plan` over the opened range.
fn with_key<T>(plan: &RangePlan, setup: &RangeSetup, f: impl FnOnce(&ResumeKey) -> T) -> T {
    let (repo, tool, threads) = (
        repo_key(&setup.repo),
        setup.spec.canonical(),
        plan.threads_text(),
    );
    f(&ResumeKey {
        repo: &repo,
        good: &setup.range.good.id,
        bad: &setup.range.bad.id,
        tool: &tool,
        threads: &threads,
        recipe: &plan.sources.recipe,
        cfg: &plan.cfg,
        duration: plan.timing.duration,
        metric: plan.timing.metric,
        locate: plan.locate,
    })
}

/// The id of a bisect of `plan` over the opened range.
pub(super) fn bisect_id(plan: &RangePlan, setup: &RangeSetup) -> String {
    with_key(plan, setup, |k| k.id())
}

/// The id of a scan of `plan` over the opened range, with a grid of `grid` points.
pub(super) fn scan_id(plan: &RangePlan, setup: &RangeSetup, grid: usize) -> String {
    with_key(plan, setup, |k| k.scan_id(grid))
}

/// Routing outside the family decides differently on the same samples, so it is a search of
/// its own; routing in the family adds nothing, so ids from before routing had a level keep theirs.
fn routing_field(cfg: &Config, h: &mut hashing::Hasher) {
    if let crate::analysis::alpha::RoutingLevel::PerDecision(p) = cfg.routing {
        h.field(&format!("routing {p}"));
    }
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
            spread: Default::default(),
            tail: false,
            routing: crate::analysis::alpha::RoutingLevel::Family,
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
            locate: Some(Locate::By(Metric::Instructions)),
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
        scan_ids_differ_by_what_they_measure(&key);
    }

    /// A scan's id is pinned like a bisect's, and differs by metric and by locate.
    fn scan_ids_differ_by_what_they_measure(key: &ResumeKey) {
        assert_eq!(key.scan_id(16), "0fbedfda41921a74");
        assert_ne!(key.scan_id(8), key.scan_id(16));
        let instr = ResumeKey {
            metric: Metric::Instructions,
            ..*key
        };
        let located = ResumeKey {
            locate: Some(Locate::By(Metric::Instructions)),
            ..*key
        };
        let ids = [
            key.scan_id(16),
            instr.scan_id(16),
            located.scan_id(16),
            key.id(),
        ];
        let distinct: std::collections::BTreeSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len(), "{ids:?}");
    }
}
