//! The result of `bisect`: the ends, every tested commit, the change points
//! (culprits) with their own comparison, and how to reproduce it. Written
//! by `bisect`, kept in the cache and read back by `log`.

use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

use super::export::{formats, Export, Links, Markdown, Text};
use super::html::{self, esc, HtmlSections, Section};
use super::plot::{self, Mark, PointKind, Profile, ProfilePoint};
use crate::analysis::bisect::{ChangePoint, LeftBecause, Step, StepVerdict, Unexplored};
use crate::analysis::locate::SearchedBy;
use crate::analysis::resolution::{Forecast, Resolution};
use crate::analysis::series;
use crate::analysis::stats::{Comparison, RatioCi, Size, Verdict};
use crate::build::repo::CommitInfo;
use crate::measure::engine::BuildUse;
use crate::measure::exec::Placement;
use crate::measure::metric::Metric;
use crate::report::{may_hide, pairs_note, resolution_sentence, us};
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
    /// The primary thread count (the only one, or the first listed).
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
    /// Significance tests the search and the confirmations ran, and the family-wise error bound
    /// they achieved (Bonferroni: the sum of their levels).
    #[serde(default)]
    pub tests: usize,
    #[serde(default)]
    pub family_alpha: f64,
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
    /// ([`crate::analysis::locate::unexplained_time`]), after any search in time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unexplained: Option<RatioCi>,
    /// The time moved beyond the change points the counts located, so the stretches between
    /// them were searched in time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_search: Option<TimeSearchJson>,
}

/// The search in time of the stretches between the change points the counts located.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TimeSearchJson {
    /// What the time moved beyond those change points, before the stretches were searched.
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
        format!(
            "; the time moved {} beyond the change points the counts located (memory, caches or contention leave the instructions alone), so the {n} stretch{} between them {} searched in time: {} change point(s) found there{still}",
            self.moved.pct(),
            if n == 1 { "" } else { "es" },
            if n == 1 { "was" } else { "were" },
            self.found,
        )
    }
}

