//! Every renderer of every result type, pinned by insta snapshots on fixed
//! results (review changes with `cargo insta review`, or
//! `INSTA_UPDATE=always cargo test` and `git diff`).

use std::collections::BTreeMap;

use super::bisect::{BisectReport, CommitJson, CulpritJson, StepJson};
use super::compare::{CompareReport, Sides};
use super::export::{Csv, Export, Json, Junit, Markdown, Text};
use super::gate::{GateOutcome, GateReport, GateResult, UndecidedPolicy, GATE_KIND};
use super::matrix::{MatrixCell, MatrixReport, MATRIX_KIND};
use super::run::{RunReport, RunResult};
use super::simulate::Simulated;
use crate::analysis::bisect::Config;
use crate::analysis::simulate::noise::{NoiseFit, NoiseModel};
use crate::analysis::simulate::{SimConfig, SimReport, SimStep};
use crate::analysis::stats::{self, Comparison, Verdict};
use crate::host::Host;
use crate::measure::engine::BuildUse;
use crate::measure::runner::Sample;

const OLD: [f64; 6] = [100.0, 101.0, 99.5, 100.4, 100.9, 99.8];
const NEW: [f64; 6] = [120.0, 121.3, 119.4, 120.8, 119.9, 120.5];

fn comparison(a: &[f64], b: &[f64]) -> Comparison {
    stats::compare(a, b, 0.01, 0.03)
}

fn commit(id: char, subject: &str) -> CommitJson {
    let full: String = std::iter::repeat_n(id, 40).collect();
    CommitJson {
        short: full[..10].to_string(),
        commit: full,
        date: "2024-01-30".into(),
        author: "A. Developer".into(),
        subject: subject.into(),
    }
}

fn host() -> Host {
    Host {
        cpu_model: "Test CPU".into(),
        cores: 2,
    }
}

fn compare_report() -> CompareReport {
    CompareReport::new(
        "pkeyread:format=pem,key=ec",
        1,
        Sides {
            a: "openssl-3.0.8",
            b: "openssl-3.1.4",
            a_commit: &"a".repeat(40),
            b_commit: &"b".repeat(40),
        },
        &comparison(&OLD, &NEW),
        0.01,
        0.03,
    )
}

fn bisect_report() -> BisectReport {
    let (good, bad) = (commit('a', "OpenSSL 3.0.0"), commit('c', "OpenSSL 3.2.1"));
    let mid = commit('b', "Speed up decoders | really");
    let c = comparison(&OLD, &NEW);
    let step = |info: &CommitJson, xs: &[f64], verdict: &str| {
        let s = stats::summarize(xs);
        StepJson {
            info: info.clone(),
            n: s.n,
            mean_us: s.mean,
            ci95_us: s.ci95,
            verdict: verdict.into(),
            position: None,
        }
    };
    BisectReport {
        tool: "pkeyread:format=pem,key=ec".into(),
        threads: 1,
        range: "openssl-3.0.0..openssl-3.2.1".into(),
        repo: "/repo".into(),
        recipe: "default".into(),
        merge_base: None,
        direction: Verdict::Slower,
        ends: c,
        outcome: "1 change(s)".into(),
        culprits: vec![CulpritJson {
            parent: good.commit.clone(),
            range: false,
            skipped: vec![],
            info: mid.clone(),
            ratio: c.ratio.ratio,
            ratio_ci: (c.ratio.lo, c.ratio.hi),
            p_welch: c.p_welch,
            p_mwu: c.p_mwu,
            parent_mean_us: c.a.mean,
            culprit_mean_us: c.b.mean,
            partial: false,
            uncertain: false,
            comparison: c,
        }],
        steps: vec![
            step(&good, &OLD, "old"),
            step(&bad, &NEW, "new"),
            step(&mid, &NEW, "new"),
        ],
        builds: vec![BuildUse {
            commit: good.commit.clone(),
            fresh: true,
            ok: true,
            duration_s: 95.0,
            log: None,
        }],
        good,
        bad,
        samples: 18,
        samples_taken_now: 18,
        alpha_per_test: 0.01 / 48.0,
        min_effect: 0.03,
        wall_s: 120.0,
        reproduce: "perfbisect bisect --tool pkeyread openssl-3.0.0..openssl-3.2.1".into(),
    }
}

