//! The result of `scan`: the whole profile of a range — every grid point, the fitted levels,
//! which grid intervals were searched, every change point found (by position and by share of
//! the range's total movement) and which change undoes which.

use crate::analysis::alpha::{false_culprit_bound, RoutingLevel};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

use super::answer::{bound_clause, may_hide_sentence};
use super::bisect::located_note;
use super::bisect::{
    change_point_json, truncate, ChangePointJson, CommitJson, LocatedJson, StepJson, UnexploredJson,
};
use super::change_points;
use super::export::{formats, Export, Links, Markdown, Text};
use super::html::{self, esc, HtmlSections, Section};
use super::plot::{self, Level, Mark, PointKind, Profile, ProfilePoint};
use super::standing::{Aside, Standing};
use super::table::tail_note;
use crate::analysis::bisect::Outcome;
use crate::analysis::locate::SearchedBy;
use crate::analysis::resolution::Resolution;
use crate::analysis::scan::{Grid, Interval, ScanResult};
use crate::analysis::series::Cancel;
use crate::analysis::stats::{RatioCi, Verdict};
use crate::build::repo::CommitInfo;
use crate::measure::engine::BuildUse;
use crate::measure::exec::Placement;
use crate::measure::metric::Metric;
use crate::report::{may_hide, ratio_pct, resolution_sentence, us, List, Table};
use crate::unavailable::{typed_or_text, Unavailable};

formats!(ScanFormat for ScanReport { Text, Markdown, Json, Html });

pub const SCAN_KIND: &str = "perfbisect-scan";

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GridPointJson {
    #[serde(flatten)]
    pub info: CommitJson,
    /// Position in the range's first-parent list, 0 = the old end.
    pub index: usize,
    /// Commits this point was moved from its evenly spaced place, to a commit already built.
    pub moved_by: isize,
    pub n: usize,
    pub mean_us: Option<f64>,
    pub ci95_us: Option<(f64, f64)>,
    /// Its fitted segment (index into `segments`).
    pub segment: Option<usize>,
    /// Why the point has no number (typed as a bisect step's `skipped_because`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "typed_or_text"
    )]
    pub skipped: Option<Unavailable>,
}

