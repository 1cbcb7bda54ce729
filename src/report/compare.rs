//! The result of `compare` / `verify`, and a gate cell's comparison.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::export::{formats, Export, Links, Markdown, Text};
use super::html::{self, esc, HtmlSections, Section};
use crate::analysis::stats::{Comparison, Verdict};
use crate::build::patch::Patch;
use crate::measure::metric::Metric;
use crate::report::{pairs_note, us, Cell, Table};

formats!(CompareFormat for CompareReport { Text, Markdown, Json, Html });

pub const COMPARE_KIND: &str = "perfbisect-compare";

/// B against A at one (tool, threads). The JSON keeps the flat figures
/// users script against (`ratio`, `ratio_ci`, `p_welch`, …) and the full
/// comparison beside them.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CompareReport {
    /// COMPARE_KIND; empty in results written before it was recorded.
    #[serde(default)]
    pub kind: String,
    pub tool: String,
    pub threads: usize,
    pub a: String,
    pub b: String,
    pub a_commit: String,
    pub b_commit: String,
    /// Patch files applied on top of each side's commit (a subject `REV+FILE…`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub a_patches: Vec<Patch>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub b_patches: Vec<Patch>,
    pub verdict: Verdict,
    /// mean(B) / mean(A) of µs/op: above 1 means B is slower.
    pub ratio: f64,
    pub ratio_ci: (f64, f64),
    pub p_welch: f64,
    pub p_mwu: f64,
    pub a_mean_us: f64,
    pub b_mean_us: f64,
    pub a_n: usize,
    pub b_n: usize,
    pub tests_disagree: bool,
    pub alpha: f64,
    pub min_effect: f64,
    pub comparison: Comparison,
    /// Each side's µs/op in the order taken (one per round), so that an A/A comparison can be
    /// fitted by `simulate --noise-from`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub a_samples_us: Vec<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub b_samples_us: Vec<f64>,
    /// What the values are (`*_us` fields hold instructions/op for `instructions`).
    #[serde(default, skip_serializing_if = "Metric::is_time")]
    pub metric: Metric,
}

pub struct Sides<'a> {
    pub a: &'a str,
    pub b: &'a str,
    pub a_commit: &'a str,
    pub b_commit: &'a str,
    pub a_patches: &'a [Patch],
    pub b_patches: &'a [Patch],
}

impl CompareReport {
    pub fn new(
        tool: &str,
        threads: usize,
        sides: Sides,
        c: &Comparison,
        alpha: f64,
        min_effect: f64,
    ) -> CompareReport {
        CompareReport {
            kind: COMPARE_KIND.into(),
            tool: tool.to_string(),
            threads,
            a: sides.a.to_string(),
            b: sides.b.to_string(),
            a_commit: sides.a_commit.to_string(),
            b_commit: sides.b_commit.to_string(),
            a_patches: sides.a_patches.to_vec(),
            b_patches: sides.b_patches.to_vec(),
            verdict: c.verdict,
            ratio: c.ratio.ratio,
            ratio_ci: (c.ratio.lo, c.ratio.hi),
            p_welch: c.p_welch,
            p_mwu: c.p_mwu,
            a_mean_us: c.a.mean,
            b_mean_us: c.b.mean,
            a_n: c.a.n,
            b_n: c.b.n,
            tests_disagree: c.tests_disagree,
            alpha,
            min_effect,
            comparison: *c,
            a_samples_us: Vec::new(),
            b_samples_us: Vec::new(),
            metric: Metric::Time,
        }
    }

    pub fn verdict_sentence(&self) -> String {
        let pct = crate::report::ratio_pct;
        match self.verdict {
            Verdict::Slower => format!("B is slower: {}", pct(self.ratio)),
            Verdict::Faster => format!("B is faster: {}", pct(self.ratio)),
            Verdict::Same => format!(
                "no significant change (any change is within ±{:.1}%)",
                self.min_effect * 100.0
            ),
            Verdict::Undecided => format!(
                "no significant change, but undecided: a change of ±{:.1}% cannot be ruled out with {} samples",
                self.min_effect * 100.0,
                self.a_n.min(self.b_n)
            ),
        }
    }

    fn change(&self) -> String {
        format!(
            "{:+.1}% [{:+.1}%, {:+.1}%]",
            (self.ratio - 1.0) * 100.0,
            (self.ratio_ci.0 - 1.0) * 100.0,
            (self.ratio_ci.1 - 1.0) * 100.0
        )
    }
}

fn short(id: &str) -> &str {
    id.get(..10).unwrap_or(id)
}

/// `6fb327f5aa`, or `6fb327f5aa+fix.patch` for a patched build.
fn build_label(commit: &str, patches: &[Patch]) -> String {
    format!("{}{}", short(commit), crate::build::patch::suffix(patches))
}

impl Export<CompareReport> for Text {
    fn export(&self, j: &CompareReport) -> Result<String> {
        self.export_linked(j, &Links::default())
    }

