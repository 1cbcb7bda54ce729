use git2::Oid;

use super::missing::{git_message, parse_batch};
use super::*;

#[test]
fn ranges_split() {
    assert_eq!(
        split_range("openssl-3.0.0..openssl-3.2.1").unwrap(),
        ("openssl-3.0.0".into(), "openssl-3.2.1".into())
    );
    assert!(split_range("a").is_err());
    assert!(split_range("..b").is_err());
    assert!(split_range("a...b").is_err());
}

#[test]
fn cat_file_batch_output() {
    let a = "0123456789012345678901234567890123456789";
    let b = "89abcdef0123456789abcdef0123456789abcdef";
    let out = format!("{a} blob 4\nab\nc\n{b} missing\n{b} tree 2\nxy\n");
    let got = parse_batch(out.as_bytes()).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[&Oid::from_str(a).unwrap()], b"ab\nc".to_vec());
    assert!(parse_batch(format!("{a} blob 9\nab\n").as_bytes()).is_err());
}

#[test]
fn git_messages() {
    let e = b"fatal: 'x' does not appear to be a git repository\nfatal: Could not read\n\nPlease make sure\nand the repository exists.\n";
    assert_eq!(
        git_message(e),
        "fatal: 'x' does not appear to be a git repository"
    );
    assert_eq!(git_message(b"warning: a\nlast\n\n"), "last");
    assert_eq!(git_message(b""), "no message");
}