impl BisectReport {
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
fn located_note(c: &ChangePointJson, by: &str) -> Option<String> {
    let l = c.located.as_ref()?;
    Some(format!("located by {by}: {}", l.ratio.pct()))
}

impl BisectReport {
    /// [`located_note`] with this report's locating metric.
    fn culprit_located(&self, c: &ChangePointJson) -> Option<String> {
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
    /// `budget`, `max_changes`, `min_share` or `undecided`.
    pub because: LeftBecause,
    /// With `undecided`: the ends' ratio (new/old) and its interval at the sample cap.
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

    fn text(&self) -> String {
        let what = match (self.differs, self.share) {
            _ if self.ratio.is_some() => {
                format!(
                    "its ends differ by {}",
                    may_hide(&self.ratio.expect("checked"))
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

/// A bisect as kept in the cache (`bisects/ID.json`) and listed by `log`.
#[derive(Serialize, Deserialize)]
pub struct SavedBisect {
    pub id: String,
    pub state: RunState,
    pub command: String,
    pub updated: u64,
    #[serde(default)]
    pub result: Option<BisectReport>,
}

/// Where a bisect recorded in the cache stands (`perfbisect log`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
    /// How the profile draws this commit: by its typed kind, or for results written before
    /// it was recorded, by the first word of its verdict text.
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
            StepKind::Old => PointKind::Old,
            StepKind::New => PointKind::New,
            StepKind::Between => PointKind::Between,
            StepKind::Ambiguous => PointKind::Ambiguous,
            StepKind::Skipped => PointKind::Skipped,
        }
    }
}

pub fn verdict_word(v: &StepVerdict) -> String {
    match v {
        StepVerdict::Old => "old".into(),
        StepVerdict::New => "new".into(),
        StepVerdict::Between => "between (part of the change)".into(),
        StepVerdict::Ambiguous => "ambiguous".into(),
        StepVerdict::Skipped(r) => format!("skipped: {r}"),
    }
}

/// One decided commit as a line; with several thread counts (`threads`), each one's mean.
pub fn step_line(s: &Step, c: &CommitInfo, metric: Metric, threads: &[usize]) -> String {
    let unit = metric.unit_short();
    let mean = if !s.series.is_empty() && s.mean.is_finite() {
        let each: Vec<String> = s
            .series
            .iter()
            .zip(threads)
            .map(|(p, t)| format!("t={t} {} {unit}", us(p.mean)))
            .collect();
        format!("n={:<3} {}", s.n, each.join(", "))
    } else if s.mean.is_finite() {
        format!(
            "n={:<3} {:>10} {unit} [{}, {}]",
            s.n,
            us(s.mean),
            us(s.ci95.0),
            us(s.ci95.1)
        )
    } else {
        format!("n={:<3} {:>10}", s.n, "-")
    };
    format!(
        "  {} {}  {}  {:<8} {}",
        c.short,
        c.dates(),
        mean,
        verdict_word(&s.verdict),
        c.summary
    )
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

/// What the search left and how to go on: empty when it searched everything.
fn unexplored_text(j: &BisectReport) -> String {
    if j.unexplored.is_empty() {
        return String::new();
    }
    let mut s = String::new();
    if let Some(e) = j.explained {
        let n = j.changes.iter().filter(|c| c.confirmed).count();
        s.push_str(&format!(
            "\nexplained: {:.0}% of the range's change by {n} confirmed change point(s)\n",
            e * 100.0
        ));
    }
    for (because, why) in [
        (LeftBecause::Budget, "the time budget was spent"),
        (LeftBecause::MaxChanges, "--max-changes was reached"),
        (LeftBecause::MinShare, "below --min-share"),
        (
            LeftBecause::Undecided,
            "its ends were undecided at --max-samples",
        ),
    ] {
        let left: Vec<String> = j
            .unexplored
            .iter()
            .filter(|u| u.because == because)
            .map(UnexploredJson::text)
            .collect();
        if !left.is_empty() {
            s.push_str(&format!("left unexplored ({why}):\n"));
            for l in left {
                s.push_str(&format!("  {l}\n"));
            }
        }
    }
    if let Some(c) = &j.continue_with {
        s.push_str(&format!(
            "continue (builds and samples come from the cache): {c}\n"
        ));
    }
    s
}

/// The forecast as a jsonl event.
#[derive(Serialize)]
pub struct ForecastEvent<'a> {
    #[serde(flatten)]
    pub forecast: &'a Forecast,
    pub seconds_per_sample: Option<f64>,
    pub better: &'a [String],
}

/// The forecast line printed before a search: the ends' noise, what a decision at
/// `--min-effect` needs, what the search may cost in sampling time, and what would do better.
pub fn forecast_line(f: &Forecast, per_sample_s: Option<f64>, better: &[String]) -> String {
    let r = &f.resolution;
    let needed = if r.needed == usize::MAX {
        "more samples than any run takes".to_string()
    } else {
        format!("about {} samples per side", r.needed)
    };
    let mut s = format!(
        "forecast: noise {:.1}% per sample (the ends); a decision at --min-effect {:.1}% needs {needed} (cap {}); about {} decisions, up to {} samples",
        r.noise * 100.0,
        r.min_effect * 100.0,
        r.cap,
        f.decisions,
        f.samples()
    );
    if let Some(t) = per_sample_s {
        s.push_str(&format!(
            ", {} of sampling at {t:.1} s per sample, builds aside",
            super::plan::duration(f.samples() as f64 * t)
        ));
    }
    if r.short() {
        s.push_str(&format!(
            "; at the cap it resolves {:.1}% or more",
            r.smallest * 100.0
        ));
    }
    if !better.is_empty() {
        s.push_str(&format!("; better here: {}", better.join(", or ")));
    }
    s
}

/// One line for a change point as soon as its confirmation block has decided (streamed output).
pub fn confirmed_line(c: &ChangePointJson, spent: &str) -> String {
    let what = if c.range {
        format!(
            "the change is in {}..{}",
            &c.parent[..10.min(c.parent.len())],
            c.info.short
        )
    } else {
        format!("{} {}", c.info.short, c.info.subject)
    };
    let share = if c.share < 0.0 {
        format!(
            "{}, against the range's direction ({:.0}% of its change)",
            change_word(c.comparison.verdict),
            c.share * 100.0
        )
    } else {
        format!("{:.0}% of the range's change", c.share * 100.0)
    };
    let head = if c.identical_binaries {
        "not a culprit (byte-identical libraries)"
    } else if c.confirmed {
        "change point confirmed"
    } else if c.unresolved {
        "change point located, size unresolved"
    } else {
        "NOT CONFIRMED on a fresh block"
    };
    let located = located_note(c, "count")
        .map(|l| format!(" ({l})"))
        .unwrap_or_default();
    format!(
        "{head}: {what} ({}): {}{located}, {share}; {spent}",
        c.info.dates(),
        c.comparison.ratio.pct()
    )
}

/// One line for a change point the counts located (`--locate`), before the clock confirms it.
pub fn located_line(c: &ChangePointJson, metric: Metric) -> String {
    let what = if c.range {
        format!("{}..{}", &c.parent[..10.min(c.parent.len())], c.info.short)
    } else {
        format!("{} {}", c.info.short, c.info.subject)
    };
    let standing = if c.confirmed || c.unresolved {
        "confirming in time"
    } else {
        "not confirmed on its counts: not sent to the clock"
    };
    format!(
        "located by {}: {what}: {}; {standing}",
        metric.name(),
        c.comparison.ratio.pct()
    )
}

fn direction_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Slower => "slowdown (regression)",
        Verdict::Faster => "speed-up (fix)",
        Verdict::Same => "no change",
        Verdict::Undecided => "undecided",
    }
}

fn text_result(j: &BisectReport, links: &Links) -> String {
    let mut s = text_ends(j);
    for (i, c) in j.ranked().into_iter().enumerate() {
        s.push_str(&culprit_text(i + 1, c, j, links));
    }
    s.push_str(&unexplored_text(j));
    s.push_str(&costs_text(j));
    s.push_str(&error_control_text(j));
    s.push_str(&format!("reproduce: {}\n", j.reproduce));
    s
}

/// The ends' comparison, and why there is nothing to bisect when they do not differ.
fn text_ends(j: &BisectReport) -> String {
    let u = j.metric.unit_ascii();
    let mut s = format!(
        "\nends: {} {} {u} (n={}) -> {} {} {u} (n={}): {} {}, p(Yuen)={:.2e}\n",
        j.good.short,
        us(j.ends.a.mean),
        j.ends.a.n,
        j.bad.short,
        us(j.ends.b.mean),
        j.ends.b.n,
        direction_word(j.direction),
        j.ends.ratio.pct(),
        j.ends.p_yuen
    );
    if !j.ends_per_threads.is_empty() {
        s.push_str(&format!(
            "ends per thread count (figures above: {} thread(s), whose ends moved most):\n",
            j.threads
        ));
        for e in &j.ends_per_threads {
            s.push_str(&format!("  {}\n", e.text().replace("affected", "changed")));
        }
    }
    if let Some(l) = j.located_sentence() {
        s.push_str(&format!("search: {l}\n"));
    }
    if let Some(r) = &j.resolution {
        s.push_str(&format!("resolution: {}\n", resolution_sentence(r)));
    }
    if j.changes.is_empty() {
        s.push_str(&format!(
            "result: the ends do not differ by at least {:.1}% with significance ({}); nothing to bisect\n",
            j.min_effect * 100.0,
            match j.direction {
                Verdict::Same => "they are the same within that margin",
                _ => "undecided at the sample cap: more samples or a larger --min-effect may decide",
            }
        ));
    }
    s
}

/// One change point as the text report's numbered result: what it is, how far to trust it,
/// the commit, and the figures behind it.
fn culprit_text(number: usize, c: &ChangePointJson, j: &BisectReport, links: &Links) -> String {
    let u = j.metric.unit_ascii();
    let head = if c.range {
        format!(
            "the change is in one of {}..{} ({} skipped commit(s) between)",
            &c.parent[..10],
            &c.info.commit[..10],
            c.skipped.len()
        )
    } else {
        format!(
            "culprit {}{}",
            c.info.commit,
            links.text_suffix(&c.info.commit)
        )
    };
    let mut s = format!(
        "\nresult {number}: {head}{}{}\n",
        share_text(c),
        if c.uncertain { " [uncertain]" } else { "" }
    );
    s.push_str(&standing_text(c));
    s.push_str(&format!(
        "  author:  {}\n  date:    {}\n  subject: {}\n",
        c.info.author,
        c.info.dates(),
        c.info.subject
    ));
    s.push_str(&format!(
        "  parent {} {} {u} (n={}) -> {} {} {u} (n={})\n",
        &c.parent[..10],
        us(c.parent_mean_us),
        c.comparison.a.n,
        &c.info.commit[..10],
        us(c.culprit_mean_us),
        c.comparison.b.n
    ));
    s.push_str(&format!(
        "  change:  {}  p(Yuen)={:.2e}  p(Welch)={:.2e}  p(Mann-Whitney)={:.2e}{}{}{}\n",
        c.comparison.ratio.pct(),
        c.comparison.p_yuen,
        c.p_welch,
        c.p_mwu,
        pairs_note(&c.comparison),
        if c.comparison.tests_disagree {
            "  (the rank test disagrees: check for outliers)"
        } else {
            ""
        },
        if c.confirmed {
            size_note(&c.comparison, j.min_effect)
        } else {
            String::new()
        }
    ));
    if let (Some(l), Some(note)) = (&c.located, j.culprit_located(c)) {
        s.push_str(&format!(
            "  {note}  (parent n={}, culprit n={})\n",
            l.a.n, l.b.n
        ));
    }
    if !c.per_threads.is_empty() {
        s.push_str("  per thread count:\n");
        for e in &c.per_threads {
            s.push_str(&format!("    {}\n", e.text()));
        }
    }
    s
}

/// How much of the range's change a change point carries, when it is not simply all of it.
fn share_text(c: &ChangePointJson) -> String {
    if c.share.is_finite() && c.share < 0.0 {
        format!(
            " [{}, against the range's direction: {:.0}% of its change]",
            change_word(c.comparison.verdict),
            c.share * 100.0
        )
    } else if c.partial && c.share.is_finite() {
        format!(" [part of the range's change: {:.0}%]", c.share * 100.0)
    } else if c.partial {
        " [part of the range's change]".to_string()
    } else {
        String::new()
    }
}

/// The warning line for a change point the confirmation did not uphold; empty for one it did.
fn standing_text(c: &ChangePointJson) -> String {
    if c.identical_binaries {
        "  NOT A CULPRIT: it loads byte-identical libraries and modules to its parent's\n"
            .to_string()
    } else if c.unresolved {
        format!(
            "  LOCATED, SIZE UNRESOLVED: the search's tests put the change here, but a fresh block of {} samples each could neither confirm nor refute it: {}\n",
            c.comparison.a.n,
            c.comparison.ratio.pct()
        )
    } else if !c.confirmed {
        "  NOT CONFIRMED: a fresh block of samples did not show this change; a candidate, not a culprit\n"
            .to_string()
    } else {
        String::new()
    }
}

/// What the search spent: builds, samples, time, where it ran, the probes it saved, its notes.
fn costs_text(j: &BisectReport) -> String {
    let (fresh, failed) = j.build_counts();
    let mut s = format!(
        "\nbuilds used: {} ({} built now, {} failed)  samples: {} ({} taken now)  wall time: {:.0} s\n",
        j.builds.len(),
        fresh,
        failed,
        j.samples,
        j.samples_taken_now,
        j.wall_s
    );
    if let Some(line) = j.placement.line() {
        s.push_str(&format!("{line}\n"));
    }
    if j.shared_probes > 0 {
        s.push_str(&format!(
            "probes saved: {} tested commit(s) load byte-identical binaries to another tested commit and shared its samples\n",
            j.shared_probes
        ));
    }
    for n in &j.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}

/// The family-wise error bound the search's tests achieved, against the budget it was given.
fn error_control_text(j: &BisectReport) -> String {
    if j.tests == 0 {
        return String::new();
    }
    let mut s = format!(
        "error control: {} tests, family-wise false-alarm bound {:.2e} (budget {}){}\n",
        j.tests,
        j.family_alpha,
        j.alpha,
        if j.family_alpha > j.alpha {
            ": the range's several changes took more decisions than budgeted"
        } else {
            ""
        }
    );
    if j.thread_counts.len() > 1 {
        s.push_str(&format!(
            "  every decision tests each of the {} thread counts at 1/{} of its level (Bonferroni): a change at any of them is found with the error bound above\n",
            j.thread_counts.len(),
            j.thread_counts.len()
        ));
    }
    s
}

fn markdown(j: &BisectReport, links: &Links) -> String {
    let u = j.metric.unit();
    let mut s = format!(
        "### perfbisect: `{}` at {} thread(s), `{}`\n\n",
        j.tool,
        j.threads_label(),
        j.range
    );
    s.push_str(&format!(
        "Ends: `{}` {} {u} → `{}` {} {u}: **{}** {} (p={:.2e})\n\n",
        j.good.short,
        us(j.ends.a.mean),
        j.bad.short,
        us(j.ends.b.mean),
        direction_word(j.direction),
        j.ends.ratio.pct(),
        j.ends.p_welch
    ));
    if let Some(l) = j.located_sentence() {
        s.push_str(&format!("Search: {l}\n\n"));
    }
    if let Some(r) = &j.resolution {
        s.push_str(&format!("Resolution: {}\n\n", resolution_sentence(r)));
    }
    if !j.changes.is_empty() {
        s.push_str(&culprits_markdown(j, links));
        if j.changes.iter().any(|c| !c.per_threads.is_empty()) {
            s.push_str(&per_threads_markdown(j, links));
        }
    }
    let left = unexplored_text(j);
    if !left.is_empty() {
        s.push_str(&format!("```\n{}```\n\n", left.trim_start()));
    }
    s.push_str(&steps_markdown(j, links));
    s.push_str(&format!("\n</details>\n\nReproduce: `{}`\n", j.reproduce));
    s
}

fn culprits_markdown(j: &BisectReport, links: &Links) -> String {
    let u = j.metric.unit();
    let mut s =
        format!("| commit | date | subject | parent {u} | commit {u} | change | p (Welch) |\n");
    s.push_str("| --- | --- | --- | ---: | ---: | --- | ---: |\n");
    for c in &j.changes {
        s.push_str(&format!(
            "| {}{}{} | {} | {} | {} | {} | {} | {:.2e} |\n",
            links.markdown(&c.info.commit, &c.info.commit[..10]),
            if c.range { " (range)" } else { "" },
            if c.share < 0.0 {
                format!(
                    " ({}, against the range's direction)",
                    change_word(c.comparison.verdict)
                )
            } else {
                String::new()
            },
            c.info.dates(),
            c.info.subject.replace('|', "\\|"),
            us(c.parent_mean_us),
            us(c.culprit_mean_us),
            match j.culprit_located(c) {
                Some(l) => format!("{} ({l})", c.comparison.ratio.pct()),
                None => c.comparison.ratio.pct(),
            },
            c.p_welch
        ));
    }
    s.push('\n');
    s
}

fn per_threads_markdown(j: &BisectReport, links: &Links) -> String {
    let mut s =
        String::from("| commit | threads | parent µs/op | commit µs/op | change | affected |\n");
    s.push_str("| --- | ---: | ---: | ---: | --- | --- |\n");
    for c in &j.changes {
        for e in &c.per_threads {
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                links.markdown(&c.info.commit, &c.info.commit[..10]),
                e.threads,
                us(e.a_mean_us),
                us(e.b_mean_us),
                e.comparison.ratio.pct(),
                if e.affected { "**yes**" } else { "no" }
            ));
        }
    }
    s.push('\n');
    s
}

