//! The result of `parity`: each kernel next to its perftools counterpart on the same OpenSSL,
//! sampled round by round (one perftools run and one perfbisect sample back to back).

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::export::{formats, Export, Markdown, Text};
use crate::analysis::stats::{self, RatioCi};
use crate::build::version::OpenSslVersion;
use crate::measure::metric::Metric;
use crate::measure::perftools::Counterpart;
use crate::report::{us, Table};
use crate::unavailable::Unavailable;

formats!(ParityFormat for ParityReport { Text alias "table", Markdown, Json });

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParityReport {
    /// What both sides measured: µs per operation, or instructions per operation (perfbisect:
    /// its timed loop; perftools: its worker thread, with the thread's setup and a clock read
    /// per call).
    #[serde(default)]
    pub metric: Metric,
    /// A row is "within" when perfbisect's mean is within this fraction of perftools' (0.05).
    pub band: f64,
    pub rounds: usize,
    /// 1-minute load average read before each round: min, mean, max.
    pub load: (f64, f64, f64),
    pub rows: Vec<ParityRow>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ParityRow {
    pub openssl: String,
    pub spec: String,
    pub perftools: String,
    pub threads: usize,
    /// Per operation in the report's metric (µs, or instructions), one value per round (same
    /// order on both sides).
    pub perftools_us: Vec<f64>,
    pub perfbisect_us: Vec<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub differs: Option<String>,
    /// Why the row has no numbers (the kernel or the program does not apply to this version).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<RowNotApplicable>,
}

/// Why a parity row has no numbers: one side cannot run on this OpenSSL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RowNotApplicable {
    /// The perftools build for this OpenSSL has no such program.
    NoProgram { program: String, openssl: String },
    /// perftools' program refuses these options before `needs` (newrawkey -a ml-kem-*: 3.5).
    PerftoolsTooOld {
        program: String,
        options: Vec<String>,
        needs: String,
    },
    /// perfbisect's kernel does not apply to this version.
    Kernel { why: Unavailable },
}

impl RowNotApplicable {
    /// Why perftools cannot run `cp` on this OpenSSL (`openssl`, of `version`; its perftools
    /// build has the program or not), if it cannot.
    pub fn of_counterpart(
        cp: &Counterpart,
        has_program: bool,
        openssl: &str,
        version: Option<&OpenSslVersion>,
    ) -> Option<RowNotApplicable> {
        if !has_program {
            return Some(RowNotApplicable::NoProgram {
                program: cp.program.to_string(),
                openssl: openssl.to_string(),
            });
        }
        let needs = cp.needs_newer_than(version)?;
        Some(RowNotApplicable::PerftoolsTooOld {
            program: cp.program.to_string(),
            options: cp.options.clone(),
            needs: needs.to_string(),
        })
    }
}

impl std::fmt::Display for RowNotApplicable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RowNotApplicable::NoProgram { program, openssl } => {
                write!(f, "perftools has no {program} for {openssl}")
            }
            RowNotApplicable::PerftoolsTooOld {
                program,
                options,
                needs,
            } => write!(
                f,
                "perftools' {program} {} needs OpenSSL {needs}",
                options.join(" ")
            ),
            RowNotApplicable::Kernel { why } => f.write_str(&why.reason()),
        }
    }
}

/// How a row compares with the band.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Within {
    Yes,
    /// Outside, but the paired interval reaches into the band.
    Noise,
    No,
}

impl ParityRow {
    /// perfbisect's mean over perftools'.
    pub fn ratio_of_means(&self) -> Option<f64> {
        let (a, b) = (
            stats::summarize(&self.perftools_us),
            stats::summarize(&self.perfbisect_us),
        );
        (a.n > 0 && b.n > 0 && a.mean > 0.0).then(|| b.mean / a.mean)
    }

    /// Round by round (the project's paired test: trimmed, on logs), with a 95% interval.
    pub fn paired(&self) -> Option<RatioCi> {
        stats::yuen_paired(&self.perftools_us, &self.perfbisect_us)?.ratio_ci(0.95)
    }

    pub fn within(&self, band: f64) -> Option<Within> {
        let r = self.ratio_of_means()?;
        if (r - 1.0).abs() <= band {
            return Some(Within::Yes);
        }
        let reaches = self
            .paired()
            .is_some_and(|c| c.lo <= 1.0 + band && c.hi >= 1.0 - band);
        Some(if reaches { Within::Noise } else { Within::No })
    }
}

