use super::*;
use crate::analysis::simulate::noise::NoiseModel;
use crate::analysis::simulate::SimMeasurer;
use proptest::prelude::*;
use std::collections::BTreeSet;

proptest! {
    #[test]
    fn candidates_cut_the_range_into_equal_parts(
        lo in 0usize..50,
        len in 1usize..300,
        width in 1usize..9,
        skips in proptest::collection::btree_set(0usize..360, 0..40),
    ) {
        let hi = lo + len;
        let skipped = |c: usize| skips.contains(&c);
        let cands = candidates(lo, hi, width, skipped);
        let free = (lo + 1..hi).filter(|&c| !skipped(c)).count();
        prop_assert_eq!(cands.len(), width.min(free));
        prop_assert!(cands.windows(2).all(|p| p[0] < p[1]));
        prop_assert!(cands.iter().all(|&c| lo < c && c < hi && !skipped(c)));
        // One candidate is a binary search's.
        if width == 1 {
            prop_assert_eq!(cands.first().copied(), pick_candidate(lo, hi, skipped));
        }
        // Without skips no part is more than one commit longer than the others' mean.
        if skips.is_empty() && free >= width {
            let mut ends = vec![lo];
            ends.extend(&cands);
            ends.push(hi);
            let parts: Vec<usize> = ends.windows(2).map(|p| p[1] - p[0]).collect();
            let most = *parts.iter().max().unwrap();
            prop_assert!(most <= len.div_ceil(width + 1) + 1, "{:?}", parts);
        }
    }
}

/// A build costs this many blocks of samples: a far build of OpenSSL here takes 100 s, a block
/// of three commits' first look about 5–10 s.
const BUILD: usize = 10;

/// What the search asked: each lane's blocks, how many were in flight at once, and how long it
/// took (`now`) when every block takes one unit of time and the first block of a commit waits
/// [`BUILD`] for its build (the builds of lanes side by side run side by side, as on build
/// nodes).
#[derive(Default)]
struct Log {
    built: BTreeSet<usize>,
    starts: Vec<(usize, Vec<(usize, usize)>)>,
    most_in_flight: usize,
    /// Each lane's block in flight: when it started, and what it asked for.
    flying: BTreeMap<usize, (usize, Vec<(usize, usize)>)>,
    now: usize,
}

impl Log {
    /// The time a block waits for its builds.
    fn build(&mut self, wants: &[(usize, usize)]) -> usize {
        let new = wants.iter().filter(|w| self.built.insert(w.0)).count();
        if new > 0 {
            BUILD
        } else {
            0
        }
    }
}

struct Watched {
    sim: SimMeasurer,
    log: Log,
}

impl Measurer for Watched {
    fn used(&mut self) -> &mut crate::analysis::bisect::Used {
        self.sim.used()
    }
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        self.log.now += self.log.build(wants) + 1;
        self.sim.ensure(wants)
    }
    fn lanes(&self) -> usize {
        self.sim.lanes()
    }
    fn start_lane(&mut self, lane: usize, wants: &[(usize, usize)]) -> Result<()> {
        assert!(lane < self.sim.lanes(), "lane {lane} beyond the lanes");
        let block = (self.log.now + self.log.build(wants), wants.to_vec());
        assert!(
            self.log.flying.insert(lane, block).is_none(),
            "lane {lane} twice"
        );
        self.log.most_in_flight = self.log.most_in_flight.max(self.log.flying.len());
        self.log.starts.push((lane, wants.to_vec()));
        Ok(())
    }
    /// The block that started first ends first: it is handed to the simulator only now.
    fn next_lane(&mut self) -> Result<(usize, SeriesProbes)> {
        let first = self.log.flying.iter().min_by_key(|(l, b)| (b.0, **l));
        let lane = *first.expect("a lane in flight").0;
        let (started, wants) = self.log.flying.remove(&lane).unwrap();
        self.log.now = started + 1;
        self.sim.start_lane(lane, &wants)?;
        self.sim.next_lane()
    }
}

