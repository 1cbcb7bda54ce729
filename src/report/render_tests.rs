//! Every renderer of every result type, pinned by insta snapshots on fixed
//! results (review changes with `cargo insta review`, or
//! `INSTA_UPDATE=always cargo test` and `git diff`).

use std::collections::BTreeMap;

use super::bisect::{
    BisectReport, ChangePointJson, CommitJson, StepJson, ThreadEffect, ThreadPoint, UnexploredJson,
};
use super::bisect::{RunState, SavedBisect};
use super::compare::{CompareReport, Sides};
use super::export::{Csv, Export, Html, Json, Jsonl, Junit, Links, Markdown, Text};
use super::gate::{GateOutcome, GateReport, GateResult, UndecidedPolicy, GATE_KIND};
use super::listing::{BisectLog, BuildList, OnDisk};
use super::matrix::{MatrixCell, MatrixReport, MATRIX_KIND};
use super::run::{RunReport, RunResult};
use super::simulate::Simulated;
use crate::analysis::bisect::Config;
use crate::analysis::resolution::Resolution;
use crate::analysis::simulate::noise::{NoiseFit, NoiseModel};
use crate::analysis::simulate::{SimConfig, SimReport, SimStep};
use crate::analysis::stats::{self, Comparison, Verdict};
use crate::host::Host;
use crate::measure::engine::BuildUse;
use crate::measure::metric::Metric;
use crate::measure::runner::Sample;
use crate::unavailable::Unavailable;

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
        author_date: (id == 'b').then(|| "2023-11-02".into()),
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
            a_patches: &[],
            b_patches: &[],
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
            kind: None,
            skipped_because: None,
            info: info.clone(),
            index: match verdict {
                "old" => 0,
                _ if info.commit == bad.commit => 2,
                _ => 1,
            },
            n: s.n,
            mean_us: s.mean,
            ci95_us: s.ci95,
            verdict: verdict.into(),
            position: None,
            per_threads: vec![],
        }
    };
    BisectReport {
        metric: Metric::Time,
        placement: Default::default(),
        explanations: Vec::new(),
        kind: super::bisect::BISECT_KIND.into(),
        tool: "pkeyread:format=pem,key=ec".into(),
        threads: 1,
        range: "openssl-3.0.0..openssl-3.2.1".into(),
        repo: "/repo".into(),
        recipe: "default".into(),
        merge_base: None,
        commits: 3,
        direction: Verdict::Slower,
        ends: c,
        outcome: "1 change(s)".into(),
        changes: vec![ChangePointJson {
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
            confirmed: true,
            unresolved: false,
            identical_binaries: false,
            share: 1.0,
            comparison: c,
            per_threads: vec![],
            located: None,
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
        shared_probes: 0,
        alpha_per_test: 0.01 / 48.0,
        notes: vec![],
        tests: 44,
        family_alpha: 0.003,
        routing: crate::analysis::alpha::RoutingLevel::PerDecision(0.001),
        alpha: 0.01,
        min_effect: 0.03,
        wall_s: 120.0,
        reproduce: "perfbisect bisect --tool pkeyread openssl-3.0.0..openssl-3.2.1".into(),
        explained: None,
        unexplored: vec![],
        continue_with: None,
        // Noisier than --min-effect allows at the cap: the sentence names both sizes.
        resolution: Some(Resolution {
            basis: crate::analysis::resolution::NoiseBasis::Tests,
            df_per_sample: Some(0.6),
            noise: 0.043,
            subjects: 6,
            cap: 40,
            alpha: 0.01 / 96.0,
            smallest: 0.052,
            needed: 62,
            min_effect: 0.03,
        }),
        thread_counts: vec![],
        ends_per_threads: vec![],
        located: None,
    }
}

/// Five samples around `mean`, ±1%.
fn around(mean: f64) -> Vec<f64> {
    [-1.0, -0.5, 0.0, 0.5, 1.0]
        .iter()
        .map(|k| mean * (1.0 + 0.01 * k))
        .collect()
}

/// A bisect over `commits` commits: tested (index, subject, mean µs/op or
/// None when skipped, verdict), change points as (parent, culprit) indices.
fn bisect_over(
    range: &str,
    commits: usize,
    tested: &[(usize, &str, Option<f64>, &str)],
    changes: &[(usize, usize)],
) -> BisectReport {
    let info = |i: usize, subject: &str| {
        // Distinct, stable, sha-looking ids.
        let x = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let full = format!("{x:016x}{:016x}{:08x}", x.rotate_left(17), i);
        CommitJson {
            short: full[..10].to_string(),
            commit: full,
            author_date: None,
            date: RELEASE_DATES
                .get(i)
                .filter(|_| commits == RELEASE_DATES.len())
                .map(|d| d.to_string())
                .unwrap_or_else(|| {
                    chrono::NaiveDate::from_ymd_opt(2021, 9, 7)
                        .unwrap()
                        .checked_add_days(chrono::Days::new(i as u64 * 870 / commits as u64))
                        .unwrap()
                        .to_string()
                }),
            author: "OpenSSL release history".into(),
            subject: subject.into(),
        }
    };
    let samples = |i: usize| {
        tested
            .iter()
            .find(|t| t.0 == i)
            .and_then(|t| t.2)
            .map(around)
            .unwrap_or_default()
    };
    let by_index = |i: usize| tested.iter().find(|t| t.0 == i).expect("tested");
    let steps: Vec<StepJson> = tested
        .iter()
        .map(|&(i, subject, _, verdict)| {
            let s = stats::summarize(&samples(i));
            StepJson {
                kind: None,
                skipped_because: None,
                info: info(i, subject),
                index: i,
                n: s.n,
                mean_us: s.mean,
                ci95_us: s.ci95,
                verdict: verdict.into(),
                position: None,
                per_threads: vec![],
            }
        })
        .collect();
    let ends_ratio = comparison(&samples(0), &samples(commits - 1)).ratio.ratio;
    let culprits = changes
        .iter()
        .map(|&(p, c)| {
            let cmp = comparison(&samples(p), &samples(c));
            ChangePointJson {
                parent: info(p, by_index(p).1).commit,
                range: c > p + 1,
                skipped: (p + 1..c).map(|i| info(i, "").commit).collect(),
                info: info(c, by_index(c).1),
                ratio: cmp.ratio.ratio,
                ratio_ci: (cmp.ratio.lo, cmp.ratio.hi),
                p_welch: cmp.p_welch,
                p_mwu: cmp.p_mwu,
                parent_mean_us: cmp.a.mean,
                culprit_mean_us: cmp.b.mean,
                partial: changes.len() > 1,
                uncertain: false,
                confirmed: true,
                unresolved: false,
                identical_binaries: false,
                share: cmp.ratio.ratio.ln() / ends_ratio.ln(),
                comparison: cmp,
                per_threads: vec![],
                located: None,
            }
        })
        .collect();
    let ends = comparison(&samples(0), &samples(commits - 1));
    BisectReport {
        metric: Metric::Time,
        placement: Default::default(),
        explanations: Vec::new(),
        kind: super::bisect::BISECT_KIND.into(),
        tool: "pkeyread:format=pem,key=ec".into(),
        threads: 1,
        range: range.into(),
        repo: "~/openssl-release-history".into(),
        recipe: "default".into(),
        good: info(0, by_index(0).1),
        bad: info(commits - 1, by_index(commits - 1).1),
        merge_base: None,
        commits,
        direction: ends.verdict,
        ends,
        outcome: format!("{} change(s)", changes.len()),
        changes: culprits,
        steps,
        builds: tested
            .iter()
            .map(|t| BuildUse {
                commit: info(t.0, t.1).commit,
                fresh: false,
                ok: t.2.is_some(),
                duration_s: 95.0,
                log: None,
            })
            .collect(),
        samples: 5 * tested.len(),
        samples_taken_now: 0,
        shared_probes: 0,
        alpha_per_test: 0.01 / 48.0,
        notes: vec![],
        tests: 44,
        family_alpha: 44.0 * 0.01 / 48.0,
        routing: crate::analysis::alpha::RoutingLevel::Family,
        alpha: 0.01,
        min_effect: 0.03,
        wall_s: 82.0,
        reproduce: format!(
            "perfbisect bisect --repo ~/openssl-release-history --tool 'pkeyread:key=ec,format=pem' --threads 1 {range}"
        ),
        explained: None,
        unexplored: vec![],
        continue_with: None,
        resolution: None,
        thread_counts: vec![],
        ends_per_threads: vec![],
        located: None,
    }
}

const RELEASE_DATES: [&str; 6] = [
    "2021-09-07",
    "2021-12-14",
    "2022-07-05",
    "2023-02-07",
    "2023-10-24",
    "2024-01-30",
];

/// The README's bisect: six releases, three change points, every commit tested.
pub(crate) fn release_history_bisect() -> BisectReport {
    bisect_over(
        "openssl-3.0.0..openssl-3.2.1",
        6,
        &[
            (0, "OpenSSL 3.0.0", Some(376.1), "old"),
            (5, "OpenSSL 3.2.1", Some(20.25), "new"),
            (
                2,
                "OpenSSL 3.0.5",
                Some(240.9),
                "between (part of the change)",
            ),
            (1, "OpenSSL 3.0.1", Some(375.5), "old"),
            (3, "OpenSSL 3.0.8", Some(238.0), "old"),
            (
                4,
                "OpenSSL 3.1.4",
                Some(50.965),
                "between (part of the change)",
            ),
        ],
        &[(1, 2), (3, 4), (4, 5)],
    )
}

/// A long range searched sparsely: untested stretches, a skipped commit,
/// one change point, less than 3× between the ends (a linear axis).
pub(crate) fn sparse_bisect() -> BisectReport {
    bisect_over(
        "v1..v2",
        200,
        &[
            (0, "Start of the range", Some(100.0), "old"),
            (199, "End of the range", Some(112.0), "new"),
            (99, "Refactor the decoder", Some(112.3), "new"),
            (49, "Tidy headers", Some(100.4), "old"),
            (74, "Build fix", None, "skipped: build failed"),
            (75, "Move tests", Some(99.7), "old"),
            (87, "Add a lock", Some(111.8), "new"),
            (81, "Docs", Some(100.2), "old"),
            (84, "Provider cache off", Some(112.1), "new"),
            (82, "More docs", Some(100.1), "old"),
            (
                83,
                "Decoder: look up <every> time & \"cache\"",
                Some(111.9),
                "new",
            ),
        ],
        &[(82, 83)],
    )
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
        metric: Metric::Time,
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
            not_applicable: na.map(|m| Unavailable::NotApplicable { message: m.into() }),
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
        metric: Metric::Time,
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
        instructions: None,
        host: None,
        round: None,
        session: None,
        cpu_caps: None,
    };
    let registry = crate::measure::kernel::Registry::load(None).unwrap();
    let spec = registry.parse_spec("randbytes").unwrap();
    RunReport::new(
        Metric::Time,
        vec![RunResult::new(
            "system",
            &spec,
            1,
            OLD.iter().map(|&x| sample(x / 100.0)).collect(),
            None,
            Metric::Time,
        )],
    )
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
            lanes: 1,
            scan: None,
            locate: None,
            sample_seconds: 1.0,
        },
        report: SimReport {
            trials: 100,
            accuracy: 0.99,
            false_alarm_rate: 0.0,
            false_culprit_rate: 0.0,
            false_unresolved_rate: 0.0,
            mean_builds: 14.2,
            mean_samples: 180.5,
            mean_machine_s: 180.5,
            mean_samples_per_decision: 12.1,
            detected_all_rate: 1.0,
            uncertain_rate: 0.01,
            errors: 0,
            alarm_trials: 100,
            wrong_culprit_rate: 0.0,
            wrong_unresolved_rate: 0.0,
            unconfirmed_rate: 0.0,
            interval_coverage: Some(0.98),
            intervals_scored: 100,
            first_is_largest_rate: 0.99,
            mean_builds_to_first: 12.5,
            mean_samples_to_first: 150.0,
            steps_found: vec![],
            misses: 4,
            misses_named: Some(0.75),
            misses_net_only: Some(0.25),
            stated_resolution: Some(0.12),
            trace_exhausted: 0,
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
    insta::assert_snapshot!("bisect_details_text", full_text(&r));
    insta::assert_snapshot!("bisect_markdown", Markdown.export(&r).unwrap());
    let back: BisectReport = serde_json::from_str(&Json.export(&r).unwrap()).unwrap();
    assert_eq!(back.changes[0].info.commit, r.changes[0].info.commit);
    assert_eq!(back.ends.verdict, r.ends.verdict);
}

