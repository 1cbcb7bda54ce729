//! The sub-ranges still to search: checking their ends, narrowing one to a change point,
//! splitting at a Between commit, and what is left unexplored and why.

use super::*;

/// What a check of a sub-range's ends found.
pub(super) enum EndsCheck {
    /// They differ: the estimated share of the range's change, and the series that moved.
    Differ(f64, Vec<bool>),
    /// The same: nothing to search; the primary series' ratio and the interval that showed
    /// it within ±min-effect (`None`: one binary, no comparison).
    Same(Option<RatioCi>),
    /// Undecided at the cap: the primary series' ratio (new/old) and its interval.
    Undecided(RatioCi),
}

/// A sub-range still to search: `lo` is known to differ from `hi` (unless it waits for its check).
#[derive(Clone)]
pub(super) struct Range {
    pub(super) lo: usize,
    pub(super) hi: usize,
    pub(super) uncertain: bool,
    /// Estimated share of the ends' change (from positions of Between commits), when known.
    pub(super) share: Option<f64>,
    /// The series (thread counts) whose ends differ in this range: only they decide here.
    pub(super) active: Vec<bool>,
}

pub(super) struct Found {
    pub(super) last_old: usize,
    pub(super) first_new: usize,
    pub(super) uncertain: bool,
}

/// A candidate that lies between two changes, where its range splits.
pub(super) struct Between {
    pub(super) commit: usize,
    pub(super) position: Option<f64>,
    pub(super) status: Vec<SeriesStatus>,
}

/// What a verdict does to the range being narrowed.
pub(super) enum Moved {
    /// Its old end moved up to the candidate (Old, or Ambiguous nearer the old end).
    Lo,
    /// Its new end moved down to it (New, or Ambiguous nearer the new end).
    Hi,
    /// Nothing: the candidate could not be measured.
    Skipped,
    /// It lies between two changes: the range splits there.
    Between,
}

/// Moves `r`'s ends by `c`'s step.
pub(super) fn apply(r: &mut Range, c: usize, step: &Step) -> Moved {
    match step.verdict {
        StepVerdict::Skipped(_) => Moved::Skipped,
        StepVerdict::Between => Moved::Between,
        StepVerdict::Old => {
            r.lo = c;
            Moved::Lo
        }
        StepVerdict::New => {
            r.hi = c;
            Moved::Hi
        }
        StepVerdict::Ambiguous => {
            r.uncertain = true;
            if step.position.is_some_and(|p| p < 0.5) {
                r.lo = c;
                Moved::Lo
            } else {
                r.hi = c;
                Moved::Hi
            }
        }
    }
}

/// Work for the parts of a range outside `lo..hi` (`bounds` = range_lo, lo, hi, range_hi):
/// each is searched only if its own ends differ. `larger_newer`: the newer part is pushed last,
/// so it is searched first (the part whose ends' samples so far differ more goes first, see
/// [`Searcher::newer_part_larger`]).
pub(super) fn push_outer_checks(
    work: &mut Vec<(Range, bool)>,
    bounds: (usize, usize, usize, usize),
    uncertain: bool,
    k: usize,
    larger_newer: bool,
) {
    let (range_lo, lo, hi, range_hi) = bounds;
    let parts = if larger_newer {
        [(range_lo, lo), (hi, range_hi)]
    } else {
        [(hi, range_hi), (range_lo, lo)]
    };
    for (l, h) in parts {
        // Two adjacent commits are a part too: if they differ, they are a change point (on the
        // release history 3.1.4 passed as New, and 3.1.4 -> 3.2.1 was never checked).
        if h > l {
            let r = Range {
                lo: l,
                hi: h,
                uncertain,
                share: None,
                // set by the check
                active: vec![true; k],
            };
            work.push((r, true));
        }
    }
}