/// The tested commits, folded away under a `<details>` the caller closes.
fn steps_markdown(j: &BisectReport, links: &Links) -> String {
    let u = j.steps_metric().unit();
    let mut s = format!("<details><summary>steps</summary>\n\n| commit | n | mean {u} | verdict |\n| --- | ---: | ---: | --- |\n");
    for st in &j.steps {
        s.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            links.markdown(&st.info.commit, &st.info.short),
            st.n,
            us(st.mean_us),
            st.verdict
        ));
    }
    s
}

impl Export<BisectReport> for Text {
    fn export(&self, r: &BisectReport) -> Result<String> {
        Ok(text_result(r, &Links::default()))
    }

    fn export_linked(&self, r: &BisectReport, links: &Links) -> Result<String> {
        Ok(text_result(r, links))
    }
}

impl Export<BisectReport> for Markdown {
    fn export(&self, r: &BisectReport) -> Result<String> {
        Ok(markdown(r, &Links::default()))
    }

    fn export_linked(&self, r: &BisectReport, links: &Links) -> Result<String> {
        Ok(markdown(r, links))
    }
}

fn direction_badge(v: Verdict) -> String {
    html::badge(match v {
        Verdict::Slower => "slowdown",
        Verdict::Faster => "speed-up",
        Verdict::Same => "no change",
        Verdict::Undecided => "undecided",
    })
}

