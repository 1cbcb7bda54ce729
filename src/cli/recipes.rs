use crate::cli::exit::Exit;
use anyhow::Result;

use crate::build::recipe;
use crate::report::Table;

/// The built-in Configure recipes (build-recipes/*.toml).
pub fn run() -> Result<Exit> {
    let mut t = Table::new(&["recipe", "description"]);
    for (name, desc) in recipe::list() {
        t.push(vec![name, desc]);
    }
    print!("{}", t.text());
    Ok(Exit::Done)
}
