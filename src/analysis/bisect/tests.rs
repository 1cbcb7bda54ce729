use super::*;
use crate::analysis::rounds::{self, Sampler};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Normal};
use std::collections::HashSet;

/// Synthetic history: explicit per-commit means, log-normal noise, explicit failed builds.
struct Fake {
    means: Vec<f64>,
    skip: HashSet<usize>,
    noise: Normal<f64>,
    rng: StdRng,
    samples: HashMap<usize, Samples>,
    round: u64,
    drawn: usize,
    calls: Vec<Vec<(usize, usize)>>,
    decided: Vec<usize>,
    /// (first_new, steps decided, samples drawn) of each confirmed change point, as streamed.
    confirmed: Vec<(usize, usize, usize)>,
    /// The budget: spent once this many samples are drawn.
    stop_after: Option<usize>,
    fail_after: Option<usize>,
    /// Pairs of commits whose binaries are byte-identical.
    same: HashSet<(usize, usize)>,
    /// Commits measured with far more noise than the rest (a factor on the log-sd).
    noisy: HashMap<usize, f64>,
    /// Every prefetch hint, in order.
    hints: Vec<Vec<usize>>,
    used: Used,
}

impl Fake {
    /// `steps`: (first commit with the change, relative effect).
    fn new(n: usize, steps: &[(usize, f64)], seed: u64) -> Fake {
        let means = (0..n)
            .map(|c| {
                steps
                    .iter()
                    .filter(|s| s.0 <= c)
                    .map(|s| 1.0 + s.1)
                    .product::<f64>()
                    * 100.0
            })
            .collect();
        Fake {
            means,
            skip: HashSet::new(),
            noise: Normal::new(0.0, 0.03).unwrap(),
            rng: StdRng::seed_from_u64(seed),
            samples: HashMap::new(),
            round: 0,
            drawn: 0,
            calls: vec![],
            decided: vec![],
            confirmed: vec![],
            stop_after: None,
            fail_after: None,
            same: HashSet::new(),
            noisy: HashMap::new(),
            hints: Vec::new(),
            used: Used::new(),
        }
    }
    fn skipping(mut self, s: &[usize]) -> Fake {
        self.skip.extend(s);
        self
    }
}

impl Fake {
    /// Identical commits share one pool of samples, as in the engine: the lowest of them.
    fn root(&self, c: usize) -> usize {
        self.same
            .iter()
            .filter_map(|&(a, b)| (a == c).then_some(b).or((b == c).then_some(a)))
            .chain([c])
            .min()
            .unwrap_or(c)
    }
}

impl Sampler for Fake {
    fn have(&self, c: usize) -> Option<usize> {
        let r = self.root(c);
        (!self.skip.contains(&c)).then(|| self.samples.get(&r).map_or(0, Samples::len))
    }
    fn take_one(&mut self, c: usize) -> Result<()> {
        let r = self.root(c);
        let z = self.noise.sample(&mut self.rng) * self.noisy.get(&r).copied().unwrap_or(1.0);
        let x = self.means[r] * z.exp();
        let round = crate::analysis::samples::RoundKey {
            session: 0,
            round: self.round,
        };
        self.samples.entry(r).or_default().push(x, Some(round));
        self.drawn += 1;
        Ok(())
    }
    fn new_round(&mut self) {
        self.round += 1;
    }
}

impl Measurer for Fake {
    fn used(&mut self) -> &mut Used {
        &mut self.used
    }
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        if self.fail_after.is_some_and(|f| self.calls.len() >= f) {
            bail!("disk full");
        }
        self.calls.push(wants.to_vec());
        rounds::fill(self, wants, None)?;
        Ok(wants
            .iter()
            .map(|&(c, _)| {
                if self.skip.contains(&c) {
                    Probe::Skip(Unavailable::Simulated {
                        message: format!("build of {c} failed"),
                    })
                } else {
                    Probe::Samples(self.samples[&self.root(c)].clone())
                }
            })
            .collect())
    }
    fn decided(&mut self, step: &Step) {
        self.decided.push(step.commit);
    }
    fn prefetch(&mut self, commits: &[usize]) {
        self.hints.push(commits.to_vec());
    }
    fn confirmed(&mut self, cp: &ChangePoint) {
        if cp.confirmed {
            self.confirmed
                .push((cp.first_new, self.decided.len(), self.drawn));
        }
    }
    fn should_stop(&self) -> bool {
        self.stop_after.is_some_and(|s| self.drawn >= s)
    }
    fn identical(&self, a: usize, b: usize) -> bool {
        self.same.contains(&(a, b)) || self.same.contains(&(b, a))
    }
}

/// The confirmed change points: what the search reports as culprits.
fn changes(r: &SearchResult) -> Vec<(usize, usize)> {
    match &r.outcome {
        Outcome::NoChange => vec![],
        Outcome::Changes(c) => c
            .iter()
            .filter(|c| c.confirmed)
            .map(|c| (c.last_old, c.first_new))
            .collect(),
    }
}

fn cfg() -> Config {
    Config::default()
}

