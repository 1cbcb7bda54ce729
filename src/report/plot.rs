//! SVG plots for people: µs/op against thread count (log scales, one line
//! per OpenSSL version, error bars of one standard deviation), and a
//! bisect's profile (µs/op along the range, change points marked).

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor;
use std::path::{Path, PathBuf};

pub struct Series {
    pub label: String,
    /// (threads, mean µs/op, std dev)
    pub points: Vec<(usize, f64, f64)>,
}

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

/// Ticks exactly at the measured thread counts (1, 2, 4, …).
fn thread_ticks(series: &[Series]) -> Vec<f64> {
    let mut t: Vec<usize> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    t.sort();
    t.dedup();
    t.into_iter().map(|x| x as f64).collect()
}

/// The plot as SVG text, to write or to inline in a page.
pub fn threads_svg(title: &str, axis: &str, series: &[Series]) -> Result<String> {
    let pts = series.iter().flat_map(|s| s.points.iter());
    let (mut tmax, mut ymin, mut ymax) = (1usize, f64::INFINITY, 0f64);
    for &(t, m, sd) in pts {
        tmax = tmax.max(t);
        ymin = ymin.min((m - sd).max(m * 0.5));
        ymax = ymax.max(m + sd);
    }
    if !ymin.is_finite() || ymax <= 0.0 {
        ymin = 0.1;
        ymax = 1.0;
    }
    // Whole decades around the data, so log ticks land on round numbers.
    let ylo = 10f64.powf(ymin.log10().floor());
    let yhi = 10f64.powf(ymax.log10().ceil()).max(ylo * 10.0);
    let xhi = (tmax as f64 * 1.5).max(2.0);
    let mut svg = String::new();
    let root = SVGBackend::with_string(&mut svg, (800, 500)).into_drawing_area();
    let e = |e: DrawingAreaErrorKind<_>| anyhow::anyhow!("plotting {title}: {e:?}");
    root.fill(&WHITE).map_err(e)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(
            (0.8f64..xhi)
                .log_scale()
                .with_key_points(thread_ticks(series)),
            (ylo..yhi).log_scale(),
        )
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("threads")
        .y_desc(axis)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y}"))
        .draw()
        .map_err(e)?;
    for (i, s) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let line: Vec<(f64, f64)> = s.points.iter().map(|p| (p.0 as f64, p.1)).collect();
        chart
            .draw_series(LineSeries::new(line.clone(), color.stroke_width(2)))
            .map_err(e)?
            .label(s.label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
        chart
            .draw_series(
                line.iter()
                    .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
            )
            .map_err(e)?;
        chart
            .draw_series(s.points.iter().map(|&(t, m, sd)| {
                let lo = (m - sd).max(ylo);
                ErrorBar::new_vertical(t as f64, lo, m, m + sd, color.stroke_width(1), 6)
            }))
            .map_err(e)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(e)?;
    root.present().map_err(e)?;
    drop(chart);
    drop(root);
    Ok(svg)
}

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
    fn color(self) -> RGBColor {
        match self {
            PointKind::Grid => RGBColor(40, 40, 40),
            PointKind::Old => COLORS[0],
            PointKind::New => COLORS[1],
            PointKind::Between => COLORS[2],
            PointKind::Ambiguous => COLORS[4],
            PointKind::Skipped => COLORS[7],
        }
    }

    fn label(self) -> &'static str {
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

/// About six round ticks over lo..hi.
fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let raw = (hi - lo) / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut v = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while v <= hi {
        out.push(v);
        v += step;
    }
    out
}

/// Ticks at 1, 2, 5 × 10^k within lo..hi (given as log10), in log10 units;
/// every integer multiple when that leaves fewer than three.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let pick = |ms: &[f64]| -> Vec<f64> {
        let mut out = Vec::new();
        for d in (lo.floor() as i32)..=(hi.ceil() as i32) {
            for m in ms {
                let t = (m * 10f64.powi(d)).log10();
                if t >= lo && t <= hi {
                    out.push(t);
                }
            }
        }
        out
    };
    let coarse = pick(&[1.0, 2.0, 5.0]);
    if coarse.len() >= 3 {
        coarse
    } else {
        pick(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    }
}

