//! `perfbisect run` and `kernels` against the system OpenSSL (libssl-dev),
//! with the real kernels, runner and identity checks; and the bad inputs
//! of those commands.

use crate::common;
use common::*;
use perfbisect::measure::metric::Metric;
use perfbisect::report::run::{RunReport, RunResult};
use perfbisect::unavailable::Unavailable;
use std::path::Path;

fn run_json(cache: &Path, args: &[&str]) -> RunReport {
    let o = perfbisect(cache)
        .arg("run")
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "run {args:?} failed: {}", stderr(&o));
    typed(&o)
}

#[test]
fn binary_links_neither_libssl_nor_libcrypto() {
    let bin = assert_cmd::cargo::cargo_bin("perfbisect");
    let o = std::process::Command::new("ldd")
        .arg(&bin)
        .output()
        .unwrap();
    let text = stdout(&o);
    assert!(o.status.success(), "ldd failed: {}", stderr(&o));
    assert!(text.contains("libc.so"), "unexpected ldd output: {text}");
    assert!(!text.contains("libssl"), "perfbisect links libssl: {text}");
    assert!(
        !text.contains("libcrypto"),
        "perfbisect links libcrypto: {text}"
    );
}

#[test]
fn kernels_json_lists_every_kernel_with_arguments() {
    let d = tempfile::tempdir().unwrap();
    let o = perfbisect(d.path())
        .args(["kernels", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let v: Kernels = typed(&o);
    let names: Vec<&str> = v.kernels.iter().map(|k| k.kernel.name.as_str()).collect();
    for k in [
        "noop",
        "randbytes",
        "pkeyread",
        "evp_setpeer",
        "sslnew",
        "newrawkey",
        "rsasign",
        "handshake",
        "writeread",
        "x509storeissuer",
        "providerdoall",
        "rwlocks",
        "evp_fetch",
        "evp_cipher",
        "evp_hash",
        "ecdsa",
        "ctxload",
        "evp_mac",
        "evp_kdf",
        "evp_rand",
        "evp_pkey",
    ] {
        assert!(names.contains(&k), "kernel {k} missing from {names:?}");
    }
    let listed = |name: &str| {
        (v.kernels.iter())
            .find(|k| k.kernel.name == name)
            .unwrap_or_else(|| panic!("{name} not listed"))
    };
    let pkeyread = listed("pkeyread");
    let key = (pkeyread.kernel.args.iter())
        .find(|a| a.name == "key")
        .unwrap();
    assert_eq!(key.default, "ec");
    // The minimum version is written as a string ("3.0.0"): reading it typed proves it parses.
    assert!(
        pkeyread.kernel.min_version.major >= 1,
        "{:?}",
        pkeyread.kernel.min_version
    );
    // Each kernel names its perftools counterpart ("-" for none).
    assert_eq!(pkeyread.perftools, "pkeyread -k {key} -f {format}");
    assert_eq!(listed("noop").perftools, "-");
}

#[test]
fn every_kernel_gives_a_sample_from_the_system_openssl() {
    let d = tempfile::tempdir().unwrap();
    let o = perfbisect(d.path())
        .args(["kernels", "--format", "json"])
        .output()
        .unwrap();
    let v: Kernels = typed(&o);
    let mut args: Vec<String> = Vec::new();
    for k in &v.kernels {
        args.push("--tool".into());
        args.push(k.kernel.name.clone());
    }
    args.extend(["--threads", "1,2", "--samples", "1", "--duration", "0.05"].map(String::from));
    let argv: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    let j = run_json(d.path(), &argv);
    let results = &j.results;
    assert_eq!(results.len(), v.kernels.len() * 2);
    for r in results {
        let tool = &r.tool;
        assert_eq!(r.n, 1, "{tool}: {r:?}");
        assert!(r.mean_us.unwrap() > 0.0, "{tool}");
        // With one sample the spread is 0, but it is there (not null).
        assert!(r.stddev_us.is_some(), "{tool}");
        let s = &r.samples[0];
        assert!(s.us_per_op > 0.0);
        let lib = &s.libcrypto_path;
        assert!(lib.contains("libcrypto.so"), "{tool}: {lib}");
        assert!(s.openssl_version.starts_with("OpenSSL 3."), "{tool}: {s:?}");
        assert_eq!(s.ops_per_thread.len(), r.threads);
    }
    // rwlocks reports reads and writes separately.
    let rw = (results.iter())
        .find(|r| r.tool == "rwlocks" && r.threads == 2)
        .unwrap();
    let counters = &rw.samples[0].counters;
    assert!(counters["read"].ops > 0, "{rw:?}");
    assert!(counters["write"].ops > 0, "{rw:?}");
    // Throughput kernels also report MB/s.
    let h = results.iter().find(|r| r.tool == "evp_hash").unwrap();
    assert!(h.mb_per_s.unwrap() > 0.0, "{h:?}");
}

#[test]
fn samples_are_interleaved_and_counted_per_cell() {
    let d = tempfile::tempdir().unwrap();
    let j = run_json(
        d.path(),
        &[
            "--tool",
            "pkeyread:key=ec,format=der",
            "--tool",
            "randbytes:size=64",
            "--threads",
            "1,2",
            "--samples",
            "3",
            "--duration",
            "0.05",
        ],
    );
    let r = &j.results;
    assert_eq!(r.len(), 4);
    assert_eq!(r[0].args["format"], "der");
    assert_eq!(r[2].args["size"], "64");
    for x in r {
        assert_eq!(x.n, 3);
        assert_eq!(x.samples.len(), 3);
    }
}

#[test]
fn table_markdown_and_csv_outputs() {
    let d = tempfile::tempdir().unwrap();
    for (fmt, needle) in [
        ("table", "mean us/op"),
        ("markdown", "| ---"),
        ("csv", "tool,threads,n,mean us/op"),
    ] {
        let o = perfbisect(d.path())
            .args([
                "run",
                "--tool",
                "noop",
                "--samples",
                "2",
                "--duration",
                "0.02",
                "--format",
                fmt,
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).contains(needle), "{fmt}: {}", stdout(&o));
    }
}

/// A prefix whose libcrypto is only a link to the system's: the loaded
/// library is not under the prefix, so the sample must be refused.
#[test]
fn identity_check_refuses_a_library_outside_the_prefix() {
    let d = tempfile::tempdir().unwrap();
    let prefix = d.path().join("fake");
    std::fs::create_dir_all(prefix.join("include")).unwrap();
    std::fs::create_dir_all(prefix.join("lib")).unwrap();
    let o = std::process::Command::new("cp")
        .args(["-r", "/usr/include/openssl"])
        .arg(prefix.join("include"))
        .status()
        .unwrap();
    assert!(o.success());
    let syslib = String::from_utf8(
        std::process::Command::new("pkg-config")
            .args(["--variable=libdir", "libcrypto"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let syslib = Path::new(syslib.trim());
    for l in ["libcrypto.so", "libssl.so"] {
        std::os::unix::fs::symlink(syslib.join(l), prefix.join("lib").join(l)).unwrap();
    }
    let o = perfbisect(&d.path().join("cache"))
        .args([
            "run",
            "--tool",
            "randbytes",
            "--samples",
            "1",
            "--duration",
            "0.02",
            "--openssl-dir",
        ])
        .arg(&prefix)
        .output()
        .unwrap();
    assert_usage_error(&o, "refusing this sample");
    let err = stderr(&o);
    assert!(
        err.contains(&prefix.join("lib").display().to_string()),
        "{err}"
    );
    assert!(err.contains("libcrypto.so.3"), "{err}");
}

#[test]
fn prefix_without_libcrypto_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let prefix = d.path().join("p");
    std::fs::create_dir_all(prefix.join("include/openssl")).unwrap();
    std::fs::copy(
        "/usr/include/openssl/opensslv.h",
        prefix.join("include/openssl/opensslv.h"),
    )
    .unwrap();
    let o = perfbisect(d.path())
        .args(["run", "--tool", "noop", "--openssl-dir"])
        .arg(&prefix)
        .output()
        .unwrap();
    assert_usage_error(&o, "no shared libcrypto");
    let o = perfbisect(d.path())
        .args(["run", "--tool", "noop", "--openssl-dir", "/nonexistent/x"])
        .output()
        .unwrap();
    assert_usage_error(&o, "not a directory");
}

#[test]
fn crashing_kernel_is_reported_with_its_signal() {
    let d = tempfile::tempdir().unwrap();
    for when in ["run", "setup"] {
        let o = perfbisect(d.path())
            .arg("--kernels-dir")
            .arg(test_kernels())
            .args([
                "run",
                "--tool",
                &format!("crash:when={when}"),
                "--samples",
                "2",
                "--duration",
                "0.1",
            ])
            .output()
            .unwrap();
        assert_usage_error(&o, "crashed (signal 11");
    }
}

#[test]
fn hanging_kernel_is_killed_after_the_timeout() {
    let d = tempfile::tempdir().unwrap();
    let t0 = std::time::Instant::now();
    let o = perfbisect(d.path())
        .arg("--kernels-dir")
        .arg(test_kernels())
        .args([
            "run",
            "--tool",
            "hang",
            "--samples",
            "1",
            "--duration",
            "0.1",
            "--timeout",
            "2",
        ])
        .output()
        .unwrap();
    assert_usage_error(&o, "timed out after 2 s");
    assert!(t0.elapsed().as_secs() < 30);
}

#[test]
fn kernel_error_mid_run_is_reported() {
    let d = tempfile::tempdir().unwrap();
    let o = perfbisect(d.path())
        .arg("--kernels-dir")
        .arg(test_kernels())
        .args([
            "run",
            "--tool",
            "fails:after=50",
            "--samples",
            "1",
            "--duration",
            "0.5",
        ])
        .output()
        .unwrap();
    assert_usage_error(&o, "deliberate failure after");
}

#[test]
fn cleanup_hooks_run_after_a_failed_setup_or_thread_init() {
    // Kernels free partly built state only in pb_teardown / pb_thread_done
    // (kernels/perfbisect.h), so the runner must call them after a failure.
    let d = tempfile::tempdir().unwrap();
    for (stage, expected) in [
        ("setup", &["teardown"][..]),
        ("thread_init", &["teardown", "thread_done"][..]),
    ] {
        let marker = d.path().join(stage);
        let o = perfbisect(d.path())
            .arg("--kernels-dir")
            .arg(test_kernels())
            .args(["run", "--samples", "1", "--duration", "0.05", "--tool"])
            .arg(format!("cleanup:stage={stage},marker={}", marker.display()))
            .output()
            .unwrap();
        assert_usage_error(
            &o,
            &format!("deliberate failure in {}", stage.replace('_', " ")),
        );
        for hook in expected {
            assert!(
                marker.with_extension(hook).exists(),
                "{stage}: pb_{hook} was not called"
            );
        }
    }
}

#[test]
fn not_applicable_is_a_result_not_an_error() {
    let d = tempfile::tempdir().unwrap();
    let o = perfbisect(d.path())
        .arg("--kernels-dir")
        .arg(test_kernels())
        .args([
            "run",
            "--tool",
            "notapplicable",
            "--samples",
            "1",
            "--duration",
            "0.05",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: RunReport = typed(&o);
    assert_eq!(
        v.results[0].not_applicable,
        Some(Unavailable::NotApplicable {
            message: "this kernel never applies".into()
        })
    );
    assert_eq!(v.results[0].n, 0);
}

#[test]
fn kernel_arguments_are_passed_as_data_not_shell() {
    let d = tempfile::tempdir().unwrap();
    let marker = d.path().join("pwned");
    let hostile = format!("$(touch {m});`touch {m}`;touch {m}", m = marker.display());
    let o = perfbisect(d.path())
        .arg("--kernels-dir")
        .arg(test_kernels())
        .args(["run", "--samples", "1", "--duration", "0.2", "--tool"])
        .arg(format!("fails:after=10,shell={hostile}"))
        .output()
        .unwrap();
    assert_usage_error(&o, &format!("shell={hostile}"));
    assert!(
        !marker.exists(),
        "a kernel argument was executed by a shell"
    );
}

#[test]
fn bad_run_inputs_exit_2_with_one_line() {
    let d = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "--tool", "nosuch"],
            "unknown tool 'nosuch' (known: ",
        ),
        (
            &["run", "--tool", "pkeyread:colour=red"],
            "valid: key, format",
        ),
        (
            &["run", "--tool", "pkeyread:key=dsa512"],
            "valid: dh, dhx, dsa, ec, rsa, x25519",
        ),
        (
            &["run", "--tool", "randbytes:size=lots"],
            "non-negative integer",
        ),
        (&["run", "--tool", "pkeyread:key"], "not key=value"),
        (&["run", "--tool", "noop", "--threads", "0"], "at least 1"),
        (
            &["run", "--tool", "noop", "--threads", "two"],
            "not a thread count",
        ),
        (
            &["run", "--tool", "noop", "--threads", "1,,2"],
            "not a thread count",
        ),
        (&["run", "--tool", "noop", "--duration", "0"], "more than 0"),
        (
            &["run", "--tool", "noop", "--duration", "-1"],
            "more than 0",
        ),
        (
            &["run", "--tool", "noop", "--samples", "0"],
            "positive number of samples",
        ),
        (
            &["scan", "--executor", "slurm", "--slurm-lanes", "0", "A..B"],
            "not a count of at least 1",
        ),
        (&["run"], "--tool"),
        (&["frobnicate"], "unrecognized subcommand"),
    ];
    for (args, needle) in cases {
        let o = perfbisect(d.path()).args(*args).output().unwrap();
        assert_usage_error(&o, needle);
    }
}

#[test]
fn unwritable_cache_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let o = perfbisect(&file)
        .args(["run", "--tool", "noop"])
        .output()
        .unwrap();
    assert_usage_error(&o, "not a directory");
    let ro = d.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o500)).unwrap();
    // root ignores directory permissions; only check where they apply.
    if std::fs::write(ro.join("probe"), "x").is_err() {
        let o = perfbisect(&ro)
            .args(["run", "--tool", "noop"])
            .output()
            .unwrap();
        assert_usage_error(&o, "not writable");
    }
}

