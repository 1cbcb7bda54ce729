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

/// Every wave of samples a scan sent, as lanes' requests.
struct Recorder {
    sim: SimMeasurer,
    waves: Vec<Vec<LaneWants>>,
    /// Fail the wave with this index.
    fail_at: Option<usize>,
}

impl Measurer for Recorder {
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        self.sim.ensure(wants)
    }
    fn lanes(&self) -> usize {
        self.sim.lanes()
    }
    fn ensure_lanes(&mut self, requests: &[LaneWants]) -> Result<Vec<SeriesProbes>> {
        if self.fail_at == Some(self.waves.len()) {
            anyhow::bail!("the measurement node went away");
        }
        self.waves.push(requests.to_vec());
        self.sim.ensure_lanes(requests)
    }
}

fn recorded(lanes: usize, fail_at: Option<usize>) -> (Result<ScanResult>, Vec<Vec<LaneWants>>) {
    let mut m = Recorder {
        sim: machine(lanes, 3),
        waves: Vec::new(),
        fail_at,
    };
    let grid = scan::grid_positions(400, 9);
    let r = scan::scan(&grid, &Config::default(), &mut m);
    (r, m.waves)
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
fn each_wave_holds_one_block_per_running_lane_and_a_lane_stays_in_its_interval() {
    let (r, waves) = recorded(2, None);
    let r = r.unwrap();
    let entered: Vec<usize> = (0..r.grid.intervals.len())
        .filter(|&i| r.grid.intervals[i].search.is_some())
        .collect();
    assert_eq!(entered.len(), 3, "{entered:?}");
    assert!(waves.iter().all(|w| !w.is_empty() && w.len() <= 2));
    assert_eq!(
        waves[0].iter().map(|l| l.0).collect::<Vec<_>>(),
        entered[..2]
    );
    for wave in &waves {
        assert!(wave.windows(2).all(|w| w[0].0 < w[1].0), "lane order");
        for (lane, wants) in wave {
            let iv = &r.grid.intervals[*lane];
            assert!(wants.iter().all(|&(c, _)| iv.lo <= c && c <= iv.hi));
        }
    }
    // The third lane waited for one of the first two, then ran beside the other.
    let third = waves
        .iter()
        .position(|w| w.iter().any(|l| l.0 == entered[2]))
        .unwrap();
    let lanes = |w: &Vec<LaneWants>| w.iter().map(|l| l.0).collect::<Vec<_>>();
    assert!(waves[..third].iter().all(|w| lanes(w) == entered[..2]));
    assert_eq!(waves[third].len(), 2, "{:?}", lanes(&waves[third]));
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
fn a_failed_wave_ends_the_scan_with_its_error() {
    let (r, waves) = recorded(3, Some(2));
    let e = r.unwrap_err();
    assert!(
        format!("{e:#}").contains("the measurement node went away"),
        "{e:#}"
    );
    assert_eq!(waves.len(), 2);
}

#[test]
fn lanes_added_as_others_end_are_searched_once_each_within_the_cap() {
    let mut m = Recorder {
        sim: SimMeasurer::new(100, &[(30, 1.4)], &NoiseModel::iid(0.02), 0.0, 5)
            .unwrap()
            .with_lanes(2),
        waves: Vec::new(),
        fail_at: None,
    };
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
    assert!(m.waves.iter().all(|w| w.len() <= 2));
    let found = |id: usize| match &done[&id].1.outcome {
        Outcome::Changes(cps) => cps.iter().map(|c: &ChangePoint| c.first_new).collect(),
        Outcome::NoChange => Vec::new(),
    };
    assert_eq!(found(0), Vec::<usize>::new());
    assert_eq!(found(1), vec![30]);
    assert_eq!(found(2), Vec::<usize>::new());
}
