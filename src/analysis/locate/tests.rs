//! The locate procedure on simulated counts and clocks.

use super::*;
use crate::analysis::bisect::LeftBecause;
use crate::analysis::simulate::noise::NoiseModel;
use crate::analysis::simulate::SimMeasurer;

/// A count with 0.25% noise and a clock with 15%, both seeing `count_steps`/`clock_steps`.
fn pair(
    n: usize,
    count_steps: &[(usize, f64)],
    clock_steps: &[(usize, f64)],
    seed: u64,
) -> (SimMeasurer, SimMeasurer) {
    let count = SimMeasurer::new(n, count_steps, &NoiseModel::iid(0.0025), 0.0, seed).unwrap();
    let clock = SimMeasurer::new(n, clock_steps, &NoiseModel::iid(0.15), 0.0, seed + 1).unwrap();
    (count, clock)
}

/// The counts' own schedule (3 to 10 samples) and spread, as `--locate` gives them.
pub(crate) fn count_cfg() -> Config {
    Config {
        schedule: crate::analysis::alpha::Schedule {
            initial: 3,
            max: 10,
        },
        spread: crate::analysis::bisect::Spread::Count,
        ..Config::default()
    }
}

/// `locate` over `0..n` with the counts' default schedule and the clock's default config.
fn locate_by_default(n: usize, count: &mut SimMeasurer, clock: &mut SimMeasurer) -> Located {
    locate(n, &count_cfg(), &Config::default(), count, clock).unwrap()
}

fn changes(r: &SearchResult) -> Vec<(usize, bool, bool)> {
    match &r.outcome {
        Outcome::Changes(c) => c
            .iter()
            .map(|c| (c.first_new, c.confirmed, c.located.is_some()))
            .collect(),
        Outcome::NoChange => vec![],
    }
}

/// `--locate auto` leaves a quiet clock to search alone, hands a noisy one's range to the
/// counts, and the search after it takes no end sample again.
#[test]
fn auto_locates_by_count_only_where_the_clock_cannot_resolve_min_effect() {
    // A first look of 3 samples, fewer than a noise estimate takes, too: the full tier's
    // `--samples 3` bisect chose the clock on its first run and the counts when run again.
    let three = Config {
        schedule: crate::analysis::alpha::Schedule {
            initial: 3,
            max: 12,
        },
        ..Config::default()
    };
    let cases = [
        (0.005, false, Config::default(), 1.3),
        (0.15, true, Config::default(), 1.3),
        (0.15, true, three.clone(), 1.3),
        // Decided at its first look of 3: too few samples to tell the noise, the clock stays.
        (0.15, false, three, 25.0),
    ];
    for (noise, counts, cfg, step) in cases {
        let mut clock =
            SimMeasurer::new(300, &[(120, step)], &NoiseModel::iid(noise), 0.0, 7).unwrap();
        let choice = auto(300, &cfg, &mut clock).unwrap();
        assert_eq!(choice.counts, counts, "noise {noise}: {:?}", choice.clock);
        if let Some(r) = &choice.clock {
            assert_eq!(r.short(), counts, "{r:?}");
        }
        let held = clock.samples_held();
        let ends = bisect::compare_ends(300, &cfg, &mut clock)
            .unwrap()
            .comparison;
        assert_eq!(
            clock.samples_held(),
            held,
            "the ends were sampled again: {ends:?}"
        );
        // Resumed, with every sample of a whole search held at the ends, it chooses again from
        // the same first samples: a run of its own, whose marks start empty.
        bisect::search(300, &cfg, &mut clock).unwrap();
        assert!(clock.samples_held() > held);
        clock.used().clear();
        assert_eq!(
            auto(300, &cfg, &mut clock).unwrap(),
            choice,
            "noise {noise}"
        );
    }
}

