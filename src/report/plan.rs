//! The result of `plan`: every assumption of the fleet model with its value and where it came
//! from, the predicted wall time of each search on each fleet, and whether the goal is met.

use anyhow::Result;
use serde::Serialize;
use std::path::PathBuf;

use super::export::{formats, Export, Markdown, Text};
use super::table::{List, Table};
use crate::analysis::bisect::Config;
use crate::analysis::fleet::shape::Search;
use crate::analysis::fleet::{
    BuildClass, Ccache, Intervals, Machines, Prediction, Probes, Recorded, Spread, COLD_HIT_RATE,
    HAND_OFF, NEAR_COMMITS, NEAR_FILES, WARM_HIT_RATE,
};
use crate::analysis::simulate::noise::NoiseModel;
use crate::analysis::simulate::SimStep;

formats!(PlanFormat for Planned { Text, Markdown, Json });

/// Where a figure of the model came from.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum Source {
    /// The median of the build records of one class in these caches.
    Records {
        class: BuildClass,
        #[serde(flatten)]
        recorded: Recorded,
        dirs: Vec<PathBuf>,
    },
    /// Given on the command line.
    Flag { flag: &'static str },
    /// perfbisect's default, measured as `why` says.
    Default { why: &'static str },
    /// `--duration` plus the per-sample process overhead (itself a flag or the default).
    Duration {
        duration_s: f64,
        overhead_s: f64,
        overhead: Box<Source>,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Figure {
    pub seconds: f64,
    pub source: Source,
}

/// The model's costs, each with its source; a build cost no row needs is absent.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Figures {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cold_build: Option<Figure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warm_build: Option<Figure>,
    pub near_build: Figure,
    pub sample: Figure,
    pub job_overhead: Figure,
}

/// How many builds, samples and decisions one search made, over the trials.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ShapeSummary {
    pub builds: Spread,
    pub samples: Spread,
    pub decisions: Spread,
    /// Grid intervals a scan searched.
    pub intervals: Spread,
    /// Change points the search confirmed, of `steps`.
    pub confirmed: Spread,
    /// Trials that confirmed as many change points as the history has steps.
    pub all_confirmed: f64,
    /// The simulated history's steps.
    pub steps: Vec<SimStep>,
}

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SearchPlan {
    pub search: Search,
    pub commits: usize,
    pub shape: ShapeSummary,
    pub rows: Vec<Prediction>,
}

/// The goal: a scan of this many commits on this many nodes with a shared ccache within this
/// many minutes.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Goal {
    pub commits: usize,
    pub nodes: usize,
    pub minutes: f64,
    /// None when no scan of `commits` was planned.
    pub prediction: Option<Prediction>,
    /// The median prediction is within the goal.
    pub met: Option<bool>,
    /// So is the 90th percentile: 9 trials in 10 are.
    pub met_at_p90: Option<bool>,
    /// Trials of the scan that confirmed every step of the simulated history. The goal is met
    /// only by a scan that finds them in at least [`GOAL_FOUND`] of its trials: one that cannot
    /// resolve them at this noise ends early and cheaply, which is no answer in time.
    pub found: Option<f64>,
}

/// The share of trials that must confirm every step for the goal to count as met.
pub const GOAL_FOUND: f64 = 0.9;

impl Goal {
    pub fn new(
        commits: usize,
        nodes: usize,
        minutes: f64,
        prediction: Option<(Prediction, f64)>,
    ) -> Goal {
        let found = prediction.as_ref().map(|p| p.1);
        let prediction = prediction.map(|p| p.0);
        let finds = found.is_some_and(|f| f >= GOAL_FOUND);
        let within = |s: f64| finds && s <= minutes * 60.0;
        Goal {
            commits,
            nodes,
            minutes,
            met: prediction.as_ref().map(|p| within(p.wall_s.median)),
            met_at_p90: prediction.as_ref().map(|p| within(p.wall_s.p90)),
            prediction,
            found,
        }
    }
}

/// The simulation every search's shape comes from.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Simulated {
    /// The samples' noise: fitted to a recorded trace of this machine (`--noise-from`, by
    /// default one kept in the binary), or iid log-normal (`--noise`).
    pub noise: NoiseModel,
    /// The trace it was fitted to; `None`: iid at `--noise`.
    pub noise_from: Option<String>,
    pub cfg: Config,
    pub trials: usize,
    pub seed: u64,
}

