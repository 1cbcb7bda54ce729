//! The result of `bisect`: the ends, every tested commit, the change points
//! (culprits) with their own comparison, and how to reproduce it. Written
//! by `bisect`, kept in the cache and read back by `log`.

use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

use super::export::{formats, Export, Links, Markdown, Text};
use super::html::{self, esc, HtmlSections, Section};
use super::plot::{self, Mark, PointKind, Profile, ProfilePoint};
use super::standing::{Aside, Standing};
use crate::analysis::bisect::{ChangePoint, LeftBecause, Step, StepVerdict, Unexplored};
use crate::analysis::locate::SearchedBy;
use crate::analysis::resolution::{Forecast, Resolution};
use crate::analysis::series;
use crate::analysis::stats::{Comparison, RatioCi, Size, Verdict};
use crate::build::repo::CommitInfo;
use crate::measure::engine::BuildUse;
use crate::measure::exec::Placement;
use crate::measure::metric::Metric;
use crate::report::{
    may_hide, net_same, pairs_note, resolution_sentence, us, List, Table, CHANGE_COLUMN,
};
use crate::unavailable::Unavailable;

formats!(BisectFormat for BisectReport { Text, Markdown, Json, Jsonl, Html });

pub const BISECT_KIND: &str = "perfbisect-bisect";

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommitJson {
    pub commit: String,
    pub short: String,
    /// The committer date: the order git bisect walks.
    pub date: String,
    /// Only when more than a day away from the committer date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author_date: Option<String>,
    pub author: String,
    pub subject: String,
}

impl From<&CommitInfo> for CommitJson {
    fn from(c: &CommitInfo) -> Self {
        CommitJson {
            commit: c.id.clone(),
            short: c.short.clone(),
            date: c.date.clone(),
            author_date: c.author_date.clone(),
            author: c.author.clone(),
            subject: c.summary.clone(),
        }
    }
}

