//! What a build records and how it publishes (issue 12): reproducible bytes
//! with one SOURCE_DATE_EPOCH, the hashes of what a kernel loads, and a
//! build tree that is published even when OpenSSL's install fails. Built
//! with the fake OpenSSL of tests/fake-openssl.

mod common;

use common::{fake_openssl_repo, perfbisect, published_builds, stderr, stdout};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

fn build(cache: &Path, repo: &Path, revs: &[&str]) -> Output {
    perfbisect(cache)
        .args(["build", "--jobs", "1", "--repo"])
        .arg(repo)
        .args(revs)
        // The user's value must not reach the build.
        .env("SOURCE_DATE_EPOCH", "123")
        .output()
        .unwrap()
}

fn assert_built(o: &Output) {
    assert!(
        o.status.success(),
        "build failed: {:?}\nstdout: {}\nstderr: {}",
        o.status,
        stdout(o),
        stderr(o)
    );
}

fn entry_of(cache: &Path, commit: &str) -> PathBuf {
    published_builds(cache)
        .into_iter()
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&commit[..12])
        })
        .unwrap_or_else(|| panic!("no build of {commit} in {}", cache.display()))
}

fn meta(entry: &Path) -> Value {
    serde_json::from_slice(&fs::read(entry.join("meta.json")).unwrap()).unwrap()
}

fn sha256(p: &Path) -> String {
    hex::encode(Sha256::digest(fs::read(p).unwrap()))
}

#[test]
fn builds_are_reproducible_and_record_the_hashes_of_what_kernels_load() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    let ids = fake_openssl_repo(
        &repo,
        &[
            ("base", &[("apps.c", "int app_one;\n")]),
            // No library source changes: the same libraries, byte for byte.
            ("apps only", &[("apps.c", "int app_two;\n")]),
            (
                "library change",
                &[("fake_cost.h", "#define FAKE_COST 300\n")],
            ),
        ],
    );
    let cache = d.path().join("cache");
    assert_built(&build(&cache, &repo, &[&ids[0], &ids[1], &ids[2]]));
    let metas: Vec<(PathBuf, Value)> = ids
        .iter()
        .map(|id| {
            let e = entry_of(&cache, id);
            let m = meta(&e);
            (e, m)
        })
        .collect();
    for (entry, m) in &metas {
        let bins = m["binaries"].as_object().unwrap_or_else(|| panic!("{m}"));
        let names: Vec<&String> = bins.keys().collect();
        assert_eq!(names, ["lib/libcrypto.so.3", "lib/libssl.so.3"], "{m}");
        for (name, sha) in bins {
            assert_eq!(
                sha.as_str().unwrap(),
                sha256(&entry.join("prefix").join(name)),
                "{name}"
            );
        }
        let log = fs::read_to_string(entry.join("build.log")).unwrap();
        assert!(
            log.contains("fake-config: SOURCE_DATE_EPOCH=[946684800]"),
            "{log}"
        );
    }
    let bins = |i: usize| metas[i].1["binaries"].clone();
    assert_eq!(bins(0), bins(1), "a commit outside the libraries");
    assert_ne!(
        bins(1)["lib/libcrypto.so.3"],
        bins(2)["lib/libcrypto.so.3"],
        "a library change"
    );
    assert_eq!(bins(1)["lib/libssl.so.3"], bins(2)["lib/libssl.so.3"]);
}
