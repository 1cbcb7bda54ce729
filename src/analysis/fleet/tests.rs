use super::shape::{self, Search, ShapeConfig};
use super::*;
use crate::analysis::bisect::Config;

fn costs() -> Costs {
    Costs {
        cold_build: 150.0,
        warm_build: 30.0,
        near_build: 8.0,
        sample: 1.015,
        job_overhead: 1.0,
    }
}

fn fleet(n: usize, ccache: Ccache) -> Fleet {
    Fleet {
        build_nodes: n,
        measure_nodes: n,
        machines: Machines::Shared,
        ccache,
        intervals: Intervals::Concurrent,
        work_trees: 2,
    }
}

fn traces(search: Search, commits: usize) -> Vec<Trace> {
    wide_traces(search, commits, 1)
}

/// A bisect probing `width` commits per wave.
fn wide_traces(search: Search, commits: usize, width: usize) -> Vec<Trace> {
    let sc = ShapeConfig {
        commits,
        steps: shape::default_steps(commits),
        noise: crate::analysis::simulate::noise::NoiseModel::iid(0.03),
        cfg: Config::default(),
        trials: 6,
        seed: 3,
        width,
    };
    shape::traces(&sc, search).unwrap()
}

#[test]
fn a_bisect_probing_one_commit_per_node_is_predicted_faster_for_more_samples() {
    let f = Fleet {
        machines: Machines::Separate,
        ..fleet(4, Ccache::Local)
    };
    let (ones, fours) = (
        wide_traces(Search::Bisect, 775, 1),
        wide_traces(Search::Bisect, 775, 4),
    );
    let (one, four) = (predict(&ones, &f, &costs()), predict(&fours, &f, &costs()));
    // Far builds are the cost: four of them side by side per wave, in half the waves (a
    // binary search builds its next two guesses ahead, so the gain is smaller).
    assert!(
        four.wall_s.median < 0.9 * one.wall_s.median,
        "{four:?} against {one:?}"
    );
    assert!(four.samples.median > one.samples.median);
    // More commits probed (a binary search's builds made count its unused guesses too).
    assert!(fours[0].builds() > ones[0].builds());
}

fn scans() -> Vec<Trace> {
    traces(Search::Scan { grid: 16 }, 4000)
}

/// Build costs far apart and close, samples long and short.
fn cost_sets() -> [Costs; 3] {
    [
        costs(),
        Costs {
            cold_build: 300.0,
            warm_build: 100.0,
            near_build: 20.0,
            sample: 5.0,
            job_overhead: 1.0,
        },
        Costs {
            cold_build: 60.0,
            warm_build: 15.0,
            near_build: 2.0,
            sample: 0.2,
            job_overhead: 0.0,
        },
    ]
}

#[test]
fn more_nodes_never_predict_slower() {
    let all: Vec<Trace> = scans()
        .into_iter()
        .chain(traces(Search::Bisect, 775))
        .chain(traces(Search::Scan { grid: 8 }, 1500))
        .collect();
    for c in cost_sets() {
        for ccache in [Ccache::Shared, Ccache::Local] {
            for machines in [Machines::Shared, Machines::Separate] {
                let mut last = (f64::INFINITY, f64::INFINITY);
                for n in [1, 2, 3, 4, 6, 8, 16] {
                    let f = Fleet {
                        machines,
                        ..fleet(n, ccache)
                    };
                    // The best split is searched per trace: at a few fleet sizes suffices.
                    if [1, 16].contains(&n) {
                        for t in &all {
                            let best = best_wall_time(t, &f, &c);
                            assert!(best.wall_s <= wall_time(t, &f, &c).wall_s);
                        }
                    }
                    let p = predict(&all, &f, &c).wall_s;
                    assert!(
                        p.median <= last.0 && p.p90 <= last.1,
                        "{n} nodes {machines:?} {ccache:?}: {p:?} after {last:?}"
                    );
                    last = (p.median, p.p90);
                }
            }
        }
    }
}