impl HtmlSections for BisectReport {
    fn section(&self, links: &Links) -> Result<Section> {
        let j = self;
        let heading = format!(
            "bisect: <code>{}</code> at {} thread(s), <code>{}</code>",
            esc(&j.tool),
            j.threads_label(),
            esc(&j.range)
        );
        let mut tables = String::new();
        if !j.changes.is_empty() {
            tables.push_str(&culprits_table_html(j, links));
        }
        if j.changes.iter().any(|c| !c.per_threads.is_empty()) {
            tables.push_str(&per_threads_table_html(j, links));
        }
        tables.push_str(&steps_table_html(j, links));
        tables.push_str(&costs_html(j));
        let plots = html::figure(
            &j.profile_svg()?,
            &format!(
                "{} at {} thread(s): {u} (95% interval) of every tested commit along {}; dashed red lines are change points, shaded stretches were not tested.",
                j.tool, j.threads, j.range, u = j.metric.unit()
            ),
        );
        Ok(Section {
            heading,
            summary: summary_html(j, links),
            tables,
            plots,
            reproduce: html::command(&j.reproduce),
        })
    }
}

/// The section's opening prose: the ends, the resolution, and the change points as a list.
fn summary_html(j: &BisectReport, links: &Links) -> String {
    let u = j.metric.unit();
    let mut summary = format!(
        "<p>Ends: {} {} {u} → {} {} {u}: {} {} (p = {:.2e}).</p>\n",
        links.html(&j.good.commit, &j.good.short),
        us(j.ends.a.mean),
        links.html(&j.bad.commit, &j.bad.short),
        us(j.ends.b.mean),
        direction_badge(j.direction),
        esc(&j.ends.ratio.pct()),
        j.ends.p_welch
    );
    if let Some(l) = j.located_sentence() {
        summary.push_str(&format!("<p>Search: {}</p>\n", esc(&l)));
    }
    if let Some(r) = &j.resolution {
        summary.push_str(&format!(
            "<p>Resolution: {}</p>\n",
            esc(&resolution_sentence(r))
        ));
    }
    if j.changes.is_empty() {
        summary.push_str(&format!(
            "<p>No change point: the ends do not differ by at least {:.1}% with significance.</p>\n",
            j.min_effect * 100.0
        ));
    } else {
        summary.push_str("<ol>\n");
        for c in &j.changes {
            summary.push_str(&culprit_item_html(c, u, j.culprit_located(c), links));
        }
        summary.push_str("</ol>\n");
    }
    let left = unexplored_text(j);
    if !left.is_empty() {
        summary.push_str(&format!("<pre>{}</pre>\n", esc(left.trim_start())));
    }
    summary
}

