//! Change points whose effects cancel: which change undid which, what is left of each, and the
//! series they form. A transient (+122% undone by −57% ten commits later) moves the speed a lot
//! and leaves nothing; ranked by its size it would hide the lasting changes that explain the
//! range. Ranked by what lasts, it comes last, and is reported as one series with its net effect.
//!
//! Pure: the changes come as their signed log ratios, oldest first (0 for a change point that
//! was not confirmed, which takes no part).

use serde::Serialize;

/// Change `undone_by` goes against `change` and takes back `fraction` of it (1 = all).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cancel {
    pub change: usize,
    pub undone_by: usize,
    pub fraction: f64,
}

/// Consecutive change points linked by cancels, and what they leave together.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Series {
    /// Indices of the changes, oldest first (every change between the first and the last).
    pub changes: Vec<usize>,
    /// Σ of their log ratios: the series' net lasting effect.
    pub net_log: f64,
}

/// What the changes of a range do to each other.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Lasting {
    pub cancels: Vec<Cancel>,
    /// Per change, the log ratio left of it once later changes have taken back what they undo.
    pub left: Vec<f64>,
    /// Groups of two or more changes linked by cancels.
    pub series: Vec<Series>,
}

impl Lasting {
    /// Indices of the changes with a log ratio, what lasts of them largest first (a transient
    /// last), then by size.
    pub fn ranked(&self, logs: &[f64]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..logs.len()).filter(|&i| logs[i] != 0.0).collect();
        order.sort_by(|&a, &b| {
            (self.left[b].abs().total_cmp(&self.left[a].abs()))
                .then(logs[b].abs().total_cmp(&logs[a].abs()))
        });
        order
    }
}

/// Each change going against earlier standing ones is matched with the one it best undoes (the
/// smallest remainder, the nearer one on a tie) rather than simply the latest, then with the
/// next best while it has more than `min_effect` left to give. Remainders below `min_effect`
/// count as undone.
pub fn lasting(logs: &[f64], min_effect: f64) -> Lasting {
    let floor = (1.0 + min_effect).ln();
    let mut left: Vec<f64> = logs.to_vec();
    let mut cancels = Vec::new();
    for j in 0..logs.len() {
        while stands(left[j], floor) {
            let Some(i) = best_match(&left[..j], left[j], floor) else {
                break;
            };
            let take = left[j].abs().min(left[i].abs());
            cancels.push(Cancel {
                change: i,
                undone_by: j,
                fraction: (take / logs[i].abs()).min(1.0),
            });
            left[i] -= take * left[i].signum();
            left[j] -= take * left[j].signum();
            if !stands(left[i], floor) {
                left[i] = 0.0;
            }
        }
        if !stands(left[j], floor) {
            left[j] = 0.0;
        }
    }
    cancels.sort_by_key(|c| (c.change, c.undone_by));
    let series = series(logs, &cancels);
    Lasting {
        cancels,
        left,
        series,
    }
}

/// Whether a remainder still counts as a change.
fn stands(v: f64, floor: f64) -> bool {
    v != 0.0 && v.abs() >= floor
}

/// Among the standing changes before `j` of the other sign, the one `l` undoes best.
fn best_match(standing: &[f64], l: f64, floor: f64) -> Option<usize> {
    (0..standing.len())
        .rev()
        .filter(|&i| stands(standing[i], floor) && standing[i].signum() != l.signum())
        .min_by(|&a, &b| {
            let rest = |i: usize| (standing[i] + l).abs();
            rest(a).total_cmp(&rest(b))
        })
}