impl CommitJson {
    /// "2023-02-07", or "2023-02-07 (authored 2022-11-30)".
    pub fn dates(&self) -> String {
        match &self.author_date {
            Some(a) => format!("{} (authored {a})", self.date),
            None => self.date.clone(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChangePointJson {
    // The culprit's own id is `info.commit` (flattened: one "commit" key).
    pub parent: String,
    /// True when skipped commits leave a range: the change is in parent..commit.
    pub range: bool,
    pub skipped: Vec<String>,
    #[serde(flatten)]
    pub info: CommitJson,
    pub ratio: f64,
    pub ratio_ci: (f64, f64),
    pub p_welch: f64,
    pub p_mwu: f64,
    pub parent_mean_us: f64,
    pub culprit_mean_us: f64,
    pub partial: bool,
    pub uncertain: bool,
    /// The change held on a fresh block of samples of parent and culprit; the figures above come
    /// from that block. A candidate that did not hold is listed, marked, and not a culprit.
    #[serde(default = "yes")]
    pub confirmed: bool,
    /// Neither confirmed nor refuted: the fresh block stayed undecided at twice the sample cap.
    /// The search located the change here; `ratio_ci` is how little is known of its size.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unresolved: bool,
    /// Parent and culprit load byte-identical libraries and modules: never a culprit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub identical_binaries: bool,
    /// Share of the ends' change on the log scale: 1 explains the whole range, negative goes
    /// against the range's direction.
    #[serde(default = "one")]
    pub share: f64,
    pub comparison: Comparison,
    /// With several thread counts (`--threads 1,8,32`): the confirmation at each; the figures
    /// above are the primary thread count's (the one whose ends moved most).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_threads: Vec<ThreadEffect>,
    /// Located by count (`--locate`): parent against culprit on the counts; the figures above
    /// are the clock's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub located: Option<Comparison>,
}

/// One thread count's comparison (a change point's confirmation, or the ends).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThreadEffect {
    pub threads: usize,
    /// Significant at this thread count (at the search's level for it).
    pub affected: bool,
    pub ratio: f64,
    pub ratio_ci: (f64, f64),
    pub a_mean_us: f64,
    pub b_mean_us: f64,
    pub comparison: Comparison,
}

impl ThreadEffect {
    pub fn new(threads: usize, c: &Comparison) -> ThreadEffect {
        ThreadEffect {
            threads,
            affected: matches!(c.verdict, Verdict::Slower | Verdict::Faster),
            ratio: c.ratio.ratio,
            ratio_ci: (c.ratio.lo, c.ratio.hi),
            a_mean_us: c.a.mean,
            b_mean_us: c.b.mean,
            comparison: *c,
        }
    }

    /// "t=8: +15.0% [+12.1%, +18.0%] affected" for text and Markdown.
    fn text(&self) -> String {
        format!(
            "t={}: {} -> {} us/op, {} {}",
            self.threads,
            us(self.a_mean_us),
            us(self.b_mean_us),
            self.comparison.ratio.pct(),
            if self.affected {
                "affected"
            } else {
                "not affected"
            }
        )
    }
}

/// One thread count's figures at a tested commit.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThreadPoint {
    pub threads: usize,
    #[serde(deserialize_with = "nan_if_null")]
    pub mean_us: f64,
    #[serde(deserialize_with = "nan_pair_if_null")]
    pub ci95_us: (f64, f64),
}

fn yes() -> bool {
    true
}

fn one() -> f64 {
    1.0
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepJson {
    #[serde(flatten)]
    pub info: CommitJson,
    /// Position in the range's first-parent list, 0 = the old end (older
    /// results have none: read as 0, with `BisectReport::commits` 0).
    #[serde(default)]
    pub index: usize,
    pub n: usize,
    // A skipped commit has no mean; JSON writes NaN as null.
    #[serde(deserialize_with = "nan_if_null")]
    pub mean_us: f64,
    #[serde(deserialize_with = "nan_pair_if_null")]
    pub ci95_us: (f64, f64),
    pub verdict: String,
    /// `verdict`'s kind, typed: old, new, between, ambiguous or skipped (absent in results
    /// written before it was recorded, whose `verdict` text is read instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<StepKind>,
    /// Why a skipped commit has no number, typed (`kind`: build_failed, missing_symbol,
    /// crashed, …): a build problem is told from a kernel crash without reading `verdict`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped_because: Option<Unavailable>,
    pub position: Option<f64>,
    /// With several thread counts: each one's mean (`mean_us` is the primary thread count's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_threads: Vec<ThreadPoint>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BisectReport {
    /// BISECT_KIND; empty in results written before it was recorded.
    #[serde(default)]
    pub kind: String,
    pub tool: String,
    /// The primary thread count: the only one, or the one whose ends moved most (the figures
    /// of the ends, the change points and the steps are its).
    pub threads: usize,
    /// With several: every thread count measured at each probe, in the order given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thread_counts: Vec<usize>,
    /// With several: the ends compared at each thread count.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ends_per_threads: Vec<ThreadEffect>,
    pub range: String,
    pub repo: String,
    pub recipe: String,
    pub good: CommitJson,
    pub bad: CommitJson,
    pub merge_base: Option<CommitJson>,
    /// Commits in the searched range (the steps' `index` runs below it);
    /// 0 in results written before it was recorded.
    #[serde(default)]
    pub commits: usize,
    pub direction: Verdict,
    pub ends: Comparison,
    pub outcome: String,
    /// The change points, under the key a scan's result uses too (`culprits` in results
    /// written before, still read).
    #[serde(alias = "culprits")]
    pub changes: Vec<ChangePointJson>,
    pub steps: Vec<StepJson>,
    pub builds: Vec<BuildUse>,
    pub samples: usize,
    pub samples_taken_now: usize,
    /// Which executor took the samples, and on which hosts.
    #[serde(default)]
    pub placement: Placement,
    /// Tested commits whose loaded binaries were byte-identical to another tested commit's:
    /// measured once, as that commit (probes saved).
    #[serde(default)]
    pub shared_probes: usize,
    pub alpha_per_test: f64,
    /// Findings beside the culprits (e.g. GOOD's own branch differing from the merge base).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Significance tests the search and the confirmations ran, and the sum of the levels of
    /// those counted in `--alpha` (every test with `--routing-level family`, else the
    /// confirmations'). What bounds false culprits is the allocation, half of `alpha`, not this
    /// sum: which tests ran depended on what they saw.
    #[serde(default)]
    pub tests: usize,
    #[serde(default)]
    pub family_alpha: f64,
    /// How the searches' routing decisions were tested (absent: inside the family alpha).
    #[serde(
        default = "crate::analysis::alpha::RoutingLevel::family",
        skip_serializing_if = "crate::analysis::alpha::RoutingLevel::in_family_ref"
    )]
    pub routing: crate::analysis::alpha::RoutingLevel,
    /// The whole search's budget (--alpha).
    #[serde(default)]
    pub alpha: f64,
    pub min_effect: f64,
    pub wall_s: f64,
    pub reproduce: String,
    /// What the values are (`*_us` fields hold instructions/op for `instructions`).
    #[serde(default, skip_serializing_if = "Metric::is_time")]
    pub metric: Metric,
    /// `--explain`: each confirmed culprit's profile against its parent.
    #[serde(default, skip_deserializing, skip_serializing_if = "Vec::is_empty")]
    pub explanations: Vec<crate::report::explain::ExplainReport>,
    /// How much of the ends' change the confirmed change points explain (sum of their shares).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explained: Option<f64>,
    /// Sub-ranges left unsearched (time budget, --max-changes, --min-share).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unexplored: Vec<UnexploredJson>,
    /// The command that goes on where a spent --budget stopped (builds and samples from the cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continue_with: Option<String>,
    /// What the run could resolve at its noise (absent in results written before it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<Resolution>,
    /// `--locate`: what the counts saw; `ends` and the culprits' figures are then the clock's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub located: Option<LocatedJson>,
}

/// Locating by count: the metric, what searched the range, the counts' ends and resolution.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LocatedJson {
    pub metric: Metric,
    pub searched_by: SearchedBy,
    pub ends: Comparison,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<Resolution>,
    /// Count samples the search took.
    pub samples: usize,
    /// The time's ends moved this much beyond its confirmed change points
    /// ([`crate::analysis::locate::unexplained`]), after any search in time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unexplained: Option<RatioCi>,
    /// The time moved, or may have moved, beyond the change points the counts located, so the
    /// stretches between them were searched in time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_search: Option<TimeSearchJson>,
}