impl GridPointJson {
    /// Why the point has no number, as text ("" when it has one).
    fn skipped_text(&self) -> String {
        self.skipped
            .as_ref()
            .map(Unavailable::to_string)
            .unwrap_or_default()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SegmentJson {
    /// Indices of the segment's first and last grid commit.
    pub first: usize,
    pub last: usize,
    pub first_short: String,
    pub last_short: String,
    pub points: usize,
    pub level_us: f64,
    pub ci95_us: (f64, f64),
}

/// The heading of what a located scan's searches in time left.
const LEFT_IN_TIME: &str =
    "left unexplored by the search in time between the located change points";

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IntervalJson {
    pub lo: usize,
    pub hi: usize,
    pub lo_short: String,
    pub hi_short: String,
    /// The fitted ratio of hi's level to lo's.
    pub fitted_ratio: f64,
    pub entered: bool,
    /// Entered only because a neighbouring interval, entered for a fitted step, was flat.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fallback: bool,
    /// "not entered (one fitted level)", "no change on fresh samples", "1 change point", ...,
    /// with the parts its search left, if any.
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepJson>,
    /// The parts of the interval its search left (undecided at the cap, or never checked), as
    /// a bisect lists them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<UnexploredJson>,
    /// Its grid points compared (hi/lo with the (1 − alpha) interval): the net change an
    /// interval not entered may hide; absent where a point was skipped, and in results written
    /// before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net: Option<RatioCi>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChangeJson {
    /// The change point as a bisect reports it (one type under `changes` in both results);
    /// its `share` is of its own interval's ends. The fields below say where the scan found it.
    #[serde(flatten)]
    pub point: ChangePointJson,
    /// The culprit's position in the range.
    pub index: usize,
    /// Signed share of the range's total movement (Σ |ln ratio| of the confirmed changes).
    pub share_of_movement: f64,
    /// The grid interval whose search found it (index into `intervals`).
    pub interval: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CancelJson {
    /// Indices into `changes`.
    pub change: usize,
    pub undone_by: usize,
    /// Fraction of `change` taken back (1 = all of it).
    pub fraction: f64,
    pub text: String,
}

/// Change points that undo each other, as one series with its net lasting effect.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SeriesJson {
    /// Indices into `changes`, oldest first.
    pub changes: Vec<usize>,
    /// The series' net ratio (product of its changes' ratios).
    pub net: f64,
    pub text: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScanReport {
    pub kind: String,
    pub tool: String,
    pub threads: usize,
    pub range: String,
    pub repo: String,
    pub recipe: String,
    pub good: CommitJson,
    pub bad: CommitJson,
    pub merge_base: Option<CommitJson>,
    pub commits: usize,
    pub grid_size: usize,
    /// How far a grid point was allowed to move to a built commit.
    pub max_move: usize,
    pub samples_per_grid_point: usize,
    pub grid: Vec<GridPointJson>,
    pub segments: Vec<SegmentJson>,
    pub intervals: Vec<IntervalJson>,
    /// Every change point of every search, oldest first.
    pub changes: Vec<ChangeJson>,
    /// Indices into `changes` of the confirmed ones, what lasts of them largest first (a
    /// transient that was undone comes last), then by share of the movement.
    pub by_share: Vec<usize>,
    pub cancels: Vec<CancelJson>,
    /// Changes linked by cancels, with their net lasting effect.
    #[serde(default)]
    pub series: Vec<SeriesJson>,
    /// Builds the grid needed and how many the cache had before the scan.
    pub grid_builds: usize,
    pub grid_builds_cached: usize,
    pub builds: Vec<BuildUse>,
    pub samples: usize,
    pub samples_taken_now: usize,
    /// Which executor took the samples, and on which hosts.
    #[serde(default)]
    pub placement: Placement,
    pub alpha: f64,
    /// Level per place of the step fit and its penalty; alpha of each interval search.
    pub fit_level: f64,
    pub penalty: f64,
    /// Intervals that may be searched (entered, and their neighbours as a fallback).
    pub searchable: usize,
    pub alpha_per_search: f64,
    pub tests: usize,
    pub family_alpha: f64,
    /// How the searches' routing decisions were tested (absent: inside the family alpha).
    #[serde(
        default = "crate::analysis::alpha::RoutingLevel::family",
        skip_serializing_if = "crate::analysis::alpha::RoutingLevel::in_family_ref"
    )]
    pub routing: crate::analysis::alpha::RoutingLevel,
    pub min_effect: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Parts left by the searches in time between located change points (an interval's own
    /// search lists its parts under the interval).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<UnexploredJson>,
    pub wall_s: f64,
    pub reproduce: String,
    /// What the scan's searches could resolve at its noise (absent in results written before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<Resolution>,
    /// What the change points' values are (`*_us` fields hold instructions/op for
    /// `instructions`); the grid's are [`ScanReport::grid_metric`]'s.
    #[serde(default, skip_serializing_if = "Metric::is_time")]
    pub metric: Metric,
    /// `--locate`: what the counts saw; the grid, its levels and the searches' steps are then
    /// the counts', the change points' figures the clock's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub located: Option<LocatedJson>,
}

impl ScanReport {
    /// The confirmed change points, oldest first: what the report lists (the rest are said
    /// apart, see [`Aside`]).
    pub fn change_points(&self) -> impl Iterator<Item = &ChangeJson> {
        self.changes.iter().filter(|c| c.point.is_change_point())
    }

    /// The change points as the change-point table shows them, by position, each with its
    /// share of the range's movement.
    fn change_rows(&self) -> Vec<change_points::Row<'_>> {
        let by = self.located.as_ref().map(|l| l.metric.name());
        (self.change_points())
            .map(|c| change_points::Row {
                point: &c.point,
                share: c.share_of_movement,
                note: match by {
                    _ if c.point.comparison.by_tail => tail_note(&c.point.comparison),
                    Some(by) => located_note(&c.point, by),
                    None => None,
                },
            })
            .collect()
    }

    /// Every located point that is not a change point, as the report says it.
    fn aside(&self) -> Aside {
        Aside::of(self.changes.iter().map(|c| &c.point))
    }

    /// Finished, but a candidate change point did not hold on its fresh block (as a bisect's).
    pub fn unconfirmed(&self) -> bool {
        (self.changes.iter()).any(|c| c.point.standing() == Standing::NotUpheld)
    }

    /// What the grid, its levels and the searches' steps were measured in: the counts when
    /// they located.
    pub fn grid_metric(&self) -> Metric {
        match &self.located {
            Some(l) if l.searched_by == SearchedBy::Count => l.metric,
            _ => self.metric,
        }
    }
}

/// What the command knows besides the analysis result.
pub struct ScanContext<'a> {
    pub tool: String,
    pub threads: usize,
    pub range: String,
    pub repo: String,
    pub recipe: String,
    pub good: &'a CommitInfo,
    pub bad: &'a CommitInfo,
    pub merge_base: Option<&'a CommitInfo>,
    /// The range, oldest first (indices of the result).
    pub commits: &'a [CommitInfo],
    pub grid_size: usize,
    pub max_move: usize,
    /// Per grid point (in order): moved by.
    pub moved: Vec<isize>,
    pub grid_builds_cached: usize,
    pub builds: Vec<BuildUse>,
    pub samples: usize,
    pub samples_taken_now: usize,
    pub placement: Placement,
    pub alpha: f64,
    pub routing: crate::analysis::alpha::RoutingLevel,
    pub min_effect: f64,
    pub notes: Vec<String>,
    pub wall_s: f64,
    pub reproduce: String,
    pub metric: Metric,
    pub located: Option<LocatedJson>,
}

