//! Checks the claims about the statistics by running the real search on synthetic commits: known
//! steps (single, gradual or cancelling) in the per-commit mean, a noise model from iid log-normal
//! to a shared runner's drift, bursts and outliers (see [`noise`]), and builds or samples that fail
//! at random. Users run it to choose --samples / --min-effect for the noise of their machine, or
//! with `--noise-from` for the noise their machine showed in an A/A run.

mod measurer;
pub mod noise;
mod searches;

pub use measurer::SimMeasurer;
use searches::*;

use crate::analysis::alpha::Schedule;
use crate::analysis::bisect::{
    self, ChangePoint, Config, Measurer, Outcome, Probe, SearchResult, SeriesProbes, Unexplored,
};
use crate::analysis::locate;
use crate::analysis::rounds::{self, Sampler};
use crate::analysis::samples::{RoundKey, Samples};
use crate::analysis::scan;
use crate::unavailable::Unavailable;
use anyhow::{bail, Result};
use noise::{Machine, NoiseModel};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Normal, StandardNormal};
use serde::Serialize;
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SimStep {
    /// Relative change of the mean µs/op at this commit: 0.10 = 10% slower, −0.10 = 10% faster;
    /// 0 for a change the clock does not see (the count alone moves).
    pub effect: f64,
    /// Relative change of the count (instructions/op) at the same commits, which a search
    /// with `--locate` searches on; `None`: as much as the clock's. The two differ on real
    /// commits (5c42ced0ff: instructions +4.4%, time +15%): 0 is a change only the clock sees
    /// (memory, cache or contention behaviour), and a count change with `effect` 0 is one
    /// the clock does not see, where a change point confirmed in time is a wrong culprit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_effect: Option<f64>,
    /// First commit with the change (1..commits); random when `None`.
    pub at: Option<usize>,
    /// Consecutive commits the change is spread over, in equal factors (1: a single commit).
    pub spread: usize,
    /// A later commit (random) undoes the change exactly, so the range's ends agree.
    pub cancelled: bool,
    /// A transient change: undone exactly this many commits after its (last) commit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lasts: Option<usize>,
    /// A tail change: only this share of the processes is `effect` slower (the rest unchanged;
    /// the count does not move), so the trimmed location hardly moves (see `--tail`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
}

impl SimStep {
    pub fn at(effect: f64, at: Option<usize>) -> SimStep {
        SimStep {
            effect,
            count_effect: None,
            at,
            spread: 1,
            cancelled: false,
            lasts: None,
            share: None,
        }
    }

    /// The count's relative change.
    pub fn count(&self) -> f64 {
        let clock = if self.share.is_some() {
            0.0
        } else {
            self.effect
        };
        self.count_effect.unwrap_or(clock)
    }

    /// The count sees it and the clock does not: no time change, nothing to find.
    pub fn count_only(&self) -> bool {
        self.effect == 0.0 && self.count() != 0.0
    }

