use super::super::SimMeasurer;
use super::*;
use crate::analysis::bisect::{Measurer, Probe};
use rand::SeedableRng;

/// An A/A comparison as `compare X X` takes it: one build, two subjects, shuffled rounds.
fn a_a(model: &NoiseModel, rounds: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut m = SimMeasurer::new(2, &[], model, 0.0, seed).unwrap();
    m.ensure(&[(0, rounds), (1, rounds)])
        .unwrap()
        .into_iter()
        .map(|p| match p {
            Probe::Samples(v) => v.values,
            Probe::Skip(r) => panic!("{r}"),
        })
        .collect()
}

fn sd(v: &[f64]) -> f64 {
    let m = v.iter().sum::<f64>() / v.len() as f64;
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

#[test]
fn fit_recovers_the_realistic_machine() {
    let truth = NoiseModel::realistic();
    let mut got = vec![];
    for seed in 0..4 {
        let f = fit(
            &a_a(&truth, 3000, seed),
            2,
            DEFAULT_PHI,
            &NoiseModel::iid(0.03),
            "compare",
        )
        .unwrap();
        assert_eq!((f.series, f.per_round, f.samples), (2, 2, 6000));
        got.push(f.model);
    }
    for m in &got {
        assert!((m.cv - 0.03).abs() < 0.006, "{m:?}");
        assert!((m.outlier_rate - 0.05).abs() < 0.015, "{m:?}");
        assert!(m.outlier_size.0 < 1.3 && m.outlier_size.1 > 1.8, "{m:?}");
        assert!((m.drift - 0.005).abs() < 0.002, "{m:?}");
        assert_eq!(m.drift_phi, DEFAULT_PHI);
    }
}

#[test]
fn fit_of_iid_noise_finds_no_drift_and_no_outliers() {
    for seed in 0..4 {
        let f = fit(
            &a_a(&NoiseModel::iid(0.03), 2000, seed),
            2,
            DEFAULT_PHI,
            &NoiseModel::iid(0.03),
            "compare",
        )
        .unwrap();
        let m = &f.model;
        assert!((m.cv - 0.03).abs() < 0.003, "{f:?}");
        assert!(m.drift < 0.001, "{f:?}");
        assert!(m.outlier_rate < 0.004, "{f:?}");
        assert!(f.lag1.abs() < 0.1, "{f:?}");
    }
}

#[test]
fn fit_keeps_what_it_cannot_see_and_rejects_too_little() {
    let base = NoiseModel::harsh();
    let f = fit(
        &a_a(&NoiseModel::iid(0.02), 200, 1),
        2,
        0.95,
        &base,
        "compare",
    )
    .unwrap();
    assert_eq!(f.model.bimodal_rate, base.bimodal_rate);
    assert_eq!(f.model.burst_rate, base.burst_rate);
    assert_eq!(f.model.drift_phi, 0.95);
    assert!(f.not_fitted.iter().any(|s| s.contains("build offsets")));
    assert!(fit(&[vec![1.0; 4]], 1, 0.99, &base, "run")
        .is_err_and(|e| e.to_string().contains("too few")));
    assert!(fit(
        &[vec![1.0, 2.0, -1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]],
        1,
        0.99,
        &base,
        "run"
    )
    .is_err());
    assert!(fit(&a_a(&base, 20, 1), 2, 1.0, &base, "compare").is_err());
}

#[test]
fn machine_factors_do_what_they_say() {
    let mut rng = StdRng::seed_from_u64(9);
    // iid part alone: log-normal with the given sigma
    let mut m = Machine::default();
    let model = NoiseModel::iid(0.03);
    let xs: Vec<f64> = (0..20_000)
        .map(|_| m.sample_log(&model, &mut rng))
        .collect();
    assert!((sd(&xs) - 0.03).abs() < 0.001);
    // order effect: only the first sample of a round
    let model = NoiseModel {
        order_effect: 0.02,
        ..NoiseModel::iid(0.0)
    };
    let mut m = Machine::default();
    for _ in 0..3 {
        m.new_round();
        let r: Vec<f64> = (0..3).map(|_| m.sample_log(&model, &mut rng)).collect();
        assert_eq!(r, vec![1.02f64.ln(), 0.0, 0.0]);
    }
    // bursts: +10–30% in runs of at least 20 samples
    let model = NoiseModel {
        burst_rate: 0.01,
        ..NoiseModel::iid(0.0)
    };
    let mut m = Machine::default();
    let xs: Vec<f64> = (0..20_000)
        .map(|_| m.sample_log(&model, &mut rng))
        .collect();
    assert!(xs
        .iter()
        .all(|&x| x == 0.0 || (1.1f64.ln() - 1e-12..=1.3f64.ln() + 1e-12).contains(&x)));
    let runs: Vec<usize> = xs
        .split(|&x| x == 0.0)
        .filter(|r| !r.is_empty())
        .map(|r| r.len())
        .collect();
    assert!(runs.len() > 20 && runs.iter().all(|&n| n >= 20), "{runs:?}");
    // AR(1) drift: stationary sigma drift / sqrt(1 − phi²), and strongly autocorrelated
    let model = NoiseModel {
        drift: 0.005,
        ..NoiseModel::iid(0.0)
    };
    let mut m = Machine::default();
    let xs: Vec<f64> = (0..200_000)
        .map(|_| m.sample_log(&model, &mut rng))
        .collect();
    let want = 0.005 / (1.0 - 0.99f64 * 0.99).sqrt();
    assert!(
        (sd(&xs) - want).abs() < 0.15 * want,
        "{} vs {want}",
        sd(&xs)
    );
    // outliers and bimodality: their share of samples
    let model = NoiseModel {
        outlier_rate: 0.05,
        bimodal_rate: 0.3,
        ..NoiseModel::iid(0.0)
    };
    let mut m = Machine::default();
    let xs: Vec<f64> = (0..20_000)
        .map(|_| m.sample_log(&model, &mut rng))
        .collect();
    let frac =
        |f: &dyn Fn(f64) -> bool| xs.iter().filter(|&&x| f(x)).count() as f64 / xs.len() as f64;
    assert!((frac(&|x| x > 1.09f64.ln()) - 0.05).abs() < 0.01);
    assert!((frac(&|x| (x - 1.08f64.ln()).abs() < 1e-12) - 0.3 * 0.95).abs() < 0.02);
}

#[test]
fn presets_and_validation() {
    assert!(NoiseModel::iid(0.03).is_iid());
    assert!(!NoiseModel::realistic().is_iid());
    for m in [
        NoiseModel::iid(0.03),
        NoiseModel::realistic(),
        NoiseModel::harsh(),
    ] {
        m.validate().unwrap();
    }
    assert_eq!(NoiseModel::iid(0.03).describe(), "noise 3.0%");
    let d = NoiseModel::realistic().describe();
    assert!(
        d.contains("drift 0.5%/sample") && d.contains("5.0% outliers"),
        "{d}"
    );
    let bad = [
        NoiseModel {
            outlier_rate: 1.0,
            ..NoiseModel::realistic()
        },
        NoiseModel {
            outlier_size: (0.9, 2.0),
            ..NoiseModel::realistic()
        },
        NoiseModel {
            drift_phi: 1.5,
            ..NoiseModel::realistic()
        },
        NoiseModel {
            burst_len: (0, 5),
            ..NoiseModel::realistic()
        },
        NoiseModel {
            drift: -0.1,
            ..NoiseModel::realistic()
        },
    ];
    for m in bad {
        assert!(m.validate().is_err(), "{m:?}");
    }
}

/// A trace is the A/A run's deviations round by round, and a machine replays it in order
/// from some point, never a sample twice: a slow wave in the recording reaches consecutive
/// samples, and a search that needs more than the trace holds is told it ran out.
#[test]
fn a_trace_replays_the_recording_in_order() {
    // Two subjects of 6 samples: a wave of +20% over rounds 2-3 in both.
    let wave = [1.0, 1.0, 1.2, 1.2, 1.0, 1.0];
    let a: Vec<f64> = wave.iter().map(|w| 2.0 * w).collect();
    let b: Vec<f64> = wave.iter().map(|w| 5.0 * w).collect();
    let t = Trace::of(&[a, b]).unwrap();
    assert_eq!(t.samples, 12);
    let up = 1.2f64.ln();
    let expect = [0.0, 0.0, 0.0, 0.0, up, up, up, up, 0.0, 0.0, 0.0, 0.0];
    for (x, e) in t.logs.iter().zip(expect) {
        assert!((x - e).abs() < 1e-12, "{:?}", t.logs);
    }
    let model = NoiseModel {
        trace: Some(t.clone()),
        ..NoiseModel::iid(0.5)
    };
    assert!(!model.is_iid());
    assert!(model
        .describe()
        .starts_with("a recorded trace of 12 samples"));
    let mut m = Machine::default();
    let mut rng = StdRng::seed_from_u64(3);
    let drawn: Vec<f64> = (0..12).map(|_| m.sample_log(&model, &mut rng)).collect();
    let first = (0..12)
        .find(|&s| (0..12).all(|i| drawn[i] == t.logs[(s + i) % 12]))
        .expect("the draws are the recording from one start, past its end from its beginning");
    assert!(first < 12);
    assert!(!m.exhausted(&model), "every sample of the trace once");
    m.sample_log(&model, &mut rng);
    assert!(
        m.exhausted(&model),
        "the 13th draw replays a sample: the trace ran out"
    );
    // Other machines (trials) start elsewhere.
    let starts: std::collections::HashSet<u64> = (0..20)
        .map(|_| {
            let mut m = Machine::default();
            m.sample_log(&model, &mut rng).to_bits() ^ m.sample_log(&model, &mut rng).to_bits()
        })
        .collect();
    assert!(starts.len() > 2, "{starts:?}");
    assert!(Trace::of(&[vec![1.0; 4]]).is_err(), "too short to replay");
}