#[test]
fn a_step_in_both_is_located_by_count_and_confirmed_by_clock() {
    let (mut count, mut clock) = pair(300, &[(120, 1.3)], &[(120, 1.3)], 3);
    let l = locate_by_default(300, &mut count, &mut clock);
    assert_eq!(l.location.searched_by, SearchedBy::Count);
    assert_eq!(changes(&l.result), vec![(120, true, true)]);
    let Outcome::Changes(cps) = &l.result.outcome else {
        unreachable!()
    };
    // The clock's figures, with the count's beside them.
    let located = cps[0].located.expect("count comparison kept");
    assert!((located.ratio.ratio - 1.3).abs() < 0.01, "{located:?}");
    assert!(cps[0].comparison.ratio.lo < 1.3 && cps[0].comparison.ratio.hi > 1.3);
    assert_eq!(l.result.ends.verdict, Verdict::Slower);
    assert_eq!(l.location.clock_confirmations, 1);
}

/// The clock's confirmations are counted in the result's tests and family alpha, beside the
/// count search's (at 07d6d4e they were not: with nothing searched in time, the result's
/// figures were the count search's alone).
#[test]
fn the_clocks_confirmations_are_counted_in_the_family_alpha() {
    let steps = [(120, 1.3)];
    let count = SimMeasurer::new(300, &steps, &NoiseModel::iid(0.0025), 0.0, 3);
    let clock = SimMeasurer::new(300, &steps, &NoiseModel::iid(0.005), 0.0, 4);
    // A clock whose smallest change worth finding the confirmed +30% leaves no room for.
    let clock_cfg = Config {
        min_effect: 0.10,
        ..Config::default()
    };
    let (count, clock) = (&mut count.unwrap(), &mut clock.unwrap());
    let l = locate(300, &count_cfg(), &clock_cfg, count, clock).unwrap();
    assert_eq!(changes(&l.result), vec![(120, true, true)]);
    assert_eq!(
        l.location.time_search, None,
        "nothing left to search in time"
    );
    let count = SimMeasurer::new(300, &steps, &NoiseModel::iid(0.0025), 0.0, 3);
    // The count's search of a located run has half the run's alpha.
    let half = Budget::of(&count_cfg(), &clock_cfg).count;
    let counted = bisect::search(300, &half, &mut count.unwrap()).unwrap();
    assert!(l.result.tests > counted.tests, "{} tests", l.result.tests);
    assert!(l.result.family_alpha > counted.family_alpha);
    assert!(l.result.family_alpha <= 0.01, "{}", l.result.family_alpha);
}

#[test]
fn a_count_step_that_time_does_not_show_is_not_confirmed() {
    // Counts +5%, time unchanged (a change the clock cannot see at 1% noise: refuted).
    let count = SimMeasurer::new(200, &[(80, 1.05)], &NoiseModel::iid(0.0025), 0.0, 5);
    let clock = SimMeasurer::new(200, &[], &NoiseModel::iid(0.01), 0.0, 6);
    let (mut count, mut clock) = (count.unwrap(), clock.unwrap());
    let l = locate_by_default(200, &mut count, &mut clock);
    assert_eq!(changes(&l.result), vec![(80, false, true)]);
    let Outcome::Changes(cps) = &l.result.outcome else {
        unreachable!()
    };
    assert_eq!(cps[0].comparison.verdict, Verdict::Same);
    assert_eq!(l.result.explained, 0.0);
}

/// A clock whose machine runs `factor` slower for the first `samples` samples it takes, whatever
/// their subject: a slow wave, which both subjects of a round share.
struct SlowAtFirst {
    clock: SimMeasurer,
    samples: usize,
    factor: f64,
    /// Per commit, the factor each of its samples was taken at.
    taken_at: std::collections::HashMap<usize, Vec<f64>>,
    /// Per commit, when each of its samples was taken (how many the clock had taken before).
    drawn_at: std::collections::HashMap<usize, Vec<usize>>,
    /// Every call for samples, in order.
    calls: Vec<Vec<(usize, usize)>>,
}

impl SlowAtFirst {
    fn new(clock: SimMeasurer, samples: usize, factor: f64) -> Self {
        SlowAtFirst {
            clock,
            samples,
            factor,
            taken_at: Default::default(),
            drawn_at: Default::default(),
            calls: Vec::new(),
        }
    }

    /// Samples taken so far, of every commit.
    fn drawn(&self) -> usize {
        self.taken_at.values().map(Vec::len).sum()
    }
}