fn gate_report() -> GateReport {
    let c = compare_report();
    let result = |outcome, message: &str, comparison| GateResult {
        outcome,
        message: message.into(),
        comparison,
        tool: "pkeyread:format=pem,key=ec".into(),
        threads: 1,
    };
    GateReport {
        kind: GATE_KIND.into(),
        host: host(),
        base: "main".into(),
        head: "pr-123".into(),
        base_commit: "a".repeat(40),
        head_commit: "b".repeat(40),
        max_regression: 0.05,
        alpha: 0.01,
        undecided: UndecidedPolicy::Pass,
        shard: None,
        results: vec![
            result(
                GateOutcome::Regression,
                "head is slower by +20.1% (more than the allowed 5.0%)",
                Some(c),
            ),
            result(
                GateOutcome::NotApplicable,
                "not applicable: evp_fetch needs OpenSSL 3.0.0 or later, this is 1.1.1w",
                None,
            ),
        ],
        exit_code: 1,
    }
}

fn matrix_report() -> MatrixReport {
    let cell = |target: &str, threads: usize, xs: &[f64], na: Option<&str>| {
        let s = (!xs.is_empty()).then(|| stats::summarize(xs));
        MatrixCell {
            target: target.into(),
            commit: None,
            openssl_version: Some("3.2.1".into()),
            tool: "pkeyread".into(),
            spec: "pkeyread:format=pem,key=ec".into(),
            args: BTreeMap::from([("format".into(), "pem".into()), ("key".into(), "ec".into())]),
            threads,
            n: xs.len(),
            mean_us: s.map(|s| s.mean),
            stddev_us: s.map(|s| s.sd),
            ci95_us: s.map(|s| s.ci95),
            not_applicable: na.map(str::to_string),
            failure: None,
            samples_us: xs.to_vec(),
        }
    };
    MatrixReport {
        kind: MATRIX_KIND.into(),
        host: host(),
        duration: 0.5,
        samples: 6,
        targets: vec!["openssl-3.0.8".into(), "openssl-3.2.1".into()],
        shard: None,
        cells: vec![
            cell("openssl-3.0.8", 1, &NEW, None),
            cell("openssl-3.0.8", 2, &[], Some("not applicable: demo")),
            cell("openssl-3.2.1", 1, &OLD, None),
            cell("openssl-3.2.1", 2, &OLD, None),
        ],
    }
}

fn run_report() -> RunReport {
    let sample = |us: f64| Sample {
        us_per_op: us,
        ops_per_thread: vec![1000],
        wall_s: 0.5,
        cpu_s: 0.5,
        threads: 1,
        libcrypto_path: "/usr/lib/libcrypto.so.3".into(),
        openssl_version: "OpenSSL 3.0.19".into(),
        counters: BTreeMap::new(),
        mb_per_s: None,
    };
    let registry = crate::measure::kernel::Registry::load(None).unwrap();
    let spec = registry.parse_spec("randbytes").unwrap();
    RunReport {
        results: vec![RunResult::new(
            "system",
            &spec,
            1,
            OLD.iter().map(|&x| sample(x / 100.0)).collect(),
            None,
        )],
    }
}

fn simulated() -> Simulated {
    Simulated {
        config: SimConfig {
            commits: 1000,
            steps: vec![SimStep::at(0.1, None)],
            noise: NoiseModel::iid(0.03),
            trials: 100,
            alarm_trials: 100,
            seed: 1,
            skip_rate: 0.0,
            cfg: Config::default(),
            baseline: false,
            jobs: 1,
        },
        report: SimReport {
            trials: 100,
            accuracy: 0.99,
            false_alarm_rate: 0.0,
            mean_builds: 14.2,
            mean_samples: 180.5,
            mean_samples_per_decision: 12.1,
            detected_all_rate: 1.0,
            uncertain_rate: 0.01,
            errors: 0,
            alarm_trials: 100,
            wrong_culprit_rate: 0.0,
            unconfirmed_rate: 0.0,
            interval_coverage: Some(0.98),
            intervals_scored: 100,
        },
        noise_fit: None,
    }
}