/// A change the search locates but whose fresh block cannot size even at twice the cap:
/// "located, size unresolved", not "not confirmed"; the block did grow to the larger cap.
#[test]
fn located_but_unsizable_is_unresolved_not_refuted() {
    let mut hits = 0;
    for seed in 0..20 {
        let mut m = Fake::new(3, &[(1, 0.1)], seed);
        // The commit with the change is measured under 15× the noise (45% per sample).
        m.noisy.insert(1, 15.0);
        let r = search(3, &cfg(), &mut m).unwrap();
        let Outcome::Changes(all) = &r.outcome else {
            continue;
        };
        let cp = &all[0];
        assert!(!(cp.confirmed && cp.unresolved), "{cp:?}");
        if cp.unresolved {
            hits += 1;
            assert_eq!(cp.comparison.verdict, Verdict::Undecided, "{cp:?}");
            let most = m.calls.iter().flatten().map(|w| w.1).max().unwrap();
            assert!(most >= cfg().schedule.max * UNRESOLVED_CAP, "{most}");
        }
    }
    // Measured: all 20 end unresolved at 80 samples each (a +10% step under 45% noise).
    assert!(hits >= 15, "only {hits} of 20 searches ended unresolved");
}

#[test]
fn undecided_ends_leave_the_whole_range_with_what_may_hide_there() {
    let mut undecided = 0;
    for seed in 0..10 {
        // A +10% step under 30% noise per sample: 40 samples per end cannot decide it.
        let mut m = Fake::new(20, &[(10, 0.1)], seed);
        m.noise = Normal::new(0.0, 0.3).unwrap();
        let r = search(20, &cfg(), &mut m).unwrap();
        let res = r.resolution.expect("every sampled end shows its noise");
        assert!(res.smallest > 0.1 && res.short(), "{res:?}");
        if r.ends.verdict != Verdict::Undecided {
            continue;
        }
        undecided += 1;
        assert_eq!(r.outcome, Outcome::NoChange);
        let u = &r.unexplored[..];
        assert_eq!(u.len(), 1, "{u:?}");
        assert_eq!(
            (u[0].lo, u[0].hi, u[0].because),
            (0, 19, LeftBecause::Undecided)
        );
        assert_eq!(u[0].ratio, Some(r.ends.ratio));
    }
    assert!(undecided >= 8, "only {undecided} of 10 ends undecided");
}

#[test]
fn each_prefetch_hint_names_the_probe_first_then_its_two_successors() {
    let mut m = Fake::new(200, &[(77, 0.2)], 3);
    search(200, &cfg(), &mut m).unwrap();
    assert!(!m.hints.is_empty());
    // The ends are decided first; then every candidate, each right after its hint.
    let probes: Vec<usize> = m.hints.iter().map(|h| h[0]).collect();
    assert_eq!(probes, m.decided[2..2 + probes.len()], "{:?}", m.hints);
    for h in &m.hints {
        assert!(h.len() <= 3 && !h[1..].contains(&h[0]), "{h:?}");
    }
}

#[test]
fn single_step_anywhere() {
    for (n, at) in [
        (50, 1),
        (50, 49),
        (50, 20),
        (1000, 1),
        (1000, 999),
        (1000, 377),
    ] {
        for (seed, effect) in [(1, 0.10), (2, -0.10)] {
            let mut m = Fake::new(n, &[(at, effect)], seed + at as u64);
            let r = search(n, &cfg(), &mut m).unwrap();
            let dir = if effect > 0.0 {
                Verdict::Slower
            } else {
                Verdict::Faster
            };
            assert_eq!(r.direction, dir, "n={n} at={at}");
            assert_eq!(changes(&r), vec![(at - 1, at)], "n={n} at={at}");
            let Outcome::Changes(all) = &r.outcome else {
                unreachable!()
            };
            // a candidate that failed its confirmation may stand beside the culprit, but
            // is reported as such
            let cps: Vec<&ChangePoint> = all.iter().filter(|c| c.confirmed).collect();
            assert!(all.len() - cps.len() <= 1, "{all:?}");
            assert_eq!(cps[0].comparison.verdict, dir);
            assert!(
                !cps[0].uncertain && cps[0].confirmed,
                "n={n} at={at} effect={effect}: {:?} ends {:?}",
                cps[0],
                r.ends.ratio
            );
            assert!(cps[0].comparison.a.n >= 10 && cps[0].comparison.b.n >= 10);
            assert!((cps[0].comparison.ratio.ratio - (1.0 + effect)).abs() < 0.05);
            // the search asked for every sample it saw, and nothing else was drawn
            assert_eq!(r.samples_taken, m.drawn);
            assert_eq!(r.commits_measured, m.samples.len());
            assert!(r.commits_measured <= 2 + 2 * (n as f64).log2().ceil() as usize);
        }
    }
}

