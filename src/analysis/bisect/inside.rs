//! Looking inside a part whose ends' check stayed undecided at the cap. Such a part is not "the
//! same": its ends may hide one step that the check could not resolve, or two that cancel. Its
//! middle commit is probed against both its ends on fresh samples of all three, taken in the
//! same rounds: a half whose ends differ by that test is searched as any range that differs; a
//! half still undecided is left with its own bound; a part whose middle differs from neither end
//! is left whole with the bound of its ends, as before.
//!
//! Measured (`simulate --scan --commits 4038` with five steps of +16%, +86%, −32%, −13%, +15%
//! at 1360–1580 and 10% noise): a −13% step next to a found change was left in an undecided part
//! whose bound did not reach it, and a −13% and +15% pair cancelled in the part after them.

use super::*;
use ranges::Range;

/// What probing an undecided part's middle found.
pub(super) struct Inside {
    /// Halves whose ends differ (by the probe's own test), with their estimated share of the
    /// range's change and the series that differ: searched as ranges known to differ.
    pub(super) differ: Vec<Range>,
    /// Halves, or the whole part, left with the size of change that may hide there.
    pub(super) left: Vec<(usize, usize, RatioCi)>,
}

/// The middle against the old end and against the new end (per series), and the middle's
/// samples.
struct Halves {
    old: Vec<Comparison>,
    new: Vec<Comparison>,
    middle: Vec<Samples>,
}

impl Searcher<'_> {
    /// Probe the middle of `r`, whose ends' check stayed undecided with the ratio `whole`.
    pub(super) fn inside(&mut self, r: &Range, whole: RatioCi) -> Result<Inside> {
        let nothing = |whole| Inside {
            differ: Vec::new(),
            left: vec![(r.lo, r.hi, whole)],
        };
        let skipped = |i: usize| self.skipped.contains_key(&i);
        let Some(c) = pick_candidate(r.lo, r.hi, skipped) else {
            return Ok(nothing(whole));
        };
        self.m.prepare(c)?;
        // A middle that loads an end's binaries splits nothing: the other half is the part.
        if self.m.identical(c, r.lo) || self.m.identical(c, r.hi) {
            return Ok(nothing(whole));
        }
        let Some(Halves { old, new, middle }) = self.halves(c, r)? else {
            return Ok(nothing(whole));
        };
        let differs = |h: &[Comparison]| h.iter().zip(&r.active).any(|(c, a)| *a && significant(c));
        let verdict = match (differs(&old), differs(&new)) {
            (true, true) => StepVerdict::Between,
            (true, false) => StepVerdict::New,
            (false, true) => StepVerdict::Old,
            (false, false) => StepVerdict::Ambiguous,
        };
        self.tally(c, Self::step(c, &middle, self.primary, verdict, None, &[]));
        let mut out = Inside {
            differ: Vec::new(),
            left: Vec::new(),
        };
        for ((lo, hi), h) in [(r.lo, c), (c, r.hi)].into_iter().zip([&old, &new]) {
            let ratio = h[self.primary].ratio;
            if differs(h) {
                out.differ.push(Range {
                    lo,
                    hi,
                    uncertain: r.uncertain,
                    share: Some(ratio.ratio.ln() / self.total_log),
                    active: (0..self.k).map(|t| significant(&h[t])).collect(),
                });
            } else if h.iter().any(|c| c.verdict != Verdict::Same) {
                out.left.push((lo, hi, ratio));
            }
        }
        if out.differ.is_empty() {
            return Ok(nothing(whole));
        }
        Ok(out)
    }

    /// `c` against `r`'s old end and its new end (per series), on fresh windows of all three
    /// grown over the schedule until every active series decided both sides or the cap; with
    /// `c`'s samples. `None` when `c` cannot be measured (it is then skipped).
    fn halves(&mut self, c: usize, r: &Range) -> Result<Option<Halves>> {
        let commits = [c, r.lo, r.hi];
        let bases = [
            self.claimed(c),
            self.end_base(Pool::Main, r.lo),
            self.end_base(Pool::Main, r.hi),
        ];
        self.alpha = self.routing.take(1);
        let (alpha, me, rule) = (self.alpha, self.cfg.min_effect, self.cfg.tail_rule());
        let active = r.active.iter().filter(|a| **a).count();
        let mut last = None;
        for k in self.schedule.clone() {
            let w = self.windows(&commits, &bases, k)?;
            for (i, &cm) in commits.iter().enumerate() {
                self.claim(cm, bases[i] + k);
            }
            let (x, o, n) = match (&w[0], &w[1], &w[2]) {
                (Window::Skip(why), _, _) => {
                    let st = Self::step(c, &[], 0, StepVerdict::Skipped(why.clone()), None, &[]);
                    self.tally(c, st);
                    return Ok(None);
                }
                (Window::Samples(x), Window::Samples(o), Window::Samples(n)) => (x, o, n),
                (_, Window::Skip(why), _) | (_, _, Window::Skip(why)) => bail!(
                    "{} or {} was measured before but now cannot be: {why}",
                    self.m.name(r.lo),
                    self.m.name(r.hi)
                ),
            };
            let side = |a: &[Samples], b: &[Samples]| -> Vec<Comparison> {
                (0..a.len())
                    .map(|t| stats::compare_rounds_with(&a[t], &b[t], alpha, me, rule))
                    .collect()
            };
            let h = Halves {
                old: side(o, x),
                new: side(x, n),
                middle: x.clone(),
            };
            self.route(2 * active, alpha);
            let open = (h.old.iter().chain(&h.new))
                .zip(r.active.iter().chain(&r.active))
                .any(|(c, a)| *a && c.verdict == Verdict::Undecided);
            last = Some(h);
            if !open {
                break;
            }
        }
        if let Some(h) = &last {
            let tested: Vec<(usize, Comparison)> = (0..self.k)
                .filter(|&t| r.active.get(t).copied().unwrap_or(true))
                .flat_map(|t| [(t, h.old[t]), (t, h.new[t])])
                .collect();
            self.decided_on(tested.iter().map(|(t, c)| (*t, c)));
        }
        Ok(last)
    }
}
