//! SVG plots for people: µs/op against thread count (log scales, one line
//! per OpenSSL version, error bars of one standard deviation), and a
//! bisect's profile (µs/op along the range, change points marked).

use anyhow::Result;
use plotters::style::RGBColor;
use std::path::{Path, PathBuf};

mod axes;
mod layers;
mod profile;
mod threads;

pub use profile::{profile_svg, Level, Mark, PointKind, Profile, ProfilePoint};
pub use threads::{threads_svg, Series};

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// A tool spec as a file name: `pkeyread:key=ec` → `pkeyread_key_ec`.
pub fn file_stem(spec: &str) -> String {
    spec.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Writes `svg` to DIR/KIND-TOOL-tN.svg (DIR created if missing) and returns the path: the one
/// naming and writing of every `--plot` picture of a search.
pub fn write_svg(dir: &Path, kind: &str, tool: &str, threads: usize, svg: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot create plot directory {}: {e}", dir.display()))?;
    let path = dir.join(format!("{kind}-{}-t{threads}.svg", file_stem(tool)));
    std::fs::write(&path, svg)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}