#[test]
fn largest_share_first_and_max_changes() {
    // a small step on the old side, the large one later, a small one after it
    for seed in 0..5 {
        let steps = [(60, 0.04), (230, 0.20), (380, 0.06)];
        let mut m = Fake::new(500, &steps, 40 + seed);
        let c = Config {
            max_changes: Some(1),
            ..cfg()
        };
        let r = search(500, &c, &mut m).unwrap();
        assert_eq!(changes(&r), vec![(229, 230)], "seed {seed}");
        let Outcome::Changes(cps) = &r.outcome else {
            unreachable!()
        };
        assert!(cps[0].share > 0.4 && cps[0].share < 1.0, "{:?}", cps[0]);
    }
    // a change against the range's direction has a negative share
    let mut m = Fake::new(300, &[(80, -0.05), (200, 0.25)], 9);
    let r = search(300, &cfg(), &mut m).unwrap();
    let Outcome::Changes(cps) = &r.outcome else {
        panic!("changes expected")
    };
    let against = cps
        .iter()
        .find(|c| c.first_new == 80)
        .expect("the -5% step");
    assert!(against.share < 0.0, "{against:?}");
}

#[test]
fn identical_binaries_are_never_a_culprit() {
    // The model's step is at 40, but 40 loads 39's binaries (one pool of samples): the
    // speed can only change at 41, the first commit whose binaries differ.
    let mut m = Fake::new(100, &[(40, 0.1)], 3);
    m.same.insert((39, 40));
    let r = search(100, &cfg(), &mut m).unwrap();
    let Outcome::Changes(cps) = &r.outcome else {
        panic!("the ends differ, so the step is searched")
    };
    for cp in cps.iter().filter(|c| c.first_new == 40) {
        assert!(cp.identical_binaries && !cp.confirmed, "{cp:?}");
    }
    assert_eq!(changes(&r), vec![(40, 41)]);
}

#[test]
fn ends_with_identical_binaries_are_never_compared() {
    // 0..=9 load one set of binaries and 10..=19 another: after the change point 9 -> 10
    // the parts outside it have identical ends, which cannot differ and are not measured
    // against each other.
    let mut m = Fake::new(20, &[(10, 0.5)], 5);
    for group in [0..10, 10..20] {
        for a in group.clone() {
            for b in group.clone() {
                m.same.insert((a, b));
            }
        }
    }
    let r = search(20, &cfg(), &mut m).unwrap();
    assert_eq!(changes(&r), vec![(9, 10)]);
    let pairs: Vec<_> = m
        .calls
        .iter()
        .filter(|w| w.len() == 2 && m.identical(w[0].0, w[1].0))
        .collect();
    assert!(pairs.is_empty(), "identical ends compared: {pairs:?}");
    // The confirmation of 9 -> 10 is a fresh block of each pool: it asks for a block of 9
    // after every sample the search asked of 0 (the same pool), not for the first ones again.
    let before = |c: usize, upto: usize| {
        m.calls[..upto]
            .iter()
            .flatten()
            .filter(|w| w.0 == c)
            .map(|w| w.1)
            .max()
            .unwrap_or(0)
    };
    let first9 = m.calls.iter().position(|w| w.iter().any(|x| x.0 == 9));
    let first9 = first9.expect("9 is measured for its confirmation");
    let asked9 = m.calls[first9].iter().find(|w| w.0 == 9).unwrap().1;
    let block = cfg().schedule.initial * 2;
    assert!(
        asked9 >= before(0, first9) + block,
        "9 asked {asked9}, 0 had {}: {:?}",
        before(0, first9),
        m.calls
    );
}

/// A change point's fresh block first looks at twice the first look in time, where the noise
/// needs averaging, and at the first look in counts, which resolve far below any minimum effect
/// there (each count is a process under valgrind).
#[test]
fn a_confirmation_takes_twice_the_first_look_in_time_and_the_first_look_in_counts() {
    let initial = cfg().schedule.initial;
    for (spread, block) in [(Spread::Clock, 2 * initial), (Spread::Count, initial)] {
        let c = Config { spread, ..cfg() };
        let mut m = Fake::new(100, &[(40, 0.5)], 3);
        let r = search(100, &c, &mut m).unwrap();
        let Outcome::Changes(cps) = &r.outcome else {
            panic!("{spread:?}: no change found")
        };
        let cp = &cps[0];
        assert!(
            cp.confirmed && (cp.last_old, cp.first_new) == (39, 40),
            "{cp:?}"
        );
        let n = (cp.comparison.a.n, cp.comparison.b.n);
        assert_eq!(n, (block, block), "{spread:?}");
    }
}

/// In time every candidate is sampled in fresh rounds with both ends of its interval; in
/// counts the ends' first samples serve every step and only the candidate is sampled, and the
/// same culprit is found with fewer samples.
#[test]
fn a_count_step_samples_its_candidate_and_reads_its_ends_again() {
    let mut drawn = Vec::new();
    for spread in [Spread::Clock, Spread::Count] {
        let c = Config { spread, ..cfg() };
        let mut m = Fake::new(200, &[(70, 0.5)], 5);
        let r = search(200, &c, &mut m).unwrap();
        assert_eq!(changes(&r), vec![(69, 70)], "{spread:?}");
        let steps: Vec<&Vec<(usize, usize)>> = m.calls.iter().filter(|w| w.len() == 3).collect();
        assert!(steps.len() >= 5, "{spread:?}: {:?}", m.calls);
        // (candidate, old end, new end), each with the sample count asked for
        let reread = |w: &Vec<(usize, usize)>| w[1].1 == w[0].1 && w[2].1 == w[0].1;
        match spread {
            Spread::Count => assert!(steps.iter().all(|w| reread(w)), "{steps:?}"),
            Spread::Clock => assert!(steps.iter().skip(1).all(|w| !reread(w)), "{steps:?}"),
        }
        drawn.push(m.drawn);
    }
    assert!(drawn[1] * 4 < drawn[0] * 3, "clock, count: {drawn:?}");
}

