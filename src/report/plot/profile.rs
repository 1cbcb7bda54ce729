//! A bisect's or a scan's profile: what it holds (every tested commit along the range, the
//! change points, a fitted step model) and the order its layers are drawn in.

use anyhow::Result;
use plotters::prelude::*;

use super::axes::{tick_label, Frame, TickedAxis};
use super::layers::{
    draw_changes, draw_ends, draw_legend, draw_levels, draw_path, draw_points, draw_untested,
};
use super::COLORS;

/// How the search classified a tested commit (the profile's colours).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointKind {
    /// A scan's grid point (its level, not an end, decides what it is).
    Grid,
    Old,
    New,
    Between,
    Ambiguous,
    Skipped,
}

impl PointKind {
    pub(super) fn color(self) -> RGBColor {
        match self {
            PointKind::Grid => RGBColor(40, 40, 40),
            PointKind::Old => COLORS[0],
            PointKind::New => COLORS[1],
            PointKind::Between => COLORS[2],
            PointKind::Ambiguous => COLORS[4],
            PointKind::Skipped => COLORS[7],
        }
    }

    pub(super) fn label(self) -> &'static str {
        match self {
            PointKind::Grid => "grid point",
            PointKind::Old => "like the old end",
            PointKind::New => "like the new end",
            PointKind::Between => "between (part of the change)",
            PointKind::Ambiguous => "ambiguous",
            PointKind::Skipped => "skipped (not measurable)",
        }
    }
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

/// One fitted level: its value over the positions `first..=last`.
pub struct Level {
    pub first: usize,
    pub last: usize,
    pub value: f64,
}

pub(super) const PROFILE_SIZE: (u32, u32) = (1000, 560);
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
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, ("sans-serif", 20))
        .margin(15)
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
