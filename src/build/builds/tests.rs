use super::*;

fn export(written: &[&str], removed: &[&str]) -> repo::Export {
    repo::Export {
        written: written.iter().map(|s| s.to_string()).collect(),
        removed: removed.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

#[test]
fn what_an_incremental_build_does() {
    // Sources only: make alone.
    assert_eq!(
        incremental_plan(
            &export(
                &["crypto/evp/p_lib.c", "include/crypto/evp.h", "CHANGES.md"],
                &["crypto/old.c"]
            ),
            None
        ),
        Plan::default()
    );
    for input in [
        "Configure",
        "VERSION.dat",
        "crypto/evp/build.info",
        "Configurations/10-main.conf",
        "util/perl/OpenSSL/Template.pm",
        "include/openssl/opensslv.h",
    ] {
        assert_eq!(
            incremental_plan(&export(&["ssl/s3_lib.c", input], &[]), None),
            Plan {
                reconfigure: Some(input.to_string()),
                ..Plan::default()
            },
            "{input}"
        );
    }
    assert_eq!(
        incremental_plan(&export(&["crypto/perlasm/x86_64-xlate.pl"], &[]), None),
        Plan {
            regenerate_asm: Some("crypto/perlasm/x86_64-xlate.pl".into()),
            ..Plan::default()
        }
    );
    // A removed header is forgotten by make's records, not a reason to build clean.
    assert_eq!(
        incremental_plan(&export(&[], &["include/internal/x.h"]), None),
        Plan::default()
    );
    // A build.info the last configure did not read (test/ under no-tests), changed or
    // removed, is no reason to configure again; a new one, or one it read, is.
    let read: HashSet<String> = ["build.info", "crypto/build.info"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        incremental_plan(
            &export(&["test/build.info", "test/a.c"], &["test/old/build.info"]),
            Some(&read)
        ),
        Plan {
            unread_build_info: Some("test/build.info".into()),
            ..Plan::default()
        }
    );
    let mut new = export(&["test/quic/build.info"], &[]);
    new.added = vec!["test/quic/build.info".into()];
    assert_eq!(
        incremental_plan(&new, Some(&read)).reconfigure.as_deref(),
        Some("test/quic/build.info")
    );
    assert_eq!(
        incremental_plan(&export(&["crypto/build.info"], &[]), Some(&read))
            .reconfigure
            .as_deref(),
        Some("crypto/build.info")
    );
}

/// A work directory on a node is this user's alone: made owner-only; a symbolic link planted at
/// its path is refused and not followed (what it points at stays untouched), as is a directory
/// others may write; one of our own, owner-only, is used as it is.
#[test]
fn a_work_directory_is_private_and_never_a_planted_link() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let d = tempfile::tempdir().unwrap();
    let fresh = d.path().join("nodes/n1/perfbisect-work");
    assert_eq!(private_dir(&fresh).unwrap(), fresh);
    let mode = fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    assert!(private_dir(&fresh).is_ok(), "ours, again");

    let victim = d.path().join("victim");
    fs::create_dir(&victim).unwrap();
    fs::write(victim.join("thesis.tex"), "years of work").unwrap();
    let planted = d.path().join("planted");
    symlink(&victim, &planted).unwrap();
    let e = private_dir(&planted).unwrap_err().to_string();
    assert!(
        e.contains("symbolic link") && e.contains("never followed"),
        "{e}"
    );
    assert_eq!(fs::read_dir(&victim).unwrap().count(), 1);
    assert!(fs::symlink_metadata(&planted)
        .unwrap()
        .file_type()
        .is_symlink());

    let open = d.path().join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
    let e = private_dir(&open).unwrap_err().to_string();
    assert!(e.contains("writable by others"), "{e}");
}

/// A build job runs `make -j` of the cores Slurm granted it, not of every core it can see.
#[test]
fn make_jobs_are_what_slurm_granted() {
    assert_eq!(jobs_of(Some("4"), 64), 4);
    assert_eq!(jobs_of(None, 64), 64);
    assert_eq!(jobs_of(Some("0"), 8), 8);
    assert_eq!(jobs_of(Some("many"), 8), 8);
    assert_eq!(jobs_of(None, 0), 1);
}