#[test]
fn candidates_are_measured_with_both_ends() {
    let mut m = Fake::new(100, &[(40, 0.1)], 3);
    let r = search(100, &cfg(), &mut m).unwrap();
    assert_eq!(changes(&r), vec![(39, 40)]);
    // the ends first, then every look at a candidate also samples the two interval ends
    assert_eq!(m.calls[0].iter().map(|w| w.0).collect::<Vec<_>>(), [0, 99]);
    let candidate_calls = m.calls.iter().filter(|c| c.len() == 3).count();
    assert!(candidate_calls >= 6);
    for call in m.calls.iter().filter(|c| c.len() == 3) {
        let (c, lo, hi) = (call[0].0, call[1].0, call[2].0);
        assert!(lo < c && c < hi);
    }
    // every decided commit was reported live, in order
    assert_eq!(
        m.decided,
        r.steps.iter().map(|s| s.commit).collect::<Vec<_>>()
    );
}

#[test]
fn no_change() {
    for seed in 0..5 {
        let mut m = Fake::new(500, &[], seed);
        let r = search(500, &cfg(), &mut m).unwrap();
        assert_eq!(r.outcome, Outcome::NoChange);
        assert!(matches!(r.direction, Verdict::Same | Verdict::Undecided));
        assert_eq!(r.commits_measured, 2);
        assert!(r.steps.is_empty());
    }
    // a change smaller than min_effect is no change either
    let mut m = Fake::new(500, &[(200, 0.005)], 9);
    let r = search(500, &cfg(), &mut m).unwrap();
    assert_eq!(r.outcome, Outcome::NoChange);
}

#[test]
fn skips_around_the_culprit_give_a_range() {
    let mut m = Fake::new(100, &[(50, 0.1)], 4).skipping(&[48, 49, 50, 51]);
    let r = search(100, &cfg(), &mut m).unwrap();
    let Outcome::Changes(cps) = &r.outcome else {
        panic!("no change found")
    };
    assert_eq!(cps.len(), 1);
    assert_eq!((cps[0].last_old, cps[0].first_new), (47, 52));
    assert_eq!(cps[0].skipped_between, vec![48, 49, 50, 51]);
    assert!(r.steps.iter().any(
        |s| matches!(&s.verdict, StepVerdict::Skipped(r) if r.to_string().contains("failed"))
    ));
    // a skip away from the culprit does not widen the answer
    let mut m = Fake::new(100, &[(30, 0.1)], 5).skipping(&[49, 50, 31]);
    let r = search(100, &cfg(), &mut m).unwrap();
    assert_eq!(changes(&r), vec![(29, 30)]);
}

#[test]
fn two_steps_both_found() {
    for (seed, steps) in [
        (6, vec![(60, 0.10), (150, 0.08)]),
        (7, vec![(50, 0.15), (120, -0.08)]),
        (8, vec![(10, 0.05), (90, 0.10)]),
    ] {
        let mut m = Fake::new(200, &steps, seed);
        let r = search(200, &cfg(), &mut m).unwrap();
        let want: Vec<(usize, usize)> = steps.iter().map(|s| (s.0 - 1, s.0)).collect();
        assert_eq!(changes(&r), want, "{steps:?}");
        let Outcome::Changes(cps) = &r.outcome else {
            unreachable!()
        };
        assert!(cps.iter().all(|c| c.partial));
        for (cp, s) in cps.iter().zip(&steps) {
            assert!((cp.comparison.ratio.ratio - (1.0 + s.1)).abs() < 0.04);
        }
    }
}

#[test]
fn change_points_are_streamed_as_they_are_confirmed() {
    let mut m = Fake::new(500, &[(60, 0.04), (230, 0.20), (380, 0.06)], 41);
    let r = search(500, &cfg(), &mut m).unwrap();
    assert_eq!(changes(&r), vec![(59, 60), (229, 230), (379, 380)]);
    // each was handed out when confirmed, the large one first, long before the search ended
    assert_eq!(m.confirmed.len(), 3);
    assert_eq!(m.confirmed[0].0, 230);
    assert!(
        m.confirmed[0].2 < m.drawn / 2,
        "{:?} of {}",
        m.confirmed,
        m.drawn
    );
    assert!(m.confirmed[0].1 < r.steps.len());
    // Nothing left but parts passed as the same, each with its net change (said, not dropped).
    assert!(
        (r.unexplored.iter()).all(|u| u.because == LeftBecause::Same && u.ratio.is_some()),
        "{:?}",
        r.unexplored
    );
    assert!((r.explained - 1.0).abs() < 0.15, "{}", r.explained);
}