#[test]
fn a_shared_ccache_is_never_slower() {
    let all: Vec<Trace> = scans()
        .into_iter()
        .chain(traces(Search::Bisect, 775))
        .collect();
    for c in cost_sets() {
        for machines in [Machines::Shared, Machines::Separate] {
            for n in [1, 4, 16] {
                let f = |ccache| Fleet {
                    machines,
                    ..fleet(n, ccache)
                };
                let with = predict(&all, &f(Ccache::Shared), &c).wall_s;
                let without = predict(&all, &f(Ccache::Local), &c).wall_s;
                assert!(with.median <= without.median, "{n}: {with:?} {without:?}");
                assert!(with.p90 <= without.p90, "{n}: {with:?} {without:?}");
            }
        }
    }
}

/// Every build and every block, one after another: a chain's first block pays for its lane's
/// job, each later one only the hand-off within the job.
fn serial(t: &Trace, build: f64, c: &Costs) -> f64 {
    let blocks: f64 = (t.chains.iter())
        .map(|ch| {
            let sampled = ch.looks.iter().filter(|l| l.samples > 0);
            (sampled.enumerate())
                .map(|(i, l)| {
                    let overhead = if i == 0 { c.job_overhead } else { HAND_OFF };
                    overhead + l.samples as f64 * c.sample
                })
                .sum::<f64>()
        })
        .sum();
    t.builds() as f64 * (c.job_overhead + build) + blocks
}

#[test]
fn one_node_does_everything_in_turn() {
    // One build cost whatever the trees, so the sum is known exactly.
    let c = Costs {
        cold_build: 40.0,
        warm_build: 40.0,
        near_build: 40.0,
        ..costs()
    };
    for t in scans() {
        // grid builds + grid block + the interval searches one after another
        let grid = &t.chains[0].looks[0];
        let grid_s = grid.commits.len() as f64 * 41.0 + 1.0 + grid.samples as f64 * c.sample;
        let rest = Trace {
            chains: t.chains[1..]
                .iter()
                .map(|ch| Chain {
                    after: Vec::new(),
                    looks: ch.looks.clone(),
                })
                .collect(),
            ..t.clone()
        };
        // the intervals' own builds: those the grid did not build
        let ends = grid.commits.iter().filter(|g| {
            rest.chains
                .iter()
                .flat_map(|ch| &ch.looks)
                .any(|l| l.commits.contains(g))
        });
        let rest_s = serial(&rest, 40.0, &c) - ends.count() as f64 * 41.0;
        for intervals in [Intervals::Concurrent, Intervals::Sequential] {
            let f = Fleet {
                intervals,
                ..fleet(1, Ccache::Shared)
            };
            let w = wall_time(&t, &f, &c).wall_s;
            assert!(
                (w - (grid_s + rest_s)).abs() < 1e-6,
                "{w} vs {grid_s} + {rest_s}"
            );
            assert!((w - serial(&t, 40.0, &c)).abs() < 1e-6);
        }
    }
}

#[test]
fn one_node_searches_the_intervals_in_turn() {
    // On one machine concurrent searches only take each other's work trees: the prediction
    // is the grid, then the interval searches one after another.
    for c in cost_sets() {
        for t in scans() {
            let one = fleet(1, Ccache::Local);
            let seq = Fleet {
                intervals: Intervals::Sequential,
                ..one
            };
            let best = best_wall_time(&t, &one, &c).wall_s;
            assert_eq!(best, wall_time(&t, &seq, &c).wall_s);
            assert!(best <= wall_time(&t, &one, &c).wall_s);
        }
    }
}

#[test]
fn separate_build_machines_overlap_builds_with_measurement() {
    for t in traces(Search::Bisect, 775) {
        let shared = wall_time(&t, &fleet(4, Ccache::Shared), &costs());
        let apart = Fleet {
            machines: Machines::Separate,
            ..fleet(4, Ccache::Shared)
        };
        let separate = wall_time(&t, &apart, &costs());
        assert!(separate.wall_s < shared.wall_s, "{separate:?} {shared:?}");
        // what it builds ahead and never probes is built all the same
        assert!(separate.builds_made > shared.builds_made);
        assert_eq!(shared.builds_made, t.builds());
    }
}

