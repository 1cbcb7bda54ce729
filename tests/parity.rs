//! `perfbisect parity` against the system OpenSSL, with a stand-in for the perftools checkout
//! (tests/fixtures/fake-perftools: perftools' layout, command line and terse output; the real
//! perftools is not reachable from CI). The kernel side is real: samples of the real newrawkey.

use crate::common;
use common::*;
use perfbisect::measure::metric::Metric;
use perfbisect::report::parity::{ParityReport, RowNotApplicable};
use std::path::PathBuf;

fn fake_perftools() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-perftools")
}

#[test]
fn parity_interleaves_perftools_runs_with_kernel_samples() {
    let d = tempfile::tempdir().unwrap();
    let o = perfbisect(d.path())
        .args(["parity", "--perftools"])
        .arg(fake_perftools())
        .args(["--tool", "newrawkey", "--threads", "1", "--rounds", "3"])
        .args(["--duration", "0.2", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "parity failed: {}", stderr(&o));
    let v: ParityReport = typed(&o);
    assert_eq!(v.rounds, 3);
    let rows = &v.rows;
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.spec, "newrawkey");
    assert_eq!(row.threads, 1);
    // The stand-in prints 2.5 µs on OpenSSL 3 (the system's): each round ran it once, in the
    // environment parity promises (it fails otherwise).
    assert_eq!(row.perftools_us, [2.5, 2.5, 2.5]);
    let pb = &row.perfbisect_us;
    assert_eq!(pb.len(), 3);
    assert!(pb.iter().all(|x| *x > 0.0));
    // The build is cached outside the checkout, which stays untouched.
    assert!(d.path().join("perftools").is_dir());
    assert!(!fake_perftools().join("source/config.h").exists());
}

#[test]
fn parity_counts_instructions_on_both_sides() {
    let d = tempfile::tempdir().unwrap();
    let o = perfbisect(d.path())
        .args(["parity", "--perftools"])
        .arg(fake_perftools())
        .args([
            "--tool",
            "newrawkey",
            "--metric",
            "instructions",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "parity failed: {}", stderr(&o));
    let v: ParityReport = typed(&o);
    assert_eq!(v.metric, Metric::Instructions);
    // Instruction counts need no more than two rounds, and one thread.
    assert_eq!(v.rounds, 2);
    let rows = &v.rows;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].threads, 1);
    // The stand-in's thread_run makes 2,000,000 calls of a few instructions each: counted
    // under callgrind and divided by the calls its figure implies.
    let pt = &rows[0].perftools_us;
    assert_eq!(pt.len(), 2);
    assert!(pt.iter().all(|x| (2.0..100.0).contains(x)), "{pt:?}");
    assert!((pt[0] / pt[1] - 1.0).abs() < 0.01, "{pt:?}");
    // The real kernel: an X25519 import is thousands of instructions.
    let pb = &rows[0].perfbisect_us;
    assert_eq!(pb.len(), 2);
    assert!(pb.iter().all(|x| *x > 1000.0), "{pb:?}");
    let o = perfbisect(d.path())
        .args(["parity", "--perftools"])
        .arg(fake_perftools())
        .args([
            "--tool",
            "newrawkey",
            "--metric",
            "instructions",
            "--threads",
            "2",
        ])
        .output()
        .unwrap();
    assert_usage_error(&o, "--threads 1");
}

#[test]
fn parity_refuses_what_it_cannot_compare() {
    let d = tempfile::tempdir().unwrap();
    let o = perfbisect(d.path())
        .args(["parity", "--perftools"])
        .arg(d.path())
        .args(["--tool", "newrawkey"])
        .output()
        .unwrap();
    assert_usage_error(&o, "is not a perftools checkout");
    let o = perfbisect(d.path())
        .args(["parity", "--perftools"])
        .arg(fake_perftools())
        .args(["--tool", "evp_hash"])
        .output()
        .unwrap();
    assert_usage_error(&o, "has no perftools counterpart");
    let o = perfbisect(d.path())
        .args(["parity", "--perftools"])
        .arg(fake_perftools())
        .args(["--tool", "newrawkey", "--rounds", "1"])
        .output()
        .unwrap();
    assert_usage_error(&o, "--rounds must be at least 2");
}

#[test]
fn parity_marks_a_counterpart_newer_than_the_build_not_applicable() {
    // perftools' newrawkey -a ml-kem-* exists from 3.5; the system's OpenSSL is 3.0, so the row
    // is not applicable and perftools is not run for it.
    let d = tempfile::tempdir().unwrap();
    let o = perfbisect(d.path())
        .args(["parity", "--perftools"])
        .arg(fake_perftools())
        .args(["--tool", "newrawkey:alg=ml-kem-512", "--threads", "1"])
        .args(["--rounds", "2", "--duration", "0.1", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "parity failed: {}", stderr(&o));
    let v: ParityReport = typed(&o);
    let row = &v.rows[0];
    assert_eq!(
        row.not_applicable,
        Some(RowNotApplicable::PerftoolsTooOld {
            program: "newrawkey".into(),
            options: vec!["-a".into(), "ml-kem-512".into()],
            needs: "3.5.0".into(),
        })
    );
    assert!(row.perftools_us.is_empty());
}