fn searched(n: usize, steps: &[(usize, f64)], width: usize, seed: u64) -> (SearchResult, Log) {
    let sim = SimMeasurer::new(n, steps, &NoiseModel::iid(0.02), 0.0, seed).unwrap();
    let mut m = Watched {
        sim: sim.with_lanes(width),
        log: Log::default(),
    };
    let r = search(n, &Config::default(), &mut m).unwrap();
    (r, m.log)
}

fn culprits(r: &SearchResult) -> Vec<usize> {
    match &r.outcome {
        Outcome::Changes(cps) => cps
            .iter()
            .filter(|c| c.confirmed)
            .map(|c| c.first_new)
            .collect(),
        Outcome::NoChange => Vec::new(),
    }
}

#[test]
fn waves_name_the_culprit_a_binary_search_names_in_less_time() {
    for seed in 0..4 {
        let at = 97 + 131 * seed as usize;
        let steps = [(at, 1.10)];
        let (one, one_log) = searched(800, &steps, 1, seed);
        let (four, four_log) = searched(800, &steps, 4, seed);
        assert_eq!(culprits(&one), vec![at], "seed {seed}");
        assert_eq!(culprits(&four), vec![at], "seed {seed}");
        assert!(one_log.starts.is_empty());
        assert!(
            four_log.now * 3 < one_log.now * 2 && four_log.now > one_log.now / 3,
            "seed {seed}: {} units of time with 4 lanes, {} with one",
            four_log.now,
            one_log.now
        );
        // Four at once, never more.
        assert_eq!(four_log.most_in_flight, 4);
        // Outside the family a decision's level does not depend on how many there are.
        assert_eq!(four.alpha_per_test, one.alpha_per_test);
        assert_eq!(
            four.alpha_per_test,
            Config::default().alpha_per_test(800, 1, 4)
        );
    }
}

#[test]
fn each_lane_measures_its_candidate_against_its_own_samples_of_the_ends() {
    let (r, log) = searched(400, &[(150, 1.2)], 3, 7);
    assert_eq!(culprits(&r), vec![150]);
    for (lane, wants) in &log.starts {
        let [(c, _), (lo, _), (hi, _)] = wants[..] else {
            panic!("lane {lane} asked for {wants:?}");
        };
        assert!(lo < c && c < hi, "lane {lane}: {wants:?}");
    }
    // A wave's candidates cut its range into four, oldest in lane 0.
    let first: Vec<usize> = log.starts.iter().take(3).map(|s| s.1[0].0).collect();
    assert_eq!(first, vec![99, 199, 299]);
    let lanes: BTreeSet<usize> = log.starts.iter().map(|s| s.0).collect();
    assert_eq!(lanes, BTreeSet::from([0, 1, 2]));
    // Every probed commit's samples are counted, the lanes' with the search's own.
    let steps = r.steps.len();
    assert!(r.commits_measured >= steps.min(r.decisions), "{r:?}");
    assert!(r.samples_taken > 0);
}

#[test]
fn two_changes_and_a_failed_build_are_found_by_waves_as_by_one_probe() {
    let steps = [(200, 1.3), (600, 0.8)];
    let skip = [399, 400, 401];
    let run = |width: usize| {
        let sim = SimMeasurer::new(800, &steps, &NoiseModel::iid(0.02), 0.0, 3).unwrap();
        let mut m = Watched {
            sim: sim.with_lanes(width).failing(&skip),
            log: Log::default(),
        };
        search(800, &Config::default(), &mut m).unwrap()
    };
    let (one, three) = (run(1), run(3));
    assert_eq!(culprits(&one), vec![200, 600]);
    assert_eq!(culprits(&three), culprits(&one));
    let skipped = |r: &SearchResult| {
        (r.steps.iter())
            .filter(|s| matches!(s.verdict, StepVerdict::Skipped(_)))
            .map(|s| s.commit)
            .collect::<Vec<_>>()
    };
    assert!(skipped(&three).iter().all(|c| skip.contains(c)));
}

#[test]
fn the_same_samples_give_the_same_wave_search() {
    let steps = [(321, 0.9)];
    let (a, _) = searched(700, &steps, 4, 5);
    for _ in 0..3 {
        assert_eq!(searched(700, &steps, 4, 5).0, a);
    }
}