/// "+15.2% at abc1234, partly undone (52%) by -7.6% at def5678".
fn cancel_text(c: &Cancel, changes: &[ChangeJson]) -> String {
    let (a, b) = (&changes[c.change].point, &changes[c.undone_by].point);
    let how = if c.fraction >= 0.999 {
        "undone".to_string()
    } else {
        format!("partly undone ({:.0}%)", c.fraction * 100.0)
    };
    format!(
        "{} at {}, {how} by {} at {}",
        ratio_pct(a.ratio),
        a.info.short,
        ratio_pct(b.ratio),
        b.info.short
    )
}

/// "+122.0% at a1, +10.0% at b2, -55.0% at c3: net +9.9% (a series whose changes undo each other)".
fn series_text(net: f64, members: &[usize], changes: &[ChangeJson]) -> String {
    let parts: Vec<String> = members
        .iter()
        .map(|&i| {
            let c = &changes[i].point;
            format!("{} at {}", ratio_pct(c.ratio), c.info.short)
        })
        .collect();
    format!(
        "{}: net {} (a series whose changes undo each other)",
        parts.join(", "),
        ratio_pct(net)
    )
}

/// `moved[i]`: how far grid point i was moved to a commit already built.
fn grid_json(grid: &Grid, commits: &[CommitInfo], moved: &[isize]) -> Vec<GridPointJson> {
    grid.points
        .iter()
        .enumerate()
        .map(|(i, p)| GridPointJson {
            info: (&commits[p.commit]).into(),
            index: p.commit,
            moved_by: moved.get(i).copied().unwrap_or(0),
            n: p.n,
            mean_us: p.mean.is_finite().then_some(p.mean),
            ci95_us: p.mean.is_finite().then_some(p.ci95),
            segment: p.segment,
            skipped: p.skipped.clone(),
        })
        .collect()
}

fn segments_json(grid: &Grid, commits: &[CommitInfo]) -> Vec<SegmentJson> {
    grid.segments
        .iter()
        .map(|s| SegmentJson {
            first: s.first,
            last: s.last,
            first_short: commits[s.first].short.clone(),
            last_short: commits[s.last].short.clone(),
            points: s.points,
            level_us: s.level,
            ci95_us: s.ci95,
        })
        .collect()
}

fn interval_json(iv: &Interval, commits: &[CommitInfo], threads: usize) -> IntervalJson {
    let left: Vec<UnexploredJson> = (iv.search.iter())
        .flat_map(|s| s.unexplored.iter().map(|u| UnexploredJson::new(u, commits)))
        .collect();
    let mut outcome = interval_outcome(iv);
    if !left.is_empty() {
        let parts: Vec<String> = left.iter().map(UnexploredJson::text).collect();
        outcome.push_str(&format!("; left: {}", parts.join("; ")));
    }
    IntervalJson {
        lo: iv.lo,
        hi: iv.hi,
        lo_short: commits[iv.lo].short.clone(),
        hi_short: commits[iv.hi].short.clone(),
        fitted_ratio: iv.fitted_ratio,
        entered: iv.entered,
        fallback: iv.fallback,
        net: iv.net,
        outcome,
        steps: iv
            .search
            .iter()
            .flat_map(|s| {
                s.steps
                    .iter()
                    .map(|st| StepJson::new(st, commits, &[threads]))
            })
            .collect(),
        left,
    }
}

