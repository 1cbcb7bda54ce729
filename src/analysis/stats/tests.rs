use super::robust::{logs, outlier_trim, yuen};
use super::*;
use crate::analysis::samples::{self, Samples};

const A: [f64; 6] = [10.1, 10.4, 9.8, 10.0, 10.3, 10.2];
const B: [f64; 5] = [10.9, 11.3, 10.7, 11.6, 11.0];

fn close(x: f64, y: f64, rel: f64) -> bool {
    (x - y).abs() <= rel * y.abs().max(1e-300)
}

#[test]
fn summary_matches_scipy() {
    // np.mean(A), np.std(A, ddof=1),
    // scipy.stats.t.interval(0.95, 5, loc=np.mean(A), scale=scipy.stats.sem(A))
    let s = summarize(&A);
    assert_eq!(s.n, 6);
    assert!(close(s.mean, 10.133333333333333, 1e-12));
    assert!(close(s.sd, 0.21602468994692864, 1e-10));
    assert!(close(s.ci95.0, 9.906629324605547, 1e-8));
    assert!(close(s.ci95.1, 10.36003734206112, 1e-8));
}

#[test]
fn yuen_matches_scipy() {
    // scipy.stats.ttest_ind(np.log(a), np.log(b), equal_var=False, trim=0.2)
    let a = [100.0, 101.0, 99.5, 100.4, 100.9, 99.8, 130.0];
    let b = [120.0, 121.3, 119.4, 120.8, 119.9, 120.5, 104.0];
    let y = yuen(&a, &b, 0.2).unwrap();
    assert!(close(y.t, 43.85484467759016, 1e-9), "{y:?}");
    assert!(close(y.df, 7.922411136448914, 1e-9), "{y:?}");
    assert!(close(y.p, 9.645028489729775e-11, 1e-6), "{y:?}");
    let a = [1.0, 1.1, 0.9, 1.05, 0.97];
    let b = [1.2, 1.1, 1.3, 1.25, 1.15];
    let y = yuen(&a, &b, 0.2).unwrap();
    assert!(close(y.t, 3.7302767295046446, 1e-9), "{y:?}");
    assert!(close(y.df, 3.9917294543959834, 1e-9), "{y:?}");
    assert!(close(y.p, 0.020367126563164802, 1e-6), "{y:?}");
    // an outlier that sinks Welch does not sink Yuen
    let a = [
        100.0, 100.5, 99.6, 100.2, 99.9, 100.3, 99.7, 100.1, 100.4, 99.8,
    ];
    let mut b: Vec<f64> = a.iter().map(|x| x * 1.1).collect();
    b[3] *= 2.0;
    assert!(welch(&a, &b).unwrap().p > 0.01);
    assert!(yuen(&a, &b, 0.2).unwrap().p < 1e-6);
    // nor the robust variant, which trims only that one value and nothing of clean data
    assert!(yuen_robust(&a, &b).unwrap().p < 1e-6);
    let la = logs(&a).unwrap();
    let lb = logs(&b).unwrap();
    assert_eq!((outlier_trim(&la), outlier_trim(&lb)), (0, 1));
    assert_eq!(
        yuen_robust(&a, &a[..9]).unwrap().p,
        yuen(&a, &a[..9], 0.0).unwrap().p
    );
}

/// `xs` taken in consecutive rounds from `first` on.
fn rounds(xs: &[f64], first: u64) -> Samples {
    Samples {
        values: xs.to_vec(),
        rounds: (first..)
            .take(xs.len())
            .map(|round| Some(samples::RoundKey { session: 1, round }))
            .collect(),
    }
}

