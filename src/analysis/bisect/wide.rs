//! Waves of probes: with W measurement nodes (the measurer's lanes), a range is narrowed by W
//! candidates at once. Each candidate is classified in a lane of its own, as a lone candidate
//! is: against its own samples of the range's two ends, all three taken in interleaved rounds on
//! the lane's node and grown over the schedule. No test meets samples of two nodes.
//!
//! The wave's verdicts, read from the oldest candidate up, narrow the range to about a
//! (W + 1)-th of it: each Old candidate becomes the old end, the first New one the new end (the
//! candidates beyond it are only shown: what hides there is found by the checks beside the
//! change point, as in a binary search). A Between splits the range as it had been at the
//! wave's start (the tests that made it Between were against those ends).
//!
//! Every candidate is a decision, so a search pays W per wave ([`alpha::search_per_test`]):
//! W / log2(W + 1) times a binary search's decisions, for log2(W + 1) times fewer waves.

use super::ranges::{apply, Between, Moved};
use super::*;
use std::collections::BTreeMap;

/// Up to `width` unskipped commits strictly between `lo` and `hi`, oldest first, each the free
/// one nearest to one of the points that cut `lo..hi` into `width + 1` equal parts.
pub(super) fn candidates<F: Fn(usize) -> bool>(
    lo: usize,
    hi: usize,
    width: usize,
    is_skipped: F,
) -> Vec<usize> {
    let mut chosen: Vec<usize> = Vec::with_capacity(width);
    if hi <= lo + 1 {
        return chosen;
    }
    let free =
        |c: usize, chosen: &[usize]| c > lo && c < hi && !is_skipped(c) && !chosen.contains(&c);
    for j in 1..=width {
        // Rounded down, and newer first at equal distance: one candidate is a binary search's.
        let at = lo + (hi - lo) * j / (width + 1);
        let near = (0..hi - lo).find_map(|d| {
            [at + d, at.wrapping_sub(d)]
                .into_iter()
                .find(|&c| free(c, &chosen))
        });
        match near {
            Some(c) => chosen.push(c),
            None => break,
        }
    }
    chosen.sort_unstable();
    chosen
}

/// A lane's candidate, while its samples are taken.
struct Flight {
    /// The candidate, then the range's old and new ends.
    commits: [usize; 3],
    bases: [usize; 3],
    look: usize,
}

