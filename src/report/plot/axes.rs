//! Where things go in a profile: positions in the range along x, values up y, and the ticks
//! of both.

use plotters::prelude::*;

use super::profile::{drawable, drawn_levels, Profile, ProfilePoint, LABEL_SPACING, PROFILE_SIZE};

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

pub(super) fn tick_label(v: f64) -> String {
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
pub(super) struct TickedAxis {
    pub(super) range: std::ops::Range<f64>,
    pub(super) ticks: Vec<f64>,
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

/// The value axis of a profile and where it puts a value.
pub(super) struct ValueAxis {
    /// A range that spans more than 3× is read in ratios, not differences: the axis is in
    /// log10 units then.
    pub(super) log: bool,
    /// The axis' ends, in its units.
    pub(super) bottom: f64,
    pub(super) top: f64,
    /// How far the values spread, in the axis' units.
    pub(super) span: f64,
}

impl ValueAxis {
    pub(super) fn new(p: &Profile, measured: &[&ProfilePoint]) -> ValueAxis {
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
    pub(super) fn at(&self, v: f64) -> f64 {
        if self.log {
            v.max(f64::MIN_POSITIVE).log10()
        } else {
            v
        }
    }

    pub(super) fn ticks(&self) -> Vec<f64> {
        if self.log {
            log_ticks(self.bottom, self.top)
        } else {
            linear_ticks(self.bottom, self.top)
        }
    }
}

/// Where things go in a profile: positions in the range along x, values up y.
pub(super) struct Frame {
    /// Positions in the range (at least 2).
    pub(super) n: usize,
    pub(super) px_per_commit: f64,
    pub(super) y: ValueAxis,
}

impl Frame {
    pub(super) fn new(p: &Profile, measured: &[&ProfilePoint]) -> Frame {
        let n = p.commits.max(2);
        Frame {
            n,
            px_per_commit: (PROFILE_SIZE.0 as f64 - 120.0) / n as f64,
            y: ValueAxis::new(p, measured),
        }
    }

    /// Date labels: the ends and change points first, then the rest where they fit.
    pub(super) fn date_ticks(&self, p: &Profile) -> Vec<f64> {
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
