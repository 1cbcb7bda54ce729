//! The commands as library calls, made from this test's own process: the plans' defaults, and
//! the samples taken by the perfbisect binary that `PERFBISECT_EXE` names (this process is not
//! perfbisect, so it cannot be its own sampling child).

use crate::common::*;
use perfbisect::cache::Location;
use perfbisect::drive::run::{run, RunPlan};
use perfbisect::report::run::RunReport;

/// The library's processes are the perfbisect binary's.
fn use_the_binary() {
    let exe = assert_cmd::cargo::cargo_bin("perfbisect");
    std::env::set_var(perfbisect::measure::runner::EXE_ENV, exe);
}

/// `drive::run` measures the cells the command line does, in the same order, with as many
/// samples each: the library's call and the command are one.
#[test]
fn run_as_a_library_call_measures_what_the_command_does() {
    use_the_binary();
    let d = tempfile::tempdir().unwrap();
    let mut plan = RunPlan::new(&["noop"]);
    plan.threads = vec![1, 2];
    plan.samples = 2;
    plan.timing.duration = 0.02;
    plan.cache = Location::at(d.path());
    let from_library = run(&plan).unwrap();
    let o = perfbisect(d.path())
        .args([
            "run",
            "--tool",
            "noop",
            "--threads",
            "1,2",
            "--samples",
            "2",
        ])
        .args(["--duration", "0.02", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let from_command: RunReport = typed(&o);
    let cells = |r: &RunReport| -> Vec<(String, String, usize, usize)> {
        (r.results.iter())
            .map(|c| (c.target.clone(), c.spec.clone(), c.threads, c.n))
            .collect()
    };
    assert_eq!(cells(&from_library), cells(&from_command));
    assert_eq!(cells(&from_library).len(), 2);
    for c in &from_library.results {
        assert!(c.mean_us.is_some_and(|m| m > 0.0), "{c:?}");
        assert_eq!(c.samples.len(), 2, "{c:?}");
    }
}

/// A `PERFBISECT_EXE` that names no executable is refused before any sample, in one line.
#[test]
fn a_perfbisect_exe_that_is_not_executable_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let o = perfbisect(d.path())
        .env(
            perfbisect::measure::runner::EXE_ENV,
            d.path().join("nothing-here"),
        )
        .args([
            "run",
            "--tool",
            "noop",
            "--samples",
            "1",
            "--duration",
            "0.02",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("PERFBISECT_EXE=") && err.contains("nothing-here"),
        "{err}"
    );
}
