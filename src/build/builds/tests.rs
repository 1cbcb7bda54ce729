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