#[test]
fn paired_rounds_see_through_a_drifting_machine() {
    // a +5% change; the machine drifts by ±10% between rounds, alike for both subjects
    let drift = [1.0, 1.1, 0.9, 1.05, 0.95, 1.08, 0.92, 1.02, 0.97, 1.1];
    let jitter = [
        1.0, 1.004, 0.997, 1.002, 0.999, 1.003, 0.998, 1.001, 0.996, 1.0,
    ];
    let a: Vec<f64> = drift
        .iter()
        .zip(&jitter)
        .map(|(d, j)| 100.0 * d * j)
        .collect();
    let b: Vec<f64> = drift
        .iter()
        .zip(jitter.iter().rev())
        .map(|(d, j)| 105.0 * d * j)
        .collect();
    let unpaired = compare(&a, &b, 0.01, 0.03);
    let paired = compare_rounds(&rounds(&a, 1), &rounds(&b, 1), 0.01, 0.03);
    assert_eq!(unpaired.verdict, Verdict::Undecided);
    assert_eq!(paired.verdict, Verdict::Slower);
    assert_eq!(paired.pairs, 10);
    assert!(
        (paired.ratio.ratio - 1.05).abs() < 0.005,
        "{:?}",
        paired.ratio
    );
    // on the same values without pairing information nothing changes
    let same = compare_rounds(&rounds(&a, 1), &rounds(&a, 1), 0.01, 0.03);
    assert!(same.p_yuen > 0.5);
    assert!(yuen_paired(&a, &b[..9]).is_none());
    // B's samples one round later than A's are no pairs: the drift no longer cancels.
    let shifted = compare_rounds(&rounds(&a, 1), &rounds(&b, 2), 0.01, 0.03);
    assert_eq!(shifted.pairs, 9);
    assert_eq!(shifted.verdict, Verdict::Undecided);
    let none = compare_rounds(&Samples::unpaired(a.clone()), &rounds(&b, 1), 0.01, 0.03);
    assert_eq!((none.pairs, none.verdict), (0, Verdict::Undecided));
}

#[test]
fn size_against_min_effect() {
    let r = |lo, hi| RatioCi {
        ratio: (lo + hi) / 2.0,
        lo,
        hi,
    };
    assert_eq!(Size::of(&r(1.06, 1.2), 0.05), Size::AtLeast);
    assert_eq!(Size::of(&r(0.8, 0.94), 0.05), Size::AtLeast);
    assert_eq!(Size::of(&r(1.01, 1.04), 0.05), Size::Below);
    assert_eq!(Size::of(&r(1.02, 1.08), 0.05), Size::Uncertain);
}

#[test]
fn summary_degenerate() {
    let e = summarize(&[]);
    assert_eq!(e.n, 0);
    assert!(e.mean.is_nan());
    let one = summarize(&[3.0]);
    assert_eq!(
        (one.n, one.mean, one.sd, one.ci95),
        (1, 3.0, 0.0, (3.0, 3.0))
    );
    let nan = summarize(&[f64::NAN, 2.0, 4.0, f64::INFINITY]);
    assert_eq!((nan.n, nan.mean), (2, 3.0));
    let flat = summarize(&[2.0; 4]);
    assert_eq!((flat.sd, flat.ci95), (0.0, (2.0, 2.0)));
}

#[test]
fn quantiles_match_scipy() {
    // scipy.stats.t.ppf(0.975, 5), scipy.stats.t.ppf(0.995, 12.3)
    assert!(close(
        t_quantile(0.95, 5.0).unwrap(),
        2.5705818356363146,
        1e-8
    ));
    assert!(close(
        t_quantile(0.99, 12.3).unwrap(),
        3.0410295709435236,
        1e-8
    ));
    assert!(t_quantile(f64::NAN, 5.0).is_none());
    assert!(t_quantile(0.95, 0.0).is_none());
    assert!(t_quantile(1.0, 5.0).is_none());
}

#[test]
fn welch_matches_scipy() {
    // scipy.stats.ttest_ind(A, B, equal_var=False) -> statistic -5.339332783810285,
    // pvalue 0.0014494331626801256, df 6.3818865157209625 (scipy's t is mean(a)-mean(b))
    let w = welch(&A, &B).unwrap();
    assert!(close(w.t, 5.339332783810285, 1e-10));
    assert!(close(w.df, 6.3818865157209625, 1e-10));
    assert!(close(w.p, 0.0014494331626801256, 1e-6));
    // scipy.stats.ttest_ind([1..8], [2.5, 3.5, .., 10.5], equal_var=False)
    let c = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    let d = [2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5];
    let w = welch(&c, &d).unwrap();
    assert!(close(w.t, 1.5894388284780523, 1e-10));
    assert!(close(w.df, 14.997032640949557, 1e-10));
    assert!(close(w.p, 0.13281662704158104, 1e-6));
}

#[test]
fn welch_degenerate() {
    assert!(welch(&[], &A).is_none());
    assert!(welch(&[1.0], &A).is_none());
    assert!(welch(&[1.0, f64::NAN], &A).is_none());
    assert_eq!(welch(&[2.0; 3], &[2.0; 4]).unwrap().p, 1.0);
    let w = welch(&[2.0; 3], &[3.0; 4]).unwrap();
    assert_eq!(w.p, 0.0);
    assert!(w.t > 0.0);
    // one side constant: still a regular test
    let w = welch(&[2.0; 3], &[3.0, 3.1, 2.9]).unwrap();
    assert!(w.p > 0.0 && w.p < 0.01);
}

