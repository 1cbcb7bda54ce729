//! Searches side by side: the intervals a scan enters are searched at once, each in a *lane* of
//! its own — its own subjects and its own measurement node. A lane's next block of samples
//! starts as soon as the lane asks ([`Measurer::start_lane`]), beside the blocks of the others,
//! and the lane goes on as soon as its own block ends ([`Measurer::next_lane`]).
//!
//! Each search is the usual pure search ([`within::search`]) on a thread of its own, whose
//! measurer (`Link`) hands every request to the one thread that owns the real measurer.
//! That thread waits for the measurer only when no lane is still working out its next
//! request, and starts a waiting lane (lowest first) only then too: so the measurer sees each
//! lane's requests in order and one at a time, and a measurer that answers the lowest lane in
//! flight first (the simulator) gives the same scan whichever thread runs first.
//!
//! A lane sees only its own samples, taken after the phase that chose to enter it, so its
//! comparisons are independent of that choice as a search one at a time is (see
//! [`crate::analysis::within`]). Two lanes sharing an end measure it apart, each on its node:
//! no test pools samples of two machines.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::mpsc::{channel, Receiver, Sender};

use anyhow::{anyhow, Result};

use crate::analysis::bisect::Used;
use crate::analysis::bisect::{
    self, ChangePoint, Config, Measurer, Probe, SearchResult, SeriesProbes, Step,
};
use crate::analysis::within;

/// A range to search in a lane: `lo..=hi`, global positions; `id` names the lane (its samples'
/// key, so a resumed run finds them again) and orders the starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lane {
    pub id: usize,
    pub lo: usize,
    pub hi: usize,
}

/// What a lane's search asks of the measurer.
enum Ask {
    Ensure(Vec<(usize, usize)>),
    Decided(Step),
    Confirmed(Box<ChangePoint>),
    ShouldStop,
    Prepare(usize),
    Prefetch(Vec<usize>),
    Identical(usize, usize),
    Name(usize),
    Done(Box<Result<SearchResult>>),
}

enum Reply {
    Probes(SeriesProbes),
    Yes(bool),
    Prepared(std::result::Result<(), String>),
    Name(String),
}

/// Searches every lane of `first`, and those `then` adds as each search ends, at most
/// `m.lanes()` at once; returns each lane's result, by lane id. A lane id given twice is
/// searched once.
pub fn search(
    m: &mut dyn Measurer,
    cfg: &Config,
    first: Vec<Lane>,
    mut then: impl FnMut(&Lane, &SearchResult) -> Vec<Lane>,
) -> Result<BTreeMap<usize, (Lane, SearchResult)>> {
    let cap = m.lanes().max(1);
    let series = m.series();
    let (ask_tx, asks) = channel::<(usize, Ask)>();
    std::thread::scope(|scope| {
        let mut c = Coordinator {
            m,
            replies: HashMap::new(),
            in_flight: BTreeSet::new(),
            queue: first.into_iter().map(|l| (l.id, l)).collect(),
            started: BTreeSet::new(),
            done: BTreeMap::new(),
        };
        loop {
            if c.in_flight.len() == c.replies.len() {
                if c.replies.len() < cap && !c.queue.is_empty() {
                    while c.replies.len() < cap {
                        let Some((_, lane)) = c.queue.pop_first() else {
                            break;
                        };
                        if !c.started.insert(lane.id) {
                            continue;
                        }
                        let (tx, rx) = channel();
                        c.replies.insert(lane.id, (lane, tx));
                        let link = Link {
                            used: Used::new(),
                            lane: lane.id,
                            series,
                            asks: ask_tx.clone(),
                            replies: rx,
                        };
                        scope.spawn(move || link.run(lane, cfg));
                    }
                    continue;
                }
                if c.in_flight.is_empty() {
                    return Ok(c.done);
                }
                c.answer_next()?;
                continue;
            }
            let (id, ask) = asks.recv().map_err(|_| anyhow!("a search thread ended"))?;
            if let Some((lane, r)) = c.answer(id, ask)? {
                for next in then(&lane, &r) {
                    if !c.started.contains(&next.id) {
                        c.queue.insert(next.id, next);
                    }
                }
                c.done.insert(lane.id, (lane, r));
            }
        }
    })
}

/// The thread that owns the measurer: answers each lane's asks, starts each block as it is
/// asked for, and waits for the next block to end once every running lane waits for one.
struct Coordinator<'m> {
    m: &'m mut dyn Measurer,
    /// The running lanes, and where their answers go.
    replies: HashMap<usize, (Lane, Sender<Reply>)>,
    /// Running lanes whose block of samples is being taken.
    in_flight: BTreeSet<usize>,
    queue: BTreeMap<usize, Lane>,
    started: BTreeSet<usize>,
    done: BTreeMap<usize, (Lane, SearchResult)>,
}