fn tick_label(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A linear axis with ticks exactly where given (plotters' `WithKeyPoints`
/// over f64 has no label formatter).
#[derive(Clone)]
struct TickedAxis {
    range: std::ops::Range<f64>,
    ticks: Vec<f64>,
}

impl Ranged for TickedAxis {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let (a, b) = (self.range.start, self.range.end);
        let t = if b > a { (v - a) / (b - a) } else { 0.5 };
        limit.0 + (t * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<H: plotters::coord::ranged1d::KeyPointHint>(&self, hint: H) -> Vec<f64> {
        // The bold ticks are the labelled ones; the light mesh asks for none.
        if hint.max_num_points() == 0 {
            return Vec::new();
        }
        self.ticks.clone()
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

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

const PROFILE_SIZE: (u32, u32) = (1000, 560);
/// Pixels between two date labels on the x axis.
const LABEL_SPACING: f64 = 90.0;

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
fn drawable(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

fn drawn_levels(p: &Profile) -> impl Iterator<Item = &Level> {
    p.levels.iter().filter(|l| drawable(l.value))
}

/// The profile's chart: the plot area with its axes drawn.
type ProfileChart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<TickedAxis, TickedAxis>>;
type Drawn<T = ()> = std::result::Result<T, DrawingAreaErrorKind<std::io::Error>>;

/// The value axis of a profile and where it puts a value.
struct ValueAxis {
    /// A range that spans more than 3× is read in ratios, not differences: the axis is in
    /// log10 units then.
    log: bool,
    /// The axis' ends, in its units.
    bottom: f64,
    top: f64,
    /// How far the values spread, in the axis' units.
    span: f64,
}

impl ValueAxis {
    fn new(p: &Profile, measured: &[&ProfilePoint]) -> ValueAxis {
        let (mut lo, mut hi) = (f64::INFINITY, 0f64);
        let values = measured.iter().flat_map(|q| [q.mean, q.ci.0, q.ci.1]);
        for v in values
            .filter(|v| drawable(*v))
            .chain(drawn_levels(p).map(|l| l.value))
        {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() || hi <= 0.0 {
            (lo, hi) = (1.0, 10.0);
        }
        let mut axis = ValueAxis {
            log: hi / lo > 3.0,
            bottom: 0.0,
            top: 0.0,
            span: 0.0,
        };
        let (flo, fhi) = (axis.at(lo), axis.at(hi));
        axis.span = if fhi > flo {
            fhi - flo
        } else {
            (fhi.abs() * 0.1).max(0.1)
        };
        // Headroom for the stacked change-point labels.
        let rows = p.changes.len().min(8) as f64;
        let bottom = flo - axis.span * 0.12;
        axis.bottom = if axis.log { bottom } else { bottom.max(0.0) };
        axis.top = fhi + axis.span * (0.12 + 0.07 * rows);
        axis
    }

    /// Where `v` lies on the axis, in its units.
    fn at(&self, v: f64) -> f64 {
        if self.log {
            v.max(f64::MIN_POSITIVE).log10()
        } else {
            v
        }
    }

    fn ticks(&self) -> Vec<f64> {
        if self.log {
            log_ticks(self.bottom, self.top)
        } else {
            linear_ticks(self.bottom, self.top)
        }
    }
}

/// Where things go in a profile: positions in the range along x, values up y.
struct Frame {
    /// Positions in the range (at least 2).
    n: usize,
    px_per_commit: f64,
    y: ValueAxis,
}

impl Frame {
    fn new(p: &Profile, measured: &[&ProfilePoint]) -> Frame {
        let n = p.commits.max(2);
        Frame {
            n,
            px_per_commit: (PROFILE_SIZE.0 as f64 - 120.0) / n as f64,
            y: ValueAxis::new(p, measured),
        }
    }

    /// Date labels: the ends and change points first, then the rest where they fit.
    fn date_ticks(&self, p: &Profile) -> Vec<f64> {
        let mut order: Vec<usize> = vec![0, self.n - 1];
        for c in &p.changes {
            order.push(c.culprit);
            order.push(c.parent);
        }
        order.extend(p.points.iter().map(|q| q.x));
        let mut xticks: Vec<f64> = Vec::new();
        for x in order {
            let x = x as f64;
            if xticks
                .iter()
                .all(|t| ((t - x).abs() * self.px_per_commit) >= LABEL_SPACING)
                && p.points.iter().any(|q| q.x as f64 == x)
            {
                xticks.push(x);
            }
        }
        xticks.sort_by(|a, b| a.total_cmp(b));
        xticks
    }
}

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

const GRAY: RGBColor = RGBColor(90, 90, 90);
const LEVEL_BLUE: RGBColor = RGBColor(31, 119, 180);
const CHANGE_RED: RGBColor = RGBColor(180, 30, 30);

/// Untested stretches: shaded, with their size where it fits.
fn draw_untested(chart: &mut ProfileChart, p: &Profile, frame: &Frame) -> Drawn {
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
fn draw_path(chart: &mut ProfileChart, measured: &[&ProfilePoint], y: &ValueAxis) -> Drawn {
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
fn draw_levels(chart: &mut ProfileChart, p: &Profile, frame: &Frame) -> Drawn {
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

/// Change points: a line between parent and culprit, labels stacked at the top, drawn after
/// every line so no line crosses a label.
fn draw_changes(chart: &mut ProfileChart, p: &Profile, frame: &Frame) -> Drawn {
    let (ybot, ytop) = (frame.y.bottom, frame.y.top);
    let mid = |c: &Mark| (c.parent as f64 + c.culprit as f64) / 2.0;
    for c in &p.changes {
        chart.draw_series(DashedLineSeries::new(
            vec![(mid(c), ybot), (mid(c), ytop)],
            6,
            3,
            CHANGE_RED.stroke_width(2),
        ))?;
    }
    for (i, c) in p.changes.iter().enumerate() {
        let x = mid(c);
        let right = x > frame.n as f64 * 0.6;
        let style = side_label_style(&CHANGE_RED, right);
        let dy = 6 + 17 * (i % 8) as i32;
        chart.draw_series(std::iter::once(
            EmptyElement::at((x, ytop))
                + label_background(&c.label, right, dy)
                + Text::new(c.label.clone(), (if right { -5 } else { 5 }, dy), style),
        ))?;
    }
    Ok(())
}

/// The ends: ringed and named, under the points so a label hides none.
fn draw_ends(
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

/// The tested commits, coloured by kind, with their intervals; skipped ones as crosses at the
/// bottom. Returns the kinds drawn, for the legend.
fn draw_points(
    chart: &mut ProfileChart,
    p: &Profile,
    measured: &[&ProfilePoint],
    y: &ValueAxis,
) -> Drawn<Vec<PointKind>> {
    let mut legend: Vec<PointKind> = Vec::new();
    for kind in [
        PointKind::Grid,
        PointKind::Old,
        PointKind::New,
        PointKind::Between,
        PointKind::Ambiguous,
    ] {
        let pts: Vec<&&ProfilePoint> = measured.iter().filter(|q| q.kind == kind).collect();
        if pts.is_empty() {
            continue;
        }
        let color = kind.color();
        chart.draw_series(pts.iter().map(|q| {
            let x = q.x as f64;
            let (l, h) = (q.ci.0.min(q.mean), q.ci.1.max(q.mean));
            ErrorBar::new_vertical(x, y.at(l), y.at(q.mean), y.at(h), color.stroke_width(1), 8)
        }))?;
        chart.draw_series(
            pts.iter()
                .map(|q| Circle::new((q.x as f64, y.at(q.mean)), 4, color.filled())),
        )?;
        legend.push(kind);
    }
    let skipped: Vec<&ProfilePoint> = p.points.iter().filter(|q| !drawable(q.mean)).collect();
    if !skipped.is_empty() {
        let color = PointKind::Skipped.color();
        let at = y.bottom + y.span * 0.05;
        chart.draw_series(
            skipped
                .iter()
                .map(|q| Cross::new((q.x as f64, at), 5, color.stroke_width(2))),
        )?;
        legend.push(PointKind::Skipped);
    }
    Ok(legend)
}

/// The legend strip under the plot: the kinds of point drawn, then the fitted level and the
/// change-point line where there are any.
fn draw_legend(
    strip: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    legend: &[PointKind],
    p: &Profile,
) -> Drawn {
    let mut x = 85;
    let font = ("sans-serif", 13).into_font();
    for &kind in legend {
        let color = kind.color();
        let marker: DynElement<_, _> = match kind {
            PointKind::Skipped => Cross::new((x, 12), 4, color.stroke_width(2)).into_dyn(),
            _ => Circle::new((x, 12), 4, color.filled()).into_dyn(),
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
    if !p.changes.is_empty() {
        strip.draw(&PathElement::new(
            vec![(x - 4, 5), (x - 4, 20)],
            CHANGE_RED.stroke_width(2),
        ))?;
        strip.draw(&Text::new(
            "change point: short sha, subject, change",
            (x + 4, 5),
            font.color(&BLACK),
        ))?;
    }
    Ok(())
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