/// The error-control line prints what bounds false culprits, half of `--alpha` whatever the run
/// found, not the sum of the levels of the tests it happened to make; and it names the routing
/// no mode counts, the merge base's placement and `--locate auto`'s look, when they ran.
#[test]
fn the_error_control_line_prints_the_bound_that_holds() {
    let mut r = bisect_report();
    assert!(r.family_alpha < 0.005, "{}", r.family_alpha);
    let details = r.details_text(&Links::default());
    assert!(
        details.contains("error control: false culprits at most 5.0e-3 per run"),
        "{details}"
    );
    assert!(!details.contains("counted nowhere"), "{details}");
    assert!(
        Text.export(&r)
            .unwrap()
            .contains("false culprits at most 5.0e-3"),
        "{}",
        Text.export(&r).unwrap()
    );
    r.merge_base = Some(r.good.clone());
    r.notes.push(format!(
        "{} the clock alone searches",
        super::bisect::AUTO_NOTE
    ));
    let details = r.details_text(&Links::default());
    assert!(
        details.contains("counted nowhere: the merge base's placement (at --alpha) and --locate auto's look at the ends"),
        "{details}"
    );
}

/// The list of change points holds change points only: a located point whose fresh block is
/// undecided goes under "left unresolved" with its bound (text, Markdown, HTML and the plot
/// alike), a refuted candidate under "candidates not upheld", and pairs of identical binaries
/// are counted on one line (at 07d6d4e each was a numbered "result" or a table row).
#[test]
fn only_change_points_are_listed_as_change_points() {
    let mut r = bisect_report();
    let base = r.changes[0].clone();
    let point = |who: char, confirmed, unresolved, identical| ChangePointJson {
        info: commit(who, &format!("subject {who}")),
        confirmed,
        unresolved,
        identical_binaries: identical,
        ..base.clone()
    };
    r.changes = vec![
        point('d', true, false, false),
        point('e', false, true, false),
        point('f', false, false, false),
        point('g', false, false, true),
        point('h', false, false, true),
    ];
    r.changes[1].ratio = 1.007;
    r.changes[1].ratio_ci = (0.967, 1.049);
    // Exit 3 is for a candidate its block refuted ('f'); an unresolved point or a pair of
    // identical binaries alone is none (a scan exited 3 at ba8470b on one identical pair).
    assert!(r.unconfirmed());
    let without_f = BisectReport {
        changes: r
            .changes
            .iter()
            .filter(|c| !c.info.subject.ends_with('f'))
            .cloned()
            .collect(),
        ..r.clone()
    };
    assert!(!without_f.unconfirmed());
    // Each located commit tested, at its own place in the range (so the plot can place it).
    let probe = r.steps[2].clone();
    for (i, c) in r.changes.clone().iter().enumerate() {
        r.steps.push(StepJson {
            info: c.info.clone(),
            index: i + 2,
            ..probe.clone()
        });
    }
    r.steps[1].index = 8;
    r.commits = 9;
    // The answer's one line says what is located but not settled, the change points alone above.
    let answer = Text.export(&r).unwrap();
    let unsettled = (answer.lines())
        .find(|l| l.starts_with("left open: "))
        .expect("a line of what is left open");
    assert!(
        unsettled.contains("located, size unresolved")
            && unsettled.contains("not upheld on a fresh block"),
        "{answer}"
    );
    assert!(
        answer.starts_with(&format!("{} at 1 thread", r.tool)),
        "{answer}"
    );
    let text = full_text(&r);
    assert!(text.contains("result 1: culprit "), "{text}");
    assert!(!text.contains("result 2"), "{text}");
    let unresolved = text.split("left unresolved").nth(1).expect("a section");
    assert!(
        unresolved.contains("subject e): +0.7% [-3.3%, +4.9%]")
            && unresolved.contains("a step of up to 4.9% may be here"),
        "{text}"
    );
    assert!(
        text.contains("candidates not upheld") && text.contains("subject f"),
        "{text}"
    );
    let identical = (text.lines())
        .filter(|l| l.contains("byte-identical binaries, so they are not change points"))
        .collect::<Vec<_>>();
    assert_eq!(identical.len(), 1, "{text}");
    assert!(identical[0].starts_with("2 located pair(s)"), "{text}");
    assert!(
        !text.contains("NOT a culprit") && !text.contains("NOT A CULPRIT"),
        "{text}"
    );
    let md = Markdown.export(&r).unwrap();
    assert!(
        md.contains("Left unresolved") && md.contains("+0.7% [-3.3%, +4.9%]"),
        "{md}"
    );
    assert_eq!(
        md.matches("subject e").count(),
        1,
        "once, under left unresolved: {md}"
    );
    let html = Html.export(&r).unwrap();
    assert!(
        html.contains("Left unresolved") && html.contains("2 located pair(s)"),
        "{html}"
    );
    // The plot marks the confirmed point and, apart, the unresolved one; nothing else.
    let marks = r.profile().changes;
    let drawn: Vec<(bool, &str)> = (marks.iter())
        .map(|m| (m.unresolved, &m.label[..]))
        .collect();
    assert_eq!(drawn.len(), 2, "{drawn:?}");
    assert!(!drawn[0].0 && drawn[0].1.contains("subject d"), "{drawn:?}");
    assert!(
        drawn[1].0 && drawn[1].1.starts_with("unresolved: "),
        "{drawn:?}"
    );
    // With none confirmed the text says so instead of a result.
    r.changes.remove(0);
    let answer = Text.export(&r).unwrap();
    assert!(
        answer
            .lines()
            .next()
            .unwrap()
            .ends_with("but no change point confirmed"),
        "{answer}"
    );
    let text = full_text(&r);
    assert!(text.contains("result: no change point confirmed"), "{text}");
}

