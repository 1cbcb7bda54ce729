//! µs/op against thread count: log scales, one line per OpenSSL version, error bars of one
//! standard deviation.

use anyhow::Result;
use plotters::prelude::*;

use super::COLORS;

pub struct Series {
    pub label: String,
    /// (threads, mean µs/op, std dev)
    pub points: Vec<(usize, f64, f64)>,
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