    /// How the count's change differs from the clock's, for a label ("" when it does not).
    pub fn count_label(&self) -> String {
        match self.count_effect {
            Some(c) if c != self.effect && self.effect == 0.0 => {
                format!(" in counts only ({:+.0}%)", c * 100.0)
            }
            Some(0.0) => " in time only".into(),
            Some(c) if c != self.effect => format!(" (count {:+.1}%)", c * 100.0),
            _ => String::new(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimConfig {
    pub commits: usize,
    pub steps: Vec<SimStep>,
    pub noise: NoiseModel,
    /// Searches with the configured steps.
    pub trials: usize,
    /// Searches on a range without any step, for the false-alarm rate.
    pub alarm_trials: usize,
    pub seed: u64,
    /// Fraction of commits whose build fails (never the two ends).
    pub skip_rate: f64,
    pub cfg: Config,
    /// Run the plain bisect instead (fixed 20 samples per commit, Welch at the search's alpha
    /// against each end, no sequential sampling, first change only), for comparison.
    pub baseline: bool,
    /// Threads running trials; results do not depend on it (every trial has its own seed).
    #[serde(skip)]
    pub jobs: usize,
    /// Measurement nodes sampled at once (see [`SimMeasurer::with_lanes`]): a bisect's probes
    /// per wave, a scan's intervals side by side.
    #[serde(skip_serializing_if = "is_one")]
    pub lanes: usize,
    /// Scan instead of bisect: a grid of this many points, then a search of every interval
    /// that changed (analysis::scan).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scan: Option<usize>,
    /// Locate by count and confirm by clock ([`locate`]) instead of searching on the clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locate: Option<CountSim>,
    /// Machine seconds one clock sample costs (its duration and its process start).
    pub sample_seconds: f64,
}

/// The count a search locates by: its noise (iid: counts do not drift), its schedule and its
/// cost. Every simulated step changes the count as much as the clock, except a time-only one.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CountSim {
    /// Sigma of a count's log noise (0.0025: instructions/op measured under callgrind).
    pub noise: f64,
    /// The count search's `--min-effect` (`--count-min-effect`).
    pub min_effect: f64,
    pub schedule: Schedule,
    /// Machine seconds one count sample costs.
    pub seconds: f64,
    /// `--locate auto`: the counts locate only where the clock, at the ends' noise, cannot
    /// resolve `--min-effect` ([`locate::auto`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub auto: bool,
}

/// How often one true step (or the undo of a cancelled or transient one) was reported.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct StepFound {
    /// "+30%", "+150% for 40 commits", "undo of +150%".
    pub step: String,
    /// Fraction of trials with a confirmed change point holding it.
    pub found: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SimReport {
    pub trials: usize,
    /// Fraction of trials whose reported change points are exactly the true steps (a range left by
    /// skips counts as right when it contains the position; a gradual step is right when the
    /// change point holds any of its commits). With first-change-only (and the baseline) the
    /// truth is the oldest step alone.
    pub accuracy: f64,
    /// Fraction of `alarm_trials` runs with no step that reported any change.
    pub false_alarm_rate: f64,
    /// Fraction of them that reported a confirmed culprit: what the family's alpha bounds.
    pub false_culprit_rate: f64,
    /// Fraction of them that reported a located change point whose confirmation stayed
    /// undecided (printed as located, its size unresolved).
    pub false_unresolved_rate: f64,
    /// Distinct commits built per search (failed builds included).
    pub mean_builds: f64,
    pub mean_samples: f64,
    /// Machine seconds of sampling per search: clock samples × the sample's cost, plus count
    /// samples × theirs when locating by count (builds not included).
    pub mean_machine_s: f64,
    /// All samples divided by the decisions made (the ends' comparison, each classified candidate,
    /// each sub-range check; for the baseline the ends and each candidate).
    pub mean_samples_per_decision: f64,
    /// Fraction of trials in which every true step lies in some reported change point (extra
    /// reports allowed).
    pub detected_all_rate: f64,
    /// Fraction of trials in which some reported change point was flagged uncertain.
    pub uncertain_rate: f64,
    /// Trials in which the search returned an error (counted as wrong).
    pub errors: usize,
    pub alarm_trials: usize,
    /// Fraction of trials (with steps) that reported as confirmed a change point holding no
    /// true step: a wrong culprit on a range that does change.
    pub wrong_culprit_rate: f64,
    /// Fraction of trials (with steps) that reported a located change point whose confirmation
    /// stayed undecided at a place holding no true step: a wrong place, though not confirmed.
    pub wrong_unresolved_rate: f64,
    /// Fraction of trials that reported a candidate its confirmation rejected.
    pub unconfirmed_rate: f64,
    /// Of the reported change points that hold a true step, the fraction whose ratio interval
    /// holds the true ratio of the two commits' means (build offsets included); `None` when there
    /// were none.
    pub interval_coverage: Option<f64>,
    pub intervals_scored: usize,
    /// Fraction of trials whose first confirmed change point (the first one a user sees printed)
    /// holds the step of the largest effect.
    pub first_is_largest_rate: f64,
    /// Builds and samples spent when the first confirmed change point was printed (mean over the
    /// trials that confirmed one).
    pub mean_builds_to_first: f64,
    pub mean_samples_to_first: f64,
    /// Per true step, in the order configured (each undo after its step).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps_found: Vec<StepFound>,
    /// True steps of at least 5% that no confirmed change point held, over all trials.
    pub misses: usize,
    /// Of those, the fraction the run named with a bound that covers them: a stretch it left
    /// undecided or located unconfirmed, holding the step, with a bound reaching the step's
    /// size (the range-wide resolution headline names no place, so it names no miss). `None`
    /// without misses.
    pub misses_named: Option<f64>,
    /// Of them, the fraction inside a stretch bounded only by its net change (its ends
    /// compared), whose sentence says "net change": two steps that cancel there can each be
    /// larger than the bound. The rest of the misses were not said at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub misses_net_only: Option<f64>,
    /// The median over the trials of the smallest change each run stated it finds with 80%
    /// probability per comparison (its resolution line): simulate a step of that size to see
    /// how often a whole search finds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stated_resolution: Option<f64>,
    /// Searches (with steps and without) that needed more noise than the recorded trace holds:
    /// scored as failed searches, never on noise replayed twice.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trace_exhausted: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One reported change point, reduced to what the simulation scores.
struct Reported {
    last_old: usize,
    first_new: usize,
    uncertain: bool,
    confirmed: bool,
    /// Located, its confirmation undecided: printed as a place with its size unresolved.
    unresolved: bool,
    /// The reported interval of mean(first_new) / mean(last_old).
    ratio_ci: Option<(f64, f64)>,
}

impl Reported {
    fn of(c: &ChangePoint) -> Reported {
        let r = &c.comparison.ratio;
        Reported {
            last_old: c.last_old,
            first_new: c.first_new,
            uncertain: c.uncertain,
            confirmed: reported_as_confirmed(c),
            unresolved: c.unresolved && !c.confirmed,
            ratio_ci: (r.lo.is_finite() && r.hi.is_finite()).then_some((r.lo, r.hi)),
        }
    }
}

/// A stretch the search names as possibly hiding a change of up to `up_to` (relative; infinite
/// when its ends are known to differ): lo < p ≤ hi holds the commits it covers.
struct Bound {
    lo: usize,
    hi: usize,
    up_to: f64,
    /// The bound is of the stretch's net change (its ends compared), and its sentence says so:
    /// steps that cancel inside it can be larger than `up_to`.
    net: bool,
}

impl Bound {
    /// What a search left: undecided sub-ranges with their interval's reach, ranges known to
    /// differ; never-checked ones name no size.
    fn of(u: &Unexplored) -> Option<Bound> {
        let up_to = match (&u.ratio, u.differs) {
            (Some(r), _) => (r.lo - 1.0).abs().max((r.hi - 1.0).abs()),
            (None, true) => f64::INFINITY,
            (None, false) => return None,
        };
        Some(Bound {
            lo: u.lo,
            hi: u.hi,
            up_to,
            // Known to differ with no size names every step in it; a size from the ends is net.
            net: u.ratio.is_some() && u.hi > u.lo + 1,
        })
    }

    /// A stretch said with the net change between its ends (`lo` < p ≤ `hi`).
    fn net(lo: usize, hi: usize, r: &crate::analysis::stats::RatioCi) -> Option<Bound> {
        (r.lo.is_finite() && r.hi.is_finite()).then(|| Bound {
            lo,
            hi,
            up_to: (r.lo - 1.0).abs().max((r.hi - 1.0).abs()),
            net: hi > lo + 1,
        })
    }

    /// A change point that was reported but not confirmed names its stretch with its interval.
    fn located(c: &Reported) -> Option<Bound> {
        let (lo, hi) = c.ratio_ci?;
        (!c.confirmed).then(|| Bound {
            lo: c.last_old,
            hi: c.first_new,
            up_to: (lo - 1.0).abs().max((hi - 1.0).abs()),
            net: c.first_new > c.last_old + 1,
        })
    }
}

/// What one search reported.
struct TrialResult {
    /// Stretches it named as possibly hiding more.
    bounds: Vec<Bound>,
    changes: Vec<Reported>,
    /// The first confirmed change point as streamed: (last_old, first_new, builds, samples).
    first: Option<(usize, usize, usize, usize)>,
    builds: usize,
    /// Every sample, the count's included.
    samples: usize,
    /// Of them, count samples (locating by count).
    count_samples: usize,
    decisions: usize,
    /// The smallest change the run stated it finds with 80% probability per comparison (its
    /// resolution's), when it stated one.
    stated: Option<f64>,
}

/// Whether the search reported this change point as a confirmed culprit: its fresh block of
/// samples found the change significant. A reported point that is no true step counts as a
/// wrong culprit only when confirmed.
fn reported_as_confirmed(cp: &ChangePoint) -> bool {
    cp.confirmed
}

fn trial_seed(seed: u64, i: usize, salt: u64) -> u64 {
    // splitmix64 of (seed, trial, salt): neighbouring trials get unrelated streams.
    let mut z = seed
        .wrapping_add((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add(salt.wrapping_mul(0xD1B5_4A32_D192_ED03));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The steps of one trial: the factors per commit for the measurer, and each true step's commits
/// for the scoring (a gradual step is one step over several commits; a cancelled step and its undo
/// are two).
struct Placed {
    factors: Vec<(usize, f64)>,
    /// The factors the count sees: each step's count effect at its commits.
    count_factors: Vec<(usize, f64)>,
    /// Tail steps: (first commit, share of processes, factor).
    tails: Vec<(usize, f64, f64)>,
    truth: Vec<Vec<usize>>,
    /// The commits of the step with the largest |effect| (the first of equals).
    largest: Vec<usize>,
    /// What each `truth` entry is, for the per-step rates.
    labels: Vec<String>,
}

impl Placed {
    /// A step the search should find, at `commits`: its truth and label, and whether it is the
    /// largest so far (`largest`: the largest |effect| before it).
    fn true_step(&mut self, commits: Vec<usize>, effect: f64, label: String, largest: &mut f64) {
        if effect.abs() > *largest {
            *largest = effect.abs();
            self.largest = commits.clone();
        }
        self.truth.push(commits);
        self.labels.push(label);
    }
}

/// Step positions for one trial: the fixed ones, and distinct random ones for the rest (a position
/// shared by two steps would make them one).
fn place_steps(sc: &SimConfig, rng: &mut StdRng) -> Placed {
    let mut used: Vec<usize> = sc
        .steps
        .iter()
        .filter_map(|s| s.at.map(|a| (a, s.spread)))
        .flat_map(|(a, k)| a..a + k)
        .collect();
    let mut out = Placed {
        factors: Vec::new(),
        count_factors: Vec::new(),
        tails: Vec::new(),
        truth: Vec::new(),
        largest: Vec::new(),
        labels: Vec::new(),
    };
    let mut largest = 0.0;
    let free = |lo: usize, hi: usize, k: usize, used: &mut Vec<usize>, rng: &mut StdRng| {
        let mut a = rng.gen_range(lo..hi);
        for _ in 0..100 {
            if !(a..a + k).any(|p| used.contains(&p)) {
                break;
            }
            a = rng.gen_range(lo..hi);
        }
        used.extend(a..a + k);
        a
    };
    for s in &sc.steps {
        let k = s.spread.max(1);
        // Room after a cancelled step for its undo, after a transient one for its length.
        let room = k + usize::from(s.cancelled) + s.lasts.unwrap_or(0);
        let at = match s.at {
            Some(a) => a,
            None => free(1, sc.commits + 1 - room, k, &mut used, rng),
        };
        let undo = if let Some(l) = s.lasts {
            let u = at + k - 1 + l;
            used.push(u);
            Some(u)
        } else if s.cancelled {
            Some(free(at + k, sc.commits, 1, &mut used, rng))
        } else {
            None
        };
        // The count moves by its own effect at the same commits, and back at the undo.
        let count = s.count();
        if count != 0.0 {
            let each = (1.0 + count).powf(1.0 / k as f64);
            out.count_factors.extend((at..at + k).map(|p| (p, each)));
            out.count_factors
                .extend(undo.map(|u| (u, 1.0 / (1.0 + count))));
        }
        if s.effect == 0.0 {
            // Not a time change: nothing to find, nothing the clock sees.
            continue;
        }
        let name = format!("{:+.0}%", s.effect * 100.0);
        if let Some(share) = s.share {
            out.tails.push((at, share, 1.0 + s.effect));
            let label = format!("{name} in {:.0}% of processes", share * 100.0);
            out.true_step(vec![at], s.effect, label, &mut largest);
            continue;
        }
        let each = (1.0 + s.effect).powf(1.0 / k as f64);
        out.factors.extend((at..at + k).map(|p| (p, each)));
        let label = match s.lasts {
            Some(l) => format!("{name} for {l} commits"),
            None => name.clone(),
        };
        let label = format!("{label}{}", s.count_label());
        out.true_step((at..at + k).collect(), s.effect, label, &mut largest);
        if let Some(undo) = undo {
            out.factors.push((undo, 1.0 / (1.0 + s.effect)));
            out.truth.push(vec![undo]);
            out.labels.push(format!("undo of {name}"));
        }
    }
    out
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

fn validate(sc: &SimConfig) -> Result<()> {
    sc.cfg.validate(sc.commits)?;
    sc.noise.validate()?;
    if !(0.0..1.0).contains(&sc.skip_rate) {
        bail!("skip rate must be in [0, 1), got {}", sc.skip_rate);
    }
    if sc.scan.is_some_and(|g| g < 3) {
        bail!("a scan's grid needs at least 3 points");
    }
    if sc.locate.is_some() && (sc.scan.is_some() || sc.baseline) {
        bail!("locating by count is simulated for a bisect, not with --scan or --baseline");
    }
    if let Some(c) = &sc.locate {
        if !(c.noise >= 0.0 && c.noise.is_finite()) {
            bail!("count noise must be a non-negative number, got {}", c.noise);
        }
        c.schedule.validate()?;
        if !(c.seconds > 0.0 && c.seconds.is_finite()) {
            bail!(
                "a count sample's cost must be positive seconds, got {}",
                c.seconds
            );
        }
    }
    if !(sc.sample_seconds > 0.0 && sc.sample_seconds.is_finite()) {
        bail!(
            "a sample's cost must be positive seconds, got {}",
            sc.sample_seconds
        );
    }
    if sc.scan.is_some() && (sc.baseline || sc.cfg.max_changes.is_some()) {
        bail!("a scan finds every change: it has no baseline or --max-changes mode");
    }
    for s in &sc.steps {
        if !(s.effect > -1.0 && s.effect.is_finite()) {
            bail!(
                "a step's effect must be greater than -100%, got {}",
                s.effect
            );
        }
        let room = s.spread.max(1) + usize::from(s.cancelled) + s.lasts.unwrap_or(0);
        if s.cancelled && s.lasts.is_some() {
            bail!("a step is either cancelled later or transient, not both");
        }
        let count = s.count();
        if !(count > -1.0 && count.is_finite()) {
            bail!("a step's count effect must be greater than -100%, got {count}");
        }
        if let Some(share) = s.share {
            if !(share > 0.0 && share <= 1.0) || s.spread > 1 || s.cancelled || s.lasts.is_some() {
                bail!(
                    "a tail step hits a share of processes in (0, 100%] at one commit, got {share}"
                );
            }
        }
        if s.effect == 0.0 && count == 0.0 {
            bail!("a step that changes neither the clock nor the count is no step");
        }
        if s.count_effect.is_some_and(|c| c != s.effect) && sc.locate.is_none() {
            bail!("a step whose count moves apart from its time needs --locate: the clock alone never sees the count");
        }
        if room >= sc.commits {
            bail!(
                "a step spread over {} commits{} does not fit in {} commits",
                s.spread,
                if s.cancelled { " and undone" } else { "" },
                sc.commits
            );
        }
        if let Some(a) = s.at {
            if a == 0 || a + room > sc.commits {
                bail!(
                    "a step's position must be in 1..{} (commit 0 is the old end), got {a}",
                    sc.commits + 1 - room
                );
            }
        }
    }
    Ok(())
}

/// How one trial with steps went.
#[derive(Default)]
struct Score {
    error: bool,
    /// The search ran out of the recorded trace (also an error).
    exhausted: bool,
    right: bool,
    all_found: bool,
    uncertain: bool,
    wrong: bool,
    wrong_unresolved: bool,
    unconfirmed: bool,
    covered: usize,
    intervals: usize,
    builds: usize,
    samples: usize,
    machine_s: f64,
    decisions: usize,
    first_is_largest: bool,
    /// Builds and samples when the first confirmed change point was printed.
    to_first: Option<(usize, usize)>,
    /// Per true step in configured order: reported by a confirmed change point.
    found: Vec<bool>,
    /// True steps of at least [`MISS_FLOOR`] no confirmed change point holds, and how many of
    /// them a stated bound covers.
    misses: usize,
    named: usize,
    /// Of the misses not named, those inside a stretch the run bounded by its net change and
    /// said so (steps that cancel there are not bounded).
    net_only: usize,
    stated: Option<f64>,
}

/// Misses from this size on must be named by a bound (issue 28).
pub const MISS_FLOOR: f64 = 0.05;

/// How a run's statements hold a step of `effect` (relative) at `step`'s commits that no
/// confirmed change point holds.
#[derive(Debug, PartialEq, Eq)]
enum Missed {
    /// A stretch it left or located holds the step with a bound that large.
    Named,
    /// Only a stretch bounded by its net change holds it, with a smaller bound, and the
    /// sentence says "net change": steps that cancel there can be larger.
    NetOnly,
    /// Nothing said holds it.
    Silent,
}

/// Whether the run said a change of `effect` may hide at one of `step`'s commits. The
/// range-wide resolution headline does not count: at high noise it reaches every step and
/// names no place.
fn named(r: &TrialResult, step: &[usize], effect: f64) -> Missed {
    let located: Vec<Bound> = r.changes.iter().filter_map(Bound::located).collect();
    let holding: Vec<&Bound> = (r.bounds.iter().chain(&located))
        .filter(|b| step.iter().any(|&p| b.lo < p && p <= b.hi))
        .collect();
    if holding.iter().any(|b| b.up_to >= effect) {
        Missed::Named
    } else if holding.iter().any(|b| b.net) {
        Missed::NetOnly
    } else {
        Missed::Silent
    }
}

fn run_trial(sc: &SimConfig, m: &mut SimMeasurer) -> Result<TrialResult> {
    if let Some(cs) = &sc.locate {
        run_locate(sc.commits, sc, cs, m)
    } else if let Some(g) = sc.scan {
        run_scan(sc.commits, g, &sc.cfg, m)
    } else if sc.baseline {
        run_baseline(sc.commits, sc.cfg.alpha, m)
    } else {
        run_search(sc.commits, &sc.cfg, m)
    }
}

fn step_trial(sc: &SimConfig, i: usize) -> Result<Score> {
    let mut rng = StdRng::seed_from_u64(trial_seed(sc.seed, i, 1));
    let placed = place_steps(sc, &mut rng);
    let mut m = SimMeasurer::new(
        sc.commits,
        &placed.factors,
        &sc.noise,
        sc.skip_rate,
        rng.gen(),
    )?
    .with_lanes(sc.lanes);
    m.count_steps = placed.count_factors.clone();
    m.tails = placed.tails.clone();
    let r = run_trial(sc, &mut m);
    let exhausted = m.exhausted();
    // A search that ran out of its trace is scored as failed, like one that erred.
    let (Ok(r), false) = (r, exhausted) else {
        return Ok(Score {
            error: true,
            exhausted,
            found: vec![false; placed.truth.len()],
            ..Score::default()
        });
    };
    let found: Vec<bool> = placed
        .truth
        .iter()
        .map(|t| {
            r.changes
                .iter()
                .any(|c| c.confirmed && t.iter().any(|&p| c.last_old < p && p <= c.first_new))
        })
        .collect();
    let mut truth = placed.truth.clone();
    truth.sort();
    truth.dedup();
    // The baseline stops at the oldest change; --max-changes 1 is right with the largest alone.
    let expected = if sc.baseline {
        Expect::Oldest
    } else if sc.cfg.max_changes == Some(1) {
        Expect::Only(placed.largest.clone())
    } else {
        Expect::All
    };
    let mut s = score(&r, &truth, &expected, |a, b| {
        m.true_mean(b) / m.true_mean(a)
    });
    s.machine_s = machine_seconds(sc, &r);
    if let Some((lo, hi, builds, samples)) = r.first {
        s.first_is_largest = placed.largest.iter().any(|&p| lo < p && p <= hi);
        s.to_first = Some((builds, samples));
    }
    for (t, hit) in placed.truth.iter().zip(&found) {
        let (first, last) = (t[0], t[t.len() - 1]);
        let effect = (m.mean(last) / m.mean(first.saturating_sub(1)) - 1.0).abs();
        if !hit && effect >= MISS_FLOOR {
            s.misses += 1;
            match named(&r, t, effect) {
                Missed::Named => s.named += 1,
                Missed::NetOnly => s.net_only += 1,
                Missed::Silent => {}
            }
        }
    }
    s.found = found;
    Ok(s)
}

/// The median of the trials' stated resolutions (`None` when no trial stated one).
fn median_stated(scores: &[Score]) -> Option<f64> {
    let mut v: Vec<f64> = scores.iter().filter_map(|s| s.stated).collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

/// Machine seconds the trial's samples cost.
fn machine_seconds(sc: &SimConfig, r: &TrialResult) -> f64 {
    let count_s = sc.locate.as_ref().map_or(0.0, |c| c.seconds);
    (r.samples - r.count_samples) as f64 * sc.sample_seconds + r.count_samples as f64 * count_s
}

/// Which true steps a search is expected to report.
enum Expect {
    All,
    /// The oldest step alone (the baseline's first-change-only).
    Oldest,
    /// This step alone (`--max-changes 1`: the largest).
    Only(Vec<usize>),
}

/// Score one search against the true steps (each a list of the commits it spans, oldest step
/// first); `true_ratio(a, b)` is mean(b) / mean(a) as the comparison of a and b estimates it.
fn score(
    r: &TrialResult,
    truth: &[Vec<usize>],
    expect: &Expect,
    mut true_ratio: impl FnMut(usize, usize) -> f64,
) -> Score {
    let hits =
        |c: &Reported, step: &[usize]| step.iter().any(|&p| c.last_old < p && p <= c.first_new);
    let only;
    let expected: &[Vec<usize>] = match expect {
        Expect::Oldest if !truth.is_empty() => &truth[..1],
        Expect::Only(step) if !step.is_empty() => {
            only = [step.clone()];
            &only
        }
        _ => truth,
    };
    let mut s = Score {
        builds: r.builds,
        samples: r.samples,
        decisions: r.decisions,
        stated: r.stated,
        ..Score::default()
    };
    s.all_found = truth.iter().all(|t| r.changes.iter().any(|c| hits(c, t)));
    s.right = r.changes.len() == expected.len()
        && r.changes
            .iter()
            .all(|c| expected.iter().filter(|t| hits(c, t)).count() == 1)
        && expected
            .iter()
            .all(|t| r.changes.iter().any(|c| hits(c, t)));
    s.uncertain = r.changes.iter().any(|c| c.uncertain);
    s.unconfirmed = r.changes.iter().any(|c| !c.confirmed);
    let wrong = |c: &&Reported| !truth.iter().any(|t| hits(c, t));
    s.wrong = r.changes.iter().filter(wrong).any(|c| c.confirmed);
    s.wrong_unresolved = r.changes.iter().filter(wrong).any(|c| c.unresolved);
    for c in r
        .changes
        .iter()
        .filter(|c| truth.iter().any(|t| hits(c, t)))
    {
        if let Some((lo, hi)) = c.ratio_ci {
            let ratio = true_ratio(c.last_old, c.first_new);
            s.intervals += 1;
            if lo <= ratio && ratio <= hi {
                s.covered += 1;
            }
        }
    }
    s
}

/// What a search on a range without any change reported.
struct Alarm {
    /// Anything: a change point, confirmed or not, or an error.
    any: bool,
    confirmed: bool,
    unresolved: bool,
    /// It ran out of the recorded trace (then nothing else is scored).
    exhausted: bool,
}

fn alarm_trial(sc: &SimConfig, i: usize) -> Result<Alarm> {
    let mut rng = StdRng::seed_from_u64(trial_seed(sc.seed, i, 2));
    let mut m =
        SimMeasurer::new(sc.commits, &[], &sc.noise, sc.skip_rate, rng.gen())?.with_lanes(sc.lanes);
    let r = run_trial(sc, &mut m);
    if m.exhausted() {
        return Ok(Alarm {
            any: false,
            confirmed: false,
            unresolved: false,
            exhausted: true,
        });
    }
    let changes = r.as_ref().map(|r| &r.changes[..]).unwrap_or(&[]);
    Ok(Alarm {
        any: !matches!(&r, Ok(r) if r.changes.is_empty()),
        confirmed: changes.iter().any(|c| c.confirmed),
        unresolved: changes.iter().any(|c| c.unresolved),
        exhausted: false,
    })
}

/// `f(i)` for every i in 0..count on `jobs` threads, in order of i.
fn par_map<T: Send>(
    count: usize,
    jobs: usize,
    f: impl Fn(usize) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let jobs = jobs.clamp(1, count.max(1));
    if jobs == 1 {
        return (0..count).map(f).collect();
    }
    let f = &f;
    let parts: Vec<Result<Vec<(usize, T)>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..jobs)
            .map(|j| {
                s.spawn(move || {
                    (j..count)
                        .step_by(jobs)
                        .map(|i| f(i).map(|t| (i, t)))
                        .collect::<Result<Vec<_>>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| bail!("a simulation thread panicked"))
            })
            .collect()
    });
    let mut all: Vec<(usize, T)> = Vec::with_capacity(count);
    for p in parts {
        all.extend(p?);
    }
    all.sort_by_key(|p| p.0);
    Ok(all.into_iter().map(|p| p.1).collect())
}

/// Run `trials` searches with the configured steps and `alarm_trials` without any, and score them.
pub fn simulate(sc: &SimConfig) -> Result<SimReport> {
    validate(sc)?;
    let scores = par_map(sc.trials, sc.jobs, |i| step_trial(sc, i))?;
    let alarms = par_map(sc.alarm_trials, sc.jobs, |i| alarm_trial(sc, i))?;

    let count = |f: fn(&Score) -> bool| scores.iter().filter(|s| f(s)).count();
    let sum = |f: fn(&Score) -> usize| scores.iter().map(f).sum::<usize>();
    let errors = count(|s| s.error);
    let (intervals, covered) = (sum(|s| s.intervals), sum(|s| s.covered));
    let (misses, named) = (sum(|s| s.misses), sum(|s| s.named));
    let net_only = sum(|s| s.net_only);
    let t = sc.trials.max(1) as f64;
    let done = (sc.trials - errors).max(1) as f64;
    let alarm_rate = |f: fn(&Alarm) -> bool| {
        let scored = alarms.iter().filter(|a| !a.exhausted).count();
        alarms.iter().filter(|a| f(a)).count() as f64 / scored.max(1) as f64
    };
    let trace_exhausted = count(|s| s.exhausted) + alarms.iter().filter(|a| a.exhausted).count();
    Ok(SimReport {
        trials: sc.trials,
        accuracy: count(|s| s.right) as f64 / t,
        false_alarm_rate: alarm_rate(|a| a.any),
        false_culprit_rate: alarm_rate(|a| a.confirmed),
        false_unresolved_rate: alarm_rate(|a| a.unresolved),
        mean_builds: sum(|s| s.builds) as f64 / done,
        mean_samples: sum(|s| s.samples) as f64 / done,
        mean_machine_s: scores.iter().map(|s| s.machine_s).sum::<f64>() / done,
        mean_samples_per_decision: sum(|s| s.samples) as f64 / sum(|s| s.decisions).max(1) as f64,
        detected_all_rate: count(|s| s.all_found) as f64 / t,
        uncertain_rate: count(|s| s.uncertain) as f64 / t,
        errors,
        alarm_trials: sc.alarm_trials,
        wrong_culprit_rate: count(|s| s.wrong) as f64 / t,
        wrong_unresolved_rate: count(|s| s.wrong_unresolved) as f64 / t,
        unconfirmed_rate: count(|s| s.unconfirmed) as f64 / t,
        interval_coverage: (intervals > 0).then(|| covered as f64 / intervals as f64),
        intervals_scored: intervals,
        first_is_largest_rate: count(|s| s.first_is_largest) as f64 / t,
        mean_builds_to_first: mean_to_first(&scores, |t| t.0),
        mean_samples_to_first: mean_to_first(&scores, |t| t.1),
        misses,
        misses_named: (misses > 0).then(|| named as f64 / misses as f64),
        misses_net_only: (misses > 0).then(|| net_only as f64 / misses as f64),
        stated_resolution: median_stated(&scores),
        trace_exhausted,
        steps_found: place_steps(sc, &mut StdRng::seed_from_u64(0))
            .labels
            .into_iter()
            .enumerate()
            .map(|(i, step)| StepFound {
                step,
                found: scores
                    .iter()
                    .filter(|s| s.found.get(i).copied().unwrap_or(false))
                    .count() as f64
                    / t,
            })
            .collect(),
    })
}

fn mean_to_first(scores: &[Score], f: fn((usize, usize)) -> usize) -> f64 {
    let v: Vec<usize> = scores.iter().filter_map(|s| s.to_first.map(f)).collect();
    v.iter().sum::<usize>() as f64 / v.len().max(1) as f64
}

#[cfg(test)]
mod tests;