/// The search in time of the stretches between the change points the counts located.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TimeSearchJson {
    /// What the time moved beyond those change points, before the stretches were searched: an
    /// interval reaching --min-effect, which may hold no change.
    pub moved: RatioCi,
    /// The stretches searched, oldest first.
    pub stretches: Vec<StretchJson>,
    /// Change points found in them (confirmed or not).
    pub found: usize,
}

/// A stretch of the range: its first and last commit.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StretchJson {
    pub from: String,
    pub to: String,
}

impl TimeSearchJson {
    pub fn new(t: &crate::analysis::locate::TimeSearch, commits: &[CommitInfo]) -> Self {
        TimeSearchJson {
            moved: t.moved,
            stretches: (t.stretches.iter())
                .map(|&(lo, hi)| StretchJson {
                    from: commits[lo].id.clone(),
                    to: commits[hi].id.clone(),
                })
                .collect(),
            found: t.found,
        }
    }

    /// "; the time moved +X% beyond …: searched in time …", for the located sentence.
    fn clause(&self, unexplained: Option<RatioCi>) -> String {
        let n = self.stretches.len();
        let still = match unexplained {
            Some(u) => format!("; still {} unexplained", u.pct()),
            None => String::new(),
        };
        let (n_str, were) = (
            if n == 1 { "stretch" } else { "stretches" },
            if n == 1 { "was" } else { "were" },
        );
        // An interval that holds no change supports no finding: whether the time moved is
        // said unresolved, and the stretches are searched because it could not be ruled out.
        if self.moved.lo > 1.0 || self.moved.hi < 1.0 {
            format!(
                "; the time moved {} beyond the change points the counts located (memory, caches or contention leave the instructions alone), so the {n} {n_str} between them {were} searched in time: {} change point(s) found there{still}",
                self.moved.pct(),
                self.found,
            )
        } else {
            format!(
                "; whether the time moved beyond the change points the counts located is not resolved at this noise, so the {n} {n_str} between them {were} searched in time: {} change point(s) found there{still}",
                self.found,
            )
        }
    }
}

