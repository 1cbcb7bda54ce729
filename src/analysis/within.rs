//! A sub-range searched as a search of its own, on samples no earlier phase used: a scan's
//! grid intervals, and the stretches between the change points counts located when the time
//! moved more than those explain ([`crate::analysis::locate`]). Each such search sees only
//! samples taken after everything earlier phases used, so its comparisons are independent of
//! the choice to enter it.

use crate::analysis::bisect::{
    self, pool_key, Config, Measurer, Outcome, Probe, SearchResult, SeriesProbes, Step, Used,
};
use anyhow::Result;
use std::collections::HashMap;

/// Records the most samples seen per commit (and per lane's commit), for the totals and for
/// what later phases must not reuse, and every value, for the noise.
pub struct Tracker<'a> {
    m: &'a mut dyn Measurer,
    pub seen: HashMap<usize, usize>,
    /// Per (lane, commit): a lane's commits are subjects of their own.
    pub lane_seen: HashMap<(usize, usize), usize>,
    /// What each lane's block in flight asked for.
    lane_wants: HashMap<usize, Vec<(usize, usize)>>,
    /// Each commit's samples (the most of any lane's), for the noise.
    pub held: HashMap<usize, Vec<f64>>,
    /// The log ratio of the whole range's ends, if they moved: a confirmed change is told with
    /// its share of it (a sub-range's own ends made a live line read "1432% of the range's
    /// change"), or with none.
    pub ln_ends: Option<f64>,
}

impl<'a> Tracker<'a> {
    pub fn new(m: &'a mut dyn Measurer, held: HashMap<usize, Vec<f64>>) -> Self {
        Tracker {
            m,
            seen: HashMap::new(),
            lane_seen: HashMap::new(),
            lane_wants: HashMap::new(),
            held,
            ln_ends: None,
        }
    }

    /// Commits sampled, by any phase or lane.
    pub fn commits_measured(&self) -> usize {
        let lanes = self.lane_seen.keys().map(|k| k.1);
        let mut all: std::collections::HashSet<usize> = self.seen.keys().copied().collect();
        all.extend(lanes);
        all.len()
    }

    /// Samples held by every phase and lane.
    pub fn samples_taken(&self) -> usize {
        self.seen.values().sum::<usize>() + self.lane_seen.values().sum::<usize>()
    }
}

impl Measurer for Tracker<'_> {
    fn used(&mut self) -> &mut Used {
        self.m.used()
    }
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        let r = self.m.ensure(wants)?;
        for (&(c, _), p) in wants.iter().zip(&r) {
            let n = match p {
                Probe::Samples(v) => {
                    self.held.insert(c, v.values.clone());
                    v.len()
                }
                Probe::Skip(_) => 0,
            };
            let e = self.seen.entry(c).or_insert(0);
            *e = (*e).max(n);
        }
        Ok(r)
    }
    fn decided(&mut self, s: &Step) {
        self.m.decided(s)
    }
    fn identical(&self, a: usize, b: usize) -> bool {
        self.m.identical(a, b)
    }
    fn confirmed(&mut self, cp: &bisect::ChangePoint) {
        // Not a number when the range's ends did not move: no share to tell.
        let share = self.ln_ends.map_or(f64::NAN, |ln| cp.share_of(ln));
        self.m.confirmed(&bisect::ChangePoint {
            share,
            ..cp.clone()
        })
    }
    fn prefetch(&mut self, commits: &[usize]) {
        self.m.prefetch(commits)
    }
    fn name(&self, i: usize) -> String {
        self.m.name(i)
    }
    fn lanes(&self) -> usize {
        self.m.lanes()
    }
    fn start_lane(&mut self, lane: usize, wants: &[(usize, usize)]) -> Result<()> {
        self.m.start_lane(lane, wants)?;
        self.lane_wants.insert(lane, wants.to_vec());
        Ok(())
    }
    fn lane_done(&mut self, lane: usize) -> Result<()> {
        self.m.lane_done(lane)
    }
    fn next_lane(&mut self) -> Result<(usize, SeriesProbes)> {
        let (lane, probes) = self.m.next_lane()?;
        let wants = self.lane_wants.remove(&lane).unwrap_or_default();
        for (&(c, _), p) in wants.iter().zip(&probes) {
            let Some(Probe::Samples(v)) = p.first() else {
                continue;
            };
            let e = self.lane_seen.entry((lane, c)).or_insert(0);
            *e = (*e).max(v.len());
            let held = self.held.entry(c).or_default();
            if v.len() > held.len() {
                *held = v.values.clone();
            }
        }
        Ok((lane, probes))
    }
}

