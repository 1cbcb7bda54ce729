//! The one sampling loop: "bring every subject up to its wanted count",
//! taken in rounds, one sample per subject still short per round, so that a
//! drifting machine affects every subject alike. The order within each round
//! is drawn afresh (B A C, C B A, …): a fixed order would turn any effect of
//! position (the first process after a pause, a warm page cache) into a
//! bias between subjects. The engine, the simulator and the tests' fakes all
//! sample through it.

use anyhow::Result;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;

/// Something that holds samples per subject and can take one more.
pub trait Sampler {
    /// Samples held for `subject`; `None` when it cannot be measured (any
    /// more), which takes it out of the rounds.
    fn have(&self, subject: usize) -> Option<usize>;
    /// Take one more sample of `subject`.
    fn take_one(&mut self, subject: usize) -> Result<()>;
    /// Called before every sample: a chance to stop (Ctrl-C).
    fn check(&self) -> Result<()> {
        Ok(())
    }
    /// Called when a round starts (a simulator models position effects).
    fn new_round(&mut self) {}
}

/// Rounds over `wants` (subject, wanted count) until each has its count or
/// cannot be measured, in a random order per round drawn from `order` (the
/// order given, when `None`). Returns the number of samples taken.
pub fn fill(
    s: &mut dyn Sampler,
    wants: &[(usize, usize)],
    mut order: Option<&mut StdRng>,
) -> Result<usize> {
    let mut taken = 0;
    let mut round: Vec<(usize, usize)> = wants.to_vec();
    loop {
        let mut progressed = false;
        if let Some(rng) = order.as_deref_mut() {
            round.shuffle(rng);
        }
        s.new_round();
        for &(i, n) in &round {
            if s.have(i).is_some_and(|h| h < n) {
                s.check()?;
                s.take_one(i)?;
                taken += 1;
                progressed = true;
            }
        }
        if !progressed {
            return Ok(taken);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Log {
        have: Vec<Option<usize>>,
        order: Vec<usize>,
        dies_after: Option<(usize, usize)>,
    }

    impl Sampler for Log {
        fn have(&self, i: usize) -> Option<usize> {
            self.have[i]
        }
        fn take_one(&mut self, i: usize) -> Result<()> {
            self.order.push(i);
            let h = self.have[i].unwrap() + 1;
            self.have[i] = match self.dies_after {
                Some((d, n)) if d == i && h >= n => None,
                _ => Some(h),
            };
            Ok(())
        }
    }

    #[test]
    fn interleaves_and_drops_the_unmeasurable() {
        let mut l = Log {
            have: vec![Some(0), Some(1), None, Some(0)],
            order: vec![],
            dies_after: Some((3, 1)),
        };
        let n = fill(&mut l, &[(0, 3), (1, 3), (2, 3), (3, 3)], None).unwrap();
        assert_eq!(l.order, vec![0, 1, 3, 0, 1, 0]);
        assert_eq!(n, 6);
        assert_eq!(l.have[3], None);
    }

    #[test]
    fn random_order_changes_between_rounds_and_keeps_counts() {
        use rand::SeedableRng;
        let mut l = Log {
            have: vec![Some(0); 3],
            order: vec![],
            dies_after: None,
        };
        let mut rng = StdRng::seed_from_u64(7);
        fill(&mut l, &[(0, 20), (1, 20), (2, 20)], Some(&mut rng)).unwrap();
        assert_eq!(l.order.len(), 60);
        let rounds: Vec<&[usize]> = l.order.chunks(3).collect();
        // every round holds each subject once…
        for r in &rounds {
            let mut r = r.to_vec();
            r.sort();
            assert_eq!(r, vec![0, 1, 2]);
        }
        // …and the first position is not always the same subject
        let firsts: std::collections::HashSet<usize> = rounds.iter().map(|r| r[0]).collect();
        assert!(firsts.len() > 1, "{rounds:?}");
    }
}
