use super::*;
use crate::analysis::bisect::{ChangePoint, Outcome};
use crate::analysis::scan::{self, ScanResult};
use crate::analysis::simulate::noise::NoiseModel;
use crate::analysis::simulate::SimMeasurer;

/// 400 commits with three changes, each inside its own interval of a 9-point grid.
fn machine(lanes: usize, seed: u64) -> SimMeasurer {
    let steps = [(60, 1.3), (200, 0.8), (330, 1.25)];
    SimMeasurer::new(400, &steps, &NoiseModel::iid(0.02), 0.0, seed)
        .unwrap()
        .with_lanes(lanes)
}

fn culprits(r: &ScanResult) -> Vec<(usize, usize)> {
    let confirmed = r.changes.iter().filter(|c| c.cp.confirmed);
    confirmed.map(|c| (c.cp.last_old, c.cp.first_new)).collect()
}

/// A block started: (lane, wants, blocks of other lanes in flight).
type Start = (usize, Vec<(usize, usize)>, usize);

/// Every block a scan started, with how many were in flight beside it.
struct Recorder {
    sim: SimMeasurer,
    starts: Vec<Start>,
    in_flight: BTreeSet<usize>,
    answered: usize,
    /// Fail the block answered at this count.
    fail_at: Option<usize>,
}

impl Recorder {
    fn new(sim: SimMeasurer, fail_at: Option<usize>) -> Self {
        Recorder {
            sim,
            starts: Vec::new(),
            in_flight: BTreeSet::new(),
            answered: 0,
            fail_at,
        }
    }
}

impl Measurer for Recorder {
    fn used(&mut self) -> &mut crate::analysis::bisect::Used {
        self.sim.used()
    }
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        self.sim.ensure(wants)
    }
    fn lanes(&self) -> usize {
        self.sim.lanes()
    }
    fn start_lane(&mut self, lane: usize, wants: &[(usize, usize)]) -> Result<()> {
        self.starts
            .push((lane, wants.to_vec(), self.in_flight.len()));
        assert!(
            self.in_flight.insert(lane),
            "lane {lane} had a block in flight"
        );
        self.sim.start_lane(lane, wants)
    }
    fn next_lane(&mut self) -> Result<(usize, SeriesProbes)> {
        if self.fail_at == Some(self.answered) {
            anyhow::bail!("the measurement node went away");
        }
        self.answered += 1;
        let (lane, probes) = self.sim.next_lane()?;
        self.in_flight.remove(&lane);
        Ok((lane, probes))
    }
}

fn recorded(lanes: usize, fail_at: Option<usize>) -> (Result<ScanResult>, Recorder) {
    let mut m = Recorder::new(machine(lanes, 3), fail_at);
    let grid = scan::grid_positions(400, 9);
    let r = scan::scan(&grid, &Config::default(), &mut m);
    (r, m)
}

#[test]
fn searches_side_by_side_name_the_culprits_one_at_a_time_names() {
    let grid = scan::grid_positions(400, 9);
    let cfg = Config::default();
    let one = scan::scan(&grid, &cfg, &mut machine(1, 3)).unwrap();
    let four = scan::scan(&grid, &cfg, &mut machine(4, 3)).unwrap();
    assert_eq!(culprits(&one), vec![(59, 60), (199, 200), (329, 330)]);
    assert_eq!(culprits(&four), culprits(&one));
    // The lanes took their own samples of the ends they share with the grid.
    assert!(four.samples_taken > four.grid.points.len() * four.grid.samples_per_point);
}

#[test]
fn lanes_sample_side_by_side_within_the_cap_and_each_stays_in_its_interval() {
    let (r, m) = recorded(2, None);
    let r = r.unwrap();
    let entered: Vec<usize> = (0..r.grid.intervals.len())
        .filter(|&i| r.grid.intervals[i].search.is_some())
        .collect();
    assert_eq!(entered.len(), 3, "{entered:?}");
    for (lane, wants, _) in &m.starts {
        let iv = &r.grid.intervals[*lane];
        assert!(wants.iter().all(|&(c, _)| iv.lo <= c && c <= iv.hi));
    }
    // Never more than two blocks in flight, often two.
    assert!(m.starts.iter().all(|s| s.2 <= 1));
    assert!(m.starts.iter().filter(|s| s.2 == 1).count() > m.starts.len() / 2);
    // The first two lanes started first (in whichever order their threads asked); the third
    // once one of them was done.
    let mut firsts: Vec<usize> = m.starts.iter().map(|s| s.0).take(2).collect();
    firsts.sort_unstable();
    assert_eq!(firsts, entered[..2]);
    let third = m.starts.iter().position(|s| s.0 == entered[2]).unwrap();
    let earlier: BTreeSet<usize> = m.starts[..third].iter().map(|s| s.0).collect();
    assert_eq!(earlier, entered[..2].iter().copied().collect());
}

#[test]
fn the_same_samples_give_the_same_scan_whichever_thread_runs_first() {
    let grid = scan::grid_positions(400, 9);
    let cfg = Config::default();
    let a = scan::scan(&grid, &cfg, &mut machine(3, 11)).unwrap();
    for _ in 0..3 {
        assert_eq!(scan::scan(&grid, &cfg, &mut machine(3, 11)).unwrap(), a);
    }
}

#[test]
fn a_failed_block_ends_the_scan_with_its_error() {
    let (r, m) = recorded(3, Some(4));
    let e = r.unwrap_err();
    assert!(
        format!("{e:#}").contains("the measurement node went away"),
        "{e:#}"
    );
    assert_eq!(m.answered, 4);
}

#[test]
fn lanes_added_as_others_end_are_searched_once_each_within_the_cap() {
    let sim = SimMeasurer::new(100, &[(30, 1.4)], &NoiseModel::iid(0.02), 0.0, 5);
    let mut m = Recorder::new(sim.unwrap().with_lanes(2), None);
    let lane = |id, lo, hi| Lane { id, lo, hi };
    let first = vec![lane(0, 0, 20), lane(1, 20, 50), lane(0, 0, 20)];
    let mut asked = Vec::new();
    let done = super::search(&mut m, &Config::default(), first, |l, _| {
        asked.push(l.id);
        // Each lane asks for lane 2, and lane 1 for itself again.
        vec![lane(2, 50, 99), lane(1, 20, 50)]
    })
    .unwrap();
    assert_eq!(done.keys().copied().collect::<Vec<_>>(), vec![0, 1, 2]);
    asked.sort_unstable();
    assert_eq!(asked, vec![0, 1, 2]);
    assert!(m.starts.iter().all(|s| s.2 <= 1));
    let found = |id: usize| match &done[&id].1.outcome {
        Outcome::Changes(cps) => cps.iter().map(|c: &ChangePoint| c.first_new).collect(),
        Outcome::NoChange => Vec::new(),
    };
    assert_eq!(found(0), Vec::<usize>::new());
    assert_eq!(found(1), vec![30]);
    assert_eq!(found(2), Vec::<usize>::new());
}