/// A transient (+122% undone by -55% two change points later) ranks after the lasting +10%
/// between them, though its share of the range's change is far larger.
#[test]
fn bisect_ranks_the_lasting_change_first() {
    let mut r = bisect_report();
    let base = r.changes[0].clone();
    let at = |ratio: f64, who: char, share: f64| ChangePointJson {
        ratio,
        share,
        info: commit(who, "a change"),
        ..base.clone()
    };
    let ends = (2.22f64 * 1.10 * 0.45).ln();
    r.changes = vec![
        at(2.22, 'd', 2.22f64.ln() / ends),
        at(1.10, 'e', 1.10f64.ln() / ends),
        at(0.45, 'f', 0.45f64.ln() / ends),
    ];
    let order: Vec<f64> = r.ranked().iter().map(|c| c.ratio).collect();
    assert_eq!(order, vec![1.10, 2.22, 0.45]);
    // Not confirmed comes last whatever its size.
    r.changes[1].confirmed = false;
    assert_eq!(r.ranked()[2].ratio, 1.10);
}

/// Located by count: every format says how the range was searched, steps are in counts, and
/// each culprit's count figure stands beside its clock's.
#[test]
fn bisect_located_by_count() {
    use super::bisect::LocatedJson;
    use crate::analysis::locate::SearchedBy;
    let mut r = bisect_report();
    let count = Comparison {
        ratio: stats::RatioCi {
            ratio: 1.281,
            lo: 1.280,
            hi: 1.282,
        },
        ..r.changes[0].comparison
    };
    r.changes[0].located = Some(count);
    r.located = Some(LocatedJson {
        metric: Metric::Instructions,
        searched_by: SearchedBy::Count,
        ends: count,
        resolution: None,
        samples: 30,
        unexplained: None,
        time_search: None,
    });
    insta::assert_snapshot!("bisect_located_text", Text.export(&r).unwrap());
    insta::assert_snapshot!("bisect_located_markdown", Markdown.export(&r).unwrap());
    let html = Html.export(&r).unwrap();
    assert!(html.contains("(located by instructions: +28.1%"), "{html}");
    assert!(
        html.contains("instructions/op"),
        "steps are in counts: {html}"
    );
    let back: BisectReport = serde_json::from_str(&Json.export(&r).unwrap()).unwrap();
    assert_eq!(back.located.map(|l| l.searched_by), Some(SearchedBy::Count));
    assert!(back.changes[0].located.is_some());
    assert!(!Text
        .export(&r)
        .unwrap()
        .contains("beyond the change points"));
    // Time the located change points do not explain is named, in every format.
    let rest = stats::RatioCi {
        ratio: 1.5,
        lo: 1.2,
        hi: 1.8,
    };
    r.located.as_mut().unwrap().unexplained = Some(rest);
    for out in [Ok(full_text(&r)), Markdown.export(&r), Html.export(&r)] {
        let out = out.unwrap();
        assert!(
            out.contains("the time moved +50.0% [+20.0%, +80.0%] beyond the change points"),
            "{out}"
        );
    }
    let back: BisectReport = serde_json::from_str(&Json.export(&r).unwrap()).unwrap();
    assert_eq!(back.located.and_then(|l| l.unexplained), Some(rest));
    // Searched in time between them: the stretches, what was found and what is left.
    r.located.as_mut().unwrap().time_search = Some(super::bisect::TimeSearchJson {
        moved: rest,
        stretches: vec![
            super::bisect::StretchJson {
                from: "a".repeat(40),
                to: "b".repeat(40),
            },
            super::bisect::StretchJson {
                from: "c".repeat(40),
                to: "d".repeat(40),
            },
        ],
        found: 1,
    });
    r.located.as_mut().unwrap().unexplained = None;
    for out in [Ok(full_text(&r)), Markdown.export(&r), Html.export(&r)] {
        let out = out.unwrap();
        assert!(
            out.contains("the time moved +50.0% [+20.0%, +80.0%] beyond the change points the counts located")
                && out.contains("the 2 stretches between them were searched in time: 1 change point(s) found there")
                && !out.contains("still"),
            "{out}"
        );
    }
    r.located.as_mut().unwrap().unexplained = Some(stats::RatioCi {
        ratio: 1.1,
        lo: 1.02,
        hi: 1.2,
    });
    let text = full_text(&r);
    assert!(
        text.contains("; still +10.0% [+2.0%, +20.0%] unexplained"),
        "{text}"
    );
    let back: BisectReport = serde_json::from_str(&Json.export(&r).unwrap()).unwrap();
    assert_eq!(
        back.located.and_then(|l| l.time_search).map(|t| t.found),
        Some(1)
    );
    r.located.as_mut().unwrap().time_search = None;
    r.located.as_mut().unwrap().unexplained = None;
    // Searched on the clock because the counts did not move: said as such.
    r.located.as_mut().unwrap().searched_by = SearchedBy::Clock;
    let text = Text.export(&r).unwrap();
    assert!(
        text.contains("the counts did not move") && text.contains("searched in time"),
        "{text}"
    );
}