    fn export_linked(&self, j: &CompareReport, links: &Links) -> Result<String> {
        let u = j.metric.unit_ascii();
        Ok(format!(
            "verdict: {}\n{} at {} thread(s)\n  A {} ({}{}): {} {u} (n={})\n  B {} ({}{}): {} {u} (n={})\n  B/A: {}  p(Yuen)={:.2e}  p(Welch)={:.2e}  p(Mann-Whitney)={:.2e}{}{}\n",
            j.verdict_sentence(),
            j.tool,
            j.threads,
            j.a,
            build_label(&j.a_commit, &j.a_patches),
            links.text_suffix(&j.a_commit),
            us(j.a_mean_us),
            j.a_n,
            j.b,
            build_label(&j.b_commit, &j.b_patches),
            links.text_suffix(&j.b_commit),
            us(j.b_mean_us),
            j.b_n,
            j.change(),
            j.comparison.p_yuen,
            j.p_welch,
            j.p_mwu,
            pairs_note(&j.comparison),
            if j.tests_disagree { "  (the rank test disagrees)" } else { "" },
        ))
    }
}

impl Export<CompareReport> for Markdown {
    fn export(&self, j: &CompareReport) -> Result<String> {
        self.export_linked(j, &Links::default())
    }

    fn export_linked(&self, j: &CompareReport, links: &Links) -> Result<String> {
        let u = j.metric.unit();
        let side = |mean: f64, name: &str, commit: &str| {
            format!("{} (`{name}`{})", us(mean), md_link(links, commit))
        };
        let mut t = Table::new(&[
            "tool",
            "threads",
            &format!("A {u}"),
            &format!("B {u}"),
            "B/A",
            "p (Welch)",
            "verdict",
        ])
        .right(&[1, 2, 3, 5]);
        t.push(vec![
            format!("`{}`", j.tool),
            j.threads.to_string(),
            side(j.a_mean_us, &j.a, &j.a_commit),
            side(j.b_mean_us, &j.b, &j.b_commit),
            j.change(),
            format!("{:.2e}", j.p_welch),
            format!("{:?}", j.verdict),
        ]);
        Ok(t.markdown())
    }
}

/// " at [`sha`](url)" after a revision name, when the commit has a link.
fn md_link(links: &Links, commit: &str) -> String {
    match links.url(commit) {
        Some(_) => format!(" at {}", links.markdown(commit, short(commit))),
        None => String::new(),
    }
}

fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Slower => "slower",
        Verdict::Faster => "faster",
        Verdict::Same => "same",
        Verdict::Undecided => "undecided",
    }
}

impl CompareReport {
    /// The command that measures this again (the sampling options are not
    /// recorded in the result; the defaults are shown).
    pub fn command(&self) -> String {
        format!(
            "perfbisect compare --tool '{}' --threads {} --alpha {} --min-effect {} {} {}",
            self.tool, self.threads, self.alpha, self.min_effect, self.a, self.b
        )
    }
}

impl HtmlSections for CompareReport {
    fn section(&self, links: &Links) -> Result<Section> {
        let j = self;
        let heading = format!(
            "compare: <code>{}</code> at {} thread(s), <code>{}</code> → <code>{}</code>",
            esc(&j.tool),
            j.threads,
            esc(&j.a),
            esc(&j.b)
        );
        let summary = format!(
            "<p>{} {} (95% interval of B/A [{:+.1}%, {:+.1}%], p = {:.2e}{}).</p>\n",
            html::badge(verdict_word(j.verdict)),
            esc(&j.verdict_sentence()),
            (j.ratio_ci.0 - 1.0) * 100.0,
            (j.ratio_ci.1 - 1.0) * 100.0,
            j.p_welch,
            if j.tests_disagree {
                "; Welch and Mann-Whitney disagree: check for outliers"
            } else {
                ""
            }
        );
        let row = |side: &str, name: &str, commit: &str, n: usize, mean: f64, ci: (f64, f64)| {
            vec![
                side.to_string().into(),
                name.to_string().into(),
                Cell::commit(commit, short(commit)),
                n.to_string().into(),
                us(mean).into(),
                format!("{} – {}", us(ci.0), us(ci.1)).into(),
            ]
        };
        let mut tables = Table::new(&[
            "side",
            "revision",
            "commit",
            "n",
            &format!("mean {}", self.metric.unit()),
            "95% CI",
        ])
        .numeric_from(3)
        .with_cells(
            links,
            [
                row(
                    "A",
                    &j.a,
                    &j.a_commit,
                    j.a_n,
                    j.a_mean_us,
                    j.comparison.a.ci95,
                ),
                row(
                    "B",
                    &j.b,
                    &j.b_commit,
                    j.b_n,
                    j.b_mean_us,
                    j.comparison.b.ci95,
                ),
            ],
        )
        .html();
        tables.push_str(&format!(
            "<p>B/A {}; p (Welch) {:.2e}, p (Mann-Whitney) {:.2e}; alpha {}, smallest change of interest {:.1}%.</p>\n",
            esc(&j.change()),
            j.p_welch,
            j.p_mwu,
            j.alpha,
            j.min_effect * 100.0
        ));
        Ok(Section {
            heading,
            summary,
            tables,
            plots: String::new(),
            reproduce: html::command(&j.command()),
        })
    }
}