#[test]
fn mann_whitney_matches_scipy() {
    // scipy.stats.mannwhitneyu(A, B, alternative='two-sided', method='asymptotic',
    //                          use_continuity=True).pvalue
    assert!(close(
        mann_whitney_p_asymptotic(&A, &B).unwrap(),
        0.00811311726556578,
        1e-9
    ));
    // ... method='exact'
    assert!(close(
        mann_whitney_p(&A, &B).unwrap(),
        0.004329004329004329,
        1e-9
    ));
    let g = [3.1, 1.2, 5.5, 4.4, 2.0, 6.3, 7.7];
    let h = [4.0, 8.1, 6.6, 9.9, 5.0, 7.0];
    // scipy.stats.mannwhitneyu(g, h, alternative='two-sided', method='exact')
    assert!(close(
        mann_whitney_p(&g, &h).unwrap(),
        0.10139860139860139,
        1e-9
    ));
    // ... method='asymptotic'
    assert!(close(
        mann_whitney_p_asymptotic(&g, &h).unwrap(),
        0.10041249398610284,
        1e-9
    ));
    // with ties: scipy.stats.mannwhitneyu(e, f, alternative='two-sided', method='asymptotic',
    //                                     use_continuity=True).pvalue
    let e = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 5.0, 9.0, 9.0];
    let f = [2.0, 3.0, 4.0, 4.0, 5.0, 6.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0];
    assert!(close(
        mann_whitney_p(&e, &f).unwrap(),
        0.06789407672171735,
        1e-9
    ));
    // order of the arguments does not matter for a two-sided test
    assert!(close(
        mann_whitney_p(&f, &e).unwrap(),
        0.06789407672171735,
        1e-9
    ));
}

#[test]
fn mann_whitney_degenerate() {
    assert!(mann_whitney_p(&[], &[1.0]).is_none());
    assert_eq!(mann_whitney_p(&[1.0; 10], &[1.0; 10]), Some(1.0));
    assert_eq!(mann_whitney_p(&[1.0], &[2.0]), Some(1.0));
    assert!(mann_whitney_p(&[f64::NAN], &[1.0]).is_none());
}

#[test]
fn ratio_ci_matches_reference() {
    // delta method computed in numpy: r = mean(B)/mean(A); v = var(A)/(nA mA^2) + var(B)/(nB mB^2);
    // df = Welch-Satterthwaite on those terms; r * exp(-+ scipy.stats.t.ppf(0.975, df) * sqrt(v))
    let r = ratio_ci(&A, &B, 0.95).unwrap();
    assert!(close(r.ratio, 1.0953947368421055, 1e-12));
    assert!(close(r.lo, 1.0527336213093483, 1e-8));
    assert!(close(r.hi, 1.1397846570236927, 1e-8));
    assert_eq!(r.pct(), "+9.5% [+5.3%, +14.0%]");
    let f = RatioCi {
        ratio: 0.9,
        lo: 0.85,
        hi: 0.951,
    };
    assert_eq!(f.pct(), "-10.0% [-15.0%, -4.9%]");
    assert_eq!(RatioCi::unknown().pct(), "? [?, ?]");
}

#[test]
fn ratio_ci_degenerate() {
    assert!(ratio_ci(&A, &B, 1.0).is_none());
    assert!(ratio_ci(&A, &B, f64::NAN).is_none());
    assert!(ratio_ci(&[1.0], &B, 0.95).is_none());
    assert!(ratio_ci(&[-1.0, 1.0], &B, 0.95).is_none());
    let r = ratio_ci(&[2.0; 3], &[3.0; 3], 0.95).unwrap();
    assert_eq!((r.ratio, r.lo, r.hi), (1.5, 1.5, 1.5));
}

#[test]
fn compare_verdicts() {
    let c = compare(&A, &B, 0.01, 0.03);
    assert_eq!(c.verdict, Verdict::Slower);
    let c = compare(&B, &A, 0.01, 0.03);
    assert_eq!(c.verdict, Verdict::Faster);
    // significant but below the minimum effect: not a change, and too wide to call the same
    let x: Vec<f64> = (0..30).map(|i| 100.0 + (i % 5) as f64 * 0.1).collect();
    let y: Vec<f64> = x.iter().map(|v| v * 1.01).collect();
    let c = compare(&x, &y, 0.01, 0.03);
    assert!(c.p_welch < 0.01);
    assert_eq!(c.verdict, Verdict::Same);
    let c = compare(&x, &x, 0.01, 0.03);
    assert_eq!(c.verdict, Verdict::Same);
    assert!(!c.tests_disagree);
    // few noisy samples: cannot tell
    let c = compare(&[1.0, 1.2], &[1.1, 0.9], 0.01, 0.03);
    assert_eq!(c.verdict, Verdict::Undecided);
    // nothing at all
    let c = compare(&[], &[f64::NAN], 0.01, 0.03);
    assert_eq!(c.verdict, Verdict::Undecided);
    assert!(c.p_welch.is_nan());
    let c = compare(&A, &B, 0.0, 0.03);
    assert_eq!(c.verdict, Verdict::Undecided);
    let json = serde_json::to_value(compare(&A, &B, 0.01, 0.03)).unwrap();
    assert_eq!(json["verdict"], "slower");
}

