use super::*;
use crate::build::recipe;

#[test]
fn shared_libs_means_the_makefiles_shared_libraries() {
    let known: BTreeSet<String> = ["build_generated", "depend", "build_libs", "build_modules"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let makefile = &Makefile::parse(
        "LIBS=libcrypto.a libssl.a\nSHLIBS=libcrypto.so.3 \\\n       libssl.so.3\n",
    );
    let (t, from_tree) = expand_shared_libs(
        vec![SHARED_LIBS.into(), "build_modules".into()],
        &known,
        makefile,
    );
    assert!(from_tree);
    assert_eq!(
        t,
        [
            "build_generated",
            "depend",
            "libcrypto.so.3",
            "libssl.so.3",
            "build_modules"
        ]
    );
    // OpenSSL 3 (build_modules_nodep): the libraries and the modules in one make, without
    // build_modules' own depend and second make.
    let mut known3 = known.clone();
    known3.insert("build_modules_nodep".to_string());
    let (t, _) = expand_shared_libs(
        vec![SHARED_LIBS.into(), "build_modules".into()],
        &known3,
        makefile,
    );
    assert_eq!(
        t,
        [
            "build_generated",
            "depend",
            "libcrypto.so.3 libssl.so.3 build_modules_nodep"
        ]
    );
    // A Makefile without SHLIBS (pre-1.1.0 trees): the libraries the usual way.
    let (t, from_tree) = expand_shared_libs(
        vec![SHARED_LIBS.into()],
        &known,
        &Makefile::parse("LIBS=x\n"),
    );
    assert!(!from_tree);
    assert_eq!(t, ["build_libs"]);
    // Recipes that do not ask for it are left alone.
    let (t, from_tree) = expand_shared_libs(
        vec!["build_libs".into(), "build_modules".into()],
        &known3,
        makefile,
    );
    assert!(!from_tree);
    assert_eq!(t, ["build_libs", "build_modules"]);
}
use crate::build::version::detect_version;
use std::collections::BTreeMap;

fn resolved(name: &str) -> ResolvedRecipe {
    ResolvedRecipe {
        name: name.into(),
        configure_args: vec![],
        make_targets: vec!["build_libs".into()],
        env: BTreeMap::new(),
        fingerprint: "0".repeat(16),
    }
}

#[test]
fn stats_log_counts() {
    let s = parse_stats_log(
        "# a.c\ncache_miss\ndirect_cache_miss\nlocal_storage_miss\n# b.c\ndirect_cache_hit\nlocal_storage_hit\n# c.c\npreprocessed_cache_hit\n# x.o\ncalled_for_link\n",
    );
    assert_eq!((s.hits, s.misses), (2, 1));
    assert!((s.hit_rate - 2.0 / 3.0).abs() < 1e-9);
    assert_eq!(parse_stats_log("").hit_rate, 0.0);
}

#[test]
fn makefile_target_names() {
    let d = tempfile::tempdir().unwrap();
    let m = d.path().join("Makefile");
    fs::write(
        &m,
        "CC=gcc\nX:=1\nbuild_libs: build_libs_nodep\n\t@echo hi: there\ninstall_dev: install_runtime_libs\n.PHONY: all\ncrypto/aes.o: crypto/aes.c\n",
    )
    .unwrap();
    let t = makefile_targets(&m).unwrap();
    assert!(t.contains("build_libs") && t.contains("install_dev") && t.contains(".PHONY"));
    assert!(!t.contains("X") && !t.contains("CC") && !t.contains("\t@echo hi"));
}

#[test]
fn common_ancestor_of_paths() {
    assert_eq!(
        common_ancestor(Path::new("/tmp/pb/src"), Path::new("/tmp/pb/build")),
        PathBuf::from("/tmp/pb")
    );
    assert_eq!(
        common_ancestor(Path::new("/a/b"), Path::new("/c")),
        PathBuf::from("/")
    );
}

#[test]
fn failed_configure_reports_phase_status_log_and_tail() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    fs::create_dir_all(&src).unwrap();
    let config = src.join("config");
    fs::write(
        &config,
        "#!/bin/sh\nfor i in $(seq 1 30); do echo line $i; done\necho \"args: $*\" >&2\necho \"CFLAGS=${CFLAGS-unset} MAKEFLAGS=${MAKEFLAGS-unset} R=${RECIPE_VAR}\"\nexit 3\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&config, fs::Permissions::from_mode(0o755)).unwrap();
    let mut r = resolved("t");
    r.configure_args = vec!["no-asm".into(), "with space".into()];
    r.env.insert("RECIPE_VAR".into(), "yes".into());
    let log = d.path().join("logs/build.log");
    let req = BuildRequest {
        src: &src,
        build_dir: &d.path().join("b"),
        install_dir: &d.path().join("i"),
        recipe: &r,
        jobs: 2,
        log_path: &log,
        ccache: false,
        ccache_remote: None,
        start: Start::Clean,
        configure_store: None,
    };
    let mut events = Vec::new();
    let e = build(&req, &mut |ev| events.push(ev))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("configure failed (exit status: 3); log: "),
        "{e}"
    );
    assert!(e.contains(&log.display().to_string()), "{e}");
    assert!(e.contains("line 30") && !e.contains("line 10\n"), "{e}");
    assert_eq!(events[0], BuildEvent::Phase(Phase::Configure));
    assert!(events.contains(&BuildEvent::Line("line 1".into())));
    let text = fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("--libdir=lib no-asm with space CC="),
        "{text}"
    );
    // User's flags do not leak in; the recipe's environment does.
    assert!(
        text.contains("CFLAGS=unset MAKEFLAGS=unset R=yes"),
        "{text}"
    );
}

