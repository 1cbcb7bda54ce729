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

/// What to do next in a round-robin over subjects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// A round starts (its order is drawn): a simulator models position effects here.
    NewRound,
    /// Take one more sample of this subject.
    Take(usize),
    /// Every subject has its count or cannot be measured.
    Done,
}

/// The rounds over `wants` (subject, wanted count), one pick at a time, so a caller that
/// answers asynchronously (an executor streaming samples) walks the same rounds as [`fill`].
#[derive(Debug, Clone)]
pub struct Rounds {
    round: Vec<(usize, usize)>,
    at: usize,
    progressed: bool,
}

impl Rounds {
    pub fn new(wants: &[(usize, usize)]) -> Rounds {
        Rounds {
            round: wants.to_vec(),
            at: wants.len(),
            progressed: true,
        }
    }

    /// The next pick: `have` says how many samples a subject holds now (`None` takes it out of
    /// the rounds); each round's order is drawn from `order` (the order given, when `None`).
    pub fn next(
        &mut self,
        have: impl Fn(usize) -> Option<usize>,
        order: Option<&mut StdRng>,
    ) -> Pick {
        while self.at < self.round.len() {
            let (i, n) = self.round[self.at];
            self.at += 1;
            if have(i).is_some_and(|h| h < n) {
                self.progressed = true;
                return Pick::Take(i);
            }
        }
        if !self.progressed {
            return Pick::Done;
        }
        if let Some(rng) = order {
            self.round.shuffle(rng);
        }
        self.progressed = false;
        self.at = 0;
        Pick::NewRound
    }
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
    let mut rounds = Rounds::new(wants);
    loop {
        match rounds.next(|i| s.have(i), order.as_deref_mut()) {
            Pick::NewRound => s.new_round(),
            Pick::Take(i) => {
                s.check()?;
                s.take_one(i)?;
                taken += 1;
            }
            Pick::Done => return Ok(taken),
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

    #[test]
    fn picks_announce_each_round_and_end_when_nothing_is_short() {
        let have = [Some(0), Some(2), None];
        let mut r = Rounds::new(&[(0, 2), (1, 2), (2, 2)]);
        let mut held = have;
        let mut picks = Vec::new();
        loop {
            let p = r.next(|i| held[i], None);
            picks.push(p);
            match p {
                Pick::Take(i) => held[i] = held[i].map(|h| h + 1),
                Pick::Done => break,
                Pick::NewRound => {}
            }
        }
        use Pick::*;
        assert_eq!(
            picks,
            vec![NewRound, Take(0), NewRound, Take(0), NewRound, Done]
        );
    }
}
