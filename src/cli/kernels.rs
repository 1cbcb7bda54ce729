use crate::cli::exit::Exit;
use anyhow::Result;
use clap::Args;

use super::Global;
use crate::measure::kernel::Registry;
use crate::report::listing::{KernelList, KernelsFormat};

#[derive(Args)]
pub struct KernelsArgs {
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    format: KernelsFormat,
}

pub fn run(g: &Global, a: KernelsArgs) -> Result<Exit> {
    let reg = Registry::load(g.kernels_dir.as_deref())?;
    print!("{}", a.format.render(&KernelList::of(reg.all()))?);
    Ok(Exit::Done)
}