/// Samples taken by a fleet name the executor and hosts in text and JSON; a local run's text
/// says nothing of it.
#[test]
fn bisect_names_where_it_was_measured() {
    use crate::measure::exec::{ExecutorKind, Placement};
    let mut r = bisect_report();
    assert!(!Text.export(&r).unwrap().contains("measured on"));
    r.placement = Placement {
        executor: ExecutorKind::Slurm,
        hosts: vec!["node1".into(), "node2".into()],
        cpu_caps: None,
    };
    let text = Text.export(&r).unwrap();
    assert!(
        text.contains("; measured on: node1, node2 (Slurm jobs)\n"),
        "{text}"
    );
    let details = r.details_text(&Links::default());
    assert!(
        details.contains("\nmeasured on: node1, node2 (Slurm jobs)\n"),
        "{details}"
    );
    let back: BisectReport = serde_json::from_str(&Json.export(&r).unwrap()).unwrap();
    assert_eq!(back.placement, r.placement);
}

/// A bisect stopped by its time budget, with a change against the range's direction: what was
/// explained, what was left, the command that continues; in every format and as JSON Lines.
#[test]
fn bisect_budget_and_direction() {
    let mut r = bisect_report();
    // Quiet enough: the cap resolves down to --min-effect.
    if let Some(res) = r.resolution.as_mut() {
        res.noise = 0.012;
        res.smallest = 0.03;
        res.needed = 12;
    }
    let mut against = r.changes[0].clone();
    against.info = commit('d', "Add a lock");
    against.parent = commit('e', "Refactor").commit;
    against.comparison.verdict = Verdict::Faster;
    against.comparison.ratio.ratio = 0.95;
    against.comparison.ratio.lo = 0.93;
    against.comparison.ratio.hi = 0.97;
    against.ratio = 0.95;
    against.ratio_ci = (0.93, 0.97);
    against.share = -0.08;
    against.partial = true;
    r.changes[0].share = 0.81;
    r.changes[0].partial = true;
    r.changes.push(against);
    r.explained = Some(0.73);
    r.unexplored = vec![
        UnexploredJson {
            from: "1".repeat(40),
            to: "2".repeat(40),
            commits: 41,
            differs: true,
            share: Some(0.2),
            because: crate::analysis::bisect::LeftBecause::Budget,
            ratio: None,
        },
        UnexploredJson {
            from: "3".repeat(40),
            to: "4".repeat(40),
            commits: 7,
            differs: false,
            share: None,
            because: crate::analysis::bisect::LeftBecause::Budget,
            ratio: None,
        },
        UnexploredJson {
            from: "5".repeat(40),
            to: "6".repeat(40),
            commits: 12,
            differs: false,
            share: None,
            because: crate::analysis::bisect::LeftBecause::Undecided,
            ratio: Some(crate::analysis::stats::RatioCi {
                ratio: 1.04,
                lo: 0.92,
                hi: 1.17,
            }),
        },
    ];
    r.continue_with = Some(r.reproduce.clone());
    insta::assert_snapshot!("bisect_budget_text", Text.export(&r).unwrap());
    insta::assert_snapshot!("bisect_budget_markdown", Markdown.export(&r).unwrap());
    let html = Html.export(&r).unwrap();
    assert!(
        html.contains("faster, against the range&#39;s direction"),
        "{html}"
    );
    assert!(html.contains("left unexplored (the time budget was spent)"));
    // JSON Lines: the result is one "done" event on one line, and reads back
    let line = Jsonl.export(&r).unwrap();
    assert_eq!(line.matches('\n').count(), 1);
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["event"], "done");
    let back: BisectReport = serde_json::from_value(v["data"].clone()).unwrap();
    assert_eq!(back.unexplored.len(), 3);
    assert_eq!(back.unexplored[2].ratio, r.unexplored[2].ratio);
    assert!(html.contains("left unexplored (its ends were undecided at --max-samples)"));
    assert_eq!(back.continue_with, r.continue_with);
    // the streamed line of a change point against the direction says so
    let c = &r.changes[1];
    let l = super::bisect::confirmed_line(c, "after 5 s");
    assert!(
        l.starts_with("change point confirmed: ")
            && l.contains("faster, against the range's direction (-8% of its change)"),
        "{l}"
    );
    let e = Jsonl::event("confirmed", c).unwrap();
    assert!(e.starts_with('{') && e.ends_with("}\n") && !e.trim_end().contains('\n'));
}