impl BisectReport {
    /// The confirmed change points, in position order: what a report lists as change points
    /// (the rest are said apart, see [`Aside`]).
    pub fn change_points(&self) -> impl Iterator<Item = &ChangePointJson> {
        self.changes.iter().filter(|c| c.is_change_point())
    }

    /// Finished, but a candidate change point did not hold on its fresh block of samples (one
    /// still undecided there is located, size unresolved, and a pair of identical binaries is no
    /// candidate: neither counts): exit 3.
    pub fn unconfirmed(&self) -> bool {
        self.changes
            .iter()
            .any(|c| c.standing() == Standing::NotUpheld)
    }

    /// The culprits in the order a reader wants them: the confirmed ones by what lasts of their
    /// change (a transient that a later change undid comes after the lasting ones; see
    /// [`series::lasting`]), those in the range's direction before those against it, then by
    /// their share of the range's change; candidates that did not hold last.
    pub fn ranked(&self) -> Vec<&ChangePointJson> {
        let logs: Vec<f64> = (self.changes.iter())
            .map(|c| if c.confirmed { c.ratio.ln() } else { 0.0 })
            .collect();
        let lasting = series::lasting(&logs, self.min_effect);
        let mut order: Vec<usize> = (0..self.changes.len()).collect();
        order.sort_by(|&a, &b| {
            let (ca, cb) = (&self.changes[a], &self.changes[b]);
            (cb.confirmed.cmp(&ca.confirmed))
                .then((cb.share > 0.0).cmp(&(ca.share > 0.0)))
                .then(lasting.left[b].abs().total_cmp(&lasting.left[a].abs()))
                .then(cb.share.total_cmp(&ca.share))
        });
        order.into_iter().map(|i| &self.changes[i]).collect()
    }

    /// What the steps were measured in: the counts when they searched the range.
    pub fn steps_metric(&self) -> Metric {
        match &self.located {
            Some(l) if l.searched_by == SearchedBy::Count => l.metric,
            _ => self.metric,
        }
    }

    /// How the range was searched when a count located, for every format's ends.
    fn located_sentence(&self) -> Option<String> {
        self.located.as_ref().map(LocatedJson::sentence)
    }
}

impl LocatedJson {
    /// What the counts (on `metric`) saw where they located the change points the clock
    /// confirmed.
    pub fn new(
        metric: Metric,
        l: &crate::analysis::locate::Location,
        commits: &[CommitInfo],
    ) -> LocatedJson {
        LocatedJson {
            metric,
            searched_by: l.searched_by,
            ends: l.count_ends,
            resolution: l.count_resolution.clone(),
            samples: l.count_samples,
            unexplained: l.unexplained,
            time_search: (l.time_search.as_ref()).map(|t| TimeSearchJson::new(t, commits)),
        }
    }

    /// How the range was searched: located by count and confirmed in time, or searched in time
    /// because the counts did not move (bisect and scan reports say it alike).
    pub fn sentence(&self) -> String {
        let l = self;
        let u = l.metric.unit();
        let ends = format!(
            "{} {u} → {} {u}, {}",
            us(l.ends.a.mean),
            us(l.ends.b.mean),
            l.ends.ratio.pct()
        );
        let resolves = l
            .resolution
            .as_ref()
            .map(|r| {
                format!(
                    ", resolving {:.1}% at {:.2}% noise",
                    r.smallest.max(r.min_effect) * 100.0,
                    r.noise * 100.0
                )
            })
            .unwrap_or_default();
        match l.searched_by {
            SearchedBy::Count => format!(
                "located by {} ({ends}; {} samples{resolves}), each change point confirmed in time on a fresh block; the resolution below is the time's, for what the counts cannot see{}",
                l.metric.name(),
                l.samples,
                match &l.time_search {
                    Some(t) => t.clause(l.unexplained),
                    None => l.unexplained.map(|u| format!(
                        "; the time moved {} beyond the change points confirmed in it: something that leaves the instructions alone (memory, caches, contention) changed it too, so bisect without --locate to search it in time",
                        u.pct()
                    )).unwrap_or_default(),
                }
            ),
            SearchedBy::Clock => format!(
                "the counts did not move ({ends}) but the time did: a memory, cache or contention effect, searched in time"
            ),
        }
    }
}