/// One cache whose build records were read.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RecordsRead {
    pub dir: PathBuf,
    /// Entries with a readable meta.json.
    pub entries: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Planned {
    /// Empty when every build cost was given.
    pub records: Vec<RecordsRead>,
    pub figures: Figures,
    pub machines: Machines,
    pub intervals: Intervals,
    /// Commits a bisect probes per wave.
    pub probes: Probes,
    pub work_trees: usize,
    /// How the searches were simulated (their commits and steps are per search, below).
    pub simulated: Simulated,
    pub searches: Vec<SearchPlan>,
    pub goal: Goal,
}

/// `52 s`, `38 min`, `3 h 05 min`.
pub fn duration(s: f64) -> String {
    if !s.is_finite() {
        return "-".into();
    }
    let m = (s / 60.0).round() as u64;
    if s < 100.0 {
        format!("{s:.0} s")
    } else if m < 60 {
        format!("{m} min")
    } else {
        format!("{} h {:02} min", m / 60, m % 60)
    }
}

/// `252 s`, `7.4 s`, `1.015 s`.
fn seconds(s: f64) -> String {
    if s >= 10.0 {
        return format!("{s:.0} s");
    }
    let t = format!("{s:.3}");
    format!("{} s", t.trim_end_matches('0').trim_end_matches('.'))
}

fn class_rule(c: BuildClass) -> String {
    match c {
        BuildClass::Cold => format!(
            "non-incremental builds with ccache hit rate < {:.0}%",
            COLD_HIT_RATE * 100.0
        ),
        BuildClass::WarmCcache => format!(
            "non-incremental builds with ccache hit rate >= {:.0}%",
            WARM_HIT_RATE * 100.0
        ),
        BuildClass::Near => {
            format!("incremental builds that moved their tree by at most {NEAR_FILES} files")
        }
    }
}

fn source_text(s: &Source) -> String {
    match s {
        Source::Records {
            class,
            recorded: r,
            dirs,
        } => {
            let place = match dirs.as_slice() {
                [d] => d.join("builds").display().to_string(),
                _ => format!("the {} caches read", dirs.len()),
            };
            format!(
                "median of {} {} in {place} (from {} to {})",
                r.records,
                class_rule(*class),
                seconds(r.min_s),
                seconds(r.max_s)
            )
        }
        Source::Flag { flag } => format!("given by {flag}"),
        Source::Default { why } => format!("default ({why})"),
        Source::Duration {
            duration_s,
            overhead_s,
            overhead,
        } => format!(
            "--duration {} + {} per-sample process overhead, {}",
            seconds(*duration_s),
            seconds(*overhead_s),
            source_text(overhead)
        ),
    }
}

impl Planned {
    /// Every assumption, one line each: the figures with their sources, then the model's rules.
    pub fn assumptions(&self) -> Vec<String> {
        let f = &self.figures;
        let mut out = Vec::new();
        if self.records.len() > 1 {
            let read: Vec<String> = self
                .records
                .iter()
                .map(|r| format!("{} ({})", r.dir.join("builds").display(), r.entries))
                .collect();
            out.push(format!("build records read: {}", read.join(", ")));
        }
        let mut fig = |name: &str, x: &Option<Figure>| {
            if let Some(x) = x {
                out.push(format!(
                    "{name} {}: {}",
                    seconds(x.seconds),
                    source_text(&x.source)
                ));
            }
        };
        fig("cold build", &f.cold_build);
        fig("warm-ccache build", &f.warm_build);
        fig("near build", &Some(f.near_build.clone()));
        fig("sample", &Some(f.sample.clone()));
        fig("job overhead", &Some(f.job_overhead.clone()));
        out.push(self.shape_line());
        for s in &self.searches {
            out.push(search_line(s, &self.simulated.cfg));
        }
        out.extend(self.rules());
        out
    }

    fn shape_line(&self) -> String {
        let c = &self.simulated;
        format!(
            "search shape: the real search on simulated commits, {} trials per search (seed {}): \
             {}, samples {}..{}, alpha {}, min effect {:.1}%; steps as \
             listed per search (by default one +10% step per 1,000 commits, at random places)",
            c.trials,
            c.seed,
            noise_text(&c.noise, c.noise_from.as_deref()),
            c.cfg.schedule.initial,
            c.cfg.schedule.max,
            c.cfg.alpha,
            c.cfg.min_effect * 100.0
        )
    }