impl Measurer for SlowAtFirst {
    fn used(&mut self) -> &mut crate::analysis::bisect::Used {
        self.clock.used()
    }
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        let probes = self.clock.ensure(wants)?;
        self.calls.push(wants.to_vec());
        let mut drawn = self.drawn();
        let mut out = Vec::with_capacity(probes.len());
        for (&(c, _), p) in wants.iter().zip(probes) {
            let Probe::Samples(mut v) = p else {
                out.push(p);
                continue;
            };
            let at = self.taken_at.entry(c).or_default();
            let when = self.drawn_at.entry(c).or_default();
            while at.len() < v.len() {
                at.push(if drawn < self.samples {
                    self.factor
                } else {
                    1.0
                });
                when.push(drawn);
                drawn += 1;
            }
            for (x, f) in v.values.iter_mut().zip(at.iter()) {
                *x *= f;
            }
            out.push(Probe::Samples(v));
        }
        Ok(out)
    }
}

/// The clock's confirmation of a count-located change point starts after the samples the ends'
/// comparison read, in rounds of both subjects. A change point right after the old end whose
/// instructions rose while its time did not, on a machine that was 30% slower while the ends were
/// compared: at 07d6d4e the confirmation compared the old end's first samples (slow, from the
/// ends' rounds) with the culprit's fresh ones and confirmed a -23% "speed-up" in time.
#[test]
fn a_located_change_is_confirmed_on_time_samples_no_earlier_phase_read() {
    let count = SimMeasurer::new(200, &[(1, 1.10)], &NoiseModel::iid(0.0025), 0.0, 21);
    let clock = SimMeasurer::new(200, &[], &NoiseModel::iid(0.01), 0.0, 22).unwrap();
    let mut clock = SlowAtFirst::new(clock, 20, 1.3);
    let l = locate(
        200,
        &count_cfg(),
        &Config::default(),
        &mut count.unwrap(),
        &mut clock,
    );
    let l = l.unwrap();
    assert_eq!(changes(&l.result), vec![(1, false, true)]);
    let Outcome::Changes(cps) = &l.result.outcome else {
        unreachable!()
    };
    let c = &cps[0].comparison;
    assert_eq!(c.verdict, Verdict::Same, "{:#?}", cps[0]);
    // Every confirmation sample of the old end was taken after its ends' comparison.
    let ends_rounds = clock.taken_at[&(199)].len();
    assert!(
        clock.taken_at[&0].len() > ends_rounds,
        "{:?}",
        clock.taken_at
    );
}

/// GOOD not an ancestor of BAD under `--locate auto`: the merge base (0), BAD (199) and GOOD
/// (200) are placed on the clock first, then the range is located by the counts and confirmed
/// on the clock. A count-only +10% step beside BAD, or beside the merge base, on a machine 30%
/// slower while it placed them: the confirmation reads none of placement's samples, so the
/// step is refuted in time. When every phase kept marks of its own, the confirmation's block of
/// the end began after the ends' comparison's first looks, on placement's slow samples taken
/// without the other subject, and confirmed a +30% change that was never there.
#[test]
fn a_change_beside_a_placed_end_is_confirmed_on_samples_taken_after_placement() {
    let cfg = Config::default();
    for (at, seed) in [(199, 31), (1, 33)] {
        let count = SimMeasurer::new(201, &[(at, 1.10)], &NoiseModel::iid(0.0025), 0.0, seed);
        let clock = SimMeasurer::new(201, &[], &NoiseModel::iid(0.01), 0.0, seed + 1).unwrap();
        let mut clock = SlowAtFirst::new(clock, 120, 1.3);
        bisect::place(&mut clock, 0, 200, 199, &cfg, cfg.alpha).unwrap();
        let placed = clock.drawn();
        assert!(placed >= 90, "placement read {placed} samples");
        let l = locate(200, &count_cfg(), &cfg, &mut count.unwrap(), &mut clock).unwrap();
        assert_eq!(changes(&l.result), vec![(at, false, true)], "step at {at}");
        let Outcome::Changes(cps) = &l.result.outcome else {
            unreachable!()
        };
        assert_eq!(cps[0].comparison.verdict, Verdict::Same, "{:#?}", cps[0]);
        // The confirmation's first look: its block of each subject, `look` samples after its
        // base, every one taken after placement.
        let pair = [at - 1, at];
        let first = (clock.calls.iter())
            .find(|w| w.len() == 2 && w.iter().map(|x| x.0).eq(pair))
            .expect("the change point was confirmed on the clock");
        let look = first_look(&cfg);
        for &(c, upto) in first {
            let block = &clock.drawn_at[&c][upto - look..upto];
            assert!(
                block.iter().all(|&t| t >= placed),
                "commit {c}: block taken at {block:?}, placement ended at {placed}"
            );
        }
    }
}

