//! The layers of a profile, each drawn over the ones before it, and its legend.

use plotters::prelude::*;
use plotters::style::text_anchor;

use super::axes::{Frame, ValueAxis};
use super::profile::{
    drawable, drawn_levels, level_color, skipped_color, Drawn, Mark, PointKind, Profile,
    ProfileChart, ProfilePoint, LABEL_ROW, LABEL_ROWS,
};

/// About how wide `s` is in pixels at `size` (no font metrics in an SVG
/// written without a font backend).
fn text_width(s: &str, size: i32) -> i32 {
    (s.chars().count() as f64 * size as f64 * 0.47).ceil() as i32
}

/// A white box behind a 13px label that starts 5 px right of its anchor
/// (or ends 5 px left of it) with its top at `dy`.
fn label_background(label: &str, right: bool, dy: i32) -> Rectangle<(i32, i32)> {
    let w = text_width(label, 13);
    let (x0, x1) = if right { (-5 - w, -5) } else { (5, 5 + w) };
    Rectangle::new(
        [(x0 - 2, dy - 1), (x1 + 2, dy + 15)],
        WHITE.mix(0.9).filled(),
    )
}

const GRAY: RGBColor = RGBColor(90, 90, 90);
const LEVEL_BLUE: RGBColor = RGBColor(31, 119, 180);
const CHANGE_RED: RGBColor = RGBColor(180, 30, 30);

/// Untested stretches: shaded, with their size where it fits.
pub(super) fn draw_untested(chart: &mut ProfileChart, p: &Profile, frame: &Frame) -> Drawn {
    let (ybot, ytop) = (frame.y.bottom, frame.y.top);
    let mut tested: Vec<usize> = p.points.iter().map(|q| q.x).collect();
    tested.sort();
    tested.dedup();
    for pair in tested.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if b - a < 2 {
            continue;
        }
        let (x0, x1) = (a as f64 + 0.5, b as f64 - 0.5);
        chart.draw_series(std::iter::once(Rectangle::new(
            [(x0, ybot), (x1, ytop)],
            RGBColor(0, 0, 0).mix(0.05).filled(),
        )))?;
        if (x1 - x0 + 1.0) * frame.px_per_commit >= 75.0 {
            let style = ("sans-serif", 12)
                .into_font()
                .color(&GRAY)
                .pos(text_anchor::Pos::new(
                    text_anchor::HPos::Center,
                    text_anchor::VPos::Bottom,
                ));
            chart.draw_series(std::iter::once(
                EmptyElement::at(((x0 + x1) / 2.0, ybot))
                    + Text::new(format!("{} untested", b - a - 1), (0, -4), style),
            ))?;
        }
    }
    Ok(())
}

/// Measured commits joined in range order: solid between neighbours, dashed across an
/// untested stretch.
pub(super) fn draw_path(
    chart: &mut ProfileChart,
    measured: &[&ProfilePoint],
    y: &ValueAxis,
) -> Drawn {
    let mut line: Vec<&ProfilePoint> = measured.to_vec();
    line.sort_by_key(|q| q.x);
    for pair in line.windows(2) {
        let pts = vec![
            (pair[0].x as f64, y.at(pair[0].mean)),
            (pair[1].x as f64, y.at(pair[1].mean)),
        ];
        if pair[1].x - pair[0].x == 1 {
            chart.draw_series(LineSeries::new(pts, GRAY.stroke_width(1)))?;
        } else {
            chart.draw_series(DashedLineSeries::new(
                pts,
                4,
                4,
                GRAY.mix(0.6).stroke_width(1),
            ))?;
        }
    }
    Ok(())
}

/// The fitted levels: wide pale bands under the points, a single-point level as wide as a
/// grid cell's quarter so it stays visible.
pub(super) fn draw_levels(chart: &mut ProfileChart, p: &Profile, frame: &Frame) -> Drawn {
    let half = (frame.n as f64 / (p.levels.len().max(1) as f64 * 8.0)).max(0.5);
    for l in drawn_levels(p) {
        let (x0, x1) = if l.first == l.last {
            (l.first as f64 - half, l.last as f64 + half)
        } else {
            (l.first as f64, l.last as f64)
        };
        let level = frame.y.at(l.value);
        chart.draw_series(LineSeries::new(
            vec![(x0, level), (x1, level)],
            LEVEL_BLUE.mix(0.45).stroke_width(6),
        ))?;
    }
    Ok(())
}

