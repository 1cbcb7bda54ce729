use anyhow::Result;
use std::process::ExitCode;

use crate::build::recipe;
use crate::report::Table;

/// The built-in Configure recipes (build-recipes/*.toml).
pub fn run() -> Result<ExitCode> {
    let mut t = Table::new(&["recipe", "description"]);
    for (name, desc) in recipe::list() {
        t.push(vec![name, desc]);
    }
    print!("{}", t.text());
    Ok(ExitCode::SUCCESS)
}
