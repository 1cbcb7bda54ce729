//! Each search a trial can run on the simulated machine (bisect, locate then confirm, scan,
//! and the fixed-samples baseline), and what a trial keeps of its result.

use super::*;

pub(super) fn run_search(n: usize, cfg: &Config, m: &mut SimMeasurer) -> Result<TrialResult> {
    let r = bisect::search(n, cfg, m)?;
    Ok(trial_result(&r, m.first_confirmed))
}

/// What a search reported, as the simulation scores it.
pub(super) fn trial_result(
    r: &SearchResult,
    first: Option<(usize, usize, usize, usize)>,
) -> TrialResult {
    let changes = match &r.outcome {
        Outcome::NoChange => vec![],
        Outcome::Changes(cps) => cps.iter().map(Reported::of).collect(),
    };
    TrialResult {
        bounds: r.unexplored.iter().filter_map(Bound::of).collect(),
        changes,
        first,
        builds: r.commits_measured,
        samples: r.samples_taken,
        count_samples: 0,
        decisions: r.decisions,
        stated: r.resolution.as_ref().map(|x| x.smallest),
    }
}

/// Locate by count on `m`'s twin count, confirm on `m`'s clock (see [`locate`]). The clock
/// samples only the ends and the located pairs, so the builds are the count search's; the
/// first confirmation is the clock's, after every count sample.
pub(super) fn run_locate(
    n: usize,
    sc: &SimConfig,
    cs: &CountSim,
    m: &mut SimMeasurer,
) -> Result<TrialResult> {
    if cs.auto && !locate::auto(n, &sc.cfg, m)?.counts {
        return run_search(n, &sc.cfg, m);
    }
    let seed = m.rng.gen();
    let mut count = m.counting(cs.noise, seed)?;
    let count_cfg = Config {
        schedule: cs.schedule.clone(),
        spread: crate::analysis::bisect::Spread::Count,
        min_effect: cs.min_effect,
        ..sc.cfg.clone()
    };
    let l = locate::locate(n, &count_cfg, &sc.cfg, &mut count, m)?;
    let counted = count.samples_held();
    let first = m
        .first_confirmed
        .map(|(lo, hi, _, s)| (lo, hi, count.samples.len(), counted + s));
    let mut t = trial_result(&l.result, first);
    t.builds = t.builds.max(count.samples.len());
    t.count_samples = if l.location.searched_by == locate::SearchedBy::Count {
        counted
    } else {
        l.location.count_samples
    };
    t.samples = m.samples_held() + t.count_samples;
    Ok(t)
}

/// A scan over a grid of `g` points (see analysis::scan); its decisions are the grid's fit
/// (one) and those of its searches.
pub(super) fn run_scan(
    n: usize,
    g: usize,
    cfg: &Config,
    m: &mut SimMeasurer,
) -> Result<TrialResult> {
    let r = scan::scan(&scan::grid_positions(n, g), cfg, m)?;
    let decisions = r.decisions();
    let searched = (r.grid.intervals.iter())
        .filter_map(|i| i.search.as_ref())
        .flat_map(|s| s.unexplored.iter().filter_map(Bound::of));
    // An interval not entered is said with its grid points' net change.
    let not_entered = (r.grid.intervals.iter())
        .filter(|i| i.search.is_none())
        .filter_map(|i| Bound::net(i.lo, i.hi, i.net.as_ref()?));
    let bounds = searched.chain(not_entered).collect();
    Ok(TrialResult {
        bounds,
        // A scan prints its change points at the end.
        first: None,
        changes: r.changes.iter().map(|c| Reported::of(&c.cp)).collect(),
        builds: r.commits_measured,
        samples: r.samples_taken,
        count_samples: 0,
        decisions,
        stated: r.resolution.as_ref().map(|x| x.smallest),
    })
}

pub(super) const BASELINE_SAMPLES: usize = 20;

/// The plain bisect the sequential search is compared with: 20 samples per commit taken once, a
/// Welch t-test at the search's (whole) alpha of the candidate against each interval end, the
/// closer mean when both or neither test is significant, first change only. It reports the
/// (1 − alpha) ratio interval of its last old and first new commit.
pub(super) fn run_baseline(n: usize, alpha: f64, m: &mut SimMeasurer) -> Result<TrialResult> {
    let k = BASELINE_SAMPLES;
    let mut samples: HashMap<usize, Vec<f64>> = HashMap::new();
    let mut skipped: HashMap<usize, ()> = HashMap::new();
    let mut builds = 2;
    let mut decisions = 1;
    let ends = m.ensure(&[(0, k), (n - 1, k)])?;
    for (c, p) in [0, n - 1].into_iter().zip(ends) {
        match p {
            Probe::Samples(v) => {
                samples.insert(c, v.values);
            }
            Probe::Skip(r) => bail!("end {c} cannot be measured: {r}"),
        }
    }
    let p_ends =
        crate::analysis::stats::welch(&samples[&0], &samples[&(n - 1)]).map_or(1.0, |w| w.p);
    let mut changes = vec![];
    if p_ends < alpha {
        let (mut lo, mut hi) = (0, n - 1);
        while let Some(c) = bisect::pick_candidate(lo, hi, |i| skipped.contains_key(&i)) {
            builds += 1;
            let x = match m.ensure(&[(c, k)])?.pop() {
                Some(Probe::Samples(v)) => v.values,
                _ => {
                    skipped.insert(c, ());
                    continue;
                }
            };
            decisions += 1;
            let p = |a: &[f64]| crate::analysis::stats::welch(a, &x).map_or(1.0, |w| w.p);
            let (p_old, p_new) = (p(&samples[&lo]), p(&samples[&hi]));
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
            let (mo, mx, mn) = (mean(&samples[&lo]), mean(&x), mean(&samples[&hi]));
            let is_old = if (p_old < alpha) != (p_new < alpha) {
                p_new < alpha
            } else {
                (mx - mo).abs() < (mx - mn).abs()
            };
            samples.insert(c, x);
            if is_old {
                lo = c;
            } else {
                hi = c;
            }
        }
        let ci = crate::analysis::stats::ratio_ci(&samples[&lo], &samples[&hi], 1.0 - alpha);
        changes.push(Reported {
            last_old: lo,
            first_new: hi,
            uncertain: false,
            confirmed: true,
            unresolved: false,
            ratio_ci: ci.map(|r| (r.lo, r.hi)),
        });
    }
    let total = samples.values().map(Vec::len).sum();
    // The baseline prints its one answer at the end.
    let first = changes
        .first()
        .map(|c| (c.last_old, c.first_new, builds, total));
    Ok(TrialResult {
        // The plain bisect states no bounds.
        bounds: Vec::new(),
        first,
        changes,
        builds,
        samples: total,
        count_samples: 0,
        decisions,
        stated: None,
    })
}