impl Coordinator<'_> {
    /// One lane's ask answered; a lane that is done leaves, with its result.
    fn answer(&mut self, id: usize, ask: Ask) -> Result<Option<(Lane, SearchResult)>> {
        let reply = match ask {
            Ask::Ensure(wants) => {
                self.m.start_lane(id, &wants)?;
                self.in_flight.insert(id);
                return Ok(None);
            }
            Ask::Done(r) => {
                let (lane, _) = self.replies.remove(&id).expect("a running lane");
                self.m.lane_done(id)?;
                return Ok(Some((lane, (*r)?)));
            }
            Ask::Decided(s) => {
                self.m.decided(&s);
                return Ok(None);
            }
            Ask::Confirmed(cp) => {
                self.m.confirmed(&cp);
                return Ok(None);
            }
            Ask::Prefetch(c) => {
                self.m.prefetch(&c);
                return Ok(None);
            }
            Ask::ShouldStop => Reply::Yes(self.m.should_stop()),
            Ask::Prepare(c) => Reply::Prepared(self.m.prepare(c).map_err(|e| format!("{e:#}"))),
            Ask::Identical(a, b) => Reply::Yes(self.m.identical(a, b)),
            Ask::Name(i) => Reply::Name(self.m.name(i)),
        };
        self.reply(id, reply);
        Ok(None)
    }

    /// The next lane whose block ended gets its samples.
    fn answer_next(&mut self) -> Result<()> {
        let (id, probes) = self.m.next_lane()?;
        if !self.in_flight.remove(&id) {
            anyhow::bail!("the measurer answered lane {id}, which has no block in flight");
        }
        self.reply(id, Reply::Probes(probes));
        Ok(())
    }

    fn reply(&self, id: usize, r: Reply) {
        if let Some((_, tx)) = self.replies.get(&id) {
            // A lane gone already has its error on its way.
            let _ = tx.send(r);
        }
    }
}

/// A lane's measurer, on the lane's thread: every ask goes to the coordinator.
struct Link {
    /// What the lane's search read: its subjects are its own.
    used: Used,
    lane: usize,
    series: usize,
    asks: Sender<(usize, Ask)>,
    replies: Receiver<Reply>,
}

impl Link {
    fn run(mut self, lane: Lane, cfg: &Config) {
        // A lane's subjects hold no sample of an earlier phase: nothing to hide.
        let search =
            std::panic::AssertUnwindSafe(|| within::search(lane.lo, lane.hi, cfg, &mut self));
        // A search that panicked must still say it is done, or the scan would wait for it.
        let r = std::panic::catch_unwind(search).unwrap_or_else(|_| {
            Err(anyhow!(
                "the search of {}..{} failed (a bug: it panicked)",
                lane.lo,
                lane.hi
            ))
        });
        let _ = self.asks.send((self.lane, Ask::Done(Box::new(r))));
    }

    fn ask(&self, a: Ask) -> Result<Reply> {
        self.asks
            .send((self.lane, a))
            .map_err(|_| anyhow!("the scan stopped"))?;
        self.replies.recv().map_err(|_| anyhow!("the scan stopped"))
    }

    fn tell(&self, a: Ask) {
        let _ = self.asks.send((self.lane, a));
    }
}

impl Measurer for Link {
    fn used(&mut self) -> &mut Used {
        &mut self.used
    }
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        Ok(bisect::first_series(self.ensure_series(wants)?))
    }

    fn ensure_series(&mut self, wants: &[(usize, usize)]) -> Result<SeriesProbes> {
        match self.ask(Ask::Ensure(wants.to_vec()))? {
            Reply::Probes(p) if p.len() == wants.len() => Ok(p),
            _ => Err(anyhow!(
                "lane {}: the measurer's answer did not fit",
                self.lane
            )),
        }
    }

    fn series(&self) -> usize {
        self.series
    }

    fn decided(&mut self, s: &Step) {
        self.tell(Ask::Decided(s.clone()))
    }

    fn confirmed(&mut self, cp: &ChangePoint) {
        self.tell(Ask::Confirmed(Box::new(cp.clone())))
    }

    fn should_stop(&self) -> bool {
        // A scan that stopped answering stops its lanes.
        !matches!(self.ask(Ask::ShouldStop), Ok(Reply::Yes(false)))
    }

    fn prepare(&mut self, c: usize) -> Result<()> {
        match self.ask(Ask::Prepare(c))? {
            Reply::Prepared(r) => r.map_err(|e| anyhow!(e)),
            _ => Err(anyhow!(
                "lane {}: the measurer's answer did not fit",
                self.lane
            )),
        }
    }

    fn prefetch(&mut self, commits: &[usize]) {
        self.tell(Ask::Prefetch(commits.to_vec()))
    }

    fn identical(&self, a: usize, b: usize) -> bool {
        matches!(self.ask(Ask::Identical(a, b)), Ok(Reply::Yes(true)))
    }

    fn name(&self, i: usize) -> String {
        match self.ask(Ask::Name(i)) {
            Ok(Reply::Name(n)) => n,
            _ => format!("commit {i}"),
        }
    }
}

#[cfg(test)]
#[path = "lanes_tests.rs"]
mod tests;