#[test]
fn refuses_non_empty_dirs() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("config"), "").unwrap();
    let b = d.path().join("b");
    fs::create_dir_all(&b).unwrap();
    fs::write(b.join("junk"), "").unwrap();
    let r = resolved("t");
    let req = BuildRequest {
        src: &src,
        build_dir: &b,
        install_dir: &d.path().join("i"),
        recipe: &r,
        jobs: 1,
        log_path: &d.path().join("log"),
        ccache: false,
        ccache_remote: None,
        start: Start::Clean,
        configure_store: None,
    };
    let e = build(&req, &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("is not empty"), "{e}");
}

/// A real build. Slow (30 s to 2 min on 2 cores), so ignored by default:
/// `PB_CRATE=300.2.3+3.2.1 cargo test -- --ignored real_build --nocapture`.
/// Copies the openssl-src tree to $PB_WORK/src (default /tmp/pbwork),
/// builds in $PB_WORK/build, installs to $PB_WORK/inst-<version>.
#[test]
#[ignore]
fn real_build() {
    let krate = std::env::var("PB_CRATE").unwrap_or_else(|_| "111.28.2+1.1.1w".into());
    let work = PathBuf::from(std::env::var("PB_WORK").unwrap_or_else(|_| "/tmp/pbwork".into()));
    let recipe_name = std::env::var("PB_RECIPE").unwrap_or_else(|_| "default".into());
    let ccache = std::env::var("PB_CCACHE").map(|v| v != "0").unwrap_or(true);
    let registry = "/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f";
    let from = format!("{registry}/openssl-src-{krate}/openssl");
    let src = work.join("src");
    let build_dir = work.join("build");
    let _ = fs::remove_dir_all(&src);
    let _ = fs::remove_dir_all(&build_dir);
    fs::create_dir_all(&work).unwrap();
    let st = Command::new("cp")
        .arg("-a")
        .arg(&from)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success());
    let v = detect_version(&src).unwrap();
    let inst = work.join(format!("inst-{v}"));
    let _ = fs::remove_dir_all(&inst);
    let r = recipe::load(&recipe_name, None)
        .unwrap()
        .resolve(&v, compiler::id());
    let log = work.join(format!("build-{v}.log"));
    let _ = fs::remove_file(&log);
    let req = BuildRequest {
        src: &src,
        build_dir: &build_dir,
        install_dir: &inst,
        recipe: &r,
        jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
        log_path: &log,
        ccache,
        ccache_remote: None,
        start: Start::Clean,
        configure_store: None,
    };
    let mut lines = 0usize;
    let report = build(&req, &mut |ev| match ev {
        BuildEvent::Phase(p) => eprintln!("phase {p}"),
        BuildEvent::Line(_) => lines += 1,
    })
    .unwrap();
    eprintln!(
        "{v}: {report:?}, {lines} lines, args {:?}",
        r.configure_args
    );
    assert!(inst.join("include/openssl/ssl.h").is_file());
    let libs: Vec<String> = fs::read_dir(inst.join("lib"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        libs.iter().any(|n| n.starts_with("libcrypto.so")),
        "{libs:?}"
    );
    assert!(libs.iter().any(|n| n.starts_with("libssl.so")), "{libs:?}");
    assert!(!libs.iter().any(|n| n.ends_with(".a")), "{libs:?}");
    assert!(!inst.join("bin").exists());
    if v.major >= 3 {
        assert!(inst.join("lib/ossl-modules").is_dir());
    }
    if v.major < 4 {
        assert!(libs.iter().any(|n| n.starts_with("engines-")), "{libs:?}");
    }
}