/// "located by instructions: +28.1% [...]": a culprit's count figure beside its clock's.
pub(crate) fn located_note(c: &ChangePointJson, by: &str) -> Option<String> {
    let l = c.located.as_ref()?;
    Some(format!("located by {by}: {}", l.ratio.pct()))
}

impl BisectReport {
    /// What a change point's headline ratio does not say: the tail that made it a change
    /// (`--tail`), or [`located_note`] with this report's locating metric.
    fn culprit_located(&self, c: &ChangePointJson) -> Option<String> {
        if c.comparison.by_tail {
            return crate::report::table::tail_note(&c.comparison);
        }
        let by = self.located.as_ref()?.metric.name();
        located_note(c, by)
    }
}

/// A sub-range the search left.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UnexploredJson {
    /// Its ends (a commit known as old-like, one known as new-like or not checked).
    pub from: String,
    pub to: String,
    /// Commits strictly between them.
    pub commits: usize,
    /// Its ends are known to differ; otherwise never checked.
    pub differs: bool,
    /// Estimated share of the range's change, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// `budget`, `max_changes`, `min_share`, `undecided` or `same`.
    pub because: LeftBecause,
    /// With `undecided` and `same`: the ends' ratio (new/old) and the interval the check
    /// decided on — their net change (steps that cancel inside can be larger).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<RatioCi>,
}

impl UnexploredJson {
    pub fn new(u: &Unexplored, commits: &[CommitInfo]) -> UnexploredJson {
        UnexploredJson {
            from: commits[u.lo].id.clone(),
            to: commits[u.hi].id.clone(),
            commits: u.hi.saturating_sub(u.lo + 1),
            differs: u.differs,
            share: u.share,
            because: u.because,
            ratio: u.ratio,
        }
    }

    /// One line: its ends, the commits between, and what may hide there.
    pub(crate) fn text(&self) -> String {
        let what = match (self.differs, self.share) {
            _ if self.because == LeftBecause::Same && self.ratio.is_some() => {
                net_same(&self.ratio.expect("checked"))
            }
            _ if self.ratio.is_some() => {
                format!(
                    "its ends undecided at the cap: {}",
                    may_hide(&self.ratio.expect("checked"), self.commits > 0)
                )
            }
            (true, _) if self.commits == 0 => {
                "adjacent commits whose ends differ: a change point not yet confirmed".into()
            }
            (true, Some(s)) => format!("its ends differ, about {:.0}% of the change", s * 100.0),
            (true, None) => "its ends differ".into(),
            (false, _) => "not checked".into(),
        };
        format!(
            "{}..{} ({} commit(s) between; {what})",
            &self.from[..10.min(self.from.len())],
            &self.to[..10.min(self.to.len())],
            self.commits
        )
    }
}

fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

fn nan_pair_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<(f64, f64), D::Error> {
    let (a, b) = <(Option<f64>, Option<f64>)>::deserialize(d)?;
    Ok((a.unwrap_or(f64::NAN), b.unwrap_or(f64::NAN)))
}

impl StepJson {
    /// A decided step of the search, `s.commit` indexing `commits` (the range, oldest first);
    /// `threads` the thread counts its series stand for.
    pub fn new(s: &Step, commits: &[CommitInfo], threads: &[usize]) -> StepJson {
        StepJson {
            per_threads: s
                .series
                .iter()
                .zip(threads)
                .map(|(p, t)| ThreadPoint {
                    threads: *t,
                    mean_us: p.mean,
                    ci95_us: p.ci95,
                })
                .collect(),
            info: (&commits[s.commit]).into(),
            index: s.commit,
            n: s.n,
            mean_us: s.mean,
            ci95_us: s.ci95,
            verdict: verdict_word(&s.verdict),
            kind: Some(StepKind::of(&s.verdict)),
            skipped_because: match &s.verdict {
                StepVerdict::Skipped(r) => Some(r.clone()),
                _ => None,
            },
            position: s.position,
        }
    }
}