/// `--metric instructions` on a real kernel against the system libssl: a
/// positive count per operation from callgrind, nearly the same in two
/// fresh processes, and the unit in the table.
#[test]
fn instruction_metric_counts_a_real_kernel_stably() {
    let d = tempfile::tempdir().unwrap();
    let v = run_json(
        d.path(),
        &[
            "--tool",
            "pkeyread:key=ec,format=der",
            "--metric",
            "instructions",
            "--samples",
            "2",
            "--duration",
            "0.3",
        ],
    );
    assert_eq!(v.metric, Metric::Instructions);
    assert_eq!(v.unit.as_deref(), Some("instructions/op"));
    let samples = &v.results[0].samples;
    assert_eq!(samples.len(), 2);
    let counts: Vec<f64> = samples
        .iter()
        .map(|s| {
            let i = s.instructions.as_ref().expect("a count");
            assert_eq!(i.source, "callgrind", "{s:?}");
            assert!(i.ops >= 1, "{s:?}");
            i.per_op
        })
        .collect();
    // An EC key decode is tens of thousands of instructions at the very least.
    assert!(counts.iter().all(|&c| c > 10_000.0), "{counts:?}");
    let spread = (counts[0] - counts[1]).abs() / counts[0];
    assert!(
        spread < 0.01,
        "two samples differ by {:.3}%: {counts:?}",
        spread * 100.0
    );
    let mean = v.results[0].mean_us.unwrap();
    assert!((mean - (counts[0] + counts[1]) / 2.0).abs() < 1.0);

    let o = perfbisect(d.path())
        .args([
            "run",
            "--tool",
            "noop",
            "--metric",
            "instructions",
            "--samples",
            "1",
        ])
        .args(["--duration", "0.2"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("mean instr/op"), "{}", stdout(&o));
}

#[test]
fn instruction_metric_refuses_several_threads() {
    let d = tempfile::tempdir().unwrap();
    let o = perfbisect(d.path())
        .args([
            "run",
            "--tool",
            "noop",
            "--metric",
            "instructions",
            "--threads",
            "1,2",
        ])
        .output()
        .unwrap();
    assert_usage_error(&o, "--metric instructions counts one thread's work");
    let o = perfbisect(d.path())
        .args([
            "bisect",
            "--tool",
            "noop",
            "--metric",
            "instructions",
            "--threads",
            "4",
        ])
        .args(["a..b"])
        .output()
        .unwrap();
    assert_usage_error(&o, "use --threads 1");
}

/// `--locate instructions` and `--locate auto` confirm in time and count one thread: every
/// plan that cannot mean that is refused before anything is built, naming --locate.
#[test]
fn locate_refuses_what_it_cannot_mean() {
    let d = tempfile::tempdir().unwrap();
    for locate in ["instructions", "auto"] {
        refuses_locating(d.path(), locate);
    }
}

/// `--tail` counts slow processes in time, in a bisect: refused with --locate, with another
/// metric and with --scan (whose grid fits trimmed levels), before anything is built.
#[test]
fn tail_refuses_what_it_cannot_mean() {
    let d = tempfile::tempdir().unwrap();
    let in_time = "--tail counts slow processes in time";
    for (extra, needle) in [
        (&["--locate", "instructions"][..], in_time),
        (&["--metric", "instructions"][..], in_time),
        (&["--scan"][..], "it takes no --tail"),
    ] {
        let o = perfbisect(d.path())
            .args(["bisect", "--tool", "noop", "--tail"])
            .args(extra)
            .args(["a..b"])
            .output()
            .unwrap();
        assert_usage_error(&o, needle);
    }
}

fn refuses_locating(cache: &std::path::Path, locate: &str) {
    let threads = format!("--locate {locate} counts instructions, one thread's work: it does not go with 4 threads (use --threads 1)");
    for (extra, needle) in [
        (&["--threads", "1,4"][..], threads.as_str()),
        (
            &["--metric", "instructions"][..],
            "confirms every change point in time",
        ),
        (
            &["--scan", "--metric", "instructions"][..],
            "confirms every change point in time",
        ),
        (&["--scan", "--threads", "4"][..], threads.as_str()),
    ] {
        let o = perfbisect(cache)
            .args(["bisect", "--tool", "noop", "--locate", locate])
            .args(extra)
            .args(["a..b"])
            .output()
            .unwrap();
        assert_usage_error(&o, needle);
    }
}

#[test]
fn explain_bad_inputs_exit_2_with_one_line() {
    let d = tempfile::tempdir().unwrap();
    let o = perfbisect(d.path())
        .args(["explain", "a", "b", "c", "--tool", "noop"])
        .output()
        .unwrap();
    assert_usage_error(&o, "no more were expected");
    let o = perfbisect(d.path())
        .args(["explain", "HEAD", "--tool", "nosuchkernel"])
        .args(["--repo", d.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_usage_error(&o, "nosuchkernel");
}

/// Every sample says what decided libcrypto's code paths: this CPU's flags, narrowed by an
/// OPENSSL_ia32cap pin, or the pin alone when it sets the words outright.
#[test]
fn samples_record_the_cpu_capabilities_their_code_ran_under() {
    let d = tempfile::tempdir().unwrap();
    let caps = |pin: Option<&str>| -> String {
        let mut cmd = perfbisect(d.path());
        cmd.args([
            "run",
            "--tool",
            "randbytes",
            "--samples",
            "1",
            "--duration",
            "0.05",
        ])
        .args(["--format", "json"]);
        match pin {
            Some(p) => cmd.env("OPENSSL_ia32cap", p),
            None => cmd.env_remove("OPENSSL_ia32cap"),
        };
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let v: RunReport = typed(&o);
        (v.results[0].samples[0].cpu_caps.clone()).unwrap_or_else(|| panic!("no cpu_caps in {v:?}"))
    };
    let detected = caps(None);
    assert!(detected.starts_with("cpu flags "), "{detected}");
    let narrowed = caps(Some("~0x200000000000000:0"));
    assert_eq!(
        narrowed,
        format!("{detected}, OPENSSL_ia32cap=~0x200000000000000:0")
    );
    // An absolute pin decides alone: two hosts with different CPUs run the same paths under it.
    assert_eq!(caps(Some("0x4:0")), "OPENSSL_ia32cap=0x4:0");
}

/// Every spec runs once on the system OpenSSL (3.0): one sample each, in spec order.
fn run_each(specs: &[&str]) -> Vec<RunResult> {
    let d = tempfile::tempdir().unwrap();
    let mut args: Vec<&str> = Vec::new();
    for s in specs {
        args.extend(["--tool", s]);
    }
    args.extend(["--samples", "1", "--duration", "0.05"]);
    let j = run_json(d.path(), &args);
    let results = j.results;
    assert_eq!(results.len(), specs.len());
    results
}

fn assert_sampled(results: &[RunResult]) {
    for r in results {
        assert_eq!(r.n, 1, "{r:?}");
        assert!(r.mean_us.unwrap() > 0.0, "{r:?}");
    }
}

/// Why a result has no number: the operation does not exist on this version.
fn not_applicable(r: &RunResult) -> &str {
    match &r.not_applicable {
        Some(Unavailable::NotApplicable { message }) => message,
        other => panic!("not a not-applicable result ({other:?}): {r:?}"),
    }
}

/// Spec by spec, a one-line error with exit 2 that says `needle`.
fn assert_refused(cases: &[(&str, &str)]) {
    let d = tempfile::tempdir().unwrap();
    for (spec, needle) in cases {
        let o = perfbisect(d.path())
            .args([
                "run",
                "--samples",
                "1",
                "--duration",
                "0.05",
                "--tool",
                spec,
            ])
            .output()
            .unwrap();
        assert_usage_error(&o, needle);
    }
}

/// perftools' evp_hash and evp_cipher modes as kernel arguments (issue 30).
#[test]
fn evp_hash_and_evp_cipher_take_perftools_modes() {
    let results = run_each(&[
        "evp_hash:mode=deprecated,size=1500,alg=sha384",
        "evp_hash:mode=evp_isolated,size=1500,alg=sha1",
        "evp_hash:mode=evp_shared,size=1500,updates=5",
        "evp_cipher:mode=evp_isolated,size=16,alg=aes-256-cbc",
        "evp_cipher:mode=evp_shared,size=16,updates=3",
    ]);
    assert_sampled(&results);
    // MB/s counts every update of an operation: 5 x 1500 bytes.
    let h = &results[2];
    let mb = h.mb_per_s.unwrap();
    let expect = 7500.0 / h.mean_us.unwrap();
    assert!((mb / expect - 1.0).abs() < 0.01, "{mb} vs {expect}");
    assert_refused(&[
        ("evp_hash:mode=deprecated,alg=sha3-256", "no deprecated API"),
        ("evp_hash:updates=2", "updates must be 1"),
        ("evp_hash:mode=shared", "valid: oneshot, deprecated"),
        ("evp_cipher:mode=evp_shared,alg=aes-128-gcm", "refuses"),
        (
            "evp_cipher:mode=evp_shared,mode=evp_isolated",
            "given twice",
        ),
    ]);
}

/// The kernels of perftools' evp_mac, evp_kdf, evp_rand and evp_pkey, in every mode.
#[test]
fn evp_mac_kdf_rand_and_pkey_run_in_every_mode() {
    let results = run_each(&[
        "evp_mac:mode=evp_isolated",
        "evp_mac:mode=deprecated_shared,updates=2",
        "evp_mac:mode=deprecated_isolated",
        "evp_kdf:mode=evp_isolated,iter=16",
        "evp_kdf:mode=deprecated_shared,iter=16",
        "evp_kdf:mode=deprecated_isolated,iter=16",
        "evp_rand:mode=evp_isolated",
        "evp_pkey:mode=evp_isolated,alg=x25519",
    ]);
    assert_sampled(&results);
    assert_refused(&[
        ("evp_mac:mode=shared", "valid: evp_shared, evp_isolated"),
        ("evp_kdf:mode=evp_shared,mode=evp_isolated", "given twice"),
        ("evp_kdf:iter=0", "iter must be between 1"),
        ("evp_rand:size=0", "size must be between 1"),
        ("evp_pkey:alg=dsa", "valid: ed25519"),
    ]);
}

/// ML-KEM needs 3.5: on the system's 3.0 it is "not applicable", a result, not an error.
#[test]
fn ml_kem_is_not_applicable_before_3_5() {
    let results = run_each(&["newrawkey:alg=ml-kem-768", "newrawkey:alg=x25519"]);
    let ml_kem = &results[0];
    assert_eq!(ml_kem.n, 0, "{ml_kem:?}");
    let why = not_applicable(ml_kem);
    assert!(why.contains("ML-KEM needs OpenSSL 3.5"), "{ml_kem:?}");
    assert_sampled(&results[1..]);
}

/// writeread with perftools' -s (a context pair per thread) and -d (DTLS).
#[test]
fn writeread_takes_per_thread_contexts_and_dtls() {
    let results = run_each(&[
        "writeread:ctx=per-thread",
        "writeread:proto=dtls",
        "writeread:proto=dtls,ctx=per-thread,size=4096",
    ]);
    assert_sampled(&results);
    assert_refused(&[
        ("writeread:proto=dtls,size=20000", "at most 16384"),
        ("writeread:proto=quic", "valid: tls, dtls"),
    ]);
}

/// handshake with perftools' -p, -P, -l, -o and -S: library contexts per thread or pooled, a pool
/// of SSL_CTX pairs, a secure heap.
#[test]
fn handshake_takes_perftools_library_context_options() {
    let results = run_each(&[
        "handshake:libctx=per-thread",
        "handshake:libctx=per-thread,ctx=per-conn",
        "handshake:libctx=pool,pool_size=4",
        "handshake:libctx=ssl-ctx-pool,pool_size=2",
        "handshake:secure_heap=1048576",
    ]);
    assert_sampled(&results);
    assert_refused(&[
        (
            "handshake:libctx=ssl-ctx-pool,ctx=per-conn",
            "does not apply",
        ),
        ("handshake:pool_size=0", "pool_size must be between 1"),
        ("handshake:libctx=threads", "valid: default, per-thread"),
    ]);
}

/// evp_fetch type=all: perftools' evp_fetch without -f; pq=yes (its -q) needs 3.5.
#[test]
fn evp_fetch_walks_perftools_list_and_pq_needs_3_5() {
    let results = run_each(&["evp_fetch:type=all,libctx=own", "evp_fetch:type=all,pq=yes"]);
    assert_sampled(&results[..1]);
    let why = not_applicable(&results[1]);
    assert!(why.contains("needs OpenSSL 3.5"), "{why}");
    assert_refused(&[
        ("evp_fetch:pq=yes", "type=all only"),
        ("evp_fetch:type=all,alg=SHA2-256", "alg must be default"),
    ]);
}

/// More threads than this machine has cores is said once on stderr, not per cell; `-q` keeps
/// it quiet.
#[test]
fn oversubscribed_thread_counts_are_said_once() {
    let d = tempfile::tempdir().unwrap();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let over = format!("{},{}", cores + 1, cores + 2);
    let run = |extra: &[&str]| {
        let o = perfbisect(d.path())
            .args(["run", "--tool", "noop", "--threads", &over])
            .args(["--samples", "1", "--duration", "0.02"])
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let err = run(&[]);
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("oversubscribe"))
        .collect();
    assert_eq!(said.len(), 1, "{err}");
    assert!(
        said[0].starts_with(&format!("warning: {} threads on {cores} cores", cores + 1)),
        "{err}"
    );
    assert!(!run(&["-q"]).contains("oversubscribe"));
}