impl Searcher<'_> {
    /// The commits to build while `cands` in `r` are measured: their own first (a build queue
    /// must never hold a probe behind a guess), then the first probe after them in each part
    /// they cut `r` into (for one candidate, the middle of each half; for a wave, which part
    /// the next wave searches is not known yet, and more guesses would queue ahead of it).
    pub(super) fn hints(&self, r: &Range, cands: &[usize]) -> Vec<usize> {
        let skipped = |i: usize| self.skipped.contains_key(&i);
        let mut ends = vec![r.lo];
        ends.extend_from_slice(cands);
        ends.push(r.hi);
        let next = ends
            .windows(2)
            .filter_map(|p| candidates(p[0], p[1], self.width, skipped).first().copied());
        cands.iter().copied().chain(next).collect()
    }

    /// Classifies `cands` against `r`'s ends, each in lane `i` (its place in `cands`), all at
    /// once: a lane's next look starts as soon as its last one ends. The steps, in the order of
    /// `cands`, with each series' status.
    pub(super) fn wave(&mut self, r: &Range, cands: &[usize]) -> Result<Vec<Judged>> {
        let hints = self.hints(r, cands);
        self.m.prefetch(&hints);
        // The wave's decisions run at once, each at the level of its last.
        self.alpha = self.routing.take(cands.len());
        let mut done: Vec<Option<Judged>> = vec![None; cands.len()];
        // Every candidate's build at once: whether one behaves as an end is known only built.
        self.m.prepare_all(cands)?;
        // A candidate that loads the same binaries as an older one is measured once, as that
        // one: apart, noise could send two copies of one build to either side of the change.
        let twin = |j: usize| (0..j).find(|&i| self.m.identical(cands[i], cands[j]));
        let twins: Vec<Option<usize>> = (0..cands.len()).map(twin).collect();
        let mut flying: BTreeMap<usize, Flight> = BTreeMap::new();
        for (lane, &c) in cands.iter().enumerate() {
            if twins[lane].is_some() {
                continue;
            }
            match self.as_identical_end(c, r.lo, r.hi)? {
                Some(same) => done[lane] = Some(same),
                None => {
                    flying.insert(lane, self.take_off(lane, [c, r.lo, r.hi])?);
                }
            }
        }
        self.land(r, flying, &mut done)?;
        for (j, i) in twins.iter().enumerate() {
            if let Some(&i) = i.as_ref() {
                let copy = |(step, status): Judged| {
                    (
                        Step {
                            commit: cands[j],
                            ..step
                        },
                        status,
                    )
                };
                done[j] = done[i].clone().map(copy);
            }
        }
        Ok(done.into_iter().flatten().collect())
    }

    /// A probe's step counted: a decision, or a commit to leave out from now on; then told.
    pub(super) fn tally(&mut self, c: usize, step: Step) {
        if let StepVerdict::Skipped(why) = &step.verdict {
            self.skipped.insert(c, why.clone());
        } else {
            self.decisions += 1;
        }
        self.record(step);
    }

    /// Lane `lane`'s first look at `commits` (the candidate, then the range's ends), started.
    fn take_off(&mut self, lane: usize, commits: [usize; 3]) -> Result<Flight> {
        let pool = Pool::Lane(lane);
        let [c, lo, hi] = commits;
        let bases = [
            self.claimed_in(pool, c),
            self.end_base(pool, lo),
            self.end_base(pool, hi),
        ];
        self.m
            .start_lane(lane, &wants(&commits, &bases, self.schedule[0]))?;
        Ok(Flight {
            commits,
            bases,
            look: 0,
        })
    }

    /// Takes the lanes' answers until every candidate in `flying` is judged (into `done`, at
    /// its lane), starting a lane's next look as soon as its last one did not decide.
    fn land(
        &mut self,
        r: &Range,
        mut flying: BTreeMap<usize, Flight>,
        done: &mut [Option<Judged>],
    ) -> Result<()> {
        let looks = self.schedule.clone();
        while !flying.is_empty() {
            let (lane, probes) = self.m.next_lane()?;
            let Some(f) = flying.get_mut(&lane) else {
                bail!("the measurer answered lane {lane}, which has no probe in flight");
            };
            let (pool, k) = (Pool::Lane(lane), looks[f.look]);
            let w = self.cut(pool, &f.commits, &f.bases, k, probes)?;
            for (&c, &base) in f.commits.iter().zip(&f.bases) {
                self.claim_in(pool, c, base + k);
            }
            let last = f.look + 1 == looks.len();
            match self.judge(f.commits[0], (r.lo, r.hi), &r.active, &w, last)? {
                Some(judged) => {
                    done[lane] = Some(judged);
                    flying.remove(&lane);
                }
                None => {
                    f.look += 1;
                    let next = wants(&f.commits, &f.bases, looks[f.look]);
                    self.m.start_lane(lane, &next)?;
                }
            }
        }
        Ok(())
    }

    /// One wave over `r`: its old end moved to the newest Old candidate, its new end to the
    /// first New one. `Some` with the Between candidate (its position and statuses) when one
    /// splits the range as it was at the wave's start, which is then left in `r`.
    pub(super) fn wave_step(&mut self, r: &mut Range, cands: &[usize]) -> Result<Option<Between>> {
        let steps = self.wave(r, cands)?;
        let start = r.clone();
        let mut split = None;
        let mut past_new = false;
        for (&c, (step, status)) in cands.iter().zip(steps) {
            let position = step.position;
            if !past_new && split.is_none() {
                match apply(r, c, &step) {
                    Moved::Skipped => {}
                    Moved::Lo => {}
                    Moved::Hi => past_new = true,
                    Moved::Between => {
                        split = Some(Between {
                            commit: c,
                            position,
                            status,
                        })
                    }
                }
            }
            self.tally(c, step);
        }
        if split.is_some() {
            *r = start;
        }
        Ok(split)
    }
}

#[cfg(test)]
#[path = "wide_tests.rs"]
mod tests;