fn culprit_item_html(
    c: &ChangePointJson,
    u: &str,
    located: Option<String>,
    links: &Links,
) -> String {
    let what = if c.range {
        format!(
            "the change is in {}..{} ({} skipped commit(s) between)",
            links.html(&c.parent, &c.parent[..10.min(c.parent.len())]),
            links.html(&c.info.commit, &c.info.short),
            c.skipped.len()
        )
    } else {
        format!("culprit {}", links.html(&c.info.commit, &c.info.short))
    };
    let located = located
        .map(|l| format!(" ({})", esc(&l)))
        .unwrap_or_default();
    format!(
        "<li>{what}: <b>{}</b> ({}, {}): {} → {} {u}, <b>{}</b>{located}, p = {:.2e}{}</li>\n",
        esc(&c.info.subject),
        esc(&c.info.dates()),
        esc(&c.info.author),
        us(c.parent_mean_us),
        us(c.culprit_mean_us),
        esc(&c.comparison.ratio.pct()),
        c.p_welch,
        culprit_badges_html(c)
    )
}

/// The badges after a change point: against the range, part of it, uncertain, and at which
/// thread counts it shows.
fn culprit_badges_html(c: &ChangePointJson) -> String {
    let mut notes = String::new();
    if c.share < 0.0 {
        notes.push_str(&format!(
            " <span class=\"badge neutral\">{}</span>",
            esc(&format!(
                "{}, against the range's direction",
                change_word(c.comparison.verdict)
            ))
        ));
    } else if c.partial {
        notes.push_str(" <span class=\"badge neutral\">part of the range's change</span>");
    }
    if c.uncertain {
        notes.push_str(&format!(" {}", html::badge("uncertain")));
    }
    if !c.per_threads.is_empty() {
        let at = |affected: bool| {
            c.per_threads
                .iter()
                .filter(|e| e.affected == affected)
                .map(|e| e.threads.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        notes.push_str(&format!(
            " (threads affected: {}; not affected: {})",
            esc(&at(true)),
            esc(&at(false))
        ));
    }
    notes
}

fn culprits_table_html(j: &BisectReport, links: &Links) -> String {
    let u = j.metric.unit();
    let rows: Vec<Vec<String>> = j
        .changes
        .iter()
        .map(|c| {
            vec![
                links.html(&c.info.commit, &c.info.short),
                esc(&c.info.dates()),
                esc(&c.info.subject),
                us(c.parent_mean_us),
                us(c.culprit_mean_us),
                esc(&c.comparison.ratio.pct()),
                format!("{:.2e}", c.p_welch),
                format!("{:.2e}", c.p_mwu),
            ]
        })
        .collect();
    let mut s =
        String::from("<p>Change points (parent against culprit, on all their samples):</p>\n");
    s.push_str(&html::table(
        &[
            "commit",
            "date",
            "subject",
            &format!("parent {u}"),
            &format!("commit {u}"),
            "change [95% CI]",
            "p (Welch)",
            "p (Mann-Whitney)",
        ],
        3,
        &rows,
    ));
    s
}

fn per_threads_table_html(j: &BisectReport, links: &Links) -> String {
    let rows: Vec<Vec<String>> = j
        .changes
        .iter()
        .flat_map(|c| {
            c.per_threads.iter().map(move |e| {
                vec![
                    links.html(&c.info.commit, &c.info.short),
                    e.threads.to_string(),
                    us(e.a_mean_us),
                    us(e.b_mean_us),
                    esc(&e.comparison.ratio.pct()),
                    if e.affected {
                        "affected"
                    } else {
                        "not affected"
                    }
                    .to_string(),
                ]
            })
        })
        .collect();
    let mut s = String::from("<p>Change points per thread count:</p>\n");
    s.push_str(&html::table(
        &[
            "commit",
            "threads",
            "parent µs/op",
            "commit µs/op",
            "change [95% CI]",
            "",
        ],
        2,
        &rows,
    ));
    s
}

/// Every tested commit in range order, with the order the search tested it in.
fn steps_table_html(j: &BisectReport, links: &Links) -> String {
    let u = j.steps_metric().unit();
    let (tested, commits) = j.tested();
    let order = |id: &str| {
        j.steps
            .iter()
            .position(|s| s.info.commit == id)
            .map(|i| (i + 1).to_string())
            .unwrap_or_default()
    };
    let rows: Vec<Vec<String>> = tested
        .iter()
        .map(|(x, s)| {
            vec![
                links.html(&s.info.commit, &s.info.short),
                esc(&s.info.dates()),
                esc(&s.info.subject),
                esc(&s.verdict),
                x.to_string(),
                order(&s.info.commit),
                s.n.to_string(),
                us(s.mean_us),
                format!("{} – {}", us(s.ci95_us.0), us(s.ci95_us.1)),
            ]
        })
        .collect();
    let mut s = format!(
        "<p>Tested commits in range order ({} of {commits}):</p>\n",
        tested.len()
    );
    s.push_str(&html::table(
        &[
            "commit",
            "date",
            "subject",
            "verdict",
            "position",
            "tested as",
            "n",
            &format!("mean {u}"),
            "95% CI",
        ],
        4,
        &rows,
    ));
    s
}

fn costs_html(j: &BisectReport) -> String {
    let (fresh, failed) = j.build_counts();
    format!(
        "<p>Builds used: {} ({fresh} built now, {failed} failed); samples: {} ({} taken now); wall time {:.0} s; recipe <code>{}</code>; alpha per test {:.2e}.</p>\n",
        j.builds.len(),
        j.samples,
        j.samples_taken_now,
        j.wall_s,
        esc(&j.recipe),
        j.alpha_per_test
    )
}

pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        s.chars().take(max - 1).collect::<String>() + "…"
    }
}