/// What the search made of a tested commit, without its reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    Old,
    New,
    Between,
    Ambiguous,
    Skipped,
}

impl StepKind {
    pub fn of(v: &StepVerdict) -> StepKind {
        match v {
            StepVerdict::Old => StepKind::Old,
            StepVerdict::New => StepKind::New,
            StepVerdict::Between => StepKind::Between,
            StepVerdict::Ambiguous => StepKind::Ambiguous,
            StepVerdict::Skipped(_) => StepKind::Skipped,
        }
    }
}

impl StepJson {
    /// How the profile draws this commit (its colour is its level's): tested, or skipped, by
    /// its typed kind, or for results written before it was recorded, by the first word of its
    /// verdict text.
    pub fn point_kind(&self) -> PointKind {
        let kind = self.kind.unwrap_or_else(|| {
            match self.verdict.split([' ', ':']).next().unwrap_or("") {
                "old" => StepKind::Old,
                "new" => StepKind::New,
                "between" => StepKind::Between,
                "skipped" => StepKind::Skipped,
                _ => StepKind::Ambiguous,
            }
        });
        match kind {
            StepKind::Skipped => PointKind::Skipped,
            _ => PointKind::Tested,
        }
    }
}

pub fn change_point_json(
    cp: &ChangePoint,
    commits: &[CommitInfo],
    threads: &[usize],
) -> ChangePointJson {
    let c = &commits[cp.first_new];
    let p = &commits[cp.last_old];
    ChangePointJson {
        per_threads: cp
            .series
            .iter()
            .zip(threads)
            .map(|(c, t)| ThreadEffect::new(*t, c))
            .collect(),
        parent: p.id.clone(),
        range: cp.first_new > cp.last_old + 1,
        skipped: cp
            .skipped_between
            .iter()
            .map(|i| commits[*i].id.clone())
            .collect(),
        info: c.into(),
        ratio: cp.comparison.ratio.ratio,
        ratio_ci: (cp.comparison.ratio.lo, cp.comparison.ratio.hi),
        p_welch: cp.comparison.p_welch,
        p_mwu: cp.comparison.p_mwu,
        parent_mean_us: cp.comparison.a.mean,
        culprit_mean_us: cp.comparison.b.mean,
        partial: cp.partial,
        uncertain: cp.uncertain,
        confirmed: cp.confirmed,
        unresolved: cp.unresolved,
        identical_binaries: cp.identical_binaries,
        share: cp.share,
        comparison: cp.comparison,
        located: cp.located,
    }
}

/// "significant, size uncertain against 3.0%": how a significant change's interval sits
/// against the smallest effect worth reporting (empty when it is at least that large).
fn size_note(c: &Comparison, min_effect: f64) -> String {
    match c.size {
        Size::AtLeast => String::new(),
        Size::Below => format!(
            "  (significant, but smaller than the {:.1}% minimum effect)",
            min_effect * 100.0
        ),
        Size::Uncertain => format!(
            "  (significant; whether it reaches {:.1}% is uncertain at this sample size)",
            min_effect * 100.0
        ),
    }
}

/// "slower" / "faster": the direction of one change point.
fn change_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Slower => "slower",
        Verdict::Faster => "faster",
        Verdict::Same => "same",
        Verdict::Undecided => "undecided",
    }
}

mod answer;
mod live;
mod markdown;
mod page;
mod profile;
mod saved;
mod text;

use answer::answer;
pub use live::{
    auto_locate_line, confirmed_line, forecast_line, located_line, step_line, verdict_word,
    ForecastEvent, AUTO_NOTE,
};
pub(crate) use page::truncate;
pub use saved::{RunState, SavedBisect};
use text::*;

impl BisectReport {
    /// The figures behind the text answer, for `-v`: the ends, the search, each change point's
    /// comparison, what was left, the costs and the error control.
    pub fn details_text(&self, links: &Links) -> String {
        details_text(self, links)
    }
}