#[test]
fn max_changes_one_never_answers_against_the_direction() {
    // faster overall (-20%), with an older +6% slowdown that a plain bisect meets first
    for seed in 0..4 {
        let mut m = Fake::new(400, &[(50, 0.06), (300, -0.20)], 70 + seed);
        let c = Config {
            max_changes: Some(1),
            ..cfg()
        };
        let r = search(400, &c, &mut m).unwrap();
        assert_eq!(r.direction, Verdict::Faster);
        let Outcome::Changes(cps) = &r.outcome else {
            panic!("changes expected")
        };
        let answers: Vec<&ChangePoint> = cps
            .iter()
            .filter(|c| c.confirmed && c.comparison.verdict == Verdict::Faster)
            .collect();
        assert_eq!(answers.len(), 1, "seed {seed}: {cps:?}");
        assert_eq!(answers[0].first_new, 300);
        // the slowdown, if met on the way, is reported as against the direction
        for c in cps
            .iter()
            .filter(|c| c.comparison.verdict == Verdict::Slower)
        {
            assert!(c.share < 0.0 && c.first_new == 50, "{c:?}");
        }
        assert!(r
            .unexplored
            .iter()
            .all(|u| u.because == LeftBecause::MaxChanges));
    }
}

/// A part whose ends the cap leaves undecided is not passed over as if they were the same
/// (issue 28): it is listed with the ends' interval, and a change the search missed lies
/// in such a part, inside its interval.
/// A part beside a found change whose ends agree because two later changes cancel (−13% and
/// +15%, as in a large refactor's series) cannot be shown the same at 10% noise: its middle is
/// probed, lies between the two, and both are found. At 07d6d4e the part was left undecided
/// with a bound of its ends' net change, which covered neither step.
#[test]
fn an_undecided_part_whose_changes_cancel_is_searched_from_its_middle() {
    let steps = [(60, 0.80), (150, -0.13), (260, 0.15)];
    for seed in 0..4 {
        let mut m = Fake::new(300, &steps, seed);
        m.noise = Normal::new(0.0, 0.10).unwrap();
        let r = search(300, &cfg(), &mut m).unwrap();
        assert_eq!(
            changes(&r),
            vec![(59, 60), (149, 150), (259, 260)],
            "seed {seed}: {:?}",
            r.unexplored
        );
        let probe = r
            .steps
            .iter()
            .find(|s| s.commit == 179)
            .expect("the middle probed");
        assert_eq!(probe.verdict, StepVerdict::Between, "seed {seed}");
    }
}

/// A flat part that the cap cannot show the same keeps its bound after its middle is probed,
/// and the probe is one decision among the search's.
#[test]
fn an_undecided_flat_part_is_left_whole_with_its_bound() {
    let mut m = Fake::new(300, &[(60, 0.80)], 2);
    m.noise = Normal::new(0.0, 0.10).unwrap();
    let r = search(300, &cfg(), &mut m).unwrap();
    assert_eq!(changes(&r), vec![(59, 60)]);
    let probe = r
        .steps
        .iter()
        .find(|s| s.commit == 179)
        .expect("the middle probed");
    assert_eq!(probe.verdict, StepVerdict::Ambiguous);
    let left: Vec<_> = (r.unexplored.iter())
        .map(|u| (u.lo, u.hi, u.because, u.ratio.is_some()))
        .collect();
    assert!(
        left.contains(&(60, 299, LeftBecause::Undecided, true)),
        "{left:?}"
    );
}

#[test]
fn undecided_parts_are_listed_with_what_may_hide_there() {
    // 3% noise per sample, at most 10 samples: a 4% step (above the 3% minimum effect) is
    // more than the cap resolves, so its part is often neither shown to differ nor to be
    // the same.
    let steps = [(100, 0.30), (300, 0.04)];
    let c = Config {
        schedule: Schedule {
            initial: 5,
            max: 10,
        },
        ..cfg()
    };
    let mut undecided_seen = 0;
    for seed in 0..20 {
        let mut m = Fake::new(400, &steps, seed);
        let r = search(400, &c, &mut m).unwrap();
        let found = changes(&r);
        assert!(found.contains(&(99, 100)), "seed {seed}: {found:?}");
        let undecided: Vec<&Unexplored> = r
            .unexplored
            .iter()
            .filter(|u| u.because == LeftBecause::Undecided)
            .collect();
        for u in &undecided {
            let ci = u.ratio.expect("an undecided part carries its interval");
            assert!(ci.lo <= ci.ratio && ci.ratio <= ci.hi, "seed {seed}: {u:?}");
        }
        undecided_seen += usize::from(!undecided.is_empty());
        // Located counts, confirmed or not (a confirmation block the cap leaves undecided
        // is issue 28's item 5, not this test's).
        let located = match &r.outcome {
            Outcome::Changes(cps) => cps.iter().any(|c| c.first_new == 300),
            Outcome::NoChange => false,
        };
        if !located {
            let covering = undecided
                .iter()
                .find(|u| u.lo < 300 && 300 <= u.hi)
                .unwrap_or_else(|| {
                    panic!(
                        "seed {seed}: the 4% step is missed and no undecided part holds it: {:?}",
                        r.unexplored
                    )
                });
            let ci = covering.ratio.unwrap();
            assert!(ci.lo <= 1.04 && 1.04 <= ci.hi, "seed {seed}: {ci:?}");
        }
    }
    assert!(
        undecided_seen > 0,
        "no seed left a part undecided: the test shows nothing"
    );
}