/// A confirmation's first look: the samples of each subject it reads first.
fn first_look(cfg: &Config) -> usize {
    let fresh = cfg.spread.fresh_block(&cfg.schedule);
    cfg.schedule
        .looks()
        .into_iter()
        .find(|&k| k >= fresh)
        .unwrap()
}

/// A clock on which `twin` loads byte-identical binaries to `of`: measured as `of`, one pool
/// of samples, and told identical only once both are built (prepared or sampled), as a session
/// tells it.
struct Pooled {
    clock: SlowAtFirst,
    twin: usize,
    of: usize,
    built: std::collections::HashSet<usize>,
}

impl Measurer for Pooled {
    fn used(&mut self) -> &mut crate::analysis::bisect::Used {
        self.clock.used()
    }
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        self.built.extend(wants.iter().map(|w| w.0));
        let as_measured: Vec<(usize, usize)> = (wants.iter())
            .map(|&(c, k)| (if c == self.twin { self.of } else { c }, k))
            .collect();
        self.clock.ensure(&as_measured)
    }
    fn prepare(&mut self, c: usize) -> Result<()> {
        self.built.insert(c);
        Ok(())
    }
    fn identical(&self, a: usize, b: usize) -> bool {
        let pair = [a, b] == [self.twin, self.of] || [b, a] == [self.twin, self.of];
        pair && self.built.contains(&a) && self.built.contains(&b)
    }
}

/// The same through byte-identical builds: the located change's parent (198) is GOOD's twin
/// (a release branch's commit with the tree of one on master), so its samples are GOOD's, and
/// placement read GOOD's first 40 on the slow machine. The clock had never built the parent
/// when its confirmation began: unless it builds both first, the parent's block is not known
/// to share GOOD's pool and begins at its first sample, placement's.
#[test]
fn a_located_parent_measured_as_a_placed_end_starts_after_placement() {
    let cfg = Config::default();
    let count = SimMeasurer::new(201, &[(199, 1.10)], &NoiseModel::iid(0.0025), 0.0, 41);
    let clock = SimMeasurer::new(201, &[], &NoiseModel::iid(0.01), 0.0, 42).unwrap();
    let mut clock = Pooled {
        clock: SlowAtFirst::new(clock, 120, 1.3),
        twin: 198,
        of: 200,
        built: Default::default(),
    };
    bisect::place(&mut clock, 0, 200, 199, &cfg, cfg.alpha).unwrap();
    let placed = clock.clock.drawn();
    let l = locate(200, &count_cfg(), &cfg, &mut count.unwrap(), &mut clock).unwrap();
    assert_eq!(changes(&l.result), vec![(199, false, true)]);
    let Outcome::Changes(cps) = &l.result.outcome else {
        unreachable!()
    };
    assert_eq!(cps[0].comparison.verdict, Verdict::Same, "{:#?}", cps[0]);
    let first = (clock.clock.calls.iter())
        .find(|w| w.iter().map(|x| x.0).eq([200, 199]))
        .expect("the change point was confirmed on the clock");
    let look = first_look(&cfg);
    for &(c, upto) in first {
        let block = &clock.clock.drawn_at[&c][upto - look..upto];
        assert!(block.iter().all(|&t| t >= placed), "{c}: {block:?}");
    }
}

/// `locate` over `n` simulated commits: counts at 0.25% noise, the clock at `clock_noise`.
fn located(
    n: usize,
    count_steps: &[(usize, f64)],
    clock_steps: &[(usize, f64)],
    clock_noise: f64,
    seed: u64,
) -> Located {
    let count = SimMeasurer::new(n, count_steps, &NoiseModel::iid(0.0025), 0.0, seed);
    let clock = SimMeasurer::new(n, clock_steps, &NoiseModel::iid(clock_noise), 0.0, seed + 1);
    let (mut count, mut clock) = (count.unwrap(), clock.unwrap());
    locate(n, &count_cfg(), &Config::default(), &mut count, &mut clock).unwrap()
}

