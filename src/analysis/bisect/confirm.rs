//! Confirming a change point: parent against culprit on a fresh block of samples.

use super::*;

impl Searcher<'_> {
    /// The ends' comparison at every series on every sample of them the search has claimed so
    /// far (they are sampled again beside every candidate, so this is far more precise than the
    /// first look), with the first look's verdicts: what a change's share is measured against.
    pub(super) fn ends_now(&mut self, first: &[Comparison]) -> Result<Vec<Comparison>> {
        let last = self.n - 1;
        let (c0, cn) = (self.claimed(0), self.claimed(last));
        let all = self.m.ensure_series(&[(0, c0), (last, cn)])?;
        let mut out = first.to_vec();
        if let (Some(o), Some(b)) = (all.first(), all.get(1)) {
            for (t, slot) in out.iter_mut().enumerate() {
                if let (Some(Probe::Samples(o)), Some(Probe::Samples(b))) = (o.get(t), b.get(t)) {
                    let (o, b) = (o.first(c0), b.first(cn));
                    let mut c =
                        stats::compare(&o.values, &b.values, self.alpha, self.cfg.min_effect);
                    c.verdict = first[t].verdict;
                    // The tail check that may have decided the first look, on these samples.
                    if self.cfg.tail {
                        let (pa, pb) = crate::analysis::samples::pairs(&o, &b);
                        c.tail = stats::tail_check(&o.values, &b.values, Some((&pa, &pb)));
                        c.by_tail = first[t].by_tail;
                    }
                    *slot = c;
                }
            }
        }
        Ok(out)
    }

    /// The parent and culprit of `f` compared on a fresh block (the samples after `bases`),
    /// looked at after each of `looks` samples, at `alpha_look` per look and series.
    pub(super) fn confirmation_block(
        &mut self,
        f: &Found,
        bases: [usize; 2],
        looks: &[usize],
        alpha_look: f64,
    ) -> Result<Vec<Comparison>> {
        let commits = [f.last_old, f.first_new];
        let (me, k) = (self.cfg.min_effect, self.k);
        let r = sequential(
            looks,
            alpha_look,
            (me, self.cfg.tail_rule()),
            true,
            |look| {
                let w = self.windows(&commits, &bases, look)?;
                self.claim(f.last_old, bases[0] + look);
                self.claim(f.first_new, bases[1] + look);
                self.spend(k, alpha_look);
                Ok(w)
            },
        )?;
        match r {
            Ok((series, _, _)) => {
                self.decided_on(series.iter().enumerate());
                Ok(series)
            }
            Err((_, why, _)) => bail!(
                "{} or {} was measured before but now cannot be: {why}",
                self.m.name(f.last_old),
                self.m.name(f.first_new)
            ),
        }
    }

    /// Confirm a change point: its parent against it on a fresh block of samples (after every
    /// sample the search used), grown over the looks of the schedule from the spread's fresh
    /// block on (2 × initial for the clock, initial for counts), then once more when undecided,
    /// the confirmation's `alpha_conf` split over those looks and the series. The reported
    /// numbers come from this block alone.
    pub(super) fn confirm(
        &mut self,
        f: &Found,
        ends: &[Comparison],
        alpha_conf: f64,
    ) -> Result<ChangePoint> {
        let min = self.cfg.spread.fresh_block(&self.cfg.schedule);
        let looks: Vec<usize> = self
            .schedule
            .iter()
            .copied()
            .filter(|&k| k >= min)
            .collect();
        let looks = if looks.is_empty() { vec![min] } else { looks };
        // Both built before their marks are read: a subject this measurer has not prepared
        // cannot be told identical to one an earlier phase read (a located change's parent,
        // first seen here, measured as GOOD's byte-identical build), so its block began at its
        // pool's first sample, on placement's.
        self.m.prepare_all(&[f.last_old, f.first_new])?;
        // Every look paid for, the undecided block's last one too (at 07d6d4e a count
        // confirmation, three looks and that one, spent 4/3 of its share).
        let alpha_look = alpha_conf / ((looks.len() + 1) * self.k) as f64;
        // Every look of the block, the larger cap's too, counts from the same start.
        let bases = [self.claimed(f.last_old), self.claimed(f.first_new)];
        let mut series = self.confirmation_block(f, bases, &looks, alpha_look)?;
        // A parent and child with byte-identical binaries cannot differ in speed: whatever the
        // samples say, that is noise, never a culprit.
        let identical = self.m.identical(f.last_old, f.first_new);
        // Located is not refuted: a block still undecided at the cap gets more samples, and if
        // it stays undecided the change point is reported as located, its size unresolved.
        let undecided = |s: &[Comparison]| {
            !s.iter().any(significant) && s.iter().any(|c| c.verdict == Verdict::Undecided)
        };
        if !identical && undecided(&series) {
            let more = self.cfg.schedule.max * self.unresolved_cap;
            series = self.confirmation_block(f, bases, &[more], alpha_look)?;
        }
        let comparison = series[self.primary];
        let confirmed = !identical && series.iter().any(significant);
        let unresolved = !identical && undecided(&series);
        // "Clearly smaller": the whole interval of this change lies nearer to 1 than the
        // end-to-end ratio (estimated on every sample of the ends, see `search`).
        let e = &ends[self.primary];
        let smaller = match e.verdict {
            Verdict::Slower => comparison.ratio.hi < e.ratio.ratio,
            Verdict::Faster => comparison.ratio.lo > e.ratio.ratio,
            _ => false,
        };
        let skipped_between = (f.last_old + 1..f.first_new)
            .filter(|i| self.skipped.contains_key(i))
            .collect();
        Ok(ChangePoint {
            last_old: f.last_old,
            first_new: f.first_new,
            skipped_between,
            comparison,
            confirmed,
            unresolved,
            identical_binaries: identical,
            share: comparison.ratio.ratio.ln() / e.ratio.ratio.ln(),
            partial: smaller,
            uncertain: f.uncertain,
            series: if self.k > 1 { series } else { Vec::new() },
            located: None,
        })
    }
}