/// The sub-range `lo..=hi` as a search of its own: local indices, and per commit only the samples
/// after the first `hide[c]` (those earlier phases used).
struct Sub<'a> {
    m: &'a mut dyn Measurer,
    lo: usize,
    hide: &'a Used,
    /// Most samples (after the hidden ones) asked per global commit.
    asked: HashMap<usize, usize>,
    /// The sub-search's own marks, in its local indices over what is not hidden: what it asked
    /// is the run's when it ends (`asked`).
    local: Used,
}

impl Sub<'_> {
    /// Global commit `g`'s pool (see bisect::pool_key): earlier phases' first, then this one's.
    fn pool(&self, g: usize) -> usize {
        let p = pool_key(self.hide, g, &*self.m);
        if self.hide.contains_key(&p) {
            p
        } else {
            pool_key(&self.asked, g, &*self.m)
        }
    }
}

impl Measurer for Sub<'_> {
    fn used(&mut self) -> &mut Used {
        &mut self.local
    }
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        let mut global = Vec::with_capacity(wants.len());
        let mut hidden = Vec::with_capacity(wants.len());
        for &(c, k) in wants {
            let g = self.lo + c;
            let p = self.pool(g);
            let e = self.asked.entry(p).or_insert(0);
            *e = (*e).max(k);
            let h = self.hide.get(&p).copied().unwrap_or(0);
            global.push((g, h + k));
            hidden.push(h);
        }
        let r = self.m.ensure(&global)?;
        Ok(r.into_iter()
            .zip(hidden)
            .map(|(p, h)| match p {
                Probe::Samples(v) => Probe::Samples(v.window(h, usize::MAX)),
                s => s,
            })
            .collect())
    }
    fn decided(&mut self, s: &Step) {
        let mut s = s.clone();
        s.commit += self.lo;
        self.m.decided(&s)
    }
    fn confirmed(&mut self, cp: &bisect::ChangePoint) {
        let mut cp = cp.clone();
        shift_change(&mut cp, self.lo);
        self.m.confirmed(&cp)
    }
    fn should_stop(&self) -> bool {
        self.m.should_stop()
    }
    fn identical(&self, a: usize, b: usize) -> bool {
        self.m.identical(self.lo + a, self.lo + b)
    }
    fn prefetch(&mut self, commits: &[usize]) {
        let global: Vec<usize> = commits.iter().map(|c| self.lo + c).collect();
        self.m.prefetch(&global)
    }
    fn name(&self, i: usize) -> String {
        self.m.name(self.lo + i)
    }
}

/// `lo..=hi` searched as a bisect of its own, on samples no earlier phase of the run read
/// ([`Measurer::used`], per pool, which grows by what this search reads); its positions made
/// global. Unlike a search that starts from the run's marks, it reads none of the hidden
/// samples, its routing neither: the choice to enter it was made on them.
pub fn search(lo: usize, hi: usize, cfg: &Config, m: &mut dyn Measurer) -> Result<SearchResult> {
    let hide = m.used().clone();
    let mut sub = Sub {
        m,
        lo,
        hide: &hide,
        asked: HashMap::new(),
        local: Used::new(),
    };
    let mut r = bisect::search(hi - lo + 1, cfg, &mut sub)?;
    let asked = std::mem::take(&mut sub.asked);
    let mut used = hide.clone();
    for (g, k) in asked {
        let key = pool_key(&used, g, &*sub.m);
        *used.entry(key).or_insert(0) += k;
    }
    *sub.m.used() = used;
    shift(&mut r, lo);
    Ok(r)
}

/// A sub-range's result in the whole range's positions.
fn shift(r: &mut SearchResult, lo: usize) {
    for s in &mut r.steps {
        s.commit += lo;
    }
    if let Outcome::Changes(cps) = &mut r.outcome {
        for c in cps {
            shift_change(c, lo);
        }
    }
    for u in &mut r.unexplored {
        u.lo += lo;
        u.hi += lo;
    }
}

fn shift_change(c: &mut bisect::ChangePoint, lo: usize) {
    c.last_old += lo;
    c.first_new += lo;
    for s in &mut c.skipped_between {
        *s += lo;
    }
}
