//! End to end on the newest release of scripts/openssl-release-history: its
//! crate leaves out files a shared build needs (openssl-src 400.0.2+4.0.3 drops
//! util/mkdef.pl and util/providers.num), which the script restores from
//! another crate. One build with the default recipe, one kernel against it.
//! The history and cache live under target/ (their own, not e2e_release's) and
//! are reused by later runs.

mod common;
use common::*;
use perfbisect::report::run::RunReport;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("e2e-newest");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/openssl-release-history")
}

/// The newest release the script knows: the last one its --help lists.
fn newest_release() -> String {
    let o = std::process::Command::new(script())
        .arg("--help")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let help = stdout(&o);
    let list = help
        .lines()
        .skip_while(|l| !l.ends_with("Available releases:"))
        .nth(1)
        .unwrap_or_else(|| panic!("no release list in: {help}"));
    list.split_whitespace().last().unwrap().to_string()
}

#[test]
#[ignore = "full tier: builds real OpenSSL (scripts/test runs it)"]
fn newest_release_builds_and_runs_a_kernel() {
    let ver = newest_release();
    let tag = format!("openssl-{ver}");
    let h = dir().join(format!("history-{ver}"));
    if !h.join(".git").exists() {
        let tmp = dir().join("history.tmp");
        let _ = std::fs::remove_dir_all(&tmp);
        let o = std::process::Command::new(script())
            .arg(&tmp)
            .args(["--versions", &ver])
            .output()
            .unwrap();
        assert!(o.status.success(), "release history: {}", stderr(&o));
        std::fs::rename(&tmp, &h).unwrap();
    }
    // Whatever the script restored, the commit says where from.
    let msg = git(&h, &["log", "-1", "--format=%B", &tag]);
    if ver == "4.0.3" {
        for f in ["util/mkdef.pl", "util/providers.num"] {
            assert!(
                msg.contains(&format!("{f}: from the openssl-src crate 300.5.3+3.5.4")),
                "{msg}"
            );
        }
    }

    let cache = dir().join("cache");
    let o = perfbisect(&cache)
        .args(["build", "--repo"])
        .arg(&h)
        .arg(&tag)
        .output()
        .unwrap();
    assert_built(&o);

    let o = perfbisect(&cache)
        .args(["run", "--repo"])
        .arg(&h)
        .args(["--rev", &tag, "--tool", "randbytes", "--threads", "1"])
        .args(["--samples", "2", "--duration", "0.1", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: RunReport = typed(&o);
    let r = &v.results[0];
    assert_eq!(r.target, tag, "{v:?}");
    assert_eq!(r.n, 2, "{v:?}");
    for s in &r.samples {
        let version = &s.openssl_version;
        assert!(
            version.starts_with(&format!("OpenSSL {ver} ")),
            "{version}: {s:?}"
        );
        assert!(s.us_per_op > 0.0, "{s:?}");
    }
}
