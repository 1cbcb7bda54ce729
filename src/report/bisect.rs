//! The result of `bisect`: the ends, every tested commit, the change points
//! (culprits) with their own comparison, and how to reproduce it. Written
//! by `bisect`, kept in the cache and read back by `log`.

use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

use super::export::{formats, Export, Links, Markdown, Text};
use super::html::{self, esc, HtmlSections, Section};
use super::plot::{self, Mark, PointKind, Profile, ProfilePoint};
use crate::analysis::bisect::{ChangePoint, Step, StepVerdict};
use crate::analysis::stats::{Comparison, Size, Verdict};
use crate::build::repo::CommitInfo;
use crate::measure::engine::BuildUse;
use crate::report::us;

formats!(BisectFormat for BisectReport { Text, Markdown, Json, Html });

pub const BISECT_KIND: &str = "perfbisect-bisect";

#[derive(Debug, Clone, Serialize, Deserialize)]
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

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CulpritJson {
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
    /// Parent and culprit load byte-identical libraries and modules: never a culprit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub identical_binaries: bool,
    /// Share of the ends' change on the log scale: 1 explains the whole range, negative goes
    /// against the range's direction.
    #[serde(default = "one")]
    pub share: f64,
    pub comparison: Comparison,
}

fn yes() -> bool {
    true
}

fn one() -> f64 {
    1.0
}

#[derive(Debug, Clone, Serialize, Deserialize)]
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
    pub position: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BisectReport {
    /// BISECT_KIND; empty in results written before it was recorded.
    #[serde(default)]
    pub kind: String,
    pub tool: String,
    pub threads: usize,
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
    pub culprits: Vec<CulpritJson>,
    pub steps: Vec<StepJson>,
    pub builds: Vec<BuildUse>,
    pub samples: usize,
    pub samples_taken_now: usize,
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
    pub state: String,
    pub command: String,
    pub updated: u64,
    #[serde(default)]
    pub result: Option<BisectReport>,
}

