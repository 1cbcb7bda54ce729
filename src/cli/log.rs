use crate::cli::exit::Exit;
use anyhow::Result;
use clap::Args;
use std::path::Path;

use super::Global;
use crate::cache::Cache;
use crate::report::bisect::SavedBisect;
use crate::report::export::{check_schema, Export, Json};
use crate::report::listing::BisectLog;
use crate::report::{Format, Table};

#[derive(Args)]
pub struct LogArgs {
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

/// A recorded bisect, or why the list leaves it out. A record a newer perfbisect wrote is
/// skipped with a warning, not an error: a cache two versions share still lists what this one
/// can read.
fn read_record(p: &Path) -> Result<SavedBisect, String> {
    let damaged = || {
        format!(
            "ignoring damaged bisect record {} (or one written by an older perfbisect)",
            p.display()
        )
    };
    let v: serde_json::Value = std::fs::read_to_string(p)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .ok_or_else(damaged)?;
    check_schema(p, &v).map_err(|e| format!("ignoring a bisect record: {e:#}"))?;
    serde_json::from_value(v).map_err(|_| damaged())
}

/// Past bisects in this cache, newest first, with their results.
pub fn run(g: &Global, a: LogArgs) -> Result<Exit> {
    let cache = Cache::open(g.cache.as_deref())?;
    let dir = cache.dir("bisects")?;
    let mut all: Vec<SavedBisect> = Vec::new();
    for e in std::fs::read_dir(&dir)?.flatten() {
        let p = e.path();
        if p.extension().and_then(|x| x.to_str()) != Some("json") {
            continue;
        }
        match read_record(&p) {
            Ok(s) => all.push(s),
            Err(why) => eprintln!("perfbisect: warning: {why}"),
        }
    }
    all.sort_by_key(|s| std::cmp::Reverse(s.updated));
    if a.format == Format::Json {
        print!("{}", Json.export(&BisectLog { bisects: all })?);
        return Ok(Exit::Done);
    }
    let mut t = Table::new(&["id", "when", "state", "result", "command"]);
    for s in &all {
        let result = match &s.result {
            None => "-".to_string(),
            Some(r) if r.changes.is_empty() => "no change".to_string(),
            Some(r) => r
                .changes
                .iter()
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
    print!("{}", t.render(a.format)?);
    Ok(Exit::Done)
}
