//! One step of the search: a candidate sampled with fresh samples of its interval's ends and
//! classified, per series and combined (Old, New, Between, Ambiguous or Skipped).

use super::*;

pub(super) enum Window {
    /// One window per series (thread count), in the measurer's series order.
    Samples(Vec<Samples>),
    Skip(Unavailable),
}

/// A candidate's step, and where each series placed it.
pub(super) type Judged = (Step, Vec<SeriesStatus>);

/// Where a candidate lies for one series (thread count) against its interval's ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum SeriesStatus {
    /// The series' ends do not differ in this interval: it says nothing here.
    Inactive,
    Old,
    New,
    Between,
    /// Not decided (yet).
    Pending,
}

/// The step's verdict from its series' statuses: Between at one Between or at an Old beside a
/// New (two changes); undecided while one is pending; else the one direction they agree on.
pub(super) fn combined_verdict(status: &[SeriesStatus]) -> Option<StepVerdict> {
    let has = |s: SeriesStatus| status.contains(&s);
    if has(SeriesStatus::Between) || (has(SeriesStatus::Old) && has(SeriesStatus::New)) {
        Some(StepVerdict::Between)
    } else if has(SeriesStatus::Pending) {
        None
    } else if has(SeriesStatus::Old) {
        Some(StepVerdict::Old)
    } else if has(SeriesStatus::New) {
        Some(StepVerdict::New)
    } else {
        None
    }
}