/// A 13px label beside its anchor, its top at the anchor's height: to the anchor's left
/// when `right` (in the right part of the plot, where it would run off), else to its right.
fn side_label_style(color: &RGBColor, right: bool) -> TextStyle<'static> {
    let h = if right {
        text_anchor::HPos::Right
    } else {
        text_anchor::HPos::Left
    };
    ("sans-serif", 13)
        .into_font()
        .color(color)
        .pos(text_anchor::Pos::new(h, text_anchor::VPos::Top))
}

/// A change point's line: red dashes; a located, unresolved point's: grey dots.
fn mark_style(c: &Mark) -> (u32, u32, RGBColor) {
    if c.unresolved {
        (2, 4, GRAY)
    } else {
        (6, 3, CHANGE_RED)
    }
}

/// Change points: a line between parent and culprit, its label in the rows above the plot
/// (oldest lowest), drawn after every line so no line crosses a label and no label hides a
/// point.
pub(super) fn draw_changes(chart: &mut ProfileChart, p: &Profile, frame: &Frame) -> Drawn {
    let (ybot, ytop) = (frame.y.bottom, frame.y.top);
    let mid = |c: &Mark| (c.parent as f64 + c.culprit as f64) / 2.0;
    for c in &p.changes {
        let (dash, gap, color) = mark_style(c);
        chart.draw_series(DashedLineSeries::new(
            vec![(mid(c), ybot), (mid(c), ytop)],
            dash,
            gap,
            color.stroke_width(2),
        ))?;
    }
    for (i, c) in p.changes.iter().enumerate() {
        let x = mid(c);
        let right = x > frame.n as f64 * 0.6;
        let style = side_label_style(&mark_style(c).2, right);
        let row = (i % LABEL_ROWS) as i32;
        let dy = -(LABEL_ROW as i32) * (row + 1) - 2;
        chart.draw_series(std::iter::once(
            EmptyElement::at((x, ytop))
                + label_background(&c.label, right, dy)
                + Text::new(c.label.clone(), (if right { -5 } else { 5 }, dy), style),
        ))?;
    }
    Ok(())
}

/// The ends: ringed and named, under the points so a label hides none.
pub(super) fn draw_ends(
    chart: &mut ProfileChart,
    p: &Profile,
    measured: &[&ProfilePoint],
    frame: &Frame,
) -> Drawn {
    for (x, label, right) in [(0, &p.ends.0, false), (frame.n - 1, &p.ends.1, true)] {
        let Some(q) = measured.iter().find(|q| q.x == x) else {
            continue;
        };
        let y = frame.y.at(q.mean);
        // Above the point, unless the fitted level there lies above it: a label must not
        // hide the level it belongs to (the newest level of a 2,000-commit scan was).
        let level_above = p
            .levels
            .iter()
            .find(|l| (l.first..=l.last).contains(&x))
            .is_some_and(|l| l.value.is_finite() && frame.y.at(l.value) > y);
        let dy = if level_above { 12 } else { -25 };
        let style = side_label_style(&BLACK, right);
        chart.draw_series(std::iter::once(
            EmptyElement::at((x as f64, y))
                + Circle::new((0, 0), 8, BLACK.stroke_width(1))
                + label_background(label, right, dy)
                + Text::new(label.clone(), (if right { -5 } else { 5 }, dy), style),
        ))?;
    }
    Ok(())
}