impl BisectReport {
    /// "1" or "1,8,32".
    pub fn threads_label(&self) -> String {
        if self.thread_counts.len() > 1 {
            let v: Vec<String> = self.thread_counts.iter().map(|t| t.to_string()).collect();
            v.join(",")
        } else {
            self.threads.to_string()
        }
    }

    /// Builds made by this run, and builds that failed.
    fn build_counts(&self) -> (usize, usize) {
        let fresh = self.builds.iter().filter(|b| b.fresh).count();
        let failed = self.builds.iter().filter(|b| !b.ok).count();
        (fresh, failed)
    }

    /// Each tested commit once (its last verdict), with its position in the
    /// range and the range's length. Results written before positions were
    /// recorded are laid out by date, one tested commit per position.
    pub fn tested(&self) -> (Vec<(usize, &StepJson)>, usize) {
        let mut last: Vec<&StepJson> = Vec::new();
        for s in &self.steps {
            last.retain(|p| p.info.commit != s.info.commit);
            last.push(s);
        }
        if self.commits > 0 {
            let mut v: Vec<(usize, &StepJson)> = last.into_iter().map(|s| (s.index, s)).collect();
            v.sort_by_key(|(i, _)| *i);
            (v, self.commits)
        } else {
            last.sort_by(|a, b| a.info.date.cmp(&b.info.date));
            let n = last.len();
            (last.into_iter().enumerate().collect(), n)
        }
    }