#[test]
fn time_the_located_change_points_do_not_explain_is_searched_in_time() {
    // Counts see the +30% at 120; the clock sees it and a +50% at 60 that leaves the
    // instructions alone: found by the time search of the stretch before 120.
    let l = located(200, &[(120, 1.3)], &[(60, 1.5), (120, 1.3)], 0.03, 11);
    assert_eq!(
        changes(&l.result),
        vec![(60, true, false), (120, true, true)]
    );
    let t = l
        .location
        .time_search
        .as_ref()
        .expect("the time was searched");
    // The ends' interval is at their test's level (a quarter of the clock's routing half):
    // wide on their first samples, but it holds the unexplained +50%.
    assert!(
        t.moved.ratio > 1.3 && t.moved.lo < 1.5 && t.moved.hi > 1.5,
        "{t:?}"
    );
    assert_eq!(t.stretches, vec![(0, 119), (120, 199)]);
    assert_eq!(t.found, 1);
    assert_eq!(l.location.unexplained, None, "the two explain the time");
    let shares: f64 = (l.result.explained - 1.0).abs();
    assert!(shares < 0.2, "explained {}", l.result.explained);
}

/// 200 commits: counts (0.25% noise) see +30% at 120; the clock (3%) sees it and a +50% at 60
/// that leaves the instructions alone, found only by searching in time.
fn both_and_time_only() -> (SimMeasurer, SimMeasurer) {
    let count = SimMeasurer::new(200, &[(120, 1.3)], &NoiseModel::iid(0.0025), 0.0, 11);
    let clock = SimMeasurer::new(
        200,
        &[(60, 1.5), (120, 1.3)],
        &NoiseModel::iid(0.03),
        0.0,
        12,
    );
    (count.unwrap(), clock.unwrap())
}

/// A clock that keeps the shares it was told, as the live output would print them.
struct Told {
    clock: SimMeasurer,
    shares: Vec<(usize, f64)>,
}

impl Measurer for Told {
    fn used(&mut self) -> &mut crate::analysis::bisect::Used {
        self.clock.used()
    }
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        self.clock.ensure(wants)
    }
    fn confirmed(&mut self, cp: &ChangePoint) {
        self.shares.push((cp.first_new, cp.share));
    }
}

#[test]
fn a_change_found_in_time_is_told_with_its_share_of_the_whole_range() {
    // As above: the +50% at 60 is found by the time search of the stretch 0..119, whose ends
    // hold all of it; live, its share must be of the range's ends, as in the result.
    let (mut count, clock) = both_and_time_only();
    let mut told = Told {
        clock,
        shares: Vec::new(),
    };
    let cfg = Config::default();
    let l = locate(200, &count_cfg(), &cfg, &mut count, &mut told).unwrap();
    let Outcome::Changes(cps) = &l.result.outcome else {
        unreachable!()
    };
    let found_in_time = cps.iter().find(|c| c.first_new == 60).expect("found");
    let live = told.shares.iter().find(|(c, _)| *c == 60).expect("told");
    assert!(
        (live.1 - found_in_time.share).abs() < 1e-12,
        "{live:?} {found_in_time:?}"
    );
    assert!(live.1 > 0.3 && live.1 < 0.9, "{live:?}");
}

#[test]
fn time_still_unexplained_after_the_time_search_is_named() {
    // A +50% spread over 40 commits in time only (a gradual change the stretch's search
    // cannot pin to one commit at this noise) stays named with its size.
    let clock: Vec<(usize, f64)> = (40..80).map(|c| (c, 1.5f64.powf(1.0 / 40.0))).collect();
    let mut steps = clock.clone();
    steps.push((120, 1.3));
    let l = located(200, &[(120, 1.3)], &steps, 0.01, 17);
    let t = l
        .location
        .time_search
        .as_ref()
        .expect("the time was searched");
    assert_eq!(t.stretches[0], (0, 119));
    let rest = l.location.unexplained.expect("still unexplained");
    assert!(rest.lo > 1.0 && rest.hi > 1.5, "{rest:?}");
    // The stretch's candidates are no single commit's change: none is confirmed.
    let confirmed: Vec<_> = changes(&l.result).into_iter().filter(|c| c.1).collect();
    assert_eq!(confirmed, vec![(120, true, true)]);
}

