//! One subject's samples as the search sees them: values in the order taken, each with the
//! round it was taken in. Rounds are what make two subjects' samples pairs: a sample of A and a
//! sample of B of one round ran side by side, so whatever the machine did then hit both, and
//! the paired test cancels it. Pairing by position instead pairs samples of different rounds as
//! soon as one subject holds samples the other lacks (cached on resume, or taken for another
//! decision).

use serde::Serialize;
use std::collections::HashMap;

/// Which round a sample was taken in: one key means side by side in one round. The session
/// tells apart the rounds of separate runs, which each count from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct RoundKey {
    pub session: u64,
    pub round: u64,
}

/// A subject's samples in the order taken, with the round of each when it is known (samples
/// cached before rounds were recorded have none, and pair with nothing).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Samples {
    pub values: Vec<f64>,
    pub rounds: Vec<Option<RoundKey>>,
}

impl Samples {
    /// Samples whose rounds are not known.
    pub fn unpaired(values: Vec<f64>) -> Samples {
        let rounds = vec![None; values.len()];
        Samples { values, rounds }
    }

    pub fn push(&mut self, value: f64, round: Option<RoundKey>) {
        self.values.push(value);
        self.rounds.push(round);
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The samples `from..to` in the order taken (clamped to what is held).
    pub fn window(&self, from: usize, to: usize) -> Samples {
        let to = to.min(self.len());
        let from = from.min(to);
        Samples {
            values: self.values[from..to].to_vec(),
            rounds: self.rounds[from..to].to_vec(),
        }
    }

    /// The first `k` samples.
    pub fn first(&self, k: usize) -> Samples {
        self.window(0, k)
    }
}

/// The values of `a` and `b` taken in the same rounds, as (a's, b's), in `a`'s order. A round
/// either side holds twice (it cannot happen in the rounds the engine takes, but a merged pool
/// could) pairs once, with its first sample.
pub fn pairs(a: &Samples, b: &Samples) -> (Vec<f64>, Vec<f64>) {
    let mut in_b: HashMap<RoundKey, f64> = HashMap::new();
    for (v, r) in b.values.iter().zip(&b.rounds) {
        if let Some(r) = r {
            in_b.entry(*r).or_insert(*v);
        }
    }
    let mut out = (Vec::new(), Vec::new());
    for (v, r) in a.values.iter().zip(&a.rounds) {
        if let Some(w) = r.and_then(|r| in_b.remove(&r)) {
            out.0.push(*v);
            out.1.push(w);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(round: u64) -> Option<RoundKey> {
        Some(RoundKey { session: 7, round })
    }

    fn taken(values: &[f64], rounds: &[Option<RoundKey>]) -> Samples {
        Samples {
            values: values.to_vec(),
            rounds: rounds.to_vec(),
        }
    }

    #[test]
    fn pairs_are_samples_of_one_round_not_of_one_position() {
        // A holds an extra sample from round 1 (taken for another decision): by position its
        // samples of rounds 1, 2, 3 would pair with B's of rounds 2, 3, 4.
        let a = taken(&[1.0, 2.0, 3.0, 4.0], &[key(1), key(2), key(3), key(4)]);
        let b = taken(&[20.0, 30.0, 40.0], &[key(2), key(3), key(4)]);
        assert_eq!(pairs(&a, &b), (vec![2.0, 3.0, 4.0], vec![20.0, 30.0, 40.0]));
    }

    #[test]
    fn rounds_of_another_session_or_unknown_rounds_do_not_pair() {
        let other = Some(RoundKey {
            session: 8,
            round: 1,
        });
        let a = taken(&[1.0, 2.0, 3.0], &[key(1), None, key(3)]);
        let b = taken(&[10.0, 20.0, 30.0], &[other, None, key(3)]);
        assert_eq!(pairs(&a, &b), (vec![3.0], vec![30.0]));
    }

    #[test]
    fn a_round_held_twice_pairs_once() {
        let a = taken(&[1.0, 2.0], &[key(1), key(1)]);
        let b = taken(&[10.0, 20.0], &[key(1), key(1)]);
        assert_eq!(pairs(&a, &b), (vec![1.0], vec![10.0]));
    }

    #[test]
    fn windows_keep_each_value_with_its_round() {
        let a = taken(&[1.0, 2.0, 3.0], &[key(1), key(2), key(3)]);
        assert_eq!(a.window(1, 9), taken(&[2.0, 3.0], &[key(2), key(3)]));
        assert_eq!(a.window(5, 9), Samples::default());
        assert_eq!(a.first(1), taken(&[1.0], &[key(1)]));
    }
}
