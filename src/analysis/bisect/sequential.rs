//! The one sequential comparison of two subjects (every series, grown over the schedule's
//! looks), and the position of a commit between two others.

use super::*;

/// Which side of a pair could not be measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Side {
    A,
    B,
    Both,
}

pub(super) type Unmeasurable = (Side, Unavailable, Unavailable);
/// A decided (or capped) comparison per series with the windows it was made on.
pub(super) type Compared = (Vec<Comparison>, Vec<Samples>, Vec<Samples>);

/// The one sequential comparison: windows of `k` samples for each look `k`, compared at every
/// series until each series' verdict is decided or the last look. `window(k)` returns the two
/// sides' windows.
pub(super) fn sequential<F>(
    looks: &[usize],
    alpha_look: f64,
    (min_effect, tail): (f64, Option<stats::TailRule>),
    settle_size: bool,
    mut window: F,
) -> Result<std::result::Result<Compared, Unmeasurable>>
where
    F: FnMut(usize) -> Result<Vec<Window>>,
{
    let mut last = None;
    for &k in looks {
        let mut w = window(k)?;
        if w.len() != 2 {
            bail!("measurer returned {} results for 2 subjects", w.len());
        }
        let (wb, wa) = (w.pop(), w.pop());
        let (a, b) = match (wa, wb) {
            (Some(Window::Samples(a)), Some(Window::Samples(b))) => (a, b),
            (Some(Window::Skip(ra)), Some(Window::Skip(rb))) => {
                return Ok(Err((Side::Both, ra, rb)))
            }
            (Some(Window::Skip(r)), _) => return Ok(Err((Side::A, r.clone(), r))),
            (_, Some(Window::Skip(r))) => return Ok(Err((Side::B, r.clone(), r))),
            _ => unreachable!("two windows checked above"),
        };
        let cs: Vec<Comparison> = a
            .iter()
            .zip(&b)
            .map(|(a, b)| stats::compare_rounds_with(a, b, alpha_look, min_effect, tail))
            .collect();
        // With `settle_size`, a significant change whose interval still straddles min-effect
        // is not done: "at least min-effect" (a failed gate, a culprit's size) must rest on the
        // interval, not on a point estimate picked by optional stopping. The ends of a search
        // need only the direction.
        let done = cs.iter().all(|c| match c.verdict {
            Verdict::Undecided => false,
            Verdict::Slower | Verdict::Faster => !settle_size || c.size != stats::Size::Uncertain,
            Verdict::Same => true,
        });
        last = Some((cs, a, b));
        if done {
            break;
        }
    }
    last.map(Ok)
        .ok_or_else(|| anyhow::anyhow!("empty sample schedule"))
}

/// Subjects `a` and `b` compared sequentially over the schedule at `alpha_look` per look (see
/// [`alpha::per_look`]), on all samples the measurer holds up to each look. Used where two
/// subjects are compared outside a search (compare, verify, gate, the merge base).
pub fn compare_pair(
    m: &mut dyn Measurer,
    a: usize,
    b: usize,
    schedule: &Schedule,
    alpha_look: f64,
    min_effect: f64,
) -> Result<std::result::Result<Comparison, Unavailable>> {
    let r = sequential(
        &schedule.looks(),
        alpha_look,
        (min_effect, None),
        true,
        |k| {
            let probes = m.ensure(&[(a, k), (b, k)])?;
            Ok(probes
                .into_iter()
                .map(|p| match p {
                    Probe::Samples(v) => Window::Samples(vec![v.first(k)]),
                    Probe::Skip(r) => Window::Skip(r),
                })
                .collect())
        },
    )?;
    Ok(r.map(|(c, _, _)| c[0]).map_err(|(_, r, _)| r))
}

/// Position of `x` between the old and new ends, (x̄ − ō)/(n̄ − ō), with a `conf` interval by the
/// delta method (t quantile, Welch–Satterthwaite df over the three variance terms). Returns
/// (point, lo, hi); `None` when the ends have the same mean or a side has fewer than 2 values.
pub(super) fn position(old: &[f64], x: &[f64], new: &[f64], conf: f64) -> Option<(f64, f64, f64)> {
    // On logs, trimmed of outliers like the tests: one slow process must not drag a commit
    // toward the slow end (raw means did, and left commits "ambiguous" at the sample cap).
    let (mo, vo, ho) = stats::robust_log_location(old)?;
    let (mx, vx, hx) = stats::robust_log_location(x)?;
    let (mn, vn, hn) = stats::robust_log_location(new)?;
    if ho < 2.0 || hx < 2.0 || hn < 2.0 {
        return None;
    }
    let d = mn - mo;
    if d == 0.0 || !d.is_finite() {
        return None;
    }
    let p = (mx - mo) / d;
    // ∂p/∂x̄ = 1/d, ∂p/∂ō = (p − 1)/d, ∂p/∂n̄ = −p/d
    let terms = [(vx, hx), ((p - 1.0) * (p - 1.0) * vo, ho), (p * p * vn, hn)];
    let var: f64 = terms.iter().map(|t| t.0).sum();
    if var == 0.0 {
        return Some((p, p, p));
    }
    let denom: f64 = terms.iter().map(|(t, h)| t * t / (h - 1.0)).sum();
    let df = var * var / denom;
    let half = stats::t_quantile(conf, df)? * var.sqrt() / d.abs();
    Some((p, p - half, p + half))
}
