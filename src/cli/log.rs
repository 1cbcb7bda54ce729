use crate::cli::exit::Exit;
use anyhow::Result;
use clap::Args;
use std::path::Path;

use super::Global;
use crate::cache::Cache;
use crate::report::bisect::SavedBisect;
use crate::report::export::check_schema;
use crate::report::listing::{BisectLog, LogFormat};

#[derive(Args)]
pub struct LogArgs {
    #[arg(long, value_enum, default_value = "text")]
    format: LogFormat,
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
    let cache = Cache::open(&g.cache())?;
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
    print!("{}", a.format.render(&BisectLog { bisects: all })?);
    Ok(Exit::Done)
}
