//! A bisect's or a scan's profile: what it holds (every tested commit along the range, the
//! change points, a fitted step model) and the order its layers are drawn in.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor;

use super::axes::{tick_label, Frame, TickedAxis};
use super::layers::{
    draw_changes, draw_ends, draw_legend, draw_levels, draw_path, draw_points, draw_untested,
};
use super::COLORS;

/// What a commit on the profile is. Its colour is not its kind but the level it sits on
/// ([`Profile::level_of`]): coloured by the search's verdict in the sub-range that tested it, a
/// commit read "like the old end" of a sub-range that was on the range's new level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointKind {
    /// A scan's grid point: ringed.
    Grid,
    /// A commit a search tested.
    Tested,
    /// Not measurable: a grey cross at the bottom.
    Skipped,
}

impl PointKind {
    pub(super) fn label(self) -> &'static str {
        match self {
            PointKind::Grid => "grid point",
            PointKind::Tested => "tested commit",
            PointKind::Skipped => "skipped (not measurable)",
        }
    }
}

/// The colours of the levels, oldest first, then again: the palette without the red of the
/// change-point lines and the grey of skipped commits.
const LEVEL_COLORS: [usize; 6] = [0, 1, 2, 4, 5, 6];

/// The colour of the `level`-th level.
pub(super) fn level_color(level: usize) -> RGBColor {
    COLORS[LEVEL_COLORS[level % LEVEL_COLORS.len()]]
}

/// The grey of a skipped commit.
pub(super) fn skipped_color() -> RGBColor {
    COLORS[7]
}

pub struct ProfilePoint {
    /// Position in the range, 0 = the old end.
    pub x: usize,
    pub mean: f64,
    pub ci: (f64, f64),
    pub kind: PointKind,
    /// The x axis label when there is room for it.
    pub date: String,
}

/// A change point: a line between parent and culprit, and its label.
pub struct Mark {
    pub parent: usize,
    pub culprit: usize,
    pub label: String,
    /// Located but unresolved on its fresh block: drawn apart from the change points (grey,
    /// dotted), never as one.
    pub unresolved: bool,
}

/// A bisect's profile: every tested commit along the range.
pub struct Profile {
    pub title: String,
    pub commits: usize,
    pub points: Vec<ProfilePoint>,
    /// Labels of the old and the new end (at 0 and `commits - 1`).
    pub ends: (String, String),
    pub changes: Vec<Mark>,
    /// Label of the value axis (the metric's, e.g. "µs per operation").
    pub axis: &'static str,
    /// A fitted step model (a scan's levels), drawn under the points; empty for a bisect.
    pub levels: Vec<Level>,
}

impl Profile {
    /// The level a commit at `x` sits on: how many change points lie at or before it (a
    /// located one of unresolved size divides no level).
    pub fn level_of(&self, x: usize) -> usize {
        (self.changes.iter())
            .filter(|c| !c.unresolved && c.culprit <= x)
            .count()
    }

    /// How many levels the change points divide the range into.
    pub(super) fn levels_drawn(&self) -> usize {
        1 + self.changes.iter().filter(|c| !c.unresolved).count()
    }
}

/// One fitted level: its value over the positions `first..=last`.
pub struct Level {
    pub first: usize,
    pub last: usize,
    pub value: f64,
}

pub(super) const PROFILE_SIZE: (u32, u32) = (1000, 560);
/// Pixels above the plot for the title.
pub(super) const TITLE_ROW: u32 = 44;
/// Pixels per row of change-point labels above the plot.
pub(super) const LABEL_ROW: u32 = 17;
/// At most this many rows of labels: more change points share them, left and right.
pub(super) const LABEL_ROWS: usize = 8;

/// Rows of change-point labels above the plot: one per change point, up to [`LABEL_ROWS`].
pub(super) fn label_rows(p: &Profile) -> usize {
    p.changes.len().min(LABEL_ROWS)
}
/// Pixels between two date labels on the x axis.
pub(super) const LABEL_SPACING: f64 = 90.0;

