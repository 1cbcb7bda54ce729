//! What the search asks of a measurement session, and what one probe of a commit gave.

use super::*;

/// What measuring a commit gave.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Probe {
    Samples(Samples),
    /// Build failed / kernel not applicable / crashed: the reason.
    Skip(Unavailable),
}

pub trait Measurer {
    /// For each (commit, n) make sure at least n samples exist and return ALL samples known for that
    /// commit (in the order they were taken). The implementation takes missing samples interleaved
    /// across the listed commits (A B C A B C ...), so drift cancels; callers therefore always ask for
    /// the candidate together with the ends/neighbours it is compared against.
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>>;
    /// The samples of each commit this run's decisions have read so far, whichever phase read
    /// them (merge-base placement, the ends' comparison, a search, a grid): every phase starts
    /// from them and adds what it reads, so a confirmation's fresh block begins after all of
    /// them and is taken in rounds of its two subjects alone (see [`Used`]). A measurer that
    /// passes samples through to another gives that one's marks.
    fn used(&mut self) -> &mut Used;
    /// Called when a commit's verdict is final (for live output). Default: do nothing.
    fn decided(&mut self, _step: &Step) {}
    /// Called when a change point has been confirmed (or rejected) on its fresh block, as soon as
    /// that is known, before the search goes on (for live output). Its `share` is against the
    /// ends as sampled so far. Default: do nothing.
    fn confirmed(&mut self, _cp: &ChangePoint) {}
    /// Whether the search should stop exploring (a time budget spent). Asked before each
    /// sub-range and each candidate; honoured only once a change point in the range's direction is
    /// confirmed, so the search never ends without its main answer. The clock lives here, not in
    /// the search, so simulations and tests drive it. Default: never.
    fn should_stop(&self) -> bool {
        false
    }
    /// Get commit `c` ready to measure (build it) without sampling, so that [`identical`]
    /// can tell. Default: nothing to do.
    ///
    /// [`identical`]: Measurer::identical
    fn prepare(&mut self, _c: usize) -> Result<()> {
        Ok(())
    }
    /// [`Measurer::prepare`] for several commits, whose builds may run side by side (a wave's
    /// candidates). Default: one after another.
    fn prepare_all(&mut self, commits: &[usize]) -> Result<()> {
        commits.iter().try_for_each(|&c| self.prepare(c))
    }
    /// Whether commits `a` and `b` load byte-identical libraries and modules (then no change of
    /// speed can lie between them, and `ensure` may give both one pool of samples: the search
    /// counts the samples it claimed per pool, see [`pool_key`]). Default: not known.
    fn identical(&self, _a: usize, _b: usize) -> bool {
        false
    }
    /// Series measured at every probe (the thread counts of `--threads 1,8,32`): 1 unless the
    /// measurer implements [`Measurer::ensure_series`].
    fn series(&self) -> usize {
        1
    }
    /// Like `ensure`, for every series: per commit one probe per series, each with at least n
    /// samples, all taken interleaved. Default: the one series of `ensure`.
    fn ensure_series(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Vec<Probe>>> {
        Ok(self.ensure(wants)?.into_iter().map(|p| vec![p]).collect())
    }
    /// The commit the search is about to measure, then those it may probe after it (whichever
    /// way it goes): a measurer with build machines apart from its measuring ones builds them
    /// now, in that order, while this probe is measured. A hint: nothing may depend on it.
    /// Default: ignored.
    fn prefetch(&mut self, _commits: &[usize]) {}
    /// Called once, after the ends' comparison and before the search, with what the ends'
    /// noise says the search will resolve and need (for live output). Default: nothing.
    fn forecast(&mut self, _f: &Forecast) {}
    /// How errors name commit `i` (a short sha in the real pipeline).
    fn name(&self, i: usize) -> String {
        format!("commit {i}")
    }
    /// How many searches may sample at once, each on a measurement node of its own (see
    /// [`crate::analysis::lanes`]). 1, the default: one search at a time, as on one machine.
    fn lanes(&self) -> usize {
        1
    }
    /// Lane `lane`'s next block, as `ensure_series` takes its wants, started now beside the
    /// other lanes' blocks in flight. A lane's commits are subjects of its own, whose samples
    /// no other lane or phase sees, all taken on the lane's node; a lane has one block in
    /// flight at a time. Asked only of a measurer with more than one lane.
    fn start_lane(&mut self, lane: usize, wants: &[(usize, usize)]) -> Result<()> {
        let _ = wants;
        bail!("this measurer samples for one search at a time, not for lane {lane}")
    }
    /// Lane `lane`'s search is over: it will ask for no more samples (a measurer that holds a
    /// node for it lets it go). Default: nothing held.
    fn lane_done(&mut self, lane: usize) -> Result<()> {
        let _ = lane;
        Ok(())
    }
    /// Waits until a lane's block in flight is done: that lane, and per commit it wanted one
    /// probe per series.
    fn next_lane(&mut self) -> Result<(usize, SeriesProbes)> {
        bail!("this measurer has no lane in flight")
    }
}

/// Per commit, one probe per series (see [`Measurer::ensure_series`]).
pub type SeriesProbes = Vec<Vec<Probe>>;

/// Per commit, the first series' probe (`ensure` of a measurer that answers by series).
pub fn first_series(probes: SeriesProbes) -> Vec<Probe> {
    probes.into_iter().map(|mut p| p.swap_remove(0)).collect()
}
