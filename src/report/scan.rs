//! The result of `scan`: the whole profile of a range — every grid point, the fitted levels,
//! which grid intervals were searched, every change point found (by position and by share of
//! the range's total movement) and which change undoes which.

use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

use super::bisect::{
    change_point_json, truncate, ChangePointJson, CommitJson, LocatedJson, StepJson,
};
use super::export::{formats, Export, Links, Markdown, Text};
use super::html::{self, esc, HtmlSections, Section};
use super::plot::{self, Level, Mark, PointKind, Profile, ProfilePoint};
use crate::analysis::bisect::Outcome;
use crate::analysis::locate::SearchedBy;
use crate::analysis::resolution::Resolution;
use crate::analysis::scan::{Grid, Interval, ScanResult};
use crate::analysis::series::Cancel;
use crate::analysis::stats::Verdict;
use crate::build::repo::CommitInfo;
use crate::measure::engine::BuildUse;
use crate::measure::exec::Placement;
use crate::measure::metric::Metric;
use crate::report::{may_hide, ratio_pct, resolution_sentence, us};
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
    /// "not entered (one fitted level)", "no change on fresh samples", "1 change point", ...
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepJson>,
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
    pub min_effect: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
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
    IntervalJson {
        lo: iv.lo,
        hi: iv.hi,
        lo_short: commits[iv.lo].short.clone(),
        hi_short: commits[iv.hi].short.clone(),
        fitted_ratio: iv.fitted_ratio,
        entered: iv.entered,
        fallback: iv.fallback,
        outcome: interval_outcome(iv),
        steps: iv
            .search
            .iter()
            .flat_map(|s| {
                s.steps
                    .iter()
                    .map(|st| StepJson::new(st, commits, &[threads]))
            })
            .collect(),
    }
}

/// Why a grid interval was or was not searched, and what the search found in it.
fn interval_outcome(iv: &Interval) -> String {
    let Some(s) = &iv.search else {
        return if (iv.fitted_ratio - 1.0).abs() > 1e-12 {
            "not entered (fitted change below half the minimum effect)".to_string()
        } else {
            "not entered (one fitted level)".to_string()
        };
    };
    match &s.outcome {
        Outcome::NoChange if iv.fallback => {
            "searched beside a flat entered interval: its ends do not differ either".to_string()
        }
        // Undecided at the cap is not "the same": say what may hide there.
        Outcome::NoChange if s.ends.verdict == Verdict::Undecided => format!(
            "searched: its ends were undecided at the sample cap, {}",
            may_hide(&s.ends.ratio)
        ),
        Outcome::NoChange => "searched: its ends do not differ on fresh samples".to_string(),
        Outcome::Changes(c) => format!("searched: {} change point(s)", c.len()),
    }
}