#[test]
fn budget_stops_after_the_main_answer_and_lists_what_is_left() {
    let steps = [(60, 0.04), (230, 0.20), (380, 0.06)];
    // a budget spent from the start: the largest change is still found and confirmed
    let mut m = Fake::new(500, &steps, 43);
    m.stop_after = Some(0);
    let r = search(500, &cfg(), &mut m).unwrap();
    assert_eq!(changes(&r), vec![(229, 230)]);
    assert!(!r.unexplored.is_empty());
    assert!(r
        .unexplored
        .iter()
        .all(|u| u.because == LeftBecause::Budget));
    // what is left covers the two small steps
    for at in [60, 380] {
        assert!(
            r.unexplored.iter().any(|u| u.lo < at && at <= u.hi),
            "{at}: {:?}",
            r.unexplored
        );
    }
    assert!(r.explained > 0.5 && r.explained < 0.9, "{}", r.explained);
    // continuing without a budget from the same (cached) samples replays and finds the rest
    let drawn = m.drawn;
    m.stop_after = None;
    // A run of its own: what the first read is not this one's to avoid.
    m.used.clear();
    let all = search(500, &cfg(), &mut m).unwrap();
    assert_eq!(changes(&all), vec![(59, 60), (229, 230), (379, 380)]);
    assert!(m.drawn > drawn);
    assert_eq!(all.steps[..r.steps.len()], r.steps[..]);
}

/// Wherever the budget runs out, every step is confirmed or lies in a part listed as left: a
/// range being narrowed when it ran out is listed with the parts it had already passed.
#[test]
fn a_budget_spent_anywhere_drops_no_part_silently() {
    let steps = [(60, 0.04), (230, 0.20), (380, 0.06)];
    for seed in 45..47 {
        let full = {
            let mut m = Fake::new(500, &steps, seed);
            search(500, &cfg(), &mut m).unwrap();
            m.drawn
        };
        for stop in (0..full).step_by(30) {
            let mut m = Fake::new(500, &steps, seed);
            m.stop_after = Some(stop);
            let r = search(500, &cfg(), &mut m).unwrap();
            let found = changes(&r);
            for (at, _) in steps {
                let named = found.iter().any(|&(lo, hi)| lo < at && at <= hi)
                    || r.unexplored.iter().any(|u| u.lo < at && at <= u.hi);
                assert!(
                    named,
                    "budget {stop}: {at} dropped: {found:?} {:?}",
                    r.unexplored
                );
            }
        }
    }
}

#[test]
fn min_share_skips_small_sub_ranges() {
    let steps = [(60, 0.04), (230, 0.20), (380, 0.06)];
    let c = Config {
        min_share: Some(0.3),
        ..cfg()
    };
    let mut m = Fake::new(500, &steps, 44);
    let r = search(500, &c, &mut m).unwrap();
    assert_eq!(changes(&r), vec![(229, 230)]);
    // Left: the small parts, for their share; a part whose check stayed undecided, with
    // the size that may hide there.
    assert!(
        r.unexplored.iter().all(|u| match u.because {
            LeftBecause::MinShare => u.share.unwrap().abs() < 0.3,
            LeftBecause::Undecided => u.ratio.is_some(),
            _ => false,
        }),
        "{:?}",
        r.unexplored
    );
    let mut full = Fake::new(500, &steps, 44);
    search(500, &cfg(), &mut full).unwrap();
    assert!(m.drawn < full.drawn);
}

/// Several thread counts measured at every probe: one Fake per thread count.
struct Multi(Vec<Fake>);

impl Measurer for Multi {
    fn used(&mut self) -> &mut Used {
        self.0[0].used()
    }
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        self.0[0].ensure(wants)
    }
    fn series(&self) -> usize {
        self.0.len()
    }
    fn ensure_series(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Vec<Probe>>> {
        let mut per: Vec<Vec<Probe>> = vec![Vec::new(); wants.len()];
        for f in &mut self.0 {
            for (i, p) in f.ensure(wants)?.into_iter().enumerate() {
                per[i].push(p);
            }
        }
        Ok(per)
    }
}