#[test]
fn stretches_lie_between_the_confirmed_change_points() {
    let l = located(200, &[(120, 1.3)], &[(120, 1.3)], 0.03, 19);
    assert_eq!(
        stretches(200, &confirmed(&l.result)),
        vec![(0, 119), (120, 199)]
    );
    // What the two confirmations leave cannot be ruled out at this noise: searched, empty.
    let t = l
        .location
        .time_search
        .as_ref()
        .expect("the stretches searched");
    assert_eq!((t.stretches.len(), t.found), (2, 0));
    assert_eq!(l.location.unexplained, None);
    let Outcome::Changes(cps) = &l.result.outcome else {
        unreachable!()
    };
    let with = |cp: ChangePoint| SearchResult {
        outcome: Outcome::Changes(vec![cp]),
        ..l.result.clone()
    };
    let first = ChangePoint {
        last_old: 0,
        first_new: 1,
        ..cps[0].clone()
    };
    let r = with(first.clone());
    assert_eq!(
        stretches(200, &confirmed(&r)),
        vec![(1, 199)],
        "no stretch of one commit"
    );
    let refuted = with(ChangePoint {
        confirmed: false,
        ..first
    });
    assert_eq!(
        stretches(200, &confirmed(&refuted)),
        vec![(0, 199)],
        "only confirmed ones cut"
    );
}

#[test]
fn time_the_located_change_points_explain_leaves_nothing_unexplained() {
    let steps = [(60, 1.5), (120, 1.3)];
    let l = located(200, &steps, &steps, 0.03, 13);
    assert_eq!(changes(&l.result).len(), 2);
    assert_eq!(l.location.unexplained, None);
}

#[test]
fn time_that_moved_without_the_counts_is_searched_on_the_clock() {
    let (mut count, mut clock) = pair(200, &[], &[(150, 1.5)], 7);
    let l = locate_by_default(200, &mut count, &mut clock);
    assert_eq!(l.location.searched_by, SearchedBy::Clock);
    assert_eq!(l.location.count_ends.verdict, Verdict::Same);
    assert_eq!(changes(&l.result), vec![(150, true, false)]);
}

#[test]
fn nothing_moved_is_no_change() {
    // A clock quiet enough to show the ends the same (at 15% it cannot: see below).
    let count = SimMeasurer::new(100, &[], &NoiseModel::iid(0.0025), 0.0, 9);
    let clock = SimMeasurer::new(100, &[], &NoiseModel::iid(0.01), 0.0, 10);
    let l = locate_by_default(100, &mut count.unwrap(), &mut clock.unwrap());
    // The range is left as the same, with the net change its clock ends bound (steps that
    // cancel inside are said to be unbounded).
    let left: Vec<_> = (l.result.unexplored.iter())
        .map(|u| (u.lo, u.hi, u.because, u.ratio.is_some()))
        .collect();
    assert_eq!(left, vec![(0, 99, LeftBecause::Same, true)]);
    assert_eq!(l.result.outcome, Outcome::NoChange);
    assert_eq!(l.location.searched_by, SearchedBy::Count);
}

/// Flat counts and a clock that could not tell the ends apart at its cap: the range is the
/// clock's, left whole with the size of change that may hide in it, as a time-only search leaves
/// it. At 07d6d4e this was "no change" with nothing left and no bound.
#[test]
fn flat_counts_with_undecided_clock_ends_leave_the_range_unresolved() {
    let (mut count, mut clock) = pair(200, &[], &[(100, 1.06)], 31);
    let l = locate_by_default(200, &mut count, &mut clock);
    assert_eq!(l.result.outcome, Outcome::NoChange);
    assert_eq!(l.location.searched_by, SearchedBy::Clock);
    assert_eq!(
        l.result.ends.verdict,
        Verdict::Undecided,
        "{:?}",
        l.result.ends
    );
    let [u] = &l.result.unexplored[..] else {
        panic!("{:?}", l.result.unexplored)
    };
    assert_eq!((u.lo, u.hi, &u.because), (0, 199, &LeftBecause::Undecided));
    let r = u.ratio.expect("the size that may hide");
    assert!(r.lo < 1.0 && r.hi > 1.06, "{r:?}");
}