fn parity_table(r: &ParityReport) -> Table {
    let unit = r.metric.unit_ascii();
    let (pt_head, pb_head) = (format!("perftools {unit}"), format!("perfbisect {unit}"));
    let mut t = Table::new(&[
        "openssl",
        "tool",
        "perftools",
        "threads",
        "n",
        &pt_head,
        &pb_head,
        "diff",
        "paired diff [95% CI]",
        "within",
    ])
    .numeric_from(3);
    let band = format!("±{:.0}%", r.band * 100.0);
    for row in &r.rows {
        let mut cells = vec![
            row.openssl.clone(),
            row.spec.clone(),
            row.perftools.clone(),
            row.threads.to_string(),
            row.perftools_us
                .len()
                .min(row.perfbisect_us.len())
                .to_string(),
        ];
        if let Some(why) = &row.not_applicable {
            cells.extend([
                "n/a".into(),
                "n/a".into(),
                "-".into(),
                why.to_string(),
                "-".into(),
            ]);
            t.push(cells);
            continue;
        }
        let mean_sd = |xs: &[f64]| {
            let s = stats::summarize(xs);
            format!("{} ± {}", us(s.mean), us(s.sd))
        };
        cells.push(mean_sd(&row.perftools_us));
        cells.push(mean_sd(&row.perfbisect_us));
        cells.push(
            row.ratio_of_means()
                .map(|x| format!("{:+.1}%", (x - 1.0) * 100.0))
                .unwrap_or_else(|| "?".into()),
        );
        cells.push(row.paired().map(|c| c.pct()).unwrap_or_else(|| "?".into()));
        let mut within = match row.within(r.band) {
            Some(Within::Yes) => format!("yes ({band})"),
            Some(Within::Noise) => "noise (CI reaches the band)".into(),
            Some(Within::No) => "no".into(),
            None => "?".into(),
        };
        if row.differs.is_some() {
            within.push_str(" *");
        }
        cells.push(within);
        t.push(cells);
    }
    t
}

fn footer(r: &ParityReport) -> String {
    let (lo, mean, hi) = r.load;
    let counted: Vec<Within> = r.rows.iter().filter_map(|x| x.within(r.band)).collect();
    let yes = counted.iter().filter(|w| **w == Within::Yes).count();
    let mut notes = String::new();
    for row in &r.rows {
        if let Some(d) = &row.differs {
            let line = format!("* {}: differs by definition: {d}\n", row.spec);
            if !notes.contains(&line) {
                notes.push_str(&line);
            }
        }
    }
    if !r.metric.is_time() {
        notes.push_str(
            "* instructions: perfbisect counts its timed loop; perftools (under callgrind) its \
             worker thread, which adds the thread's setup and a clock read per call\n",
        );
    }
    notes
        + &format!(
        "{yes} of {} rows within ±{:.0}% of perftools; {} rounds, each row's perftools run and \
         perfbisect sample back to back (order alternating); load average {lo:.2}–{hi:.2} \
         (mean {mean:.2})\n",
        counted.len(),
        r.band * 100.0,
        r.rounds
    )
}

impl Export<ParityReport> for Text {
    fn export(&self, r: &ParityReport) -> Result<String> {
        Ok(format!("{}\n{}", parity_table(r).text(), footer(r)))
    }
}

impl Export<ParityReport> for Markdown {
    fn export(&self, r: &ParityReport) -> Result<String> {
        Ok(format!("{}\n{}", parity_table(r).markdown(), footer(r)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(pt: &[f64], pb: &[f64]) -> ParityRow {
        ParityRow {
            openssl: "system".into(),
            spec: "newrawkey".into(),
            perftools: "newrawkey -t 1".into(),
            threads: 1,
            perftools_us: pt.to_vec(),
            perfbisect_us: pb.to_vec(),
            differs: None,
            not_applicable: None,
        }
    }

    #[test]
    fn rows_are_judged_against_the_band() {
        let same = row(&[2.0, 2.1, 2.05, 1.98], &[2.02, 2.08, 2.07, 2.0]);
        assert_eq!(same.within(0.05), Some(Within::Yes));
        let slower = row(&[2.0, 2.1, 2.05, 1.98], &[2.3, 2.42, 2.35, 2.27]);
        assert_eq!(slower.within(0.05), Some(Within::No));
        assert!(slower.paired().unwrap().lo > 1.1);
        let noisy = row(&[2.0, 2.1, 2.05, 1.98], &[2.0, 2.9, 2.1, 2.4]);
        assert_eq!(noisy.within(0.05), Some(Within::Noise));
    }

    #[test]
    fn text_names_each_row_and_counts_the_matches() {
        let r = ParityReport {
            metric: Metric::Time,
            band: 0.05,
            rounds: 4,
            load: (0.5, 0.75, 1.0),
            rows: vec![
                row(&[2.0, 2.1, 2.05, 1.98], &[2.02, 2.08, 2.07, 2.0]),
                ParityRow {
                    not_applicable: Some(RowNotApplicable::Kernel {
                        why: Unavailable::TooOld {
                            kernel: "providerdoall".into(),
                            needs: "3.0".into(),
                            have: "1.1.1w".into(),
                        },
                    }),
                    ..row(&[], &[])
                },
            ],
        };
        let out = Text.export(&r).unwrap();
        assert!(out.contains("yes (±5%)"), "{out}");
        assert!(out.contains("providerdoall needs OpenSSL 3.0"), "{out}");
        assert!(out.contains("1 of 1 rows within ±5%"), "{out}");
    }
}
