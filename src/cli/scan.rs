//! `perfbisect scan`: a coarse grid first, then a search of every grid interval that changed.
//! The scan itself is [`super::scanning`], which `bisect --scan` runs too.

use anyhow::Result;

pub use super::scanning::ScanArgs;
use crate::cli::exit::Exit;
use crate::Global;

pub fn run(g: &Global, a: ScanArgs) -> Result<Exit> {
    super::scanning::scan(g, a)
}