/// Counts that moved, a clock that could not tell the ends apart (+5% at 15% noise): the time
/// between the located change points is searched, and what the clock could not decide there is
/// left with its bound. At 07d6d4e no stretch was searched and nothing was left.
#[test]
fn moved_counts_with_undecided_clock_ends_search_the_time_between() {
    let (mut count, mut clock) = pair(200, &[(80, 1.07)], &[(80, 1.07)], 33);
    let l = locate_by_default(200, &mut count, &mut clock);
    assert_eq!(l.location.searched_by, SearchedBy::Count);
    let t = l.location.time_search.as_ref().expect("the time searched");
    assert_eq!(t.stretches, vec![(0, 79), (80, 199)], "{t:?}");
    let left: Vec<_> = (l.result.unexplored.iter())
        .filter(|u| u.because == LeftBecause::Undecided && u.ratio.is_some())
        .map(|u| (u.lo, u.hi))
        .collect();
    assert_eq!(left, t.stretches, "{:?}", l.result.unexplored);
}

/// `--max-changes` holds across a located search as in one clock search: the change point the
/// counts located and the clock confirmed counts, so the stretches are not searched in time,
/// and they are listed as left for it, never dropped. Without the rule the same run goes on in
/// time and finds the second change (the time-only +50% at 60).
#[test]
fn max_changes_stops_a_located_search_before_its_time_search() {
    let run = |max_changes: Option<usize>| {
        let (mut count, mut clock) = both_and_time_only();
        let cfg = |c: Config| Config { max_changes, ..c };
        locate(
            200,
            &cfg(count_cfg()),
            &cfg(Config::default()),
            &mut count,
            &mut clock,
        )
        .unwrap()
    };
    let all = run(None);
    assert_eq!(
        changes(&all.result),
        vec![(60, true, false), (120, true, true)]
    );

    let one = run(Some(1));
    assert_eq!(changes(&one.result), vec![(120, true, true)]);
    let left: Vec<(usize, usize, LeftBecause)> = (one.result.unexplored.iter())
        .map(|u| (u.lo, u.hi, u.because))
        .collect();
    assert_eq!(
        left,
        vec![
            (0, 119, LeftBecause::MaxChanges),
            (120, 199, LeftBecause::MaxChanges)
        ]
    );
    assert!(one.result.samples_taken < all.result.samples_taken);
}

/// A clock whose `--budget` is spent from the start: the search still confirms its main answer,
/// then leaves the stretches to be searched in time, listed as left for the budget.
struct Spent(SimMeasurer);

impl Measurer for Spent {
    fn used(&mut self) -> &mut crate::analysis::bisect::Used {
        self.0.used()
    }
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        self.0.ensure(wants)
    }
    fn should_stop(&self) -> bool {
        true
    }
}

#[test]
fn a_spent_budget_stops_a_located_search_after_its_main_answer() {
    let (mut count, clock) = both_and_time_only();
    let mut clock = Spent(clock);
    let l = locate(
        200,
        &count_cfg(),
        &Config::default(),
        &mut count,
        &mut clock,
    )
    .unwrap();
    assert_eq!(changes(&l.result), vec![(120, true, true)]);
    assert!(
        (l.result.unexplored.iter()).any(|u| u.because == LeftBecause::Budget && u.lo == 0),
        "{:?}",
        l.result.unexplored
    );
}

/// A time-only step that cancels a located one leaves the clock's ends the same: the time
/// beyond the located change point is still searched (it moved -16.7% beyond it), and the
/// step is found (ends shown the same once stopped the time search: the step was neither found
/// nor bounded).
#[test]
fn a_time_only_step_that_cancels_a_located_one_is_searched_in_time() {
    let l = located(200, &[(60, 1.2)], &[(60, 1.2), (140, 1.0 / 1.2)], 0.01, 5);
    assert_eq!(
        changes(&l.result),
        vec![(60, true, true), (140, true, false)]
    );
    let t = l
        .location
        .time_search
        .as_ref()
        .expect("the time was searched");
    assert!(
        t.moved.hi < 1.0,
        "it moved back beyond the located +20%: {t:?}"
    );
    assert_eq!(t.found, 1);
}