/// A bisect at 1, 8 and 32 threads: the change affects 8 and 32 threads only; each renderer shows
/// the effect per thread count.
#[test]
fn bisect_per_thread_count() {
    let mut r = bisect_report();
    r.thread_counts = vec![1, 8, 32];
    r.threads = 8;
    let flat = comparison(&OLD, &OLD);
    let c = r.changes[0].comparison;
    r.ends_per_threads = vec![
        ThreadEffect::new(1, &flat),
        ThreadEffect::new(8, &c),
        ThreadEffect::new(32, &c),
    ];
    r.changes[0].per_threads = r.ends_per_threads.clone();
    for st in &mut r.steps {
        st.per_threads = [1, 8, 32]
            .iter()
            .map(|&t| ThreadPoint {
                threads: t,
                mean_us: st.mean_us,
                ci95_us: st.ci95_us,
            })
            .collect();
    }
    r.tests = 132;
    insta::assert_snapshot!("bisect_threads_text", Text.export(&r).unwrap());
    insta::assert_snapshot!("bisect_threads_markdown", Markdown.export(&r).unwrap());
    let html = Html.export(&r).unwrap();
    assert!(html.contains("at 1,8,32 thread(s)"), "{html}");
    assert!(
        html.contains("threads affected: 8, 32; not affected: 1"),
        "{html}"
    );
    assert!(html.contains("Change points per thread count"));
    let back: BisectReport = serde_json::from_str(&Json.export(&r).unwrap()).unwrap();
    assert_eq!(back.thread_counts, vec![1, 8, 32]);
    let affected: Vec<bool> = back.changes[0]
        .per_threads
        .iter()
        .map(|e| e.affected)
        .collect();
    assert_eq!(affected, [false, true, true]);
    assert_eq!(back.steps[0].per_threads.len(), 3);
    // Every figure says its thread count: the ends and the change point at the primary count,
    // one plot per count, each titled with its own (at 07d6d4e one plot, titled "1 thread(s)"
    // over the 8-thread figures).
    let answer = Text.export(&r).unwrap();
    assert!(answer.contains("  at t=8,32  "), "{answer}");
    assert!(
        answer.contains(" at 1,8,32 threads (figures at 8), "),
        "{answer}"
    );
    let text = full_text(&r);
    assert!(text.contains("\nends at 8 thread(s): "), "{text}");
    assert!(text.contains("  parent at 8 thread(s) "), "{text}");
    let svgs = r.profile_svgs().unwrap();
    let counts: Vec<usize> = svgs.iter().map(|(t, _)| *t).collect();
    assert_eq!(counts, [1, 8, 32]);
    for (t, svg) in &svgs {
        assert!(svg.contains(&format!(" at {t} thread(s): ")), "{t}");
    }
    let d = tempfile::tempdir().unwrap();
    let files: Vec<String> = (r.write_plots(d.path()).unwrap().iter())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 3, "{files:?}");
    assert!(files.iter().any(|f| f.ends_with("-t32.svg")), "{files:?}");
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
    insta::assert_snapshot!("run_json", Json.export(&r).unwrap());
}

/// `log` and `cache ls` with an entry each (the CLI's goldens list an empty cache).
#[test]
fn list_renderers() {
    let saved = |id: &str, state, result| SavedBisect {
        id: id.into(),
        state,
        command: format!("perfbisect bisect --tool randbytes v1..v2 # {id}"),
        updated: 1_764_680_000,
        result,
    };
    let log = BisectLog {
        bisects: vec![
            saved("b2", RunState::Interrupted, None),
            saved("b1", RunState::Finished, Some(sparse_bisect())),
        ],
    };
    insta::assert_snapshot!("log_json", Json.export(&log).unwrap());
    let meta: crate::build::builds::BuildMeta = serde_json::from_value(serde_json::json!({
        "commit": "0123456789abcdef0123456789abcdef01234567",
        "summary": "Refactor the decoder",
        "recipe": "default",
        "fingerprint": "f00d",
        "version": "3.2.0-dev",
        "ok": true,
        "created": 1_764_680_000,
        "duration_s": 21.5,
        "ccache_hit_rate": 0.97,
        "incremental": {"from": "fedcba9876", "written": 3, "removed": 0, "configured": false},
        "binaries": {"lib/libcrypto.so.3": "ab12"},
        "checked": 2
    }))
    .unwrap();
    let builds = BuildList {
        builds: vec![meta],
        on_disk: vec![OnDisk {
            bytes: 3 << 20,
            age_s: 7300,
        }],
    };
    insta::assert_snapshot!("cache_json", Json.export(&builds).unwrap());
    insta::assert_snapshot!("cache_text", Text.export(&builds).unwrap());
    insta::assert_snapshot!("log_text", Text.export(&log).unwrap());
}

