//! Snapshots pin the CLI's public output where it is deterministic: the
//! command surface (every command's --help), the kernel and recipe lists,
//! a seeded simulation and a seeded plan. The renderers of every result are
//! pinned in src/report/render_tests.rs. Review changes with `cargo insta review` (or
//! `INSTA_UPDATE=always cargo test --test fast golden::` and `git diff`).

use crate::common;
use common::*;

fn check(name: &str, args: &[&str]) {
    let d = tempfile::tempdir().unwrap();
    let o = perfbisect(d.path()).args(args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    insta::assert_snapshot!(name, stdout(&o), &format!("perfbisect {}", args.join(" ")));
}

#[test]
fn help_pins_the_command_surface() {
    check("help", &["--help"]);
    for cmd in [
        "run", "bisect", "scan", "compare", "verify", "explain", "log", "simulate", "plan",
        "matrix", "gate", "parity", "report", "build", "recipes", "cache", "kernels",
    ] {
        check(&format!("{cmd}-help"), &[cmd, "--help"]);
    }
}

/// Help is reference: what an option does and its default. Which commit or which day backed a
/// default is history, kept in git and the docs, never in `--help`.
#[test]
fn help_cites_no_commit_ids_or_dates() {
    let d = tempfile::tempdir().unwrap();
    let top = stdout(&perfbisect(d.path()).arg("--help").output().unwrap());
    let commands: Vec<&str> = (top.lines())
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 17, "{top}");
    for cmd in [&[][..], &["report", "merge"], &["cache", "ls"]]
        .into_iter()
        .map(|c| c.to_vec())
        .chain(commands.iter().map(|c| vec![*c]))
    {
        let o = perfbisect(d.path())
            .args(&cmd)
            .arg("--help")
            .output()
            .unwrap();
        let help = stdout(&o);
        for word in help.split(|c: char| !c.is_ascii_alphanumeric() && c != '-') {
            assert!(
                !commit_like(word) && !date_like(word),
                "{cmd:?} --help cites {word:?}:\n{help}"
            );
        }
    }
    // The checks themselves tell history from reference.
    assert!(commit_like("5c42ced0ff") && date_like("2026-12-07"));
    assert!(!commit_like("sha256") && !commit_like("deadline") && !date_like("1-thread"));
}

/// A word of 7 to 40 hex digits with digits and letters both: an abbreviated commit id.
fn commit_like(w: &str) -> bool {
    (7..=40).contains(&w.len())
        && w.chars().all(|c| c.is_ascii_hexdigit())
        && w.chars().any(|c| c.is_ascii_digit())
        && w.chars().any(|c| c.is_ascii_alphabetic())
}

/// YYYY-MM-DD.
fn date_like(w: &str) -> bool {
    let parts: Vec<&str> = w.split('-').collect();
    parts.len() == 3
        && [4, 2, 2] == [parts[0].len(), parts[1].len(), parts[2].len()]
        && parts.iter().all(|p| p.chars().all(|c| c.is_ascii_digit()))
}

#[test]
fn kernel_and_recipe_lists() {
    check("kernels", &["kernels"]);
    check("kernels-json", &["kernels", "--format", "json"]);
    check("recipes", &["recipes"]);
}

#[test]
fn seeded_simulation_report() {
    check(
        "simulate",
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
        "simulate-json",
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
    check(
        "simulate-realistic",
        &[
            "simulate",
            "--commits",
            "200",
            "--noise-model",
            "realistic",
            "--step",
            "12%/3",
            "--cancelling",
            "8%",
            "--trials",
            "20",
            "--alarm-trials",
            "40",
            "--seed",
            "5",
        ],
    );
}

/// The lists of an empty cache: the envelope of `log` and `cache ls` (their entries are pinned
/// in src/report/render_tests.rs).
#[test]
fn empty_lists_json() {
    check("log-json", &["log", "--format", "json"]);
    check("cache-json", &["cache", "ls", "--format", "json"]);
}

/// Every figure given but the sample's (so its source nests the overhead's default), two
/// fleets, both searches: no build record is read and the seeded simulation is the same each run.
#[test]
fn seeded_plan_json() {
    check(
        "plan-json",
        &[
            "plan",
            "--cold-build",
            "300",
            "--warm-build",
            "60",
            "--near-build",
            "20",
            "--nodes",
            "1,4",
            "--ccache",
            "shared",
            "--trials",
            "8",
            "--seed",
            "2",
            "--format",
            "json",
        ],
    );
}