#[test]
fn a_change_at_eight_threads_and_up_only() {
    // thread counts 1, 8, 32: commit 40 slows 8 and 32 threads down by 15% (a lock), 1 thread
    // not at all; commit 70 makes every thread count 10% faster
    for seed in 0..3 {
        let mut m = Multi(vec![
            Fake::new(100, &[(70, -0.10)], 100 + seed),
            Fake::new(100, &[(40, 0.15), (70, -0.10)], 200 + seed),
            Fake::new(100, &[(40, 0.15), (70, -0.10)], 300 + seed),
        ]);
        let r = search(100, &cfg(), &mut m).unwrap();
        assert_eq!(changes(&r), vec![(39, 40), (69, 70)], "seed {seed}");
        assert_eq!(r.ends_series.len(), 3);
        let Outcome::Changes(cps) = &r.outcome else {
            unreachable!()
        };
        let affected = |cp: &ChangePoint| -> Vec<bool> {
            cp.series
                .iter()
                .map(|c| matches!(c.verdict, Verdict::Slower | Verdict::Faster))
                .collect()
        };
        assert_eq!(affected(&cps[0]), [false, true, true], "{:?}", cps[0]);
        assert_eq!(cps[0].verdict(), Verdict::Slower);
        assert_eq!(affected(&cps[1]), [true, true, true], "{:?}", cps[1]);
        for (c, want) in cps[0].series.iter().zip([1.0, 1.15, 1.15]) {
            assert!((c.ratio.ratio - want).abs() < 0.05, "{c:?}");
        }
        // every decided step carries each thread count's figures
        assert!(r
            .steps
            .iter()
            .all(|s| s.series.len() == 3 || matches!(s.verdict, StepVerdict::Skipped(_))));
        // Bonferroni over the three thread counts
        assert!((r.alpha_per_test * 3.0 - cfg().alpha_per_test(100, 1, 1)).abs() < 1e-15);
        assert!(r.family_alpha <= 0.02, "{}", r.family_alpha);
    }
    // no change at any thread count: nothing found, both ends measured at each
    let mut m = Multi(vec![Fake::new(200, &[], 7), Fake::new(200, &[], 8)]);
    let r = search(200, &cfg(), &mut m).unwrap();
    assert_eq!(r.outcome, Outcome::NoChange);
}

#[test]
fn skipped_end_is_an_error() {
    let mut m = Fake::new(100, &[(50, 0.1)], 1).skipping(&[0]);
    let e = search(100, &cfg(), &mut m).unwrap_err().to_string();
    assert!(
        e.contains("old end") && e.contains("build of 0 failed"),
        "{e}"
    );
    let mut m = Fake::new(100, &[(50, 0.1)], 1).skipping(&[99]);
    let e = search(100, &cfg(), &mut m).unwrap_err().to_string();
    assert!(e.contains("new end"), "{e}");
    let mut m = Fake::new(100, &[(50, 0.1)], 1).skipping(&[0, 99]);
    assert!(search(100, &cfg(), &mut m).is_err());
}

#[test]
fn two_commits() {
    let mut m = Fake::new(2, &[(1, -0.2)], 1);
    let r = search(2, &cfg(), &mut m).unwrap();
    assert_eq!(r.direction, Verdict::Faster);
    assert_eq!(changes(&r), vec![(0, 1)]);
    let mut m = Fake::new(2, &[], 1);
    assert_eq!(
        search(2, &cfg(), &mut m).unwrap().outcome,
        Outcome::NoChange
    );
}

#[test]
fn measurer_errors_propagate() {
    let mut m = Fake::new(100, &[(50, 0.1)], 1);
    m.fail_after = Some(3);
    let e = search(100, &cfg(), &mut m).unwrap_err();
    assert_eq!(e.to_string(), "disk full");
}

#[test]
fn resumed_search_replays_from_cached_samples() {
    let mut m = Fake::new(300, &[(100, 0.1), (200, 0.06)], 11);
    let first = search(300, &cfg(), &mut m).unwrap();
    let drawn = m.drawn;
    // same measurer = warm cache: ensure returns more samples than asked for; a run of its own,
    // whose marks start empty
    m.used.clear();
    let again = search(300, &cfg(), &mut m).unwrap();
    assert_eq!(m.drawn, drawn);
    assert_eq!(first.steps, again.steps);
    assert_eq!(first.outcome, again.outcome);
}

#[test]
fn config_is_validated() {
    let mut m = Fake::new(10, &[], 1);
    let bad = [
        (1, cfg()),
        (
            10,
            Config {
                alpha: 0.0,
                ..cfg()
            },
        ),
        (
            10,
            Config {
                alpha: 1.0,
                ..cfg()
            },
        ),
        (
            10,
            Config {
                alpha: f64::NAN,
                ..cfg()
            },
        ),
        (
            10,
            Config {
                min_effect: 0.0,
                ..cfg()
            },
        ),
        (
            10,
            Config {
                min_effect: -0.1,
                ..cfg()
            },
        ),
        (
            10,
            Config {
                schedule: Schedule {
                    initial: 1,
                    max: 40,
                },
                ..cfg()
            },
        ),
        (
            10,
            Config {
                schedule: Schedule {
                    initial: 10,
                    max: 5,
                },
                ..cfg()
            },
        ),
    ];
    for (n, c) in bad {
        let e = search(n, &c, &mut m).unwrap_err().to_string();
        assert!(!e.contains('\n'), "{e}");
    }
    assert!(m.calls.is_empty());
}

#[test]
fn alpha_split_comes_from_the_error_control_module() {
    let s = cfg().schedule;
    let family = Config {
        routing: alpha::RoutingLevel::Family,
        ..cfg()
    };
    assert_eq!(
        family.alpha_per_test(1000, 1, 1),
        alpha::search_per_test(0.01, 1000, &s, 1, 1)
    );
    // Outside the family a decision's level is split over its 4 looks, 2 tests and the series,
    // whatever the range's length.
    assert_eq!(cfg().routing, alpha::DEFAULT_ROUTING);
    let per_decision = |p| Config {
        routing: alpha::RoutingLevel::PerDecision(p),
        ..cfg()
    };
    assert_eq!(per_decision(0.01).alpha_per_test(1000, 1, 1), 0.01 / 8.0);
    assert_eq!(per_decision(0.01).alpha_per_test(10, 2, 4), 0.01 / 16.0);
    // The resolution is stated at the stricter of routing and the first confirmation.
    let conf = alpha::confirmation_alpha(0.01, 1, None) / 5.0 / alpha::TWO_TESTS;
    assert_eq!(per_decision(0.2).resolving_level(1000, 1, 1), conf);
    assert_eq!(
        family.resolving_level(1000, 1, 1),
        family.alpha_per_test(1000, 1, 1) / alpha::TWO_TESTS
    );
}

