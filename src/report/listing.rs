//! The lists `log`, `cache ls` and `kernels` print: each one table (text, Markdown, CSV) or,
//! with `--format json`, its entries under a named key of an object, so that they carry
//! `schema` as every other result does (a bare array has no place for it).

use serde::Serialize;

use super::bisect::SavedBisect;
use super::export::formats;
use super::table::{Table, Tabular};
use crate::build::builds::BuildMeta;
use crate::measure::kernel::Kernel;
use crate::measure::perftools;

formats!(LogFormat for BisectLog { Text alias "table", Markdown, Json, Csv });
formats!(BuildsFormat for BuildList { Text alias "table", Markdown, Json, Csv });
formats!(KernelsFormat for KernelList { Text alias "table", Markdown, Json, Csv });

/// `log`: the bisects recorded in the cache, newest first.
#[derive(Serialize, schemars::JsonSchema)]
pub struct BisectLog {
    pub bisects: Vec<SavedBisect>,
}

/// `cache ls`: the cached builds' records, newest first.
#[derive(Serialize, schemars::JsonSchema)]
pub struct BuildList {
    pub builds: Vec<BuildMeta>,
    /// What the table shows beside each record, in `builds`' order (not in the JSON).
    #[serde(skip)]
    pub on_disk: Vec<OnDisk>,
}

/// A cached build's footprint as `cache ls` shows it.
pub struct OnDisk {
    pub bytes: u64,
    /// Seconds since it was built.
    pub age_s: u64,
}

/// `kernels`: every kernel the registry holds.
#[derive(Serialize, schemars::JsonSchema)]
pub struct KernelList {
    pub kernels: Vec<ListedKernel>,
}

/// A kernel as `kernels` lists it: its metadata and its perftools pairing.
#[derive(Serialize, schemars::JsonSchema)]
pub struct ListedKernel {
    #[serde(flatten)]
    pub kernel: Kernel,
    /// The perftools program and flags its specs pair with ("-": none).
    pub perftools: &'static str,
}

impl KernelList {
    pub fn of<'a>(kernels: impl Iterator<Item = &'a Kernel>) -> KernelList {
        KernelList {
            kernels: kernels
                .map(|kernel| ListedKernel {
                    kernel: kernel.clone(),
                    perftools: perftools::pairing(&kernel.name),
                })
                .collect(),
        }
    }
}

impl Tabular for BisectLog {
    fn table(&self) -> Table {
        let mut t = Table::new(&["id", "when", "state", "result", "command"]);
        for s in &self.bisects {
            let result = match &s.result {
                None => "-".to_string(),
                Some(r) if r.changes.is_empty() => "no change".to_string(),
                Some(r) => (r.changes.iter())
                    .map(|c| {
                        format!(
                            "{} {:+.1}%",
                            c.info.commit.get(..10).unwrap_or(&c.info.commit),
                            (c.ratio - 1.0) * 100.0
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            let when = chrono::DateTime::from_timestamp(s.updated as i64, 0)
                .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
                .unwrap_or_default();
            t.push(vec![
                s.id.clone(),
                when,
                s.state.to_string(),
                result,
                s.command.clone(),
            ]);
        }
        t
    }
}

fn age(secs: u64) -> String {
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s if s < 172800 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

fn size(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / 1048576.0)
}

impl Tabular for BuildList {
    fn table(&self) -> Table {
        let mut t = Table::new(&[
            "commit", "version", "recipe", "size", "age", "status", "subject",
        ]);
        for (b, d) in self.builds.iter().zip(&self.on_disk) {
            t.push(vec![
                b.commit[..10].to_string(),
                b.version.to_string(),
                b.recipe.clone(),
                size(d.bytes),
                age(d.age_s),
                (if b.ok { "ok" } else { "failed" }).to_string(),
                b.summary.clone(),
            ]);
        }
        t
    }
}

/// A kernel's arguments as `name=default (other|choices)`, or `-` when it has none.
fn arguments(k: &Kernel) -> String {
    let args: Vec<String> = (k.args.iter())
        .map(|a| {
            let mut s = format!("{}={}", a.name, a.default);
            let others: Vec<&str> = (a.choices.iter())
                .filter(|c| **c != a.default)
                .map(|c| c.as_str())
                .collect();
            if !others.is_empty() {
                s.push_str(&format!(" ({})", others.join("|")));
            } else if a.integer {
                s.push_str(" (int)");
            }
            s
        })
        .collect();
    if args.is_empty() {
        "-".into()
    } else {
        args.join(", ")
    }
}

impl Tabular for KernelList {
    fn table(&self) -> Table {
        let mut t = Table::new(&[
            "kernel",
            "since",
            "arguments (default first)",
            "one operation",
            "perftools counterpart",
        ]);
        for l in &self.kernels {
            let k = &l.kernel;
            t.push(vec![
                k.name.clone(),
                k.min_version.to_string(),
                arguments(k),
                k.summary.clone(),
                l.perftools.to_string(),
            ]);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// `--format table`, these lists' default before they had their own formats, still works.
    #[test]
    fn table_still_names_the_text_list() {
        assert_eq!(LogFormat::from_str("table", false), Ok(LogFormat::Text));
        assert_eq!(
            BuildsFormat::from_str("table", false),
            Ok(BuildsFormat::Text)
        );
        assert_eq!(
            KernelsFormat::from_str("table", false),
            Ok(KernelsFormat::Text)
        );
        assert!(KernelsFormat::from_str("html", false).is_err());
    }
}