    fn rules(&self) -> Vec<String> {
        let mut v = vec![format!(
            "build nodes: one commit at a time each (make -j of its cores); a wave's builds \
             spread over them; a build within {NEAR_COMMITS} commits of one of its node's {} work \
             trees costs the near time; any other build is far: cold without a shared ccache, \
             the warm-ccache time with one (a shared ccache already warm for this history)",
            self.work_trees
        )];
        v.push(match self.machines {
            Machines::Shared => "machines: shared - the build nodes are the measurement nodes \
                (max(N, M) machines), each running one job at a time (measurement jobs are \
                exclusive), so a build never overlaps a block on its machine: with N = M = 1 \
                nothing overlaps, and nothing is built ahead"
                .to_string(),
            Machines::Separate => "machines: separate - N build machines and M other \
                measurement machines; while a probe is measured, the two commits the search may \
                probe next are built on idle build nodes (the search's prefetch hint; the Slurm \
                executor does so by default when no node is in both partitions, \
                docs/executors.md)"
                .to_string(),
        });
        v.push(format!(
            "measurement nodes: one block at a time each; every block of one search on one node; \
             {}",
            match self.intervals {
                Intervals::Concurrent =>
                    "a scan's intervals are searched concurrently, each on \
                    its own measurement node while there are enough, as a scan through Slurm \
                    does",
                Intervals::Sequential =>
                    "a scan's intervals are searched one after another, as \
                    a scan on one measurement node does",
            }
        ));
        v.push(match self.probes {
            Probes::PerNode => format!(
                "a bisect on M measurement nodes probes min(M, {}) commits per wave, each on \
                 its own node with its own samples of the range's ends, as a bisect through \
                 Slurm does (its shape is simulated again for each M; the shape line above is \
                 of one probe at a time)",
                crate::analysis::bisect::WIDEST
            ),
            Probes::One => "a bisect probes one commit at a time (--bisect-probes one), as \
                the local executor or --slurm-lanes 1 does"
                .to_string(),
        });
        v.push(format!(
            "every build is one scheduler job and costs the job overhead; so does each \
                 search's measurement lane (one job holding its node for all of the search's \
                 blocks), whose later blocks cost {HAND_OFF} s each to hand over; kernel \
                 compiles (well under 1 s per build) are left out"
        ));
        v.push(
            "each prediction is the fastest of the ways the fleet may run the search: as \
             configured, on fewer of its nodes, with a scan's intervals one after another (on \
             few nodes concurrent searches take each other's work trees), and without building \
             ahead (with few build nodes an unneeded build can hold back the needed one)"
                .to_string(),
        );
        v
    }

    fn table(&self) -> Table {
        let mut t = Table::new(&[
            "search",
            "commits",
            "build nodes",
            "measure nodes",
            "ccache",
            "median",
            "p90",
            "builds",
            "samples",
        ])
        .right(&[1, 2, 3, 5, 6, 7, 8]);
        for s in &self.searches {
            for r in &s.rows {
                t.push(vec![
                    search_name(s.search).to_string(),
                    s.commits.to_string(),
                    r.fleet.build_nodes.to_string(),
                    r.fleet.measure_nodes.to_string(),
                    ccache_name(r.fleet.ccache).to_string(),
                    duration(r.wall_s.median),
                    duration(r.wall_s.p90),
                    format!("{:.0}", r.builds_made.median),
                    format!("{:.0}", r.samples.median),
                ]);
            }
        }
        t
    }

    pub fn goal_line(&self) -> String {
        let g = &self.goal;
        let what = format!(
            "goal: a {}-commit scan of one tool at one thread in <= {:.0} minutes on {} two-core \
             nodes with a shared ccache",
            thousands(g.commits),
            g.minutes,
            g.nodes
        );
        match (&g.prediction, g.met, g.met_at_p90, g.found) {
            (Some(p), Some(_), Some(_), Some(found)) if found < GOAL_FOUND => format!(
                "{what}: not met: the simulated scan confirmed every step in only {:.0}% of \
                 trials (it ends in a median {}, without them)",
                found * 100.0,
                duration(p.wall_s.median)
            ),
            (Some(p), Some(met), Some(p90), _) => format!(
                "{what}: predicted median {}, 90th percentile {}: {}",
                duration(p.wall_s.median),
                duration(p.wall_s.p90),
                match (met, p90) {
                    (true, true) => "met",
                    (true, false) => "met by the median, missed in more than 1 trial of 10",
                    (false, _) => "not met",
                }
            ),
            _ => format!(
                "{what}: not checked (plan a scan of {} commits to check it)",
                g.commits
            ),
        }
    }
}

fn search_name(s: Search) -> &'static str {
    match s {
        Search::Scan { .. } => "scan",
        Search::Bisect => "bisect",
    }
}

fn ccache_name(c: Ccache) -> &'static str {
    match c {
        Ccache::Shared => "shared",
        Ccache::Local => "none",
    }
}

fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// `4 steps of +10% at random places`, or each step: `+10%@700, -5% at random/3`.
fn steps_text(steps: &[SimStep]) -> String {
    let one = |s: &SimStep| {
        format!(
            "{:+.0}%{}{}",
            s.effect * 100.0,
            s.at.map_or(" at random".to_string(), |a| format!("@{a}")),
            if s.spread > 1 {
                format!("/{}", s.spread)
            } else {
                String::new()
            }
        )
    };
    match steps.first() {
        Some(f) if f.at.is_none() && f.spread == 1 && steps.iter().all(|s| s == f) => format!(
            "{} step{} of {:+.0}% at random places",
            steps.len(),
            if steps.len() == 1 { "" } else { "s" },
            f.effect * 100.0
        ),
        _ => steps.iter().map(one).collect::<Vec<_>>().join(", "),
    }
}

fn search_line(s: &SearchPlan, cfg: &Config) -> String {
    let sh = &s.shape;
    let n = |x: &Spread| thousands(x.median.round() as usize);
    let p = |x: &Spread| thousands(x.p90.round() as usize);
    let head = match s.search {
        Search::Scan { grid } => format!(
            "scan of {} commits: grid of {grid} (one wave of {grid} builds, one block of {} \
             samples), then {} intervals searched (90th percentile {})",
            s.commits,
            grid * 2 * cfg.schedule.initial,
            n(&sh.intervals),
            p(&sh.intervals)
        ),
        Search::Bisect => format!(
            "bisect of {} commits: the two ends built in one wave of two, then one probe per \
             decision",
            s.commits
        ),
    };
    format!(
        "{head}; {}; per trial a median of {} builds, {} samples, {} decisions (90th \
         percentile {}, {}, {}), confirming a median of {} change points of {} steps, all of \
         them in {:.0}% of trials: a search that cannot resolve the steps at this noise ends \
         early, cheaply and without them",
        steps_text(&sh.steps),
        n(&sh.builds),
        n(&sh.samples),
        n(&sh.decisions),
        p(&sh.builds),
        p(&sh.samples),
        p(&sh.decisions),
        sh.confirmed.median,
        sh.steps.len(),
        sh.all_confirmed * 100.0
    )
}

impl Export<Planned> for Text {
    fn export(&self, p: &Planned) -> Result<String> {
        let mut out = String::from("assumptions:\n");
        out.push_str(&List::bullets(p.assumptions()).text());
        out.push('\n');
        out.push_str(&p.table().text());
        out.push('\n');
        out.push_str(&p.goal_line());
        out.push('\n');
        Ok(out)
    }
}

impl Export<Planned> for Markdown {
    fn export(&self, p: &Planned) -> Result<String> {
        let mut out = String::from("Assumptions:\n\n");
        out.push_str(&List::bullets(p.assumptions()).markdown());
        out.push('\n');
        out.push_str(&p.table().markdown());
        out.push('\n');
        out.push_str(&p.goal_line());
        out.push('\n');
        Ok(out)
    }
}

/// The simulated samples' noise, as the plan says it.
fn noise_text(m: &NoiseModel, from: Option<&str>) -> String {
    match from {
        None => format!("iid log-normal noise {:.1}% (--noise)", m.cv * 100.0),
        Some(file) => format!(
            "noise fitted to a recorded trace of this machine ({file}): {:.1}% per sample, a \
             drifting state of {:.2}% a step (AR {:.2}), {:.1}% outliers",
            m.cv * 100.0,
            m.drift * 100.0,
            m.drift_phi,
            m.outlier_rate * 100.0
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(52.4), "52 s");
        assert_eq!(duration(38.0 * 60.0 + 10.0), "38 min");
        assert_eq!(duration(3.0 * 3600.0 + 5.0 * 60.0), "3 h 05 min");
        assert_eq!(seconds(252.0), "252 s");
        assert_eq!(seconds(1.015), "1.015 s");
        assert_eq!(seconds(1.0), "1 s");
        assert_eq!(thousands(4000), "4,000");
        assert_eq!(thousands(775), "775");
        let random = SimStep::at(0.1, None);
        assert_eq!(
            steps_text(&[random.clone(), random.clone()]),
            "2 steps of +10% at random places"
        );
        let spread = SimStep {
            spread: 3,
            ..SimStep::at(-0.05, None)
        };
        assert_eq!(
            steps_text(&[SimStep::at(0.1, Some(700)), spread]),
            "+10%@700, -5% at random/3"
        );
    }
}