    pub fn profile(&self) -> Profile {
        let (tested, commits) = self.tested();
        let at = |id: &str| {
            tested
                .iter()
                .find(|(_, s)| s.info.commit == id)
                .map(|t| t.0)
        };
        let changes = self
            .changes
            .iter()
            .filter_map(|c| {
                Some(Mark {
                    parent: at(&c.parent)?,
                    culprit: at(&c.info.commit)?,
                    label: format!(
                        "{} {} {:+.1}%{}",
                        c.info.short,
                        truncate(&c.info.subject, 40),
                        (c.ratio - 1.0) * 100.0,
                        if c.range { " (range)" } else { "" }
                    ),
                })
            })
            .collect();
        let end = |which: &str, c: &CommitJson| {
            format!("{which} end {} ({})", c.short, truncate(&c.subject, 30))
        };
        Profile {
            axis: self.steps_metric().axis(),
            title: format!(
                "{} at {} thread(s): {}",
                self.tool, self.threads, self.range
            ),
            commits,
            points: tested
                .iter()
                .map(|(x, s)| ProfilePoint {
                    x: *x,
                    mean: s.mean_us,
                    ci: s.ci95_us,
                    kind: s.point_kind(),
                    date: s.info.date.clone(),
                })
                .collect(),
            ends: (
                end("old", self.merge_base.as_ref().unwrap_or(&self.good)),
                end("new", &self.bad),
            ),
            changes,
            levels: Vec::new(),
        }
    }

    pub fn profile_svg(&self) -> Result<String> {
        plot::profile_svg(&self.profile())
    }

    /// `bisect --plot DIR`: DIR/profile-TOOL-tN.svg.
    pub fn write_plot(&self, dir: &Path) -> Result<PathBuf> {
        plot::write_svg(
            dir,
            "profile",
            &self.tool,
            self.threads,
            &self.profile_svg()?,
        )
    }
}
