//! Golden files pin the CLI's public output where it is deterministic: the
//! command surface (--help), the kernel and recipe lists, and a seeded
//! simulation. Regenerate with `UPDATE_GOLDEN=1 cargo test --test golden`
//! and review the diff.

mod common;
use common::*;
use std::path::Path;

fn check(name: &str, args: &[&str]) {
    let d = tempfile::tempdir().unwrap();
    let o = perfbisect(d.path()).args(args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let got = stdout(&o);
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} missing: run with UPDATE_GOLDEN=1", path.display()));
    assert_eq!(
        got,
        want,
        "output of {args:?} differs from {}",
        path.display()
    );
}

#[test]
fn help_pins_the_command_surface() {
    check("help.txt", &["--help"]);
    check("bisect-help.txt", &["bisect", "--help"]);
    check("gate-help.txt", &["gate", "--help"]);
}

#[test]
fn kernel_and_recipe_lists() {
    check("kernels.txt", &["kernels"]);
    check("recipes.txt", &["recipes"]);
}

#[test]
fn seeded_simulation_report() {
    check(
        "simulate.txt",
        &[
            "simulate",
            "--commits",
            "300",
            "--step",
            "10%@120",
            "--step",
            "-6%@250",
            "--noise",
            "3%",
            "--trials",
            "50",
            "--seed",
            "7",
        ],
    );
    check(
        "simulate.json",
        &[
            "simulate",
            "--commits",
            "100",
            "--step",
            "8%",
            "--noise",
            "2%",
            "--trials",
            "30",
            "--seed",
            "3",
            "--format",
            "json",
        ],
    );
}
