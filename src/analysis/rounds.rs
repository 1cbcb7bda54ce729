//! The one sampling loop: "bring every subject up to its wanted count",
//! taken in rounds, one sample per subject still short per round
//! (A B C A B C …), so that a drifting machine affects every subject alike.
//! The engine, the simulator and the tests' fakes all sample through it.

use anyhow::Result;

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
}

/// Round-robin over `wants` (subject, wanted count) until each has its
/// count or cannot be measured. Returns the number of samples taken.
pub fn fill(s: &mut dyn Sampler, wants: &[(usize, usize)]) -> Result<usize> {
    let mut taken = 0;
    loop {
        let mut progressed = false;
        for &(i, n) in wants {
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
        let n = fill(&mut l, &[(0, 3), (1, 3), (2, 3), (3, 3)]).unwrap();
        assert_eq!(l.order, vec![0, 1, 3, 0, 1, 0]);
        assert_eq!(n, 6);
        assert_eq!(l.have[3], None);
    }
}