/// The tested commits, each in the colour of the level it sits on, with their intervals (a
/// grid point ringed); skipped ones as crosses at the bottom. Returns the kinds drawn besides
/// tested commits, for the legend.
pub(super) fn draw_points(
    chart: &mut ProfileChart,
    p: &Profile,
    measured: &[&ProfilePoint],
    y: &ValueAxis,
) -> Drawn<Vec<PointKind>> {
    let mut legend: Vec<PointKind> = Vec::new();
    for level in 0..p.levels_drawn() {
        let pts: Vec<&&ProfilePoint> = (measured.iter())
            .filter(|q| p.level_of(q.x) == level)
            .collect();
        let color = level_color(level);
        chart.draw_series(pts.iter().map(|q| {
            let x = q.x as f64;
            let (l, h) = (q.ci.0.min(q.mean), q.ci.1.max(q.mean));
            ErrorBar::new_vertical(x, y.at(l), y.at(q.mean), y.at(h), color.stroke_width(1), 8)
        }))?;
        chart.draw_series(
            pts.iter()
                .map(|q| Circle::new((q.x as f64, y.at(q.mean)), 4, color.filled())),
        )?;
    }
    let grid: Vec<&&ProfilePoint> = (measured.iter())
        .filter(|q| q.kind == PointKind::Grid)
        .collect();
    if !grid.is_empty() {
        chart.draw_series(
            grid.iter()
                .map(|q| Circle::new((q.x as f64, y.at(q.mean)), 7, BLACK.stroke_width(1))),
        )?;
        legend.push(PointKind::Grid);
    }
    let skipped: Vec<&ProfilePoint> = p.points.iter().filter(|q| !drawable(q.mean)).collect();
    if !skipped.is_empty() {
        let at = y.bottom + y.span * 0.05;
        chart.draw_series(
            skipped
                .iter()
                .map(|q| Cross::new((q.x as f64, at), 5, skipped_color().stroke_width(2))),
        )?;
        legend.push(PointKind::Skipped);
    }
    Ok(legend)
}

/// The legend strip under the plot: the kinds of point drawn, then the fitted level and the
/// change-point line where there are any.
pub(super) fn draw_legend(
    strip: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    legend: &[PointKind],
    p: &Profile,
) -> Drawn {
    let mut x = 85;
    let font = ("sans-serif", 13).into_font();
    let levels = p.levels_drawn();
    for level in 0..levels {
        strip.draw(&Circle::new(
            (x + 10 * level as i32, 12),
            4,
            level_color(level).filled(),
        ))?;
    }
    let what = if levels > 1 {
        "the level a commit sits on, oldest first"
    } else {
        "tested commit"
    };
    x += 10 * levels as i32;
    strip.draw(&Text::new(what, (x, 5), font.clone().color(&BLACK)))?;
    x += 30 + text_width(what, 13);
    for &kind in legend {
        let marker: DynElement<_, _> = match kind {
            PointKind::Skipped => {
                Cross::new((x, 12), 4, skipped_color().stroke_width(2)).into_dyn()
            }
            _ => Circle::new((x, 12), 7, BLACK.stroke_width(1)).into_dyn(),
        };
        strip.draw(&marker)?;
        strip.draw(&Text::new(
            kind.label(),
            (x + 10, 5),
            font.clone().color(&BLACK),
        ))?;
        x += 30 + text_width(kind.label(), 13);
    }
    if !p.levels.is_empty() {
        strip.draw(&PathElement::new(
            vec![(x - 4, 12), (x + 14, 12)],
            LEVEL_BLUE.mix(0.45).stroke_width(6),
        ))?;
        strip.draw(&Text::new(
            "fitted level",
            (x + 20, 5),
            font.clone().color(&BLACK),
        ))?;
        x += 50 + text_width("fitted level", 13);
    }
    for (unresolved, what) in [
        (false, "change point: short sha, subject, change"),
        (true, "located, size unresolved"),
    ] {
        if !p.changes.iter().any(|c| c.unresolved == unresolved) {
            continue;
        }
        let color = if unresolved { GRAY } else { CHANGE_RED };
        strip.draw(&PathElement::new(
            vec![(x - 4, 5), (x - 4, 20)],
            color.stroke_width(2),
        ))?;
        strip.draw(&Text::new(what, (x + 4, 5), font.clone().color(&BLACK)))?;
        x += 30 + text_width(what, 13);
    }
    Ok(())
}
