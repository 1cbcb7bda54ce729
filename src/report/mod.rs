//! Rendering results for people and machines: tables, Markdown, CSV, JSON,
//! JUnit and SVG plots. Each command's typed result lives here with its
//! renderers; nothing here measures or decides.

pub mod answer;
pub mod bisect;
pub mod change_points;
pub mod compare;
pub mod events;
pub mod explain;
pub mod export;
pub mod gate;
pub mod html;
pub mod interrupted;
pub mod listing;
pub mod matrix;
pub mod parity;
pub mod plan;
pub mod plot;
pub mod run;
pub mod scan;
pub mod schema;
pub mod simulate;
pub mod standing;
pub mod table;

pub use table::*;

#[cfg(test)]
mod render_tests;