#[test]
fn simulate_renderers() {
    let r = simulated();
    insta::assert_snapshot!("simulate_text", Text.export(&r).unwrap());
    insta::assert_snapshot!("simulate_json", Json.export(&r).unwrap());
    let r = simulated_fitted();
    insta::assert_snapshot!("simulate_fitted_text", Text.export(&r).unwrap());
    insta::assert_snapshot!("simulate_fitted_json", Json.export(&r).unwrap());
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

/// The profile names the ends and every change point, marks untested
/// stretches and skipped commits, and picks its y scale from the spread.
/// `PERFBISECT_PLOT_DIR=DIR` keeps the SVGs to look at.
#[test]
fn bisect_profile_svg() {
    let keep = std::env::var_os("PERFBISECT_PLOT_DIR");
    for (name, r) in [
        ("release", release_history_bisect()),
        ("sparse", sparse_bisect()),
    ] {
        let svg = r.profile_svg().unwrap();
        if let Some(dir) = &keep {
            std::fs::write(std::path::Path::new(dir).join(format!("{name}.svg")), &svg).unwrap();
        }
        assert!(svg.starts_with("<svg"), "{name}");
        assert!(svg.contains(&format!("old end {}", r.good.short)), "{name}");
        assert!(svg.contains(&format!("new end {}", r.bad.short)), "{name}");
        for c in &r.changes {
            assert!(svg.contains(&c.info.short), "{name}: {}", c.info.short);
        }
        // The spread of the means decides the scale: 376 → 20 µs is read in ratios.
        assert_eq!(svg.contains("(log scale)"), name == "release", "{name}");
    }
    let sparse = sparse_bisect().profile_svg().unwrap();
    assert!(
        sparse.contains("48 untested"),
        "the stretch between 0 and 49"
    );
    assert!(sparse.contains("skipped (not measurable)"));
    assert!(
        sparse.contains("&lt;every&gt; time &amp;"),
        "text is escaped"
    );
}

/// A skipped commit's missing mean (JSON null) and a result written before
/// positions were recorded both read back, and still give a profile.
#[test]
fn bisect_json_reads_back_skips_and_older_results() {
    let json = Json.export(&sparse_bisect()).unwrap();
    let back: BisectReport = serde_json::from_str(&json).unwrap();
    assert!(back.steps.iter().any(|s| s.mean_us.is_nan()));
    assert_eq!(back.tested().1, 200);

    let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
    old.as_object_mut().unwrap().remove("commits");
    for s in old["steps"].as_array_mut().unwrap() {
        s.as_object_mut().unwrap().remove("index");
    }
    let old: BisectReport = serde_json::from_value(old).unwrap();
    let (tested, n) = old.tested();
    assert_eq!(n, tested.len(), "one position per tested commit");
    assert_eq!(
        tested[0].1.info.commit, old.good.commit,
        "by date, oldest first"
    );
    old.profile_svg().unwrap();
}

#[test]
fn html_renderers() {
    let links = Links::new(Some("https://github.com/openssl/openssl/commit/{sha}")).unwrap();
    insta::assert_snapshot!(
        "bisect_html",
        Html.export_linked(&bisect_report(), &links).unwrap()
    );
    insta::assert_snapshot!(
        "compare_html",
        Html.export_linked(&compare_report(), &links).unwrap()
    );
    insta::assert_snapshot!(
        "gate_html",
        Html.export_linked(&gate_report(), &links).unwrap()
    );
    insta::assert_snapshot!(
        "matrix_html",
        Html.export_linked(&matrix_report(), &links).unwrap()
    );
    // Without a template: no links, nothing else changes.
    let plain = Html.export(&compare_report()).unwrap();
    assert!(!plain.contains("<a href"));
    // Text from the results is escaped everywhere on the page.
    let sparse = Html.export(&sparse_bisect()).unwrap();
    assert!(sparse.contains("look up &lt;every&gt; time &amp; &quot;cache&quot;"));
    assert!(!sparse.contains("<every>"));
}

#[test]
fn commit_links_in_markdown_and_text() {
    let links = Links::new(Some("https://example.org/{sha}")).unwrap();
    let r = bisect_report();
    let url = format!("https://example.org/{}", r.changes[0].info.commit);
    let md = Markdown.export_linked(&r, &links).unwrap();
    assert!(
        md.contains(&format!("[`{}`]({url})", &r.changes[0].info.commit[..10])),
        "{md}"
    );
    let text = Text.export_linked(&r, &links).unwrap();
    assert!(text.contains(&format!(" <{url}>\n")), "{text}");
    let details = r.details_text(&links);
    assert!(
        details.contains(&format!("culprit {} <{url}>", r.changes[0].info.commit)),
        "{details}"
    );
    let c = Markdown.export_linked(&compare_report(), &links).unwrap();
    assert!(c.contains("https://example.org/bbbb"), "{c}");
}

/// The results `tests/report_html.rs` renders are these fixtures' JSON;
/// `PERFBISECT_UPDATE_FIXTURES=1` rewrites them after a change here.
#[test]
fn report_fixtures_are_current() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report");
    let files = [
        (
            "bisect.json",
            Json.export(&release_history_bisect()).unwrap(),
        ),
        ("bisect-sparse.json", Json.export(&sparse_bisect()).unwrap()),
        ("compare.json", Json.export(&compare_report()).unwrap()),
        ("gate.json", Json.export(&gate_report()).unwrap()),
        ("matrix.json", Json.export(&matrix_report()).unwrap()),
        ("scan.json", Json.export(&scan_report()).unwrap()),
    ];
    for (name, json) in files {
        let path = dir.join(name);
        if std::env::var_os("PERFBISECT_UPDATE_FIXTURES").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &json).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == json,
            "{} is out of date: PERFBISECT_UPDATE_FIXTURES=1 cargo test --lib report_fixtures",
            path.display()
        );
    }
}

/// With `--metric instructions` every format names the unit (and never µs).
#[test]
fn instruction_reports_say_their_unit() {
    let m = Metric::Instructions;
    let mut b = bisect_report();
    b.metric = m;
    for out in [
        Text.export(&b).unwrap(),
        Markdown.export(&b).unwrap(),
        Html.export(&b).unwrap(),
    ] {
        assert!(out.contains("instr"), "{out}");
        assert!(!out.contains("µs/op") && !out.contains("us/op"), "{out}");
    }
    assert!(Json
        .export(&b)
        .unwrap()
        .contains("\"metric\": \"instructions\""));
    assert!(b
        .profile_svg()
        .unwrap()
        .contains("instructions per operation"));
    let mut c = compare_report();
    c.metric = m;
    assert!(Text.export(&c).unwrap().contains("instr/op"));
    assert!(Markdown.export(&c).unwrap().contains("instructions/op"));
    let mut g = gate_report();
    g.metric = m;
    assert!(Text.export(&g).unwrap().contains("base instr/op"));
    let mut x = matrix_report();
    x.metric = m;
    let md = Markdown.export(&x).unwrap();
    assert!(
        md.contains("instructions/op") && !md.contains("µs/op"),
        "{md}"
    );
    let mut r = run_report();
    r.metric = m;
    assert!(Text.export(&r).unwrap().contains("mean instr/op"));
}

