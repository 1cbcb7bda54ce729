//! Rendering results for people and machines: tables, Markdown, CSV, JSON and
//! SVG plots. Renders what it is given; measures and decides nothing.

pub mod plot;
pub mod table;

pub use table::*;