impl ScanReport {
    pub fn new(r: &ScanResult, x: ScanContext) -> ScanReport {
        let commits = x.commits;
        let changes: Vec<ChangeJson> = r
            .changes
            .iter()
            .map(|c| ChangeJson {
                point: change_point_json(&c.cp, commits, &[x.threads]),
                index: c.cp.first_new,
                share_of_movement: c.share,
                interval: c.interval,
            })
            .collect();
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
            min_effect: x.min_effect,
            notes: x.notes,
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

    /// The hiding caveat, said whenever intervals were left out.
    fn hidden_note(&self) -> Option<String> {
        let skipped = self.not_entered();
        // Neighbouring commits hide nothing between them.
        let wide = self.intervals.iter().any(|i| !i.entered && i.hi > i.lo + 1);
        (skipped > 0 && wide).then(|| {
            let spacing = self.commits.saturating_sub(1) / self.grid_size.saturating_sub(1).max(1);
            format!(
                "{skipped} of {} grid intervals lie on one fitted level (or levels less than half the minimum effect apart) and were not searched: a bump narrower than a grid interval (~{spacing} commits), or two changes that cancel inside one, can hide there (a larger --grid narrows that)",
                self.intervals.len()
            )
        })
    }

    fn error_control(&self) -> String {
        format!(
            "error control: the step fit chooses intervals at {:.2e} per place (alpha {} over {} places); the {} intervals that may be searched (those entered and their neighbours) get alpha {} / {} = {:.2e} each, on samples taken after the grid's; tests run {}, family-wise bound (Bonferroni sum) {:.2e}",
            self.fit_level,
            self.alpha,
            self.intervals.len(),
            self.searchable,
            self.alpha,
            self.searchable,
            self.alpha_per_search,
            self.tests,
            self.family_alpha
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

    fn change_line(&self, i: usize, links_suffix: &str) -> String {
        let c = &self.changes[i];
        let p = &c.point;
        let status = if !p.confirmed {
            if p.identical_binaries {
                "NOT a culprit (identical binaries)"
            } else if p.unresolved {
                "located, size unresolved on its fresh block"
            } else {
                "NOT confirmed on its fresh block"
            }
        } else {
            "confirmed"
        };
        format!(
            "{} {}..{} {} [{:+.1}%, {:+.1}%] p(Yuen)={:.2e}, {}, {:.0}% of the movement{}  {}",
            if p.range { "range" } else { "culprit" },
            &p.parent[..10.min(p.parent.len())],
            p.info.short,
            ratio_pct(p.ratio),
            (p.ratio_ci.0 - 1.0) * 100.0,
            (p.ratio_ci.1 - 1.0) * 100.0,
            p.comparison.p_yuen,
            status,
            c.share_of_movement * 100.0,
            links_suffix,
            p.info.subject
        )
    }
}

fn text(r: &ScanReport, links: &Links) -> String {
    let mut s = format!(
        "scan of {} at {} thread(s): {} ({} commits), grid of {} points, {} samples each\n",
        r.tool,
        r.threads,
        r.range,
        r.commits,
        r.grid.len(),
        r.samples_per_grid_point
    );
    s.push_str(&grid_text(r));
    s.push_str(&levels_and_intervals_text(r));
    if let Some(l) = &r.located {
        s.push_str(&format!("\nsearch: {}\n", l.sentence()));
    }
    if let Some(res) = &r.resolution {
        s.push_str(&format!("\nresolution: {}\n", resolution_sentence(res)));
    }
    s.push_str(&changes_text(r, links));
    s.push('\n');
    if let Some(n) = r.hidden_note() {
        s.push_str(&format!("note: {n}\n"));
    }
    for n in &r.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s.push_str(&r.error_control());
    s.push('\n');
    s.push_str(&r.cost());
    s.push_str(&format!("\nreproduce: {}\n", r.reproduce));
    s
}

fn grid_text(r: &ScanReport) -> String {
    let mut s = String::from("\ngrid (old end first):\n");
    let u = r.grid_metric().unit_short();
    for g in &r.grid {
        let level = match (g.mean_us, g.ci95_us) {
            (Some(m), Some(ci)) => {
                format!(
                    "n={:<3} {:>10} {u} [{}, {}]",
                    g.n,
                    us(m),
                    us(ci.0),
                    us(ci.1)
                )
            }
            _ => format!("n={:<3} {:>10}", g.n, "-"),
        };
        let moved = if g.moved_by != 0 {
            format!(" (moved {:+} to a built commit)", g.moved_by)
        } else {
            String::new()
        };
        let seg = g
            .segment
            .map(|i| format!("level {}", i + 1))
            .unwrap_or_else(|| format!("skipped: {}", g.skipped_text()));
        s.push_str(&format!(
            "  #{:<5} {} {}  {}  {}{}\n",
            g.index, g.info.short, g.info.date, level, seg, moved
        ));
    }
    s
}

/// What the step fit made of the grid: its levels, and each interval between grid points.
fn levels_and_intervals_text(r: &ScanReport) -> String {
    let mut s = String::from("\nfitted levels:\n");
    let u = r.grid_metric().unit_short();
    for (i, g) in r.segments.iter().enumerate() {
        s.push_str(&format!(
            "  level {}: {}..{} ({} point(s))  {} {u} [{}, {}]\n",
            i + 1,
            g.first_short,
            g.last_short,
            g.points,
            us(g.level_us),
            us(g.ci95_us.0),
            us(g.ci95_us.1)
        ));
    }
    s.push_str("\ngrid intervals:\n");
    for iv in &r.intervals {
        s.push_str(&format!(
            "  {}..{} ({} commits, fitted {}): {}\n",
            iv.lo_short,
            iv.hi_short,
            iv.hi - iv.lo,
            ratio_pct(iv.fitted_ratio),
            iv.outcome
        ));
    }
    s
}

/// The change points by position, then by size, then which undo which.
fn changes_text(r: &ScanReport, links: &Links) -> String {
    let mut s = String::from("\nchange points (by position):\n");
    if r.changes.is_empty() {
        s.push_str("  none: the grid's points lie on one level, or no search confirmed a change\n");
    }
    for i in 0..r.changes.len() {
        let sfx = links.text_suffix(&r.changes[i].point.info.commit);
        s.push_str(&format!("  {}. {}\n", i + 1, r.change_line(i, &sfx)));
    }
    if !r.by_share.is_empty() {
        let parts: Vec<String> = r
            .by_share
            .iter()
            .map(|&i| {
                let c = &r.changes[i];
                format!(
                    "{} at {} ({:.0}%)",
                    ratio_pct(c.point.ratio),
                    c.point.info.short,
                    c.share_of_movement.abs() * 100.0
                )
            })
            .collect();
        s.push_str(&format!("\nlasting effect first: {}\n", parts.join(", ")));
    }
    for c in &r.cancels {
        s.push_str(&format!("cancelling: {}\n", c.text));
    }
    for x in &r.series {
        s.push_str(&format!("series: {}\n", x.text));
    }
    s
}

fn markdown(r: &ScanReport, links: &Links) -> String {
    let mut s = format!(
        "### scan: `{}` at {} thread(s), `{}` ({} commits)\n\n",
        r.tool, r.threads, r.range, r.commits
    );
    if let Some(l) = &r.located {
        s.push_str(&format!("Search: {}\n\n", l.sentence()));
    }
    if let Some(res) = &r.resolution {
        s.push_str(&format!("Resolution: {}\n\n", resolution_sentence(res)));
    }
    s.push_str(&markdown_changes(r, links));
    for c in &r.cancels {
        s.push_str(&format!("- {}\n", c.text));
    }
    for x in &r.series {
        s.push_str(&format!("- series: {}\n", x.text));
    }
    if !r.cancels.is_empty() {
        s.push('\n');
    }
    s.push_str(&markdown_grid(r, links));
    if let Some(n) = r.hidden_note() {
        s.push_str(&format!("{n}.\n\n"));
    }
    for n in &r.notes {
        s.push_str(&format!("{n}\n\n"));
    }
    s.push_str(&format!("{}.\n\n{}.\n\n", r.error_control(), r.cost()));
    s.push_str(&format!("```\n{}\n```\n", r.reproduce));
    s
}

/// The change points as a Markdown table (or the sentence that there are none).
fn markdown_changes(r: &ScanReport, links: &Links) -> String {
    let mut s = String::new();
    if r.changes.is_empty() {
        s.push_str("No change point found.\n\n");
    } else {
        s.push_str(
            "| # | commit | change | 95% interval | share of movement | confirmed | subject |\n",
        );
        s.push_str("| ---: | --- | ---: | --- | ---: | --- | --- |\n");
        for (i, c) in r.changes.iter().enumerate() {
            let p = &c.point;
            s.push_str(&format!(
                "| {} | {} | {} | [{:+.1}%, {:+.1}%] | {:.0}% | {} | {} |\n",
                i + 1,
                links.markdown(&p.info.commit, &p.info.short),
                ratio_pct(p.ratio),
                (p.ratio_ci.0 - 1.0) * 100.0,
                (p.ratio_ci.1 - 1.0) * 100.0,
                c.share_of_movement * 100.0,
                match (p.confirmed, p.unresolved) {
                    (true, _) => "yes",
                    (false, true) => "unresolved",
                    (false, false) => "**no**",
                },
                p.info.subject.replace('|', "\\|")
            ));
        }
        s.push('\n');
    }
    s
}

/// The grid and its fitted levels, folded away in a `<details>` block.
fn markdown_grid(r: &ScanReport, links: &Links) -> String {
    let mut s = String::new();
    s.push_str("<details><summary>grid and fitted levels</summary>\n\n");
    let u = r.grid_metric().unit();
    s.push_str(&format!("| index | commit | date | {u} | 95% interval | level |\n| ---: | --- | --- | ---: | --- | ---: |\n"));
    for g in &r.grid {
        let (m, ci) = match (g.mean_us, g.ci95_us) {
            (Some(m), Some(ci)) => (us(m), format!("[{}, {}]", us(ci.0), us(ci.1))),
            _ => ("-".into(), g.skipped_text()),
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            g.index,
            links.markdown(&g.info.commit, &g.info.short),
            g.info.date,
            m,
            ci,
            g.segment.map(|i| (i + 1).to_string()).unwrap_or("-".into())
        ));
    }
    s.push('\n');
    for (i, g) in r.segments.iter().enumerate() {
        s.push_str(&format!(
            "- level {}: `{}`..`{}` ({} points): {} {u} [{}, {}]\n",
            i + 1,
            g.first_short,
            g.last_short,
            g.points,
            us(g.level_us),
            us(g.ci95_us.0),
            us(g.ci95_us.1)
        ));
    }
    s.push_str("\n</details>\n\n");
    s
}

impl Export<ScanReport> for Text {
    fn export(&self, r: &ScanReport) -> Result<String> {
        Ok(text(r, &Links::default()))
    }
    fn export_linked(&self, r: &ScanReport, links: &Links) -> Result<String> {
        Ok(text(r, links))
    }
}

impl Export<ScanReport> for Markdown {
    fn export(&self, r: &ScanReport) -> Result<String> {
        Ok(markdown(r, &Links::default()))
    }
    fn export_linked(&self, r: &ScanReport, links: &Links) -> Result<String> {
        Ok(markdown(r, links))
    }
}

impl ScanReport {
    /// The scan's picture: every grid point and every commit a search tested, the fitted
    /// levels under them, and the change points.
    pub fn profile(&self) -> Profile {
        let probes = self.search_probes();
        let mut points: Vec<ProfilePoint> = self
            .grid
            .iter()
            .map(|g| ProfilePoint {
                x: g.index,
                mean: g.mean_us.unwrap_or(f64::NAN),
                ci: g.ci95_us.unwrap_or((f64::NAN, f64::NAN)),
                kind: if g.mean_us.is_some() {
                    PointKind::Grid
                } else {
                    PointKind::Skipped
                },
                date: g.info.date.clone(),
            })
            .collect();
        points.extend(probes.iter().map(|st| ProfilePoint {
            x: st.index,
            mean: st.mean_us,
            ci: st.ci95_us,
            kind: st.point_kind(),
            date: st.info.date.clone(),
        }));
        points.sort_by_key(|q| q.x);
        let end = |which: &str, c: &CommitJson| {
            format!("{which} end {} ({})", c.short, truncate(&c.subject, 30))
        };
        Profile {
            title: format!(
                "scan of {} at {} thread(s): {}",
                self.tool, self.threads, self.range
            ),
            commits: self.commits,
            points,
            ends: (
                end("old", self.merge_base.as_ref().unwrap_or(&self.good)),
                end("new", &self.bad),
            ),
            changes: self.change_marks(&probes),
            axis: self.grid_metric().axis(),
            levels: self
                .segments
                .iter()
                .map(|sg| Level {
                    first: sg.first,
                    last: sg.last,
                    value: sg.level_us,
                })
                .collect(),
        }
    }

    /// The commits the searches tested besides the grid, each once with its last verdict
    /// (a grid point keeps its grid samples).
    fn search_probes(&self) -> Vec<&StepJson> {
        let mut probes: Vec<&StepJson> = Vec::new();
        for st in self.intervals.iter().flat_map(|iv| &iv.steps) {
            if self.grid.iter().any(|g| g.info.commit == st.info.commit) {
                continue;
            }
            probes.retain(|p| p.info.commit != st.info.commit);
            probes.push(st);
        }
        probes
    }

    /// The confirmed change points as the plot marks them, from parent to culprit.
    fn change_marks(&self, probes: &[&StepJson]) -> Vec<Mark> {
        let position = |id: &str| {
            self.grid
                .iter()
                .find(|g| g.info.commit == id)
                .map(|g| g.index)
                .or_else(|| probes.iter().find(|p| p.info.commit == id).map(|p| p.index))
        };
        self.changes
            .iter()
            .filter(|c| c.point.confirmed)
            .map(|c| {
                let p = &c.point;
                Mark {
                    parent: position(&p.parent).unwrap_or(c.index.saturating_sub(1)),
                    culprit: c.index,
                    label: format!(
                        "{} {} {}{}",
                        p.info.short,
                        truncate(&p.info.subject, 40),
                        ratio_pct(p.ratio),
                        if p.range { " (range)" } else { "" }
                    ),
                }
            })
            .collect()
    }

    pub fn profile_svg(&self) -> Result<String> {
        plot::profile_svg(&self.profile())
    }

    /// `scan --plot DIR`: DIR/scan-TOOL-tN.svg.
    pub fn write_plot(&self, dir: &Path) -> Result<PathBuf> {
        plot::write_svg(dir, "scan", &self.tool, self.threads, &self.profile_svg()?)
    }
}

impl HtmlSections for ScanReport {
    fn section(&self, links: &Links) -> Result<Section> {
        let r = self;
        let heading = format!(
            "scan: <code>{}</code> at {} thread(s), <code>{}</code>",
            esc(&r.tool),
            r.threads,
            esc(&r.range)
        );
        let mut tables = String::new();
        if !r.changes.is_empty() {
            tables.push_str(&r.changes_table_html(links));
        }
        tables.push_str(&r.grid_table_html(links));
        tables.push_str(&r.intervals_table_html(links));
        tables.push_str(&format!(
            "<p>{}.</p>\n<p>{}.</p>\n",
            esc(&r.cost()),
            esc(&r.error_control())
        ));
        let plots = html::figure(
            &r.profile_svg()?,
            &format!(
                "scan of {} at {} thread(s) over {}: {} (95% interval) of every grid point (dark) and every commit a search tested (coloured by its verdict in its interval); blue bands are the fitted levels, dashed red lines the confirmed change points, shaded stretches were not tested.",
                r.tool, r.threads, r.range, r.grid_metric().unit()
            ),
        );
        Ok(Section {
            heading,
            summary: r.summary_html(links),
            tables,
            plots,
            reproduce: html::command(&r.reproduce),
        })
    }
}

impl ScanReport {
    /// The section's opening prose: the grid's shape, the confirmed change points largest
    /// first, what cancels, and what did not hold or may hide.
    fn summary_html(&self, links: &Links) -> String {
        let r = self;
        let searched = r.intervals.iter().filter(|i| i.entered).count();
        let mut summary = format!(
            "<p>{} commits; a grid of {} points ({} of its builds were cached), {} samples each; {} fitted level(s); {searched} of {} grid intervals searched.</p>\n",
            r.commits,
            r.grid.len(),
            r.grid_builds_cached,
            r.samples_per_grid_point,
            r.segments.len(),
            r.intervals.len()
        );
        if let Some(l) = &r.located {
            summary.push_str(&format!("<p>Search: {}</p>\n", esc(&l.sentence())));
        }
        if let Some(res) = &r.resolution {
            summary.push_str(&format!(
                "<p>Resolution: {}</p>\n",
                esc(&resolution_sentence(res))
            ));
        }
        summary.push_str(&r.confirmed_list_html(links));
        for c in &r.cancels {
            summary.push_str(&format!("<p>{}</p>\n", esc(&c.text)));
        }
        for x in &r.series {
            summary.push_str(&format!("<p>Series: {}</p>\n", esc(&x.text)));
        }
        let unconfirmed = r.changes.iter().filter(|c| !c.point.confirmed).count();
        if unconfirmed > 0 {
            summary.push_str(&format!(
                "<p>{} {unconfirmed} candidate(s) did not hold on a fresh block of samples (listed in the tables).</p>\n",
                html::badge("uncertain")
            ));
        }
        if let Some(n) = r.hidden_note() {
            summary.push_str(&format!("<p class=\"meta\">{}</p>\n", esc(&n)));
        }
        summary
    }

    fn confirmed_list_html(&self, links: &Links) -> String {
        let confirmed: Vec<usize> = (self.by_share.iter().copied())
            .filter(|&i| self.changes[i].point.confirmed)
            .collect();
        if confirmed.is_empty() {
            return "<p>No confirmed change point.</p>\n".to_string();
        }
        let mut s = String::from("<p>Change points, lasting effect first:</p>\n<ol>\n");
        for &i in &confirmed {
            let c = &self.changes[i];
            let p = &c.point;
            let word = if p.ratio > 1.0 { "slower" } else { "faster" };
            s.push_str(&format!(
                "<li>{} {}: <b>{}</b> ({}): {} → {} {}, <b>{}</b> [{:+.1}%, {:+.1}%], {:.0}% of the movement</li>\n",
                html::badge(word),
                links.html(&p.info.commit, &p.info.short),
                esc(&p.info.subject),
                esc(&p.info.dates()),
                us(p.parent_mean_us),
                us(p.culprit_mean_us),
                self.metric.unit(),
                esc(&ratio_pct(p.ratio)),
                (p.ratio_ci.0 - 1.0) * 100.0,
                (p.ratio_ci.1 - 1.0) * 100.0,
                c.share_of_movement.abs() * 100.0
            ));
        }
        s.push_str("</ol>\n");
        s
    }

    fn changes_table_html(&self, links: &Links) -> String {
        let rows: Vec<Vec<String>> = self
            .changes
            .iter()
            .map(|c| {
                let p = &c.point;
                vec![
                    links.html(&p.info.commit, &p.info.short),
                    esc(&p.info.dates()),
                    esc(&p.info.subject),
                    us(p.parent_mean_us),
                    us(p.culprit_mean_us),
                    format!(
                        "{} [{:+.1}%, {:+.1}%]",
                        esc(&ratio_pct(p.ratio)),
                        (p.ratio_ci.0 - 1.0) * 100.0,
                        (p.ratio_ci.1 - 1.0) * 100.0
                    ),
                    format!("{:.2e}", p.comparison.p_yuen),
                    format!("{:+.0}%", c.share_of_movement * 100.0),
                    if p.confirmed {
                        "confirmed".to_string()
                    } else if p.identical_binaries {
                        "not a culprit (identical binaries)".to_string()
                    } else if p.unresolved {
                        "located, size unresolved".to_string()
                    } else {
                        "not confirmed".to_string()
                    },
                ]
            })
            .collect();
        let mut s = String::from("<p>Change points by position:</p>\n");
        let u = self.metric.unit();
        s.push_str(&html::table(
            &[
                "commit",
                "date",
                "subject",
                &format!("parent {u}"),
                &format!("commit {u}"),
                "change [95% CI]",
                "p (Yuen)",
                "share",
                "",
            ],
            3,
            &rows,
        ));
        s
    }

    fn grid_table_html(&self, links: &Links) -> String {
        let rows: Vec<Vec<String>> = self
            .grid
            .iter()
            .map(|g| {
                vec![
                    g.index.to_string(),
                    links.html(&g.info.commit, &g.info.short),
                    esc(&g.info.dates()),
                    esc(&g.info.subject),
                    g.n.to_string(),
                    g.mean_us.map(us).unwrap_or_else(|| "-".into()),
                    g.ci95_us
                        .map(|c| format!("{} – {}", us(c.0), us(c.1)))
                        .unwrap_or_else(|| {
                            esc(&(g.skipped.as_ref()).map_or("-".into(), Unavailable::to_string))
                        }),
                    g.segment.map(|s| (s + 1).to_string()).unwrap_or_default(),
                ]
            })
            .collect();
        let mut s = String::from("<p>Grid (old end first):</p>\n");
        s.push_str(&html::table(
            &[
                "position",
                "commit",
                "date",
                "subject",
                "n",
                &format!("mean {}", self.grid_metric().unit()),
                "95% CI",
                "level",
            ],
            4,
            &rows,
        ));
        s
    }

    fn intervals_table_html(&self, links: &Links) -> String {
        let rows: Vec<Vec<String>> = self
            .intervals
            .iter()
            .map(|iv| {
                vec![
                    format!(
                        "{}..{}",
                        links.html(&self.grid_commit(iv.lo), &iv.lo_short),
                        links.html(&self.grid_commit(iv.hi), &iv.hi_short)
                    ),
                    (iv.hi - iv.lo).to_string(),
                    esc(&ratio_pct(iv.fitted_ratio)),
                    esc(&iv.outcome),
                ]
            })
            .collect();
        let mut s = String::from("<p>Grid intervals:</p>\n");
        s.push_str(&html::table(
            &["interval", "commits", "fitted", "outcome"],
            1,
            &rows,
        ));
        s
    }
}

impl ScanReport {
    /// The full id of the grid commit at a range position (for links).
    fn grid_commit(&self, index: usize) -> String {
        self.grid
            .iter()
            .find(|g| g.index == index)
            .map(|g| g.info.commit.clone())
            .unwrap_or_default()
    }
}