#[test]
fn candidate_picking() {
    let none = |_| false;
    assert_eq!(pick_candidate(0, 1, none), None);
    assert_eq!(pick_candidate(0, 2, none), Some(1));
    assert_eq!(pick_candidate(0, 10, none), Some(5));
    let s = [5usize, 6];
    assert_eq!(pick_candidate(0, 10, |i| s.contains(&i)), Some(4));
    let s = [4usize, 5, 6];
    assert_eq!(pick_candidate(0, 10, |i| s.contains(&i)), Some(7));
    assert_eq!(pick_candidate(0, 4, |i| i != 3), Some(3));
    assert_eq!(pick_candidate(0, 4, |i| i != 1), Some(1));
    assert_eq!(pick_candidate(3, 7, |_| true), None);
}

#[test]
fn result_serializes() {
    let mut m = Fake::new(20, &[(7, 0.1)], 2).skipping(&[9]);
    let r = search(20, &cfg(), &mut m).unwrap();
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["direction"], "slower");
    assert_eq!(v["outcome"]["changes"][0]["first_new"], 7);
    assert!(v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["verdict"]["skipped"]["kind"] == "simulated"));
    assert!(v["alpha_per_test"].as_f64().unwrap() > 0.0);
}

/// With routing in the family, every test a search makes is in its family alpha, which stays within `--alpha` however many
/// changes the range holds, with or without --max-changes (at 07d6d4e a real range with three
/// changes printed 1.54e-2 over its 0.01: each change's decisions came on top of the budget,
/// and confirmations beyond --max-changes on top of theirs).
#[test]
fn the_family_alpha_stays_within_alpha_however_many_changes() {
    // Eight changes, one against the range's direction, in 600 commits: many more decisions
    // than one change's block.
    let steps = [
        (40, 0.3),
        (110, -0.2),
        (180, 0.25),
        (260, 0.15),
        (330, 0.3),
        (400, 0.2),
        (470, 0.4),
        (540, 0.15),
    ];
    for max_changes in [None, Some(1), Some(3)] {
        let c = Config {
            max_changes,
            routing: alpha::RoutingLevel::Family,
            ..cfg()
        };
        let mut m = Fake::new(600, &steps, 71);
        let r = search(600, &c, &mut m).unwrap();
        let found = changes(&r).len();
        let enough = if max_changes.is_none() { 6 } else { 1 };
        assert!(
            found >= enough,
            "{max_changes:?}: {:?} {:?}",
            changes(&r),
            r.unexplored
        );
        if max_changes.is_none() {
            assert!(r.decisions > 30, "{} decisions", r.decisions);
        }
        assert!(
            r.family_alpha <= c.alpha && r.family_alpha > c.alpha / 10.0,
            "{max_changes:?}: {} over {} tests",
            r.family_alpha,
            r.tests
        );
    }
}

/// Routing at a level of its own (outside the family) buys power at the same false-culprit
/// bound: on 25% noise a 20% step that routing inside the family often leaves undecided at
/// the ends is found and confirmed more often, the family's alpha counts the confirmations
/// alone (every test is still counted in `tests`), and on ranges without a change nothing is
/// confirmed.
#[test]
fn routing_outside_the_family_finds_more_and_confirms_nothing_false() {
    let at = |routing| Config { routing, ..cfg() };
    let (family, loose) = (
        at(alpha::RoutingLevel::Family),
        at(alpha::RoutingLevel::PerDecision(0.01)),
    );
    let noisy = |steps: &[(usize, f64)], seed| {
        let mut m = Fake::new(300, steps, seed);
        m.noise = Normal::new(0.0, 0.25).unwrap();
        m
    };
    let mut found = (0, 0);
    for seed in 0..40 {
        let r = search(300, &family, &mut noisy(&[(150, 0.2)], seed)).unwrap();
        found.0 += usize::from(changes(&r) == vec![(149, 150)]);
        let r = search(300, &loose, &mut noisy(&[(150, 0.2)], seed)).unwrap();
        found.1 += usize::from(changes(&r) == vec![(149, 150)]);
        assert!(r.family_alpha <= loose.alpha / 2.0, "{}", r.family_alpha);
        assert!(r.alpha_per_test == 0.01 / 8.0, "{}", r.alpha_per_test);
    }
    assert!(found.1 >= found.0 + 6, "family, per decision: {found:?}");
    for seed in 0..100 {
        let r = search(300, &loose, &mut noisy(&[], 1000 + seed)).unwrap();
        assert!(changes(&r).is_empty(), "seed {seed}: {:?}", changes(&r));
    }
}
