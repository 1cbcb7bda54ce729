use crate::cli::exit::Exit;
use anyhow::Result;
use clap::Args;

use super::Global;
use crate::measure::kernel::Registry;
use crate::measure::perftools;
use crate::report::export::{Export, Json};
use crate::report::listing::KernelList;
use crate::report::{Format, Table};

#[derive(Args)]
pub struct KernelsArgs {
    /// Output format
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

pub fn run(g: &Global, a: KernelsArgs) -> Result<Exit> {
    let reg = Registry::load(g.kernels_dir.as_deref())?;
    if a.format == Format::Json {
        print!("{}", Json.export(&KernelList::of(reg.all()))?);
        return Ok(Exit::Done);
    }
    let mut t = Table::new(&[
        "kernel",
        "since",
        "arguments (default first)",
        "one operation",
        "perftools counterpart",
    ]);
    for k in reg.all() {
        let args: Vec<String> = k
            .args
            .iter()
            .map(|a| {
                let mut s = format!("{}={}", a.name, a.default);
                let others: Vec<&str> = a
                    .choices
                    .iter()
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
        t.push(vec![
            k.name.clone(),
            k.min_version.to_string(),
            if args.is_empty() {
                "-".into()
            } else {
                args.join(", ")
            },
            k.summary.clone(),
            perftools::pairing(&k.name).to_string(),
        ]);
    }
    print!("{}", t.render(a.format)?);
    Ok(Exit::Done)
}