/// The changes linked by cancels, as spans from the first change to the last undo.
fn series(logs: &[f64], cancels: &[Cancel]) -> Vec<Series> {
    let mut spans: Vec<(usize, usize)> = cancels.iter().map(|c| (c.change, c.undone_by)).collect();
    spans.sort();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (a, b) in spans {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
        .into_iter()
        .map(|(a, b)| {
            let changes: Vec<usize> = (a..=b).filter(|&i| logs[i] != 0.0).collect();
            Series {
                net_log: changes.iter().map(|&i| logs[i]).sum(),
                changes,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(r: f64) -> f64 {
        r.ln()
    }

    fn pairs(x: &Lasting) -> Vec<(usize, usize)> {
        x.cancels.iter().map(|c| (c.change, c.undone_by)).collect()
    }

    #[test]
    fn a_partial_undo_and_a_transient() {
        let x = lasting(&[l(1.15), l(0.92)], 0.03);
        assert_eq!(pairs(&x), vec![(0, 1)]);
        assert!((x.cancels[0].fraction - l(0.92).abs() / l(1.15)).abs() < 1e-12);
        assert!((x.left[0] - (l(1.15) + l(0.92))).abs() < 1e-12 && x.left[1] == 0.0);
        let x = lasting(&[l(1.3), l(2.5), l(0.4)], 0.03);
        assert_eq!(pairs(&x), vec![(1, 2)]);
        assert!((x.cancels[0].fraction - 1.0).abs() < 1e-9);
        assert_eq!(
            x.ranked(&[l(1.3), l(2.5), l(0.4)])[0],
            0,
            "the lasting +30% first"
        );
        // unconfirmed changes (0) take no part; same directions never cancel
        assert!(lasting(&[l(1.1), 0.0, l(1.1)], 0.03).cancels.is_empty());
    }

    /// The measured case: a +122% step, a lasting +10% after it, then −57% undoing the first.
    /// Matching the latest standing change paired the undo with the +10% (and called it
    /// undone); the best match pairs it with the +122%, and the +10% lasts and ranks first.
    #[test]
    fn the_undo_is_paired_with_the_change_it_undoes() {
        let logs = [l(2.22), l(1.10), l(0.45)];
        let x = lasting(&logs, 0.03);
        assert_eq!(x.cancels[0].change, 0);
        assert_eq!(x.cancels[0].undone_by, 2);
        assert!(x.cancels[0].fraction > 0.99, "{x:?}");
        assert_eq!(x.ranked(&logs)[0], 1, "{x:?}");
        assert!(x.left[1] > l(1.05), "{x:?}");
        assert_eq!(x.series.len(), 1);
        assert_eq!(x.series[0].changes, vec![0, 1, 2]);
        assert!((x.series[0].net_log - logs.iter().sum::<f64>()).abs() < 1e-12);
    }

    /// A larger undo reaches past the change it best undoes into the next one.
    #[test]
    fn a_larger_undo_takes_from_two() {
        let logs = [l(1.2), l(1.1), l(0.75)];
        let x = lasting(&logs, 0.03);
        assert_eq!(pairs(&x), vec![(0, 2), (1, 2)]);
        assert!(x.left.iter().all(|v| *v == 0.0), "{x:?}");
        assert_eq!(x.series[0].changes, vec![0, 1, 2]);
    }

    /// Every log ratio is accounted for: what is left plus what was taken back (twice: from
    /// the change and from its undo) is what there was, whatever the order.
    #[test]
    fn nothing_is_lost() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        for _ in 0..500 {
            let n = rng.gen_range(1..8);
            let logs: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let x = lasting(&logs, 0.0);
            let taken: f64 = x
                .cancels
                .iter()
                .map(|c| 2.0 * c.fraction * logs[c.change].abs())
                .sum();
            let total: f64 = logs.iter().map(|v| v.abs()).sum();
            let left: f64 = x.left.iter().map(|v| v.abs()).sum();
            assert!((left + taken - total).abs() < 1e-9, "{logs:?} {x:?}");
            let net: f64 = x.left.iter().sum();
            assert!(
                (net - logs.iter().sum::<f64>()).abs() < 1e-9,
                "{logs:?} {x:?}"
            );
        }
    }
}