impl Searcher<'_> {
    /// A step from the windows of each series; its mean and interval are of series `shown`.
    pub(super) fn step(
        commit: usize,
        xs: &[Samples],
        shown: usize,
        verdict: StepVerdict,
        position: Option<f64>,
        positions: &[Option<f64>],
    ) -> Step {
        let s = stats::summarize(xs.get(shown).map_or(&[][..], |v| &v.values[..]));
        let series = if xs.len() > 1 {
            xs.iter()
                .enumerate()
                .map(|(t, x)| {
                    let s = stats::summarize(&x.values);
                    SeriesPoint {
                        mean: s.mean,
                        ci95: s.ci95,
                        position: positions.get(t).copied().flatten(),
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        Step {
            commit,
            n: s.n,
            mean: s.mean,
            ci95: s.ci95,
            verdict,
            position,
            series,
        }
    }

    /// Classify `c` against the interval ends `lo` (old-like) and `hi` (new-like) on fresh windows of
    /// all three, growing them together. Only the `active` series (whose ends differ in this
    /// interval) decide; with several, c is Between when one series says Between or one says Old
    /// and another New (two changes), Old/New when every active series that decided agrees and
    /// none is pending. Returns the step and each series' status.
    pub(super) fn classify(
        &mut self,
        c: usize,
        lo: usize,
        hi: usize,
        active: &[bool],
    ) -> Result<Judged> {
        self.m.prepare(c)?;
        if let Some(same) = self.as_identical_end(c, lo, hi)? {
            return Ok(same);
        }
        let commits = [c, lo, hi];
        let bases = [
            self.claimed(c),
            self.end_base(Pool::Main, lo),
            self.end_base(Pool::Main, hi),
        ];
        let looks = self.schedule.clone();
        for (li, &k) in looks.iter().enumerate() {
            let w = self.windows(&commits, &bases, k)?;
            for (i, &cm) in commits.iter().enumerate() {
                self.claim(cm, bases[i] + k);
            }
            if let Some(done) = self.judge(c, (lo, hi), active, &w, li + 1 == looks.len())? {
                return Ok(done);
            }
        }
        bail!("empty sample schedule")
    }

    /// One look at `c` against the ends `lo..hi` (`w`: the windows of c, lo and hi): the step
    /// and each series' status once it is decided, skipped or at the `last` look, else `None`
    /// (the look after it decides).
    pub(super) fn judge(
        &mut self,
        c: usize,
        (lo, hi): (usize, usize),
        active: &[bool],
        w: &[Window],
        last: bool,
    ) -> Result<Option<Judged>> {
        let x = match &w[0] {
            Window::Samples(x) => x,
            Window::Skip(r) => {
                let st = Self::step(c, &[], 0, StepVerdict::Skipped(r.clone()), None, &[]);
                return Ok(Some((st, vec![SeriesStatus::Pending; self.k])));
            }
        };
        let (xo, xn) = match (&w[1], &w[2]) {
            (Window::Samples(o), Window::Samples(n)) => (o, n),
            (Window::Skip(r), _) | (_, Window::Skip(r)) => {
                bail!("commit {lo} or {hi} was measured before but now cannot be: {r}")
            }
        };
        let (status, positions, spread, tested) = self.series_statuses(x, xo, xn, active);
        let verdict = combined_verdict(&status);
        if verdict.is_none() && !last {
            return Ok(None);
        }
        self.decided_on(tested.iter().map(|(t, c)| (*t, c)));
        // The position that steers the search: of the active series whose ends are furthest
        // apart (the single series when there is one).
        let lead = (0..self.k)
            .filter(|&t| status[t] != SeriesStatus::Inactive && positions[t].is_some())
            .max_by(|&a, &b| spread[a].total_cmp(&spread[b]));
        let point = lead.and_then(|t| positions[t]);
        let shown = lead.unwrap_or(self.primary);
        let st = Self::step(
            c,
            x,
            if self.k > 1 { self.primary } else { shown },
            verdict.unwrap_or(StepVerdict::Ambiguous),
            point,
            &positions,
        );
        Ok(Some((st, status)))
    }

    /// A commit that loads the same binaries as an end behaves as that end: measuring it
    /// would compare one subject with itself. Its step as that end, when it is one.
    pub(super) fn as_identical_end(
        &mut self,
        c: usize,
        lo: usize,
        hi: usize,
    ) -> Result<Option<Judged>> {
        let ends = [
            (lo, StepVerdict::Old, SeriesStatus::Old, 0.0),
            (hi, StepVerdict::New, SeriesStatus::New, 1.0),
        ];
        for (end, verdict, status, point) in ends {
            if self.m.identical(c, end) {
                let xs = self.end_samples(end)?;
                let st = Self::step(c, &xs, self.primary, verdict, Some(point), &[]);
                return Ok(Some((st, vec![status; self.k])));
            }
        }
        Ok(None)
    }

    /// What the search holds of `end`, to show a commit that behaves as it: its claimed
    /// samples, else (an end only lanes measured) the most any lane holds; none taken anew.
    fn end_samples(&mut self, end: usize) -> Result<Vec<Samples>> {
        let k = self.claimed(end);
        if k > 0 || self.width == 1 {
            return Ok(match self.windows(&[end], &[0], k.max(1))?.pop() {
                Some(Window::Samples(v)) => v,
                _ => Vec::new(),
            });
        }
        // The lowest lane among those holding the most: the same whatever the map's order.
        let most = |t: usize| {
            (self.held.iter())
                .filter(|((_, c, s), _)| *c == end && *s == t)
                .max_by(|a, b| a.1.len().cmp(&b.1.len()).then(b.0.cmp(a.0)))
                .map(|(_, v)| v.clone())
        };
        Ok((0..self.k)
            .map(|t| Samples::unpaired(most(t).unwrap_or_default()))
            .collect())
    }

    /// One look's tests of `x` against the old end `xo` and the new end `xn` at every active
    /// series: each series' status, c's position between the ends and the ends' spread (|ln
    /// ratio|).
    pub(super) fn series_statuses(
        &mut self,
        x: &[Samples],
        xo: &[Samples],
        xn: &[Samples],
        active: &[bool],
    ) -> Statuses {
        let mut status = vec![SeriesStatus::Inactive; self.k];
        let mut tested = Vec::new();
        let mut positions = vec![None; self.k];
        let mut spread = vec![0.0; self.k];
        for t in (0..self.k).filter(|&t| active.get(t).copied().unwrap_or(true)) {
            let vo = self.compare(&xo[t], &x[t], self.alpha);
            let vn = self.compare(&xn[t], &x[t], self.alpha);
            self.route(2, self.alpha);
            tested.extend([(t, vo), (t, vn)]);
            let (d_old, d_new) = (significant(&vo), significant(&vn));
            let pos = position(&xo[t].values, &x[t].values, &xn[t].values, POSITION_CONF);
            positions[t] = pos.map(|p| p.0);
            spread[t] = stats::compare(
                &xo[t].values,
                &xn[t].values,
                self.alpha,
                self.cfg.min_effect,
            )
            .ratio
            .ratio
            .ln()
            .abs();
            // A tail change leaves the trimmed location where it was, so its position says
            // nothing: the tail check's side is the place.
            status[t] = if d_old && d_new {
                SeriesStatus::Between
            } else if d_new && !d_old && (vn.by_tail || pos.is_some_and(|p| p.2 < 0.5)) {
                SeriesStatus::Old
            } else if d_old && !d_new && (vo.by_tail || pos.is_some_and(|p| p.1 > 0.5)) {
                SeriesStatus::New
            } else {
                SeriesStatus::Pending
            };
        }
        (status, positions, spread, tested)
    }
}

/// One look's outcome at every series: status, position, the ends' spread, and the tests made
/// (series, comparison).
type Statuses = (
    Vec<SeriesStatus>,
    Vec<Option<f64>>,
    Vec<f64>,
    Vec<(usize, Comparison)>,
);