#[test]
fn concurrent_intervals_pay_on_many_nodes() {
    for t in scans().into_iter().filter(|t| t.intervals >= 2) {
        let f = fleet(16, Ccache::Shared);
        let seq = Fleet {
            intervals: Intervals::Sequential,
            ..f
        };
        let (a, b) = (wall_time(&t, &f, &costs()), wall_time(&t, &seq, &costs()));
        assert!(a.wall_s < b.wall_s, "{a:?} {b:?}");
    }
}

#[test]
fn a_grid_wave_spreads_over_the_build_nodes() {
    let t = Trace {
        chains: vec![Chain {
            looks: vec![Look {
                commits: (0..16).map(|i| i * 200).collect(),
                prefetch: vec![],
                samples: 160,
            }],
            after: Vec::new(),
        }],
        decisions: 1,
        intervals: 0,
        confirmed: 0,
    };
    let c = costs();
    let block = 1.0 + 160.0 * c.sample;
    for (n, waves) in [(1, 16.0), (4, 4.0), (16, 1.0), (5, 4.0)] {
        let w = wall_time(&t, &fleet(n, Ccache::Local), &c).wall_s;
        assert!((w - (waves * 151.0 + block)).abs() < 1e-9, "{n}: {w}");
    }
    // a commit built once is near for the next one on its node
    let near = Trace {
        chains: vec![Chain {
            looks: vec![
                Look {
                    commits: vec![100],
                    prefetch: vec![],
                    samples: 0,
                },
                Look {
                    commits: vec![150],
                    prefetch: vec![],
                    samples: 0,
                },
            ],
            after: Vec::new(),
        }],
        ..t
    };
    let w = wall_time(&near, &fleet(1, Ccache::Local), &c).wall_s;
    assert!((w - (151.0 + 9.0)).abs() < 1e-9, "{w}");
}

#[test]
fn records_are_classified() {
    let r = |d: f64, hit: Option<f64>, inc: Option<usize>, ok: bool| BuildRecord {
        duration_s: d,
        ccache_hit_rate: hit,
        incremental_files: inc,
        ok,
    };
    assert_eq!(
        BuildClass::of(&r(1.0, None, None, true)),
        Some(BuildClass::Cold)
    );
    assert_eq!(
        BuildClass::of(&r(1.0, Some(0.05), None, true)),
        Some(BuildClass::Cold)
    );
    assert_eq!(BuildClass::of(&r(1.0, Some(0.3), None, true)), None);
    assert_eq!(
        BuildClass::of(&r(1.0, Some(0.9), None, true)),
        Some(BuildClass::WarmCcache)
    );
    assert_eq!(
        BuildClass::of(&r(1.0, Some(0.0), Some(12), true)),
        Some(BuildClass::Near)
    );
    assert_eq!(BuildClass::of(&r(1.0, Some(1.0), Some(900), true)), None);
    assert_eq!(BuildClass::of(&r(1.0, None, None, false)), None);
    let recs = [
        r(160.0, Some(0.02), None, true),
        r(100.0, None, None, true),
        r(250.0, Some(0.0), None, true),
        r(20.0, Some(1.0), None, true),
    ];
    let cold = recorded(&recs, BuildClass::Cold).unwrap();
    assert_eq!(
        (cold.median_s, cold.records, cold.min_s, cold.max_s),
        (160.0, 3, 100.0, 250.0)
    );
    assert!(recorded(&recs, BuildClass::Near).is_none());
}

#[test]
fn quantiles_interpolate() {
    assert_eq!(quantile(&[3.0, 1.0, 2.0], 0.5), 2.0);
    assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.5), 2.5);
    assert!((quantile(&(1..=11).map(f64::from).collect::<Vec<_>>(), 0.9) - 10.0).abs() < 1e-12);
    assert!(quantile(&[], 0.5).is_nan());
}