impl StepJson {
    /// A decided step of the search, `s.commit` indexing `commits` (the range, oldest first).
    pub fn new(s: &Step, commits: &[CommitInfo]) -> StepJson {
        StepJson {
            info: (&commits[s.commit]).into(),
            index: s.commit,
            n: s.n,
            mean_us: s.mean,
            ci95_us: s.ci95,
            verdict: verdict_word(&s.verdict),
            position: s.position,
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

pub fn step_line(s: &Step, c: &CommitInfo) -> String {
    let mean = if s.mean.is_finite() {
        format!(
            "n={:<3} {:>10} us [{}, {}]",
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

pub fn culprit_json(cp: &ChangePoint, commits: &[CommitInfo]) -> CulpritJson {
    let c = &commits[cp.first_new];
    let p = &commits[cp.last_old];
    CulpritJson {
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
        identical_binaries: cp.identical_binaries,
        share: cp.share,
        comparison: cp.comparison,
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

fn direction_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Slower => "slowdown (regression)",
        Verdict::Faster => "speed-up (fix)",
        Verdict::Same => "no change",
        Verdict::Undecided => "undecided",
    }
}

fn text_result(j: &BisectReport, links: &Links) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "\nends: {} {} us/op (n={}) -> {} {} us/op (n={}): {} {}, p(Yuen)={:.2e}\n",
        j.good.short,
        us(j.ends.a.mean),
        j.ends.a.n,
        j.bad.short,
        us(j.ends.b.mean),
        j.ends.b.n,
        direction_word(j.direction),
        j.ends.ratio.pct(),
        j.ends.p_yuen
    ));
    if j.culprits.is_empty() {
        s.push_str(&format!(
            "result: the ends do not differ by at least {:.1}% with significance ({}); nothing to bisect\n",
            j.min_effect * 100.0,
            match j.direction {
                Verdict::Same => "they are the same within that margin",
                _ => "undecided at the sample cap: more samples or a larger --min-effect may decide",
            }
        ));
    }
    // The change that explains most of the range first; candidates that did not hold last.
    let mut order: Vec<&CulpritJson> = j.culprits.iter().collect();
    order.sort_by(|a, b| {
        b.confirmed
            .cmp(&a.confirmed)
            .then(b.share.total_cmp(&a.share))
    });
    for (i, c) in order.into_iter().enumerate() {
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
        let share = if c.share.is_finite() && c.share < 0.0 {
            format!(
                " [against the range's direction: {:.0}% of its change]",
                c.share * 100.0
            )
        } else if c.partial && c.share.is_finite() {
            format!(" [part of the range's change: {:.0}%]", c.share * 100.0)
        } else if c.partial {
            " [part of the range's change]".to_string()
        } else {
            String::new()
        };
        s.push_str(&format!(
            "\nresult {}: {head}{share}{}\n",
            i + 1,
            if c.uncertain { " [uncertain]" } else { "" }
        ));
        if c.identical_binaries {
            s.push_str(
                "  NOT A CULPRIT: it loads byte-identical libraries and modules to its parent's\n",
            );
        } else if !c.confirmed {
            s.push_str(
                "  NOT CONFIRMED: a fresh block of samples did not show this change; a candidate, not a culprit\n",
            );
        }
        s.push_str(&format!(
            "  author:  {}\n  date:    {}\n  subject: {}\n",
            c.info.author,
            c.info.dates(),
            c.info.subject
        ));
        s.push_str(&format!(
            "  parent {} {} us/op (n={}) -> {} {} us/op (n={})\n",
            &c.parent[..10],
            us(c.parent_mean_us),
            c.comparison.a.n,
            &c.info.commit[..10],
            us(c.culprit_mean_us),
            c.comparison.b.n
        ));
        s.push_str(&format!(
            "  change:  {}  p(Yuen)={:.2e}  p(Welch)={:.2e}  p(Mann-Whitney)={:.2e}{}{}\n",
            c.comparison.ratio.pct(),
            c.comparison.p_yuen,
            c.p_welch,
            c.p_mwu,
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
    }
    let fresh = j.builds.iter().filter(|b| b.fresh).count();
    let failed = j.builds.iter().filter(|b| !b.ok).count();
    s.push_str(&format!(
        "\nbuilds used: {} ({} built now, {} failed)  samples: {} ({} taken now)  wall time: {:.0} s\n",
        j.builds.len(),
        fresh,
        failed,
        j.samples,
        j.samples_taken_now,
        j.wall_s
    ));
    if j.shared_probes > 0 {
        s.push_str(&format!(
            "probes saved: {} tested commit(s) load byte-identical binaries to another tested commit and shared its samples\n",
            j.shared_probes
        ));
    }
    for n in &j.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    if j.tests > 0 {
        s.push_str(&format!(
            "error control: {} tests, family-wise false-alarm bound {:.2e} (budget {}){}\n",
            j.tests,
            j.family_alpha,
            j.alpha,
            if j.family_alpha > j.alpha {
                ": the range's several changes took more decisions than budgeted"
            } else {
                ""
            }
        ));
    }
    s.push_str(&format!("reproduce: {}\n", j.reproduce));
    s
}

fn markdown(j: &BisectReport, links: &Links) -> String {
    let mut s = format!(
        "### perfbisect: `{}` at {} thread(s), `{}`\n\n",
        j.tool, j.threads, j.range
    );
    s.push_str(&format!(
        "Ends: `{}` {} µs/op → `{}` {} µs/op: **{}** {} (p={:.2e})\n\n",
        j.good.short,
        us(j.ends.a.mean),
        j.bad.short,
        us(j.ends.b.mean),
        direction_word(j.direction),
        j.ends.ratio.pct(),
        j.ends.p_welch
    ));
    if !j.culprits.is_empty() {
        s.push_str(
            "| commit | date | subject | parent µs/op | commit µs/op | change | p (Welch) |\n",
        );
        s.push_str("| --- | --- | --- | ---: | ---: | --- | ---: |\n");
        for c in &j.culprits {
            s.push_str(&format!(
                "| {}{} | {} | {} | {} | {} | {} | {:.2e} |\n",
                links.markdown(&c.info.commit, &c.info.commit[..10]),
                if c.range { " (range)" } else { "" },
                c.info.dates(),
                c.info.subject.replace('|', "\\|"),
                us(c.parent_mean_us),
                us(c.culprit_mean_us),
                c.comparison.ratio.pct(),
                c.p_welch
            ));
        }
        s.push('\n');
    }
    s.push_str("<details><summary>steps</summary>\n\n| commit | n | mean µs/op | verdict |\n| --- | ---: | ---: | --- |\n");
    for st in &j.steps {
        s.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            links.markdown(&st.info.commit, &st.info.short),
            st.n,
            us(st.mean_us),
            st.verdict
        ));
    }
    s.push_str(&format!("\n</details>\n\nReproduce: `{}`\n", j.reproduce));
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
            j.threads,
            esc(&j.range)
        );
        let mut summary = format!(
            "<p>Ends: {} {} µs/op → {} {} µs/op: {} {} (p = {:.2e}).</p>\n",
            links.html(&j.good.commit, &j.good.short),
            us(j.ends.a.mean),
            links.html(&j.bad.commit, &j.bad.short),
            us(j.ends.b.mean),
            direction_badge(j.direction),
            esc(&j.ends.ratio.pct()),
            j.ends.p_welch
        );
        if j.culprits.is_empty() {
            summary.push_str(&format!(
                "<p>No change point: the ends do not differ by at least {:.1}% with significance.</p>\n",
                j.min_effect * 100.0
            ));
        } else {
            summary.push_str("<ol>\n");
            for c in &j.culprits {
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
                let mut notes = String::new();
                if c.partial {
                    notes.push_str(
                        " <span class=\"badge neutral\">part of the range's change</span>",
                    );
                }
                if c.uncertain {
                    notes.push_str(&format!(" {}", html::badge("uncertain")));
                }
                summary.push_str(&format!(
                    "<li>{what}: <b>{}</b> ({}, {}): {} → {} µs/op, <b>{}</b>, p = {:.2e}{notes}</li>\n",
                    esc(&c.info.subject),
                    esc(&c.info.dates()),
                    esc(&c.info.author),
                    us(c.parent_mean_us),
                    us(c.culprit_mean_us),
                    esc(&c.comparison.ratio.pct()),
                    c.p_welch
                ));
            }
            summary.push_str("</ol>\n");
        }

        let mut tables = String::new();
        if !j.culprits.is_empty() {
            let rows: Vec<Vec<String>> = j
                .culprits
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
            tables
                .push_str("<p>Change points (parent against culprit, on all their samples):</p>\n");
            tables.push_str(&html::table(
                &[
                    "commit",
                    "date",
                    "subject",
                    "parent µs/op",
                    "commit µs/op",
                    "change [95% CI]",
                    "p (Welch)",
                    "p (Mann-Whitney)",
                ],
                3,
                &rows,
            ));
        }
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
        tables.push_str(&format!(
            "<p>Tested commits in range order ({} of {commits}):</p>\n",
            tested.len()
        ));
        tables.push_str(&html::table(
            &[
                "commit",
                "date",
                "subject",
                "verdict",
                "position",
                "tested as",
                "n",
                "mean µs/op",
                "95% CI",
            ],
            4,
            &rows,
        ));
        let fresh = j.builds.iter().filter(|b| b.fresh).count();
        let failed = j.builds.iter().filter(|b| !b.ok).count();
        tables.push_str(&format!(
            "<p>Builds used: {} ({fresh} built now, {failed} failed); samples: {} ({} taken now); wall time {:.0} s; recipe <code>{}</code>; alpha per test {:.2e}.</p>\n",
            j.builds.len(),
            j.samples,
            j.samples_taken_now,
            j.wall_s,
            esc(&j.recipe),
            j.alpha_per_test
        ));
        let plots = html::figure(
            &j.profile_svg()?,
            &format!(
                "{} at {} thread(s): µs/op (95% interval) of every tested commit along {}; dashed red lines are change points, shaded stretches were not tested.",
                j.tool, j.threads, j.range
            ),
        );
        Ok(Section {
            heading,
            summary,
            tables,
            plots,
            reproduce: html::command(&j.reproduce),
        })
    }
}

fn point_kind(verdict: &str) -> PointKind {
    match verdict.split([' ', ':']).next().unwrap_or("") {
        "old" => PointKind::Old,
        "new" => PointKind::New,
        "between" => PointKind::Between,
        "skipped" => PointKind::Skipped,
        _ => PointKind::Ambiguous,
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        s.chars().take(max - 1).collect::<String>() + "…"
    }
}

impl BisectReport {
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
            .culprits
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
                    kind: point_kind(&s.verdict),
                    date: s.info.date.clone(),
                })
                .collect(),
            ends: (
                end("old", self.merge_base.as_ref().unwrap_or(&self.good)),
                end("new", &self.bad),
            ),
            changes,
        }
    }

    pub fn profile_svg(&self) -> Result<String> {
        plot::profile_svg(&self.profile())
    }

    /// `bisect --plot DIR`: DIR/profile-TOOL-tN.svg.
    pub fn write_plot(&self, dir: &Path) -> Result<PathBuf> {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("cannot create plot directory {}: {e}", dir.display()))?;
        let path = dir.join(format!(
            "profile-{}-t{}.svg",
            plot::file_stem(&self.tool),
            self.threads
        ));
        std::fs::write(&path, self.profile_svg()?)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    }
}