/// Fitted realistic noise, a gradual and a cancelled step, more no-change trials, the baseline.
fn simulated_fitted() -> Simulated {
    let mut s = simulated();
    let model = NoiseModel {
        cv: 0.021,
        drift: 0.004,
        outlier_rate: 0.03,
        outlier_size: (1.15, 1.9),
        ..NoiseModel::iid(0.03)
    };
    s.config.noise = model.clone();
    s.config.steps = vec![
        SimStep {
            spread: 5,
            ..SimStep::at(0.1, Some(300))
        },
        SimStep {
            cancelled: true,
            ..SimStep::at(-0.05, None)
        },
    ];
    s.config.baseline = true;
    s.report.alarm_trials = 10_000;
    s.report.wrong_culprit_rate = 0.02;
    s.report.interval_coverage = None;
    s.report.intervals_scored = 0;
    s.noise_fit = Some(NoiseFit {
        file: "aa.json".into(),
        source: "compare".into(),
        series: 2,
        per_round: 2,
        samples: 80,
        total_cv: 0.034,
        lag1: 0.31,
        model,
        not_fitted: vec!["load bursts".into(), "bimodality".into()],
    });
    s
}

#[test]
fn bisect_renderers() {
    let r = bisect_report();
    insta::assert_snapshot!("bisect_text", Text.export(&r).unwrap());
    insta::assert_snapshot!("bisect_markdown", Markdown.export(&r).unwrap());
    let back: BisectReport = serde_json::from_str(&Json.export(&r).unwrap()).unwrap();
    assert_eq!(back.culprits[0].info.commit, r.culprits[0].info.commit);
    assert_eq!(back.ends.verdict, r.ends.verdict);
}

#[test]
fn compare_renderers() {
    let r = compare_report();
    insta::assert_snapshot!("compare_text", Text.export(&r).unwrap());
    insta::assert_snapshot!("compare_markdown", Markdown.export(&r).unwrap());
    insta::assert_snapshot!("compare_json", Json.export(&r).unwrap());
    let back: CompareReport = serde_json::from_str(&Json.export(&r).unwrap()).unwrap();
    assert_eq!(back.comparison.verdict, r.comparison.verdict);
    assert!((back.comparison.ratio.lo - r.comparison.ratio.lo).abs() < 1e-12);
}

#[test]
fn gate_renderers() {
    let r = gate_report();
    insta::assert_snapshot!("gate_text", Text.export(&r).unwrap());
    insta::assert_snapshot!("gate_markdown", Markdown.export(&r).unwrap());
    insta::assert_snapshot!("gate_junit", Junit.export(&r).unwrap());
}

#[test]
fn matrix_renderers() {
    let r = matrix_report();
    insta::assert_snapshot!("matrix_text", Text.export(&r).unwrap());
    insta::assert_snapshot!("matrix_markdown", Markdown.export(&r).unwrap());
    insta::assert_snapshot!("matrix_csv", Csv.export(&r).unwrap());
}

#[test]
fn run_renderers() {
    let r = run_report();
    insta::assert_snapshot!("run_text", Text.export(&r).unwrap());
    insta::assert_snapshot!("run_markdown", Markdown.export(&r).unwrap());
    insta::assert_snapshot!("run_csv", Csv.export(&r).unwrap());
}

#[test]
fn simulate_renderers() {
    let r = simulated();
    insta::assert_snapshot!("simulate_text", Text.export(&r).unwrap());
    insta::assert_snapshot!("simulate_json", Json.export(&r).unwrap());
    let r = simulated_fitted();
    insta::assert_snapshot!("simulate_fitted_text", Text.export(&r).unwrap());
    let v: serde_json::Value = serde_json::from_str(&Json.export(&r).unwrap()).unwrap();
    assert_eq!(v["noise_fit"]["model"]["drift"], 0.004);
    assert_eq!(v["alarm_trials"], 10_000);
}

#[test]
fn compare_json_carries_raw_samples_and_reads_old_files() {
    let mut r = compare_report();
    let old = Json.export(&r).unwrap();
    assert!(!old.contains("a_samples_us"));
    let back: CompareReport = serde_json::from_str(&old).unwrap();
    assert!(back.a_samples_us.is_empty());
    r.a_samples_us = vec![1.0, 2.0];
    r.b_samples_us = vec![3.0];
    let back: CompareReport = serde_json::from_str(&Json.export(&r).unwrap()).unwrap();
    assert_eq!(
        (back.a_samples_us, back.b_samples_us),
        (vec![1.0, 2.0], vec![3.0])
    );
}