#[test]
fn tests_disagree_only_when_reachable() {
    // 5 vs 5: the rank test's smallest p is 0.008, so at alpha 0.001 it cannot agree.
    let a = [1.0, 1.01, 0.99, 1.0, 1.02];
    let b = [1.2, 1.21, 1.19, 1.2, 1.22];
    let c = compare(&a, &b, 0.001, 0.03);
    assert!(c.p_yuen < 0.001 && c.p_mwu > 0.001);
    assert!(!c.tests_disagree);
    // one wild outlier makes Welch lose significance while ranks still separate
    let a: Vec<f64> = (0..12).map(|i| 1.0 + i as f64 * 0.001).collect();
    let mut b: Vec<f64> = a.iter().map(|v| v + 0.1).collect();
    b[0] = 50.0;
    // Welch loses significance; the trimmed test the verdict uses does not, and agrees with
    // the ranks
    let c = compare(&a, &b, 0.01, 0.03);
    assert!(c.p_mwu < 0.01 && c.p_welch > 0.01 && c.p_yuen < 0.01);
    assert_eq!(c.verdict, Verdict::Slower);
    assert!(!c.tests_disagree);
}

/// Instruction counts: (almost) no spread. The interval collapses onto the ratio, so
/// min-effect alone decides how large a change must be to count, and 3 samples a side
/// are enough (the metric's default schedule).
#[test]
fn zero_variance_verdicts_follow_min_effect() {
    let a = [4_383_218.0; 3];
    let same = compare(&a, &a, 0.001, 0.03);
    assert_eq!(same.verdict, Verdict::Same);
    assert_eq!(same.size, Size::Below);
    assert_eq!((same.ratio.lo, same.ratio.hi), (1.0, 1.0));

    let slower: Vec<f64> = a.iter().map(|x| x * 1.05).collect();
    let c = compare(&a, &slower, 0.001, 0.03);
    assert_eq!(c.verdict, Verdict::Slower);
    assert_eq!(c.size, Size::AtLeast);
    assert!((c.ratio.ratio - 1.05).abs() < 1e-9);

    // A real but small change (1%) is below a 3% min-effect: "same", not "slower".
    let small: Vec<f64> = a.iter().map(|x| x * 1.01).collect();
    let c = compare(&a, &small, 0.001, 0.03);
    assert_eq!(c.verdict, Verdict::Same);
    // ... and above a 0.5% one.
    assert_eq!(compare(&a, &small, 0.001, 0.005).verdict, Verdict::Slower);
    // Paired and unpaired alike (the search compares rounds).
    assert_eq!(
        compare_rounds(&rounds(&a, 1), &rounds(&slower, 1), 0.001, 0.03).verdict,
        Verdict::Slower
    );
    let faster: Vec<f64> = a.iter().map(|x| x * 0.9).collect();
    assert_eq!(
        compare_rounds(&rounds(&a, 1), &rounds(&faster, 1), 0.001, 0.03).verdict,
        Verdict::Faster
    );
}

/// A count that varies by a few instructions in a million (the spread measured on
/// pkeyread under callgrind) still gives an interval far inside ±min-effect at n = 3 and a
/// search's per-step alpha.
#[test]
fn near_zero_variance_decides_with_three_samples() {
    let a = [4_383_218.2, 4_383_384.7, 4_383_301.0];
    let b_same = [4_383_290.0, 4_383_199.5, 4_383_350.1];
    let c = compare(&a, &b_same, 1e-4, 0.03);
    assert_eq!(c.verdict, Verdict::Same);
    assert!(c.ratio.hi - c.ratio.lo < 0.001, "{:?}", c.ratio);
    let b_new: Vec<f64> = b_same.iter().map(|x| x * 1.04).collect();
    let c = compare(&a, &b_new, 1e-4, 0.03);
    assert_eq!(c.verdict, Verdict::Slower);
    assert_eq!(c.size, Size::AtLeast);
}