pub fn profile_svg(p: &Profile) -> Result<String> {
    let measured: Vec<&ProfilePoint> = p.points.iter().filter(|q| drawable(q.mean)).collect();
    let frame = Frame::new(p, &measured);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, PROFILE_SIZE).into_drawing_area();
        let e = |e: DrawingAreaErrorKind<_>| anyhow::anyhow!("plotting {}: {e:?}", p.title);
        root.fill(&WHITE).map_err(e)?;
        // The legend gets its own strip: inside the plot it would cover points
        // wherever they happen to be.
        let (upper, strip) = root.split_vertically(PROFILE_SIZE.1 - 28);
        let mut chart = profile_chart(&upper, p, &frame).map_err(e)?;
        // In this order: each layer is drawn over the ones before it.
        draw_untested(&mut chart, p, &frame).map_err(e)?;
        draw_path(&mut chart, &measured, &frame.y).map_err(e)?;
        draw_levels(&mut chart, p, &frame).map_err(e)?;
        draw_changes(&mut chart, p, &frame).map_err(e)?;
        draw_ends(&mut chart, p, &measured, &frame).map_err(e)?;
        let legend = draw_points(&mut chart, p, &measured, &frame.y).map_err(e)?;
        draw_legend(&strip, &legend, p).map_err(e)?;
        root.present().map_err(e)?;
    }
    Ok(svg)
}

/// A value the profile can place: a mean, an interval's end or a level (a skipped commit's
/// mean is NaN, and nothing is placed at or below zero on a log axis).
pub(super) fn drawable(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

pub(super) fn drawn_levels(p: &Profile) -> impl Iterator<Item = &Level> {
    p.levels.iter().filter(|l| drawable(l.value))
}

/// The profile's chart: the plot area with its axes drawn.
pub(super) type ProfileChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<TickedAxis, TickedAxis>>;
pub(super) type Drawn<T = ()> = std::result::Result<T, DrawingAreaErrorKind<std::io::Error>>;

/// The chart on `area` with its axes: positions labelled by commit date, values by the
/// metric's axis label.
fn profile_chart<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    p: &Profile,
    frame: &Frame,
) -> Drawn<ProfileChart<'a, 'b>> {
    let (n, log) = (frame.n, frame.y.log);
    let pad = (n as f64 * 0.02).max(0.6);
    area.draw(&Text::new(
        p.title.clone(),
        (PROFILE_SIZE.0 as i32 / 2, 12),
        ("sans-serif", 20)
            .into_font()
            .color(&BLACK)
            .pos(text_anchor::Pos::new(
                text_anchor::HPos::Center,
                text_anchor::VPos::Top,
            )),
    ))?;
    let mut chart = ChartBuilder::on(area)
        .margin(15)
        // Room above the plot for the title and the change points' labels (over the plot they
        // hid points): the title is drawn at the top of `area`, the labels under it.
        .margin_top(TITLE_ROW + LABEL_ROW * label_rows(p) as u32)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(
            TickedAxis {
                range: -pad..(n as f64 - 1.0 + pad),
                ticks: frame.date_ticks(p),
            },
            TickedAxis {
                range: frame.y.bottom..frame.y.top,
                ticks: frame.y.ticks(),
            },
        )?;
    let dates: std::collections::HashMap<usize, String> =
        p.points.iter().map(|q| (q.x, q.date.clone())).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_desc(format!(
            "position in the range ({n} commits, first-parent order; labels: commit dates)"
        ))
        .y_desc(if log {
            format!("{} (log scale)", p.axis)
        } else {
            p.axis.to_string()
        })
        .x_label_formatter(&|x| {
            dates
                .get(&(x.round().max(0.0) as usize))
                .cloned()
                .unwrap_or_default()
        })
        .y_label_formatter(&|y| tick_label(if log { 10f64.powf(*y) } else { *y }))
        .draw()?;
    Ok(chart)
}