/// Why a grid interval was or was not searched, and what the search found in it.
fn interval_outcome(iv: &Interval) -> String {
    let Some(s) = &iv.search else {
        let why = if (iv.fitted_ratio - 1.0).abs() > 1e-12 {
            "not entered (fitted change below half the minimum effect)"
        } else {
            "not entered (one fitted level)"
        };
        // What it may hide: its grid points' net change (a bump narrower than it, or steps
        // that cancel inside it, can be larger).
        return match &iv.net {
            Some(r) => format!(
                "{why}: its grid points' net change is {}",
                may_hide(r, true)
            ),
            None => why.to_string(),
        };
    };
    match &s.outcome {
        Outcome::NoChange if iv.fallback => {
            "searched beside a flat entered interval: its ends do not differ either".to_string()
        }
        // Undecided at the cap is not "the same": say what may hide there.
        Outcome::NoChange if s.ends.verdict == Verdict::Undecided => format!(
            "searched: its ends were undecided at the sample cap, {}",
            may_hide(&s.ends.ratio, true)
        ),
        Outcome::NoChange => "searched: its ends do not differ on fresh samples".to_string(),
        Outcome::Changes(c) => format!("searched: {} change point(s)", c.len()),
    }
}

/// Every change point of the scan, as the report lists them.
fn changes_json(r: &ScanResult, commits: &[CommitInfo], threads: usize) -> Vec<ChangeJson> {
    (r.changes.iter())
        .map(|c| ChangeJson {
            point: change_point_json(&c.cp, commits, &[threads]),
            index: c.cp.first_new,
            share_of_movement: c.share,
            interval: c.interval,
        })
        .collect()
}

impl ScanReport {
    pub fn new(r: &ScanResult, x: ScanContext) -> ScanReport {
        let commits = x.commits;
        let changes = changes_json(r, commits, x.threads);
        let cancels = r
            .cancels
            .iter()
            .map(|c| CancelJson {
                change: c.change,
                undone_by: c.undone_by,
                fraction: c.fraction,
                text: cancel_text(c, &changes),
            })
            .collect();
        let series = (r.series.iter())
            .map(|x| {
                let net = x.net_log.exp();
                SeriesJson {
                    changes: x.changes.clone(),
                    net,
                    text: series_text(net, &x.changes, &changes),
                }
            })
            .collect();
        ScanReport {
            kind: SCAN_KIND.into(),
            grid: grid_json(&r.grid, commits, &x.moved),
            segments: segments_json(&r.grid, commits),
            intervals: (r.grid.intervals.iter())
                .map(|iv| interval_json(iv, commits, x.threads))
                .collect(),
            changes,
            cancels,
            series,
            tool: x.tool,
            threads: x.threads,
            range: x.range,
            repo: x.repo,
            recipe: x.recipe,
            good: x.good.into(),
            bad: x.bad.into(),
            merge_base: x.merge_base.map(|m| m.into()),
            commits: commits.len(),
            grid_size: x.grid_size,
            max_move: x.max_move,
            samples_per_grid_point: r.grid.samples_per_point,
            grid_builds: r.grid.points.len(),
            grid_builds_cached: x.grid_builds_cached,
            by_share: r.by_share.clone(),
            builds: x.builds,
            samples: x.samples,
            samples_taken_now: x.samples_taken_now,
            placement: x.placement,
            alpha: x.alpha,
            fit_level: r.grid.fit_level,
            penalty: r.grid.penalty,
            searchable: r.searchable,
            alpha_per_search: r.alpha_per_search,
            tests: r.tests,
            family_alpha: r.family_alpha,
            routing: x.routing,
            min_effect: x.min_effect,
            notes: x.notes,
            left: r
                .left
                .iter()
                .map(|u| UnexploredJson::new(u, commits))
                .collect(),
            wall_s: x.wall_s,
            reproduce: x.reproduce,
            metric: x.metric,
            located: x.located,
            resolution: r.resolution.clone(),
        }
    }

    fn not_entered(&self) -> usize {
        self.intervals.iter().filter(|i| !i.entered).count()
    }

    /// The parts the searches in time left, one line each (empty when none), under
    /// [`LEFT_IN_TIME`].
    fn left_lines(&self) -> Vec<String> {
        self.left.iter().map(UnexploredJson::text).collect()
    }

    /// The hiding caveat, said whenever intervals were left out.
    fn hidden_note(&self) -> Option<String> {
        let skipped = self.not_entered();
        // Neighbouring commits hide nothing between them.
        let wide = self.intervals.iter().any(|i| !i.entered && i.hi > i.lo + 1);
        (skipped > 0 && wide).then(|| {
            let spacing = self.grid_spacing();
            format!(
                "{skipped} of {} grid intervals lie on one fitted level (or levels less than half the minimum effect apart) and were not searched: a bump narrower than a grid interval (~{spacing} commits), or two changes that cancel inside one, can hide there (a larger --grid narrows that)",
                self.intervals.len()
            )
        })
    }