/// A scan of a simulated 200-commit range (seeded iid noise): +30% at 40, +15% at 120 partly
/// undone by -8% at 160, a grid of 9.
fn scan_report() -> super::scan::ScanReport {
    use crate::analysis::scan;
    use crate::analysis::simulate::SimMeasurer;
    use crate::build::repo::CommitInfo;
    let commits: Vec<CommitInfo> = (0..200)
        .map(|i| {
            let h = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let id = format!("{h:016x}{:024x}", i);
            CommitInfo {
                short: id[..10].to_string(),
                id,
                summary: format!("change {i}"),
                author: "A. Developer".into(),
                date: format!("2024-{:02}-{:02}", 1 + i / 28, 1 + i % 28),
                author_date: None,
                patches: Vec::new(),
                oid: git2::Oid::zero(),
            }
        })
        .collect();
    let steps = [(40, 1.30), (120, 1.15), (160, 0.92)];
    let mut m = SimMeasurer::new(200, &steps, &NoiseModel::iid(0.03), 0.0, 7).unwrap();
    let grid = scan::grid_positions(200, 9);
    let r = scan::scan(&grid, &Config::default(), &mut m).unwrap();
    super::scan::ScanReport::new(
        &r,
        super::scan::ScanContext {
            placement: Default::default(),
            tool: "pkeyread:format=pem,key=ec".into(),
            threads: 1,
            range: "v1..v2".into(),
            repo: "/src/openssl".into(),
            recipe: "default".into(),
            good: &commits[0],
            bad: &commits[199],
            merge_base: None,
            commits: &commits,
            grid_size: 9,
            max_move: 6,
            moved: vec![0; 9],
            grid_builds_cached: 0,
            builds: vec![],
            samples: r.samples_taken,
            samples_taken_now: r.samples_taken - 20,
            alpha: 0.01,
            routing: crate::analysis::alpha::DEFAULT_ROUTING,
            min_effect: 0.03,
            notes: vec![],
            wall_s: 1234.0,
            reproduce: "perfbisect scan --tool 'pkeyread:key=ec,format=pem' --grid 9 v1..v2".into(),
            metric: Metric::Time,
            located: None,
        },
    )
}

#[test]
fn scan_renderers() {
    let r = scan_report();
    // the fixture's story holds: three confirmed changes, the -8% partly undoing the +15%
    assert_eq!(r.by_share.len(), 3, "{:?}", r.changes);
    assert_eq!(r.cancels.len(), 1);
    assert!(
        r.cancels[0].text.contains("partly undone"),
        "{:?}",
        r.cancels
    );
    insta::assert_snapshot!("scan_text", Text.export(&r).unwrap());
    insta::assert_snapshot!("scan_details_text", scan_full_text(&r));
    insta::assert_snapshot!("scan_markdown", Markdown.export(&r).unwrap());
    let links = Links::new(Some("https://github.com/openssl/openssl/commit/{sha}")).unwrap();
    let page = Html.export_linked(&r, &links).unwrap();
    // The figure is checked by scan_profile_svg; the snapshot pins the rest of the page.
    let start = page.find("<svg").unwrap();
    let end = page.find("</svg>").unwrap() + "</svg>".len();
    insta::assert_snapshot!(
        "scan_html",
        format!("{}<svg …/>{}", &page[..start], &page[end..])
    );
}

/// A scan located by count: the grid and its levels in counts, the change points' figures in
/// time, and the search line, in every format.
#[test]
fn scan_located_by_count() {
    use super::bisect::LocatedJson;
    use crate::analysis::locate::SearchedBy;
    let mut r = scan_report();
    let ends = r.changes[0].point.comparison;
    r.located = Some(LocatedJson {
        metric: Metric::Instructions,
        searched_by: SearchedBy::Count,
        ends,
        resolution: None,
        samples: 96,
        unexplained: None,
        time_search: None,
    });
    let text = scan_full_text(&r);
    assert!(text.contains("search: located by instructions ("), "{text}");
    assert!(
        text.contains(" instr [") && !text.contains(" us ["),
        "{text}"
    );
    let md = Markdown.export(&r).unwrap();
    assert!(md.contains("| instructions/op | 95% interval |"), "{md}");
    assert!(md.contains("Search: located by instructions"), "{md}");
    let html = Html.export(&r).unwrap();
    assert!(
        html.contains("mean instructions/op") && html.contains("parent µs/op"),
        "grid in counts, change points in time: {html}"
    );
    let back: super::scan::ScanReport = serde_json::from_str(&Json.export(&r).unwrap()).unwrap();
    assert_eq!(back.grid_metric(), Metric::Instructions);
    assert_eq!(back.metric, Metric::Time);
    // Searched in time because the counts did not move: the grid is the clock's.
    r.located.as_mut().unwrap().searched_by = SearchedBy::Clock;
    assert_eq!(r.grid_metric(), Metric::Time);
    assert!(Text.export(&r).unwrap().contains("the counts did not move"));
}

/// What a located scan's searches in time left is said in every format and kept in the JSON.
#[test]
fn a_scans_parts_left_by_the_search_in_time_are_listed() {
    let mut r = scan_report();
    r.left = vec![UnexploredJson {
        from: "1111111111aaaa".into(),
        to: "2222222222bbbb".into(),
        commits: 40,
        differs: false,
        share: None,
        because: crate::analysis::bisect::LeftBecause::Undecided,
        ratio: Some(stats::RatioCi {
            ratio: 0.99,
            lo: 0.9,
            hi: 1.12,
        }),
    }];
    let line = "1111111111..2222222222 (40 commit(s) between; its ends undecided at the cap: -1.0% [-10.0%, +12.0%]: a net change of up to 12% may hide here";
    let heading = "left unexplored by the search in time between the located change points";
    for out in [
        scan_full_text(&r),
        Markdown.export(&r).unwrap(),
        Html.export(&r).unwrap(),
    ] {
        assert!(out.contains(heading) && out.contains(line), "{out}");
    }
    let answer = Text.export(&r).unwrap();
    assert!(
        answer.contains("; 1111111111..2222222222 (undecided, up to 12%)\n"),
        "{answer}"
    );
    let back: super::scan::ScanReport = serde_json::from_str(&Json.export(&r).unwrap()).unwrap();
    assert_eq!(back.left.len(), 1);
}