impl Searcher<'_> {
    /// Do the ends of a left-over sub-range differ (at any series)? Sequential like every
    /// decision: a significant difference (at the per-test alpha) says yes; the ratio's
    /// (1 − alpha) interval inside ±min_effect at every series, or the cap, says no. The "no" side
    /// uses the whole-search level because its error is only a missed extra change, and the
    /// stricter level would cost max samples at every check. With yes: the sub-range's estimated
    /// share of the ends' change (primary series) and the series that are to be searched in it
    /// (those that differ, and those not yet told apart when another already did).
    pub(super) fn ends_differ(&mut self, lo: usize, hi: usize) -> Result<EndsCheck> {
        // Ends that load byte-identical binaries share one pool of samples: comparing two
        // windows of it tests a subject against itself, and its false "differs" (at the rate
        // alpha) ended in a change point that could never be confirmed (seen in CI on a scan).
        if self.m.identical(lo, hi) {
            return Ok(EndsCheck::Same(None));
        }
        let mut last = None;
        self.decisions += 1;
        self.alpha = self.routing.take(1);
        let commits = [lo, hi];
        let bases = [self.claimed(lo), self.claimed(hi)];
        for k in self.schedule.clone() {
            let w = self.windows(&commits, &bases, k)?;
            self.claim(lo, bases[0] + k);
            self.claim(hi, bases[1] + k);
            let (a, b) = match (&w[0], &w[1]) {
                (Window::Samples(a), Window::Samples(b)) => (a, b),
                (Window::Skip(r), _) | (_, Window::Skip(r)) => {
                    bail!("commit {lo} or {hi} was measured before but now cannot be: {r}")
                }
            };
            let me = self.cfg.min_effect;
            let mut differs = vec![false; self.k];
            let mut same = vec![false; self.k];
            let mut share = 0.0;
            let mut net = None;
            let mut tested = Vec::with_capacity(self.k);
            for t in 0..self.k {
                let c = self.compare(&a[t], &b[t], self.alpha);
                tested.push(c);
                differs[t] = significant(&c);
                let ci = stats::ratio_ci(&a[t].values, &b[t].values, 1.0 - self.cfg.alpha);
                // With --tail, "same" also waits for the samples the tail check needs.
                let tail_ready =
                    (self.cfg.tail_rule()).is_none_or(|r| c.a.n.min(c.b.n) >= r.same_from);
                same[t] = tail_ready && ci.is_some_and(|r| r.lo >= 1.0 - me && r.hi <= 1.0 + me);
                if t == self.primary {
                    net = ci;
                    share = c.ratio.ratio.ln() / self.total_log;
                    last = Some(c.ratio);
                }
            }
            self.route(self.k, self.alpha);
            let decided = differs.contains(&true) || same.iter().all(|s| *s);
            if decided || Some(&k) == self.schedule.last() {
                self.decided_on(tested.iter().enumerate());
            }
            if differs.contains(&true) {
                let active = (0..self.k).map(|t| differs[t] || !same[t]).collect();
                return Ok(EndsCheck::Differ(share, active));
            }
            if same.iter().all(|s| *s) {
                return Ok(EndsCheck::Same(net));
            }
        }
        Ok(match last {
            Some(r) => EndsCheck::Undecided(r),
            None => EndsCheck::Same(None),
        })
    }

    /// Whether to leave the rest: the budget is spent (after the main answer), or enough answers.
    pub(super) fn stop_now(&self) -> Option<LeftBecause> {
        if self.cfg.max_changes.is_some_and(|m| self.answers() >= m) {
            Some(LeftBecause::MaxChanges)
        } else if self.answers() > 0 && self.m.should_stop() {
            Some(LeftBecause::Budget)
        } else {
            None
        }
    }

    pub(super) fn leave(&mut self, r: &Range, differs: bool, because: LeftBecause) {
        self.unexplored.push(Unexplored {
            lo: r.lo,
            hi: r.hi,
            differs,
            share: r.share,
            because,
            ratio: None,
        });
    }

    /// Of the two parts outside `lo..hi` (`bounds` = range_lo, lo, hi, range_hi), does the newer
    /// one's ends differ more (|ln ratio|, primary series) on the samples the search already
    /// has? No new samples: a heuristic for the order only (each part is still checked by
    /// [`Self::ends_differ`]), so the change that explains more is printed first.
    pub(super) fn newer_part_larger(
        &mut self,
        bounds: (usize, usize, usize, usize),
    ) -> Result<bool> {
        let (range_lo, lo, hi, range_hi) = bounds;
        let mut size = |a: usize, b: usize| -> Result<f64> {
            let (na, nb) = (self.claimed(a), self.claimed(b));
            if a >= b || na < 2 || nb < 2 || self.m.identical(a, b) {
                return Ok(0.0);
            }
            let p = self.m.ensure_series(&[(a, na), (b, nb)])?;
            let t = self.primary;
            Ok(match (p[0].get(t), p[1].get(t)) {
                (Some(Probe::Samples(x)), Some(Probe::Samples(y))) => {
                    let r = stats::compare(
                        &x.first(na).values,
                        &y.first(nb).values,
                        0.05,
                        self.cfg.min_effect,
                    )
                    .ratio
                    .ratio
                    .ln()
                    .abs();
                    if r.is_finite() {
                        r
                    } else {
                        0.0
                    }
                }
                _ => 0.0,
            })
        };
        Ok(size(hi, range_hi)? > size(range_lo, lo)?)
    }

    /// Too small a share of the ends' change to be searched (`min_share`)?
    pub(super) fn below_min_share(&self, share: Option<f64>) -> bool {
        matches!((self.cfg.min_share, share), (Some(m), Some(s)) if s.abs() < m)
    }

    /// Binary search of every range on the work list. A Between splits a range in two. After a
    /// change point is found, the parts of its range on either side are searched too if their own
    /// ends differ: a candidate can pass as Old or New while a smaller second change hides beside
    /// it, and this is what finds that change anyway. Each change point is confirmed as soon as it
    /// is found.
    pub(super) fn search_ranges(&mut self, first: Range, ends: &[Comparison]) -> Result<()> {
        let mut work = vec![(first, false)];
        while let Some((range, check_first)) = work.pop() {
            if let Some(why) = self.stop_now() {
                self.leave(&range, !check_first, why);
                continue;
            }
            let range = if check_first {
                match self.checked(range, &mut work)? {
                    Some(r) => r,
                    None => continue,
                }
            } else {
                range
            };
            self.narrow(range, ends, &mut work)?;
        }
        Ok(())
    }

    /// A range queued beside a change point or a split, whose ends were not tested against
    /// each other yet: searched only when they differ (then with their estimated share and
    /// the series that differ), else passed over, or left as unexplored below --min-share.
    /// Undecided is not "the same": its middle is probed (see `inside`), a half that differs
    /// is queued on `work`, and what stays undecided is left with what may hide there.
    pub(super) fn checked(
        &mut self,
        range: Range,
        work: &mut Vec<(Range, bool)>,
    ) -> Result<Option<Range>> {
        let (share, active) = match self.ends_differ(range.lo, range.hi)? {
            EndsCheck::Same(net) => {
                // Passed as the same is said, with the net change it bounds: steps that cancel
                // inside are not bounded (at 07d6d4e such a part was dropped unsaid).
                if net.is_some() && range.hi > range.lo + 1 {
                    self.unexplored.push(Unexplored {
                        lo: range.lo,
                        hi: range.hi,
                        differs: false,
                        share: None,
                        because: LeftBecause::Same,
                        ratio: net,
                    });
                }
                return Ok(None);
            }
            EndsCheck::Undecided(ratio) => {
                let inside = self.inside(&range, ratio)?;
                for (lo, hi, ratio) in inside.left {
                    self.unexplored.push(Unexplored {
                        lo,
                        hi,
                        differs: false,
                        share: range.share,
                        because: LeftBecause::Undecided,
                        ratio: Some(ratio),
                    });
                }
                for half in inside.differ {
                    if self.below_min_share(half.share) {
                        self.leave(&half, true, LeftBecause::MinShare);
                    } else {
                        work.push((half, false));
                    }
                }
                return Ok(None);
            }
            EndsCheck::Differ(est, act) => (Some(est), act),
        };
        let r = Range {
            share,
            active,
            ..range
        };
        if self.below_min_share(r.share) {
            self.leave(&r, true, LeftBecause::MinShare);
            return Ok(None);
        }
        Ok(Some(r))
    }

    /// Narrow one range by classifying candidates (one at a time, or a wave of one per lane)
    /// until it holds a change point (confirmed here) or splits at a Between commit (its halves
    /// queued), or the search must stop.
    pub(super) fn narrow(
        &mut self,
        range: Range,
        ends: &[Comparison],
        work: &mut Vec<(Range, bool)>,
    ) -> Result<()> {
        let (range_lo, range_hi) = (range.lo, range.hi);
        let mut r = range;
        loop {
            if let Some(why) = self.stop_now() {
                // The narrowed range still holds the change its ends differ by; the parts
                // already passed are left too, unchecked (a smaller change may hide beside a
                // commit that passed as Old or New), never dropped unsaid.
                self.leave(&r, true, why);
                for (lo, hi) in [(range_lo, r.lo), (r.hi, range_hi)] {
                    if hi > lo {
                        let part = Range {
                            lo,
                            hi,
                            share: None,
                            ..r.clone()
                        };
                        self.leave(&part, false, why);
                    }
                }
                return Ok(());
            }
            let skipped = |i: usize| self.skipped.contains_key(&i);
            let cands = wide::candidates(r.lo, r.hi, self.width, skipped);
            if cands.is_empty() {
                return self.found(&r, (range_lo, r.lo, r.hi, range_hi), ends, work);
            }
            let between = if self.width > 1 {
                self.wave_step(&mut r, &cands)?
            } else {
                self.binary_step(&mut r, cands[0])?
            };
            if let Some(b) = between {
                // The commits this range already passed as Old or New were judged against
                // ends that have since turned out to hold two changes: check the parts
                // outside lo..hi again (last, after the halves), as after a change point.
                let bounds = (range_lo, r.lo, r.hi, range_hi);
                let newer = self.newer_part_larger(bounds)?;
                push_outer_checks(work, bounds, r.uncertain, self.k, newer);
                self.split(&r, b.commit, b.position, &b.status, work);
                return Ok(());
            }
        }
    }

    /// One probe of a binary search: `c` classified, `r`'s ends moved by its verdict; `Some`
    /// (c's position and statuses) when it lies between two changes.
    fn binary_step(&mut self, r: &mut Range, c: usize) -> Result<Option<Between>> {
        let hints = self.hints(r, &[c]);
        self.m.prefetch(&hints);
        self.alpha = self.routing.take(1);
        let (step, status) = self.classify(c, r.lo, r.hi, &r.active)?;
        let position = step.position;
        let moved = apply(r, c, &step);
        self.tally(c, step);
        let between = Between {
            commit: c,
            position,
            status,
        };
        Ok(matches!(moved, Moved::Between).then_some(between))
    }

    /// No candidate left: lo..hi is a change point. It is confirmed at once, and the parts of
    /// the searched range beside it (`bounds`: range lo, lo, hi, range hi) are queued for a
    /// check of their own ends.
    pub(super) fn found(
        &mut self,
        r: &Range,
        bounds: (usize, usize, usize, usize),
        ends: &[Comparison],
        work: &mut Vec<(Range, bool)>,
    ) -> Result<()> {
        let f = Found {
            last_old: r.lo,
            first_new: r.hi,
            uncertain: r.uncertain,
        };
        let ends_now = self.ends_now(ends)?;
        let j = self.confirmed.len() + 1;
        let alpha_conf = alpha::confirmation_alpha(self.cfg.alpha, j, self.cfg.max_changes);
        let cp = self.confirm(&f, &ends_now, alpha_conf)?;
        self.m.confirmed(&cp);
        self.confirmed.push(cp);
        let newer = self.newer_part_larger(bounds)?;
        push_outer_checks(work, bounds, r.uncertain, self.k, newer);
        Ok(())
    }

    /// Queue the halves of a range that `c` (Between) splits. Both halves' ends differ by the
    /// very tests that made c Between, so they are searched without a check. The half holding
    /// the larger share of the change (by c's position between the ends) is pushed last, so it
    /// is searched first: the change that explains most of the range is found first.
    pub(super) fn split(
        &mut self,
        r: &Range,
        c: usize,
        position: Option<f64>,
        status: &[SeriesStatus],
        work: &mut Vec<(Range, bool)>,
    ) {
        let p = position.unwrap_or(0.5);
        let old_half_larger = position.is_none_or(|p| p >= 0.5);
        // A series like the old end at c changes only in the newer half, one
        // like the new end only in the older half.
        let act = |not: SeriesStatus| -> Vec<bool> {
            (r.active.iter().zip(status))
                .map(|(a, st)| *a && *st != not)
                .collect()
        };
        let (old_act, new_act) = (act(SeriesStatus::New), act(SeriesStatus::Old));
        let halves = if old_half_larger {
            [(c, r.hi, 1.0 - p, new_act), (r.lo, c, p, old_act)]
        } else {
            [(r.lo, c, p, old_act), (c, r.hi, 1.0 - p, new_act)]
        };
        for (lo, hi, part, active) in halves {
            let half = Range {
                lo,
                hi,
                uncertain: r.uncertain,
                share: r.share.map(|s| s * part),
                active,
            };
            if self.below_min_share(half.share) {
                self.leave(&half, true, LeftBecause::MinShare);
            } else {
                work.push((half, false));
            }
        }
    }
}