    fn error_control(&self) -> String {
        let routing = match self.routing {
            RoutingLevel::Family => String::new(),
            level => format!("; the searches' routing decisions at {level} each, outside that bound (every change point is confirmed on a fresh block)"),
        };
        format!(
            "error control: false culprits at most {:.1e} per run (every change point confirmed on a fresh block; the confirmations share at most half of --alpha {}); the step fit chooses intervals at {:.2e} per place (half of alpha {} over {} places); the {} intervals that may be searched (those entered and their neighbours) share the other half, {} / 2 / {} = {:.2e} each, on samples taken after the grid's; {} tests made (the fit's places included), their levels add up to {:.2e}{}",
            false_culprit_bound(self.alpha),
            self.alpha,
            self.fit_level,
            self.alpha,
            self.intervals.len(),
            self.searchable,
            self.alpha,
            self.searchable,
            self.alpha_per_search,
            self.tests,
            self.family_alpha,
            routing
        )
    }

    fn cost(&self) -> String {
        let fresh = self.builds.iter().filter(|b| b.fresh && b.ok).count();
        let failed = self.builds.iter().filter(|b| !b.ok).count();
        format!(
            "cost: {} builds used ({} built now, {} failed), grid {} of them ({} were cached), {} samples ({} taken now), {:.0} s",
            self.builds.len(),
            fresh,
            failed,
            self.grid_builds,
            self.grid_builds_cached,
            self.samples,
            self.samples_taken_now,
            self.wall_s
        ) + &self.placement.line().map(|l| format!("; {l}")).unwrap_or_default()
    }

    /// The answer's "may hide" line: below the resolution anywhere, and a bump narrower than a
    /// grid interval in the intervals not entered.
    fn may_hide(&self) -> Option<String> {
        let reach = self.resolution.as_ref().map(may_hide_sentence);
        let skipped = self.not_entered();
        let wide = self.intervals.iter().any(|i| !i.entered && i.hi > i.lo + 1);
        let bump = (skipped > 0 && wide).then(|| {
            format!(
                "a bump narrower than a grid interval (~{} commits) in the {skipped} interval(s) not entered",
                self.grid_spacing()
            )
        });
        match (reach, bump) {
            (Some(r), Some(b)) => Some(format!("{r}; {b}")),
            (Some(r), None) => Some(r),
            (None, Some(b)) => Some(format!("may hide: {b}")),
            (None, None) => None,
        }
    }

    /// Commits between neighbouring grid points.
    fn grid_spacing(&self) -> usize {
        self.commits.saturating_sub(1) / self.grid_size.saturating_sub(1).max(1)
    }

    /// How the scan found its change points and how far a false one is bounded, in a clause.
    fn method(&self) -> String {
        let by = match &self.located {
            Some(l) if l.searched_by == SearchedBy::Count => format!(", by {}", l.metric.name()),
            Some(l) => format!(
                " (the counts did not move ({}), so in time)",
                l.metric.name()
            ),
            None => String::new(),
        };
        format!(
            "a grid of {} points{by}, its intervals that moved bisected, each change point confirmed in time on a fresh block{}",
            self.grid.len(),
            bound_clause(self.tests, self.alpha)
        )
    }

    /// The figures behind the text answer, for `-v`.
    pub fn details_text(&self, links: &Links) -> String {
        details(self, links)
    }

    /// A confirmed change point as the text's numbered list says it.
    fn change_line(c: &ChangeJson, links_suffix: &str) -> String {
        let p = &c.point;
        format!(
            "{} {}..{} {} [{:+.1}%, {:+.1}%] p(Yuen)={:.2e}, confirmed, {:.0}% of the movement{}  {}",
            if p.range { "range" } else { "culprit" },
            &p.parent[..10.min(p.parent.len())],
            p.info.short,
            ratio_pct(p.ratio),
            (p.ratio_ci.0 - 1.0) * 100.0,
            (p.ratio_ci.1 - 1.0) * 100.0,
            p.comparison.p_yuen,
            c.share_of_movement * 100.0,
            links_suffix,
            p.info.subject
        )
    }
}

mod markdown;
mod page;
mod profile;
mod text;

use text::*;