#[test]
fn scan_profile_svg() {
    let r = scan_report();
    let svg = r.profile_svg().unwrap();
    if let Some(dir) = std::env::var_os("PERFBISECT_PLOT_DIR") {
        std::fs::write(std::path::Path::new(&dir).join("scan.svg"), &svg).unwrap();
    }
    assert!(svg.starts_with("<svg"));
    assert!(svg.contains(&format!("old end {}", r.good.short)));
    assert!(svg.contains(&format!("new end {}", r.bad.short)));
    for &i in &r.by_share {
        let c = &r.changes[i].point;
        assert!(svg.contains(&c.info.short), "{}", c.info.short);
    }
    assert!(svg.contains("grid point") && svg.contains("fitted level"));
    // Points the searches tested beside the grid's are drawn with their verdicts.
    let probes = r
        .intervals
        .iter()
        .flat_map(|iv| &iv.steps)
        .filter(|s| !r.grid.iter().any(|g| g.info.commit == s.info.commit))
        .map(|s| s.info.commit.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    assert!(probes > 0);
    // Every commit is coloured by the level it sits on, not by the verdict of the sub-search
    // that tested it: the old end's level before the first change point, the new end's after
    // the last.
    assert!(
        svg.contains("the level a commit sits on, oldest first"),
        "{svg}"
    );
    assert!(!svg.contains("like the old end"));
    let profile = r.profile();
    let cps = r.change_points().count();
    assert!(cps > 1);
    assert_eq!(profile.level_of(0), 0);
    assert_eq!(profile.level_of(r.commits - 1), cps);
    for c in r.change_points() {
        assert_eq!(profile.level_of(c.index) - profile.level_of(c.index - 1), 1);
    }
    // One fitted level per segment, drawn as a band.
    assert_eq!(profile.levels.len(), r.segments.len());
    assert_eq!(profile.points.len(), r.grid.len() + probes);
}

/// Results written before change points had one key and reasons were typed still read and
/// render as they did: `culprits` for `changes`, a reason's text for its typed form.
#[test]
fn results_written_before_typed_reasons_still_read() {
    let r = release_history_bisect();
    let mut v = serde_json::to_value(&r).unwrap();
    let o = v.as_object_mut().unwrap();
    let changes = o.remove("changes").unwrap();
    o.insert("culprits".into(), changes);
    let back: BisectReport = serde_json::from_value(v).unwrap();
    assert_eq!(back.changes.len(), r.changes.len());
    assert_eq!(Text.export(&back).unwrap(), Text.export(&r).unwrap());

    let m = matrix_report();
    let mut v = serde_json::to_value(&m).unwrap();
    let mut texts = 0;
    for c in v["cells"].as_array_mut().unwrap() {
        if let Some(why) = c.get_mut("not_applicable") {
            *why = serde_json::json!("not applicable: demo");
            texts += 1;
        }
    }
    assert_eq!(texts, 1);
    let back: MatrixReport = serde_json::from_value(v).unwrap();
    assert_eq!(Csv.export(&back).unwrap(), Csv.export(&m).unwrap());
    assert_eq!(Text.export(&back).unwrap(), Text.export(&m).unwrap());
}

/// A change point the tail check made (`--tail`): every format says it is a change in the tail
/// and how many processes were slow on each side, beside the trimmed ratio that did not move.
#[test]
fn a_change_in_the_tail_is_said_as_one() {
    let mut r = bisect_report();
    let c = &mut r.changes[0].comparison;
    c.by_tail = true;
    c.tail = Some(stats::TailCounts {
        slow: (1, 48),
        of: (640, 640),
        paired: false,
        p: 3e-9,
    });
    let said = "a change in the tail: slow processes above the pooled threshold: 7.5% of the new side's against 0.2% of the old's";
    let text = Text.export(&r).unwrap();
    assert!(text.contains("] in the tail  "), "{text}");
    for out in [Ok(full_text(&r)), Markdown.export(&r), Html.export(&r)] {
        let out = out.unwrap().replace("&#39;", "'");
        assert!(out.contains(said), "{out}");
    }
    r.ends.tail = r.changes[0].comparison.tail;
    r.ends.by_tail = true;
    let text = full_text(&r);
    assert!(text.contains("[a change in the tail]"), "{text}");
    assert_eq!(
        text.matches(said).count(),
        2,
        "the ends and the change point: {text}"
    );
    let back: BisectReport = serde_json::from_str(&Json.export(&r).unwrap()).unwrap();
    assert_eq!(
        back.changes[0].comparison.tail,
        r.changes[0].comparison.tail
    );
}

/// A bisect's text as `-v` prints it: the answer, then the details.
fn full_text(r: &BisectReport) -> String {
    format!(
        "{}\ndetails:\n{}",
        Text.export(r).unwrap(),
        r.details_text(&Links::default())
    )
}

/// A scan's text as `-v` prints it: the answer, then the details.
fn scan_full_text(r: &super::scan::ScanReport) -> String {
    format!(
        "{}\ndetails:\n{}",
        Text.export(r).unwrap(),
        r.details_text(&Links::default())
    )
}

/// What a stopped search reports: the change points its sink saw confirmed (a located point
/// not upheld is not one), in every format.
#[test]
fn a_stopped_search_reports_the_change_points_it_had_confirmed() {
    use super::events::{Event, Lines, LinesTo, Sink, Spent};
    use super::interrupted::{InterruptedFormat, InterruptedReport, INTERRUPTED_KIND};
    let r = bisect_report();
    let sink = Lines::new(LinesTo::Stderr);
    let spent = Spent {
        seconds: 1.0,
        builds: 2,
        samples_taken: 20,
    };
    let mut refuted = r.changes[0].clone();
    refuted.confirmed = false;
    for point in [&r.changes[0], &refuted] {
        sink.send(Event::Confirmed { point, spent });
    }
    let mut stopped = InterruptedReport::new("bisect", &r.tool, &r.range, sink.confirmed_so_far());
    stopped.resume = r.reproduce.clone();
    assert_eq!(stopped.changes.len(), 1);
    insta::assert_snapshot!(
        "interrupted_text",
        InterruptedFormat::Text.render(&stopped).unwrap()
    );
    insta::assert_snapshot!(
        "interrupted_markdown",
        InterruptedFormat::Markdown.render(&stopped).unwrap()
    );
    let json = InterruptedFormat::Json.render(&stopped).unwrap();
    let back: InterruptedReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back.kind, INTERRUPTED_KIND);
    assert_eq!(back.changes[0].info.commit, r.changes[0].info.commit);
    let html = InterruptedFormat::Html.render(&stopped).unwrap();
    assert!(html.contains(&r.changes[0].info.short), "{html}");
}
