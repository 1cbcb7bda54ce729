use super::*;

fn sample(caps: Option<&str>) -> Sample {
    Sample {
        us_per_op: 1.0,
        ops_per_thread: vec![1],
        wall_s: 1.0,
        cpu_s: 1.0,
        threads: 1,
        libcrypto_path: "/x/lib/libcrypto.so.3".into(),
        openssl_version: "OpenSSL 3.0.0".into(),
        counters: Default::default(),
        mb_per_s: None,
        instructions: None,
        host: None,
        round: None,
        session: None,
        cpu_caps: caps.map(str::to_string),
    }
}

#[test]
fn samples_of_two_code_paths_are_never_one_session() {
    let d = tempfile::tempdir().unwrap();
    let cache = Cache::open(&crate::cache::Location::at(d.path())).unwrap();
    let timing = Timing {
        duration: 1.0,
        timeout: None,
        retries: 0,
        metric: Metric::Instructions,
    };
    let mut s = Session::new(&cache, timing, Reuse::Nothing);
    // Samples stored before capabilities were recorded say nothing, and pass.
    assert!(s.same_code_path(&sample(None)).is_ok());
    assert!(s.same_code_path(&sample(Some("cpu flags aaaa"))).is_ok());
    assert!(s.same_code_path(&sample(Some("cpu flags aaaa"))).is_ok());
    let why = s
        .same_code_path(&sample(Some("cpu flags bbbb")))
        .unwrap_err();
    assert!(
        why.contains("cpu flags bbbb") && why.contains("cpu flags aaaa"),
        "{why}"
    );
    assert_eq!(s.placement().cpu_caps.as_deref(), Some("cpu flags aaaa"));
}
