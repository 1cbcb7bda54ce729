//! Hardening (issue 7): faults, interruption, concurrency and hostile input,
//! each tried by a test. Tests named `…_synthetic_repo` bisect a small fake
//! OpenSSL (tests/fake-openssl, built in well under a second per commit)
//! instead of real releases.

use crate::common;

use common::{
    assert_cache_consistent, assert_usage_error, copy_tree, git, perfbisect, stderr, stdout,
    test_kernels, typed, typed_str,
};
use perfbisect::analysis::locate::SearchedBy;
use perfbisect::measure::engine::BuildUse;
use perfbisect::measure::metric::Metric;
use perfbisect::report::bisect::{BisectReport, StepJson, StepKind};
use perfbisect::report::explain::ExplainReport;
use perfbisect::report::run::RunReport;
use perfbisect::unavailable::Unavailable;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

// ------------------------------------------------------------ fake OpenSSL

/// What one commit of a fake repository does.
#[derive(Clone, Copy, Debug)]
enum Fake {
    /// fake_work() loops this many times per call.
    Cost(u32),
    /// The build fails (fake_cost.h has an #error).
    Broken,
    /// fake_work() raises SIGSEGV.
    Crash,
    /// fake_work() never returns.
    Hang,
    /// As FAST, but libssl lacks SSL_fake_call, which the sslcall kernel calls.
    LacksSslCall,
}

const FAST: Fake = Fake::Cost(200);
const SLOW: Fake = Fake::Cost(2000);

#[derive(Clone, Copy, Debug)]
struct FakeCommit {
    label: &'static str,
    what: Fake,
    /// Seconds `make build_libs` sleeps.
    make_sleep: u32,
    /// Lines `make build_libs` prints.
    make_noise: u32,
}

fn fc(label: &'static str, what: Fake) -> FakeCommit {
    FakeCommit {
        label,
        what,
        make_sleep: 0,
        make_noise: 0,
    }
}

fn fake_template() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake-openssl")
}

/// A git repository of the fake OpenSSL with one commit per entry (the
/// subject is the label); returns the commit ids.
fn fake_repo(dir: &Path, commits: &[FakeCommit]) -> Vec<String> {
    copy_tree(&fake_template(), dir);
    git(dir, &["init", "-q", "-b", "main"]);
    fake_commits(dir, commits)
}

/// More commits on the branch checked out in `dir`.
fn fake_commits(dir: &Path, commits: &[FakeCommit]) -> Vec<String> {
    let mut ids = Vec::new();
    for c in commits {
        let cost = match c.what {
            Fake::Cost(n) => format!("#define FAKE_COST {n}\n"),
            Fake::Broken => "#error this commit does not build (on purpose)\n".to_string(),
            Fake::Crash => "#define FAKE_COST -1\n".to_string(),
            Fake::Hang => "#define FAKE_COST -2\n".to_string(),
            Fake::LacksSslCall => "#define FAKE_COST 200\n".to_string(),
        };
        let ssl = fs::read_to_string(fake_template().join("ssl.c")).unwrap();
        let ssl: String = match c.what {
            Fake::LacksSslCall => ssl
                .lines()
                .filter(|l| !l.contains("SSL_fake_call"))
                .map(|l| format!("{l}\n"))
                .collect(),
            _ => ssl,
        };
        fs::write(dir.join("ssl.c"), ssl).unwrap();
        fs::write(dir.join("fake_cost.h"), cost).unwrap();
        fs::write(dir.join("fake-label"), format!("{}\n", c.label)).unwrap();
        fs::write(dir.join("fake-make-sleep"), format!("{}\n", c.make_sleep)).unwrap();
        fs::write(dir.join("fake-make-noise"), format!("{}\n", c.make_noise)).unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "--allow-empty", "-m", c.label]);
        ids.push(git(dir, &["rev-parse", "HEAD"]).trim().to_string());
    }
    ids
}

/// The standard range: a slowdown at `culprit`, a broken build before it.
fn regression_repo(dir: &Path) -> Vec<String> {
    fake_repo(
        dir,
        &[
            fc("fast 0 (good)", FAST),
            fc("fast 1", FAST),
            fc("fast 2", FAST),
            fc("broken build 3", Fake::Broken),
            fc("fast 4", FAST),
            fc("culprit 5: slow", SLOW),
            fc("slow 6", SLOW),
            fc("slow 7", SLOW),
            fc("slow 8 (bad)", SLOW),
        ],
    )
}

/// perfbisect on `cache` with the test kernels (fakework) available.
fn pb(cache: &Path) -> assert_cmd::Command {
    let mut c = perfbisect(cache);
    c.arg("--kernels-dir").arg(test_kernels());
    c
}

/// The same, as a std Command (to spawn and signal it).
fn pb_std(cache: &Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("perfbisect"));
    c.arg("--cache")
        .arg(cache)
        .arg("--kernels-dir")
        .arg(test_kernels())
        .env_remove("PERFBISECT_CACHE");
    c
}

/// Fast bisect arguments: 4 samples of 0.05 s, at most 16. The machine running
/// the tests is shared (2 cores, tests in parallel), so samples vary by 30%
/// or more; the fake's change is 10x, and a 100% minimum effect with a loose
/// alpha decides it in few samples without calling same-speed commits
/// different.
fn bisect_args(repo: &Path, range: &str) -> Vec<String> {
    [
        "bisect",
        "--tool",
        "fakework",
        "--samples",
        "4",
        "--max-samples",
        "16",
        "--duration",
        "0.05",
        "--alpha",
        "0.5",
        "--min-effect",
        "100%",
        "--jobs",
        "2",
        "--repo",
        repo.to_str().unwrap(),
        range,
    ]
    .map(String::from)
    .to_vec()
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): status {:?}\nstdout: {}\nstderr: {}",
            o.status,
            stdout(o),
            stderr(o)
        )
    })
}

fn bisect_json<T: serde::de::DeserializeOwned>(
    cache: &Path,
    repo: &Path,
    range: &str,
    extra: &[&str],
) -> (T, Output) {
    let mut args = bisect_args(repo, range);
    args.extend(extra.iter().map(|s| s.to_string()));
    run_json(cache, args)
}

/// perfbisect with `args` and `--format json` on `cache`: its typed result, once it succeeded.
fn run_json<T: serde::de::DeserializeOwned>(cache: &Path, args: Vec<String>) -> (T, Output) {
    let o = pb(cache)
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "bisect failed: {:?}\nstdout: {}\nstderr: {}",
        o.status,
        stdout(&o),
        stderr(&o)
    );
    (typed(&o), o)
}

/// The steps and result of a bisect, one line each (for failure messages).
fn summary(j: &BisectReport) -> String {
    let mut s = format!(
        "ends {} -> {} ({:?}), outcome {}\n",
        j.ends.a.mean, j.ends.b.mean, j.direction, j.outcome
    );
    for st in &j.steps {
        s.push_str(&format!(
            "  {} {:<12} n={} mean={} {}\n",
            st.info.short, st.info.subject, st.n, st.mean_us, st.verdict
        ));
    }
    for c in &j.changes {
        s.push_str(&format!(
            "  culprit {} parent {} ratio {} range {} skipped {:?}\n",
            c.info.short, c.parent, c.ratio, c.range, c.skipped
        ));
    }
    s
}

fn culprit_ids(j: &BisectReport) -> Vec<String> {
    j.changes.iter().map(|c| c.info.commit.clone()).collect()
}

fn builds_by_commit(j: &BisectReport) -> BTreeMap<String, BuildUse> {
    (j.builds.iter())
        .map(|b| (b.commit.clone(), b.clone()))
        .collect()
}

/// The step that tested `id`.
fn step_of<'a>(j: &'a BisectReport, id: &str) -> &'a StepJson {
    (j.steps.iter())
        .find(|s| s.info.commit == id)
        .unwrap_or_else(|| panic!("{id} not tried: {}", summary(j)))
}

/// Files of the cache, with their contents (symlinks: their targets).
fn cache_snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(rd) = fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            let ft = e.file_type().unwrap();
            if ft.is_symlink() {
                let t = fs::read_link(&p).unwrap();
                out.insert(rel, format!("-> {}", t.display()).into_bytes());
            } else if ft.is_dir() {
                out.insert(format!("{rel}/"), Vec::new());
                walk(root, &p, out);
            } else {
                out.insert(rel, fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Published build entries (not staging or trash), by name.
fn build_entries(cache: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(cache.join("builds"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The entry of one commit (any recipe).
fn entry_of(cache: &Path, commit: &str) -> PathBuf {
    build_entries(cache)
        .into_iter()
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&commit[..12])
        })
        .unwrap_or_else(|| panic!("no build entry for {commit}"))
}

/// Inode of each published build's meta.json: unchanged means not rebuilt.
fn build_identities(cache: &Path) -> BTreeMap<String, u64> {
    use std::os::unix::fs::MetadataExt;
    build_entries(cache)
        .into_iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                fs::metadata(p.join("meta.json")).unwrap().ino(),
            )
        })
        .collect()
}

fn assert_not_rebuilt(before: &BTreeMap<String, u64>, cache: &Path) {
    let after = build_identities(cache);
    for (name, ino) in before {
        assert_eq!(
            after.get(name),
            Some(ino),
            "finished build {name} was rebuilt or removed"
        );
    }
}

/// Valid sample lines in the cache.
fn stored_samples(cache: &Path) -> usize {
    let Ok(rd) = fs::read_dir(cache.join("samples")) else {
        return 0;
    };
    rd.flatten()
        .map(|e| {
            fs::read_to_string(e.path())
                .unwrap()
                .lines()
                .filter(|l| serde_json::from_str::<Value>(l).is_ok())
                .count()
        })
        .sum()
}

fn wait_for(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let t = Instant::now();
    while !cond() {
        assert!(t.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Running (not a zombie).
fn alive(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Processes whose command line contains `needle`.
fn processes_with(needle: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(c) = fs::read(e.path().join("cmdline")) {
            if String::from_utf8_lossy(&c).contains(needle) && alive(pid) {
                out.push(pid);
            }
        }
    }
    out
}

/// A perfbisect run in its own process group, output to files.
struct Running {
    child: Child,
    out: PathBuf,
    err: PathBuf,
}

fn spawn(mut cmd: Command, dir: &Path, name: &str) -> Running {
    use std::os::unix::process::CommandExt;
    let out = dir.join(format!("{name}.out"));
    let err = dir.join(format!("{name}.err"));
    let child = cmd
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out).unwrap())
        .stderr(fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    Running { child, out, err }
}

impl Running {
    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Waits for `cond` while perfbisect runs; panics with its output if it
    /// exits first.
    fn wait_for(&mut self, what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
        let t = Instant::now();
        while !cond() {
            if let Some(st) = self.child.try_wait().unwrap() {
                panic!(
                    "perfbisect exited ({st}) before {what}\nstdout: {}\nstderr: {}",
                    fs::read_to_string(&self.out).unwrap_or_default(),
                    fs::read_to_string(&self.err).unwrap_or_default()
                );
            }
            assert!(t.elapsed() < timeout, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGINT to the whole process group (as the terminal's Ctrl-C does),
    /// or to perfbisect alone.
    fn sigint(&self, group: bool) {
        self.signal(libc::SIGINT, group)
    }

    /// `sig` to the whole process group, or to perfbisect alone.
    fn signal(&self, sig: i32, group: bool) {
        let target = if group { -self.pid() } else { self.pid() };
        // SAFETY: kill has no memory effects.
        let r = unsafe { libc::kill(target, sig) };
        assert_eq!(r, 0, "kill failed");
    }

    /// Exit code, stdout, stderr; panics after `timeout`.
    fn wait(mut self, timeout: Duration) -> (Option<i32>, String, String) {
        let t = Instant::now();
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                let out = fs::read_to_string(&self.out).unwrap();
                let err = fs::read_to_string(&self.err).unwrap();
                return (st.code(), out, err);
            }
            if t.elapsed() > timeout {
                let _ = self.child.kill();
                let err = fs::read_to_string(&self.err).unwrap_or_default();
                panic!("perfbisect did not exit within {timeout:?}; stderr: {err}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The stops the signal tests make, one per run: (round, signal, to the whole process group
/// as a terminal sends it, else to perfbisect alone).
const SIGNAL_ROUNDS: [(usize, i32, bool); 4] = [
    (1, libc::SIGINT, true),
    (2, libc::SIGINT, false),
    (3, libc::SIGTERM, false),
    (4, libc::SIGHUP, false),
];

/// Exit 130, promptly, saying how to resume.
fn assert_interrupted(r: Running, what: &str) {
    assert_stopped_by(r, libc::SIGINT, what)
}

/// Exit 128 + `sig` (130 SIGINT, 143 SIGTERM, 129 SIGHUP), promptly, saying how to resume.
fn assert_stopped_by(r: Running, sig: i32, what: &str) {
    let t = Instant::now();
    let (code, _, err) = r.wait(Duration::from_secs(20));
    let took = t.elapsed();
    assert_eq!(code, Some(128 + sig), "{what}: exit code; stderr: {err}");
    assert!(
        took < Duration::from_secs(5),
        "{what}: took {took:?} to exit after SIGINT"
    );
    assert!(
        err.contains("Run the same command again to resume"),
        "{what}: {err}"
    );
    assert!(!err.contains("panicked"), "{what}: {err}");
}

// ------------------------------------------------------------ 1. build failure

/// A commit in the middle that does not build is skipped: the culprit is
/// still found when it is not next to the broken commit, and the narrowest
/// range is named when it is; the failure and its log are in the report.
#[test]
fn build_failure_mid_range_is_skipped_synthetic_repo() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");

    // The broken commit (4) sits between the last fast and the first slow
    // commit: the change is in 3..5.
    let repo = d.path().join("adjacent");
    let ids = fake_repo(
        &repo,
        &[
            fc("fast 0", FAST),
            fc("fast 1", FAST),
            fc("fast 2", FAST),
            fc("fast 3", FAST),
            fc("broken 4", Fake::Broken),
            fc("slow 5", SLOW),
            fc("slow 6", SLOW),
            fc("slow 7", SLOW),
            fc("slow 8", SLOW),
        ],
    );
    let range = format!("{}..{}", ids[0], ids[8]);
    let (j, _): (BisectReport, _) = bisect_json(&cache, &repo, &range, &[]);
    assert_eq!(j.changes.len(), 1, "{}", summary(&j));
    let c = &j.changes[0];
    assert_eq!(c.info.commit, ids[5], "{}", summary(&j));
    assert_eq!(c.parent, ids[3], "{}", summary(&j));
    assert!(c.range, "{}", summary(&j));
    assert_eq!(c.skipped, [ids[4].clone()], "{}", summary(&j));
    let builds = builds_by_commit(&j);
    let broken = &builds[&ids[4]];
    assert!(!broken.ok, "{broken:?}");
    let log = PathBuf::from(broken.log.as_deref().expect("log path of the failure"));
    let text = fs::read_to_string(&log).unwrap();
    assert!(text.contains("does not build (on purpose)"), "{text}");
    assert!(log.starts_with(&cache), "{}", log.display());
    let step = step_of(&j, &ids[4]);
    assert!(
        step.verdict.starts_with("skipped: build failed (log: "),
        "{step:?}"
    );
    assert_eq!(step.kind, Some(StepKind::Skipped), "{step:?}");
    assert!(
        matches!(&step.skipped_because, Some(Unavailable::BuildFailed { log: l }) if Path::new(l) == log),
        "{step:?}"
    );

    // The same bisect as text with -v, from the cache: the range, the skip and the log (the
    // step lines on stderr, the details after the answer on stdout).
    let o = pb(&cache)
        .args(bisect_args(&repo, &range))
        .arg("-v")
        .output()
        .unwrap();
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert!(o.status.success(), "{out}");
    let answer = stdout(&o);
    assert!(
        answer.lines().nth(1).unwrap().contains(&format!(
            "  {}..{}  ",
            &ids[3][..10],
            &ids[5][..10]
        )),
        "{answer}"
    );
    assert!(
        out.contains(&format!(
            "the change is in one of {}..{} (1 skipped commit(s) between)",
            &ids[3][..10],
            &ids[5][..10]
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("skipped: build failed (log: {}", log.display())),
        "{out}"
    );
    assert!(out.contains("1 failed"), "{out}");
    // What the run could resolve, before the search and after it, from its own noise.
    assert!(out.contains("forecast: noise "), "{out}");
    assert!(out.contains("resolution: at this run's noise ("), "{out}");
    let r = j.resolution.as_ref().expect("the run's resolution");
    assert_eq!(r.cap, 16, "{r:?}");
    assert!(r.noise > 0.0, "{r:?}");
    assert!(r.smallest >= 1.0, "at least --min-effect 100%: {r:?}");

    // The broken commit (4) is where the search starts, but the change is
    // at 6: the culprit is still exact.
    let repo = d.path().join("apart");
    let ids = fake_repo(
        &repo,
        &[
            fc("fast 0", FAST),
            fc("fast 1", FAST),
            fc("fast 2", FAST),
            fc("fast 3", FAST),
            fc("broken 4", Fake::Broken),
            fc("fast 5", FAST),
            fc("slow 6", SLOW),
            fc("slow 7", SLOW),
            fc("slow 8", SLOW),
        ],
    );
    let (j, _): (BisectReport, _) = bisect_json(
        &cache,
        &repo,
        &format!("{}..{}", ids[0], ids[8]),
        &["--first-change-only"],
    );
    assert_eq!(culprit_ids(&j), vec![ids[6].clone()], "{}", summary(&j));
    assert_eq!(j.changes[0].parent, ids[5], "{}", summary(&j));
    assert!(!j.changes[0].range, "{}", summary(&j));
    assert!(!builds_by_commit(&j)[&ids[4]].ok, "{}", summary(&j));
    assert_cache_consistent(&cache);
}

// ------------------------------------------------------------ 2. crash, hang

/// A kernel that crashes or hangs on some commits: those samples are refused
/// with the signal or the timeout, the commits are skipped, the search goes
/// on, and no sampling child is left running.
/// `bisect_args` with some of its options' values replaced (`(option, value)`), `extra` after.
fn bisect_args_with(
    repo: &Path,
    range: &str,
    values: &[(&str, &str)],
    extra: &[&str],
) -> Vec<String> {
    let mut args = bisect_args(repo, range);
    for (option, value) in values {
        let at = args.iter().position(|a| a == option).unwrap();
        args[at + 1] = value.to_string();
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// Located by count, confirmed by clock, on real processes: `--locate auto` hands the range to
/// the counts because no clock of 0.05-second fake samples resolves 0.5% within 16 samples (5
/// to start with: fewer tell nothing of the noise);
/// the counts (valgrind) put the change at the culprit past a broken build, the clock confirms
/// it on its own fresh block, and the result carries both figures and why the counts located.
#[test]
fn locate_by_count_confirms_by_clock_synthetic_repo() {
    let (r, c) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ids = regression_repo(r.path());
    let range = format!("{}..{}", ids[0], ids[8]);
    let values = [("--min-effect", "0.5%"), ("--samples", "5")];
    // -v: the located points are told on stderr as they are located.
    let args = bisect_args_with(r.path(), &range, &values, &["--locate", "auto", "-v"]);
    let (j, o): (BisectReport, _) = run_json(c.path(), args);
    assert!(
        j.notes.iter().any(|n| n.starts_with("--locate auto: ")
            && n.ends_with("short of --min-effect 0.5%: instructions locate, the clock confirms")),
        "{:?}",
        j.notes
    );
    assert_eq!(culprit_ids(&j), vec![ids[5].clone()], "{}", summary(&j));
    // A fresh cache: every build was built now, the ends by the clock before the counts took
    // them from the cache (the counts' view once said the ends were cached).
    assert!(j.builds.iter().all(|b| b.fresh), "{:?}", j.builds);
    let culprit = &j.changes[0];
    assert!(culprit.confirmed, "{}", summary(&j));
    // The clock's ratio and the count's, each near the fake's 10x.
    let clock = culprit.ratio;
    let count = culprit.located.expect("the count's figure").ratio.ratio;
    assert!(clock > 3.0 && count > 5.0, "clock {clock}, count {count}");
    let located = j.located.as_ref().expect("located");
    assert_eq!(located.searched_by, SearchedBy::Count);
    assert_eq!(located.metric, Metric::Instructions);
    assert!(located.samples > 0);
    // The run's figures are the clock's (the JSON leaves `metric` out for time).
    assert_eq!(j.metric, Metric::Time, "{}", summary(&j));
    assert!(
        stderr(&o).contains("located by instructions:"),
        "{}",
        stderr(&o)
    );
    assert!(j.reproduce.contains("--locate auto"), "{}", j.reproduce);
    assert_cache_consistent(c.path());
    // Run again, it is served from the cache: the counts, the clock's confirmation and the
    // clock's stretches read the same samples as before (the stretches once started after
    // every sample the clock held, the earlier run's stretches too, and took fresh ones).
    let args = bisect_args_with(r.path(), &range, &values, &["--locate", "auto"]);
    let (again, _): (BisectReport, _) = run_json(c.path(), args);
    assert_eq!(again.samples_taken_now, 0, "{}", summary(&again));
    assert!(again.builds.iter().all(|b| !b.fresh), "{}", summary(&again));
    assert_eq!(
        culprit_ids(&again),
        vec![ids[5].clone()],
        "{}",
        summary(&again)
    );
    assert_eq!(again.changes[0].ratio, culprit.ratio, "{}", summary(&again));
}

/// `--locate auto` where the clock resolves `--min-effect`: the clock alone searches, no count
/// is taken, and the result says why. 300% within 64 samples, not the other tests' 100% within
/// 16: under three tests at once the fake's 0.05-second samples spread by 59% (measured), and
/// 16 samples then resolve 124%, 300% only up to about 95% spread, which CI's load once passed
/// (the counts located); 64 samples resolve 300% up to about four times that spread, and a
/// clock that decides early takes no more samples for the larger cap.
#[test]
fn auto_locate_leaves_a_resolving_clock_alone_synthetic_repo() {
    let (r, c) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ids = regression_repo(r.path());
    let range = format!("{}..{}", ids[0], ids[8]);
    let auto = ["--locate", "auto"];
    let values = [
        ("--samples", "5"),
        ("--min-effect", "300%"),
        ("--max-samples", "64"),
    ];
    let args = bisect_args_with(r.path(), &range, &values, &auto);
    let (j, o): (BisectReport, _) = run_json(c.path(), args);
    assert_eq!(culprit_ids(&j), vec![ids[5].clone()], "{}", summary(&j));
    assert!(j.located.is_none(), "{}", summary(&j));
    assert!(
        (j.notes.iter()).any(|n| n.starts_with("--locate auto: ")
            && n.ends_with("--min-effect 300.0% within 64 samples: the clock alone searches")),
        "{:?}",
        j.notes
    );
    assert!(
        stderr(&o).contains("the clock alone searches"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("instr"), "{}", stderr(&o));
    // As a jsonl event, typed (the same run again, resumed from its samples).
    let args = bisect_args_with(r.path(), &range, &values, &auto);
    let o = pb(c.path())
        .args(args)
        .args(["--format", "jsonl"])
        .output()
        .unwrap();
    let chosen: Vec<Value> = stdout(&o)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["event"] == "locate_chosen")
        .collect();
    assert_eq!(chosen.len(), 1, "{}", stdout(&o));
    let data = &chosen[0]["data"];
    assert_eq!(data["counts"], false, "{data}");
    assert_eq!(data["clock"]["min_effect"], 3.0, "{data}");
    // A scan chooses the same way, before its grid.
    use perfbisect::report::scan::ScanReport;
    let scan = ["--locate", "auto", "--scan", "--grid", "5"];
    let args = bisect_args_with(r.path(), &range, &values, &scan);
    let (s, o): (ScanReport, _) = run_json(c.path(), args);
    assert!(
        s.located.is_none() && s.grid_metric() == Metric::Time,
        "{}",
        stderr(&o)
    );
    assert!(
        (s.notes.iter()).any(|n| n.ends_with("the clock alone searches")),
        "{:?}",
        s.notes
    );
}

/// A scan located by count and confirmed by clock, on real processes: the counts' grid and
/// search find the culprit, the clock confirms it, and the report says the grid is in counts.
/// Read through the library's own result type.
#[test]
fn scan_located_by_count_confirms_by_clock_synthetic_repo() {
    use perfbisect::report::scan::ScanReport;
    let (r, c) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ids = regression_repo(r.path());
    let range = format!("{}..{}", ids[0], ids[8]);
    // -v: the grid's points are told on stderr as soon as it is fitted.
    let extra = ["--scan", "--grid", "5", "--locate", "instructions", "-v"];
    let (scan, o): (ScanReport, _) = bisect_json(c.path(), r.path(), &range, &extra);
    let confirmed: Vec<&str> = (scan.changes.iter())
        .filter(|c| c.point.confirmed)
        .map(|c| c.point.info.commit.as_str())
        .collect();
    assert_eq!(confirmed, vec![ids[5].as_str()], "{}", stderr(&o));
    // The counts' grid is told as soon as it is fitted, before any search (it used to come
    // after the whole located scan).
    let err = stderr(&o);
    let (grid, change) = (err.find(" level 1 "), err.find("change point confirmed"));
    assert!(grid.is_some() && grid < change, "{err}");
    let cp = &scan.changes[0].point;
    let count = cp.located.expect("the count's figure beside the clock's");
    assert!(cp.ratio > 3.0 && count.ratio.ratio > 5.0, "{cp:?}");
    let located = scan.located.as_ref().expect("located");
    assert_eq!(located.searched_by, SearchedBy::Count);
    assert_eq!(located.metric, Metric::Instructions);
    assert_eq!(scan.grid_metric(), Metric::Instructions);
    assert_eq!(scan.metric, Metric::Time);
    assert!(
        scan.reproduce.contains("--locate instructions"),
        "{}",
        scan.reproduce
    );
    let text = scan.details_text(&Default::default());
    assert!(
        text.contains("search: located by instructions") && text.contains(" instr ["),
        "{text}"
    );
    assert_cache_consistent(c.path());
    // Run again, it is served from the cache (its time stretches included).
    let (again, _): (ScanReport, _) = bisect_json(c.path(), r.path(), &range, &extra);
    assert_eq!(again.samples_taken_now, 0, "{}", stderr(&o));
    assert_eq!(again.changes[0].point.ratio, cp.ratio);
}

#[test]
fn kernel_crash_and_hang_are_skipped_synthetic_repo() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let repo = d.path().join("repo");
    let ids = fake_repo(
        &repo,
        &[
            fc("fast 0", FAST),
            fc("fast 1", FAST),
            fc("fast 2", FAST),
            fc("fast 3", FAST),
            fc("crash 4", Fake::Crash),
            fc("hang 5", Fake::Hang),
            fc("slow 6", SLOW),
            fc("slow 7", SLOW),
            fc("slow 8", SLOW),
        ],
    );
    let range = format!("{}..{}", ids[0], ids[8]);
    let (j, o): (BisectReport, _) = bisect_json(&cache, &repo, &range, &["--timeout", "2"]);
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    let c = &j.changes[0];
    assert_eq!(c.info.commit, ids[6], "{}", summary(&j));
    assert_eq!(c.parent, ids[3], "{}", summary(&j));
    assert_eq!(
        c.skipped,
        [ids[4].clone(), ids[5].clone()],
        "{}",
        summary(&j)
    );
    let (crashed, hung) = (step_of(&j, &ids[4]), step_of(&j, &ids[5]));
    assert_eq!(
        crashed.verdict,
        "skipped: kernel fakework crashed (signal 11, SIGSEGV)"
    );
    assert_eq!(
        crashed.skipped_because,
        Some(Unavailable::Crashed {
            kernel: "fakework".into(),
            signal: 11,
            name: Some("SIGSEGV".into())
        })
    );
    assert_eq!(
        hung.verdict,
        "skipped: kernel fakework timed out after 2 s (killed)"
    );
    assert!(
        matches!(&hung.skipped_because, Some(Unavailable::TimedOut { kernel, .. }) if kernel == "fakework"),
        "{hung:?}"
    );
    // Their builds are fine: only the samples were refused.
    let builds = builds_by_commit(&j);
    assert!(builds[&ids[4]].ok);
    assert!(builds[&ids[5]].ok);
    assert!(
        processes_with(cache.to_str().unwrap()).is_empty(),
        "a sampling child outlived perfbisect"
    );
}

/// Issue 29: a kernel that cannot load because its commit's libssl lacks a symbol is a build
/// problem of that commit, skipped like a failed build and told from a crash, in text and JSON.
#[test]
fn a_library_without_a_kernels_symbol_is_a_build_problem_synthetic_repo() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let repo = d.path().join("repo");
    let ids = fake_repo(
        &repo,
        &[
            fc("fast 0", FAST),
            fc("fast 1", FAST),
            fc("fast 2", FAST),
            fc("fast 3", FAST),
            fc("no SSL_fake_call 4", Fake::LacksSslCall),
            fc("slow 5", SLOW),
            fc("slow 6", SLOW),
            fc("slow 7", SLOW),
            fc("slow 8", SLOW),
        ],
    );
    let range = format!("{}..{}", ids[0], ids[8]);
    let args: Vec<String> = bisect_args(&repo, &range)
        .into_iter()
        .map(|a| if a == "fakework" { "sslcall".into() } else { a })
        .collect();
    let o = pb(&cache)
        .args(&args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let j: BisectReport = typed(&o);
    let c = &j.changes[0];
    assert_eq!(c.info.commit, ids[5], "{}", summary(&j));
    assert_eq!(c.skipped, [ids[4].clone()], "{}", summary(&j));
    let step = step_of(&j, &ids[4]);
    let problem = format!("libssl of {} exports no SSL_fake_call", &ids[4][..10]);
    assert_eq!(step.verdict, format!("skipped: build problem: {problem}"));
    assert!(
        matches!(
            &step.skipped_because,
            Some(Unavailable::MissingSymbol { symbol, library, .. })
                if symbol == "SSL_fake_call" && library == "libssl"
        ),
        "{step:?}"
    );
    // The build itself passed its check (it has every call the check asks for).
    assert!(builds_by_commit(&j)[&ids[4]].ok);
    // The step line says it (-v, on stderr).
    let text = pb(&cache).args(&args).arg("-v").output().unwrap();
    assert!(stderr(&text).contains(&problem), "{}", stderr(&text));
}

// ------------------------------------------------------------ 3. SIGINT

/// Bisect command as a std Command, with the fake's log and pid files.
fn bisect_cmd(cache: &Path, repo: &Path, range: &str, extra: &[&str], d: &Path) -> Command {
    let mut c = pb_std(cache);
    c.args(bisect_args(repo, range))
        .args(["--format", "json"])
        .args(extra)
        .env("PB_FAKE_LOG", d.join("fake.log"))
        .env("PB_FAKE_PIDFILE", d.join("fake.pids"));
    c
}

fn fake_log(d: &Path) -> String {
    fs::read_to_string(d.join("fake.log")).unwrap_or_default()
}

/// Every pid the fake make recorded (its sleeps) is gone.
fn assert_no_fake_sleeper(d: &Path) {
    let pids = fs::read_to_string(d.join("fake.pids")).unwrap_or_default();
    for pid in pids.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
        wait_for(
            &format!("the build's sleeping make step {pid} to die"),
            Duration::from_secs(3),
            || !alive(pid),
        );
    }
}

/// The build log of the staging directory shows make sleeping.
fn make_is_sleeping(cache: &Path) -> bool {
    fs::read_dir(cache.join("builds"))
        .map(|rd| {
            rd.flatten().any(|e| {
                e.file_name().to_string_lossy().starts_with(".tmp-")
                    && fs::read_to_string(e.path().join("build.log"))
                        .is_ok_and(|t| t.contains("fake-make: sleeping"))
            })
        })
        .unwrap_or(false)
}

/// Ctrl-C while make runs (a 60 s make step), once to the whole process
/// group as a terminal sends it and once to perfbisect alone: exit 130 at
/// once, make and its children killed, nothing half-published; the re-run
/// rebuilds nothing that was finished and reuses every sample. SIGTERM and
/// SIGHUP to perfbisect alone the same, with 143 and 129.
#[test]
fn sigint_during_a_build_synthetic_repo() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let repo = d.path().join("repo");
    let mut commits: Vec<FakeCommit> = (0..9)
        .map(|i| {
            fc(
                if i < 5 { "fast" } else { "slow" },
                if i < 5 { FAST } else { SLOW },
            )
        })
        .collect();
    // The search starts in the middle: commit 4 is the first one built after the ends.
    commits[4].make_sleep = 60;
    commits[4].label = "sleepy 4";
    let ids = fake_repo(&repo, &commits);
    let range = format!("{}..{}", ids[0], ids[8]);

    for (round, sig, group) in SIGNAL_ROUNDS {
        let mut r = spawn(
            bisect_cmd(&cache, &repo, &range, &[], d.path()),
            d.path(),
            &format!("round{round}"),
        );
        r.wait_for("make to start sleeping", Duration::from_secs(60), || {
            make_is_sleeping(&cache)
        });
        let before = build_identities(&cache);
        r.signal(sig, group);
        assert_stopped_by(
            r,
            sig,
            &format!("signal {sig} (group: {group}) during make"),
        );
        assert_no_fake_sleeper(d.path());
        assert_cache_consistent(&cache);
        assert_not_rebuilt(&before, &cache);
        // The ends were built and sampled; the interrupted build is not there.
        let names: Vec<String> = build_entries(&cache)
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy()[..12].to_string())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(!names.contains(&ids[4][..12].to_string()), "{names:?}");
    }
    // Each end was built once, in the first round.
    assert_eq!(fake_log(d.path()).matches("installed fast").count(), 1);
    assert_eq!(fake_log(d.path()).matches("installed slow").count(), 1);

    let before = build_identities(&cache);
    let stored = stored_samples(&cache);
    assert!(stored >= 8, "the ends' samples were kept: {stored}");
    let mut cmd = bisect_cmd(&cache, &repo, &range, &[], d.path());
    cmd.env("PB_FAKE_NO_SLEEP", "1");
    let (code, out, err) = spawn(cmd, d.path(), "final").wait(Duration::from_secs(120));
    assert_eq!(code, Some(0), "{err}");
    let j: BisectReport = typed_str(&out).unwrap();
    assert_eq!(culprit_ids(&j), vec![ids[5].clone()], "{}", summary(&j));
    assert_not_rebuilt(&before, &cache);
    let builds = builds_by_commit(&j);
    assert!(!builds[&ids[0]].fresh);
    assert!(!builds[&ids[8]].fresh);
    assert!(builds[&ids[4]].fresh);
    assert_eq!(
        j.samples - j.samples_taken_now,
        stored,
        "every finished sample is reused: {}",
        summary(&j)
    );
    assert_cache_consistent(&cache);
}

/// Whether a sampling child of this cache has been running for `at_least`.
fn long_sample_running(
    cache: &Path,
    seen: &mut BTreeMap<i32, Instant>,
    at_least: Duration,
) -> bool {
    let now = processes_with("__sample")
        .into_iter()
        .filter(|pid| {
            fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(cache.to_str().unwrap()))
        })
        .collect::<Vec<_>>();
    seen.retain(|pid, _| now.contains(pid));
    for pid in now {
        seen.entry(pid).or_insert_with(Instant::now);
    }
    seen.values().any(|t| t.elapsed() >= at_least)
}

/// Ctrl-C while a sample is being taken (a kernel that hangs, so the child
/// is certainly running): exit 130 at once, not after the 60 s timeout, the
/// child is gone, the samples taken so far are kept and reused. SIGTERM and
/// SIGHUP (a login session dropping) stop it the same way, with 143 and 129
/// (at 07d6d4e they killed it where it stood).
#[test]
fn sigint_during_sampling_synthetic_repo() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let repo = d.path().join("repo");
    let ids = fake_repo(
        &repo,
        &[
            fc("fast 0", FAST),
            fc("fast 1", FAST),
            fc("fast 2", FAST),
            fc("fast 3", FAST),
            fc("hang 4", Fake::Hang),
            fc("slow 5", SLOW),
            fc("slow 6", SLOW),
            fc("slow 7", SLOW),
            fc("slow 8", SLOW),
        ],
    );
    let range = format!("{}..{}", ids[0], ids[8]);
    for (round, sig, group) in SIGNAL_ROUNDS {
        let mut r = spawn(
            bisect_cmd(
                &cache,
                &repo,
                &range,
                &clock(&["--timeout", "60"]),
                d.path(),
            ),
            d.path(),
            &format!("round{round}"),
        );
        let mut seen = BTreeMap::new();
        r.wait_for("the hanging sample", Duration::from_secs(60), || {
            long_sample_running(&cache, &mut seen, Duration::from_millis(500))
        });
        let before = build_identities(&cache);
        r.signal(sig, group);
        assert_stopped_by(
            r,
            sig,
            &format!("signal {sig} (group: {group}) during sampling"),
        );
        wait_for("the sampling child to die", Duration::from_secs(3), || {
            processes_with(cache.to_str().unwrap()).is_empty()
        });
        assert_cache_consistent(&cache);
        assert_not_rebuilt(&before, &cache);
    }
    let before = build_identities(&cache);
    let stored = stored_samples(&cache);
    let (code, out, err) = spawn(
        bisect_cmd(&cache, &repo, &range, &clock(&["--timeout", "2"]), d.path()),
        d.path(),
        "final",
    )
    .wait(Duration::from_secs(120));
    assert_eq!(code, Some(0), "{err}");
    let j: BisectReport = typed_str(&out).unwrap();
    assert_eq!(j.changes[0].info.commit, ids[5], "{}", summary(&j));
    assert_eq!(j.changes[0].parent, ids[3], "{}", summary(&j));
    assert_not_rebuilt(&before, &cache);
    assert!(
        builds_by_commit(&j)
            .values()
            .filter(|b| b.commit == ids[0] || b.commit == ids[8] || b.commit == ids[4])
            .all(|b| !b.fresh),
        "{}",
        summary(&j)
    );
    assert_eq!(
        j.samples - j.samples_taken_now,
        stored,
        "every finished sample is reused: {}",
        summary(&j)
    );
}

/// A CI `timeout` (SIGTERM) after a change point was confirmed: the run still prints, in the
/// format asked, every change point it had confirmed, marked as interrupted, then exits 143 as
/// any stopped run does (it once printed nothing of them). The first change (x10 at 2) is
/// confirmed before the second's search reaches the hanging kernel at 4, so the run is surely
/// still going when the signal comes.
#[test]
fn a_stopped_bisect_prints_what_it_had_confirmed_synthetic_repo() {
    use perfbisect::report::interrupted::{InterruptedReport, INTERRUPTED_KIND};
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let repo = d.path().join("repo");
    let slower = Fake::Cost(8000);
    let ids = fake_repo(
        &repo,
        &[
            fc("fast 0", FAST),
            fc("fast 1", FAST),
            fc("slow 2", SLOW),
            fc("slow 3", SLOW),
            fc("hang 4", Fake::Hang),
            fc("slower 5", slower),
            fc("slower 6", slower),
        ],
    );
    let range = format!("{}..{}", ids[0], ids[6]);
    let args = clock(&["--timeout", "60"]);
    let mut r = spawn(
        bisect_cmd(&cache, &repo, &range, &args, d.path()),
        d.path(),
        "stopped",
    );
    let err = r.err.clone();
    r.wait_for("the first change point", Duration::from_secs(90), || {
        fs::read_to_string(&err)
            .unwrap_or_default()
            .contains("change point confirmed: ")
    });
    r.signal(libc::SIGTERM, false);
    let (code, out, err) = r.wait(Duration::from_secs(20));
    assert_eq!(code, Some(143), "{err}");
    let stopped: InterruptedReport = typed_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(stopped.kind, INTERRUPTED_KIND);
    let found: Vec<&str> = (stopped.changes.iter())
        .map(|c| c.info.commit.as_str())
        .collect();
    assert_eq!(found, [ids[2].as_str()], "{out}");
    assert!(stopped.resume.contains(&range), "{}", stopped.resume);
    assert!(
        err.contains("Run the same command again to resume"),
        "{err}"
    );
}

/// `args` on the clock alone: the long sample waited for is then the hanging kernel's (a count
/// under valgrind also runs past 500 ms, and the default may count: then the hang commit was
/// never built before the signals, and the final run built it, rightly reported as built now).
fn clock<'a>(args: &[&'a str]) -> Vec<&'a str> {
    [args, &["--locate", "time"]].concat()
}

/// Ctrl-C at arbitrary moments of a bisect (building, compiling, sampling
/// or in between), alternately to the group and to perfbisect alone, until
/// it finishes: every interrupted run exits 130 promptly, leaves a
/// consistent cache, and no finished build is ever built again.
#[test]
fn sigint_at_any_moment_then_resume_synthetic_repo() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let repo = d.path().join("repo");
    let ids = regression_repo(&repo);
    let range = format!("{}..{}", ids[0], ids[8]);
    let mut interrupted = 0;
    let mut delay = Duration::from_millis(300);
    for round in 0.. {
        assert!(round < 40, "the bisect never finished");
        let before = build_identities(&cache);
        let stored = stored_samples(&cache);
        let r = spawn(
            bisect_cmd(&cache, &repo, &range, &[], d.path()),
            d.path(),
            &format!("round{round}"),
        );
        let t = Instant::now();
        while t.elapsed() < delay && r.child.id() > 0 {
            std::thread::sleep(Duration::from_millis(10));
        }
        let group = round % 2 == 0;
        let mut r = r;
        if r.child.try_wait().unwrap().is_none() {
            r.sigint(group);
        }
        let signalled = Instant::now();
        let (code, out, err) = r.wait(Duration::from_secs(60));
        assert!(!err.contains("panicked"), "{err}");
        assert_cache_consistent(&cache);
        assert_not_rebuilt(&before, &cache);
        if code == Some(0) {
            let j: BisectReport = typed_str(&out).unwrap();
            assert_eq!(culprit_ids(&j), vec![ids[5].clone()], "{}", summary(&j));
            assert_eq!(
                j.samples - j.samples_taken_now,
                stored,
                "every finished sample is reused: {}",
                summary(&j)
            );
            for b in &j.builds {
                let name = before.keys().any(|k| b.commit.starts_with(&k[..12]));
                assert!(!(name && b.fresh), "rebuilt: {b:?}");
            }
            break;
        }
        assert_eq!(code, Some(130), "round {round}: {err}");
        assert!(
            signalled.elapsed() < Duration::from_secs(5),
            "round {round}: slow to exit"
        );
        assert!(
            err.contains("Run the same command again to resume"),
            "{err}"
        );
        interrupted += 1;
        delay += Duration::from_millis(400);
    }
    assert!(interrupted >= 2, "only {interrupted} interruptions");
    wait_for("sampling children to die", Duration::from_secs(3), || {
        processes_with(cache.to_str().unwrap()).is_empty()
    });
}

/// Ctrl-C while waiting for a lock another process holds (here: the work
/// directory, as during someone else's build): exit 130 at once.
#[test]
fn sigint_while_waiting_for_a_lock_synthetic_repo() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let repo = d.path().join("repo");
    let ids = fake_repo(&repo, &[fc("fast 0", FAST)]);
    fs::create_dir_all(cache.join("locks")).unwrap();
    // One work tree: its lock is the one a build must wait for.
    let lock = fs::File::create(cache.join("locks/workdir-0.lock")).unwrap();
    lock.lock().unwrap();
    for group in [true, false] {
        let mut cmd = pb_std(&cache);
        cmd.args(["build", "--work-trees", "1", "--repo"])
            .arg(&repo)
            .arg(&ids[0]);
        let r = spawn(cmd, d.path(), "build");
        std::thread::sleep(Duration::from_millis(800));
        assert!(
            fs::read_dir(cache.join("builds")).unwrap().count() == 0,
            "built while the lock was held"
        );
        r.sigint(group);
        assert_interrupted(r, "SIGINT while waiting for the work directory lock");
        assert_cache_consistent(&cache);
    }
    drop(lock);
    let o = pb(&cache)
        .args(["build", "--repo"])
        .arg(&repo)
        .arg(&ids[0])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

// ------------------------------------------------------------ 4. two processes

/// Two perfbisect processes on one cache: two `build`s of the same commit
/// (one builds, the other waits for it), then two bisects of the same range
/// at once (sharing builds and sample files): both correct, every commit
/// built once, no corrupted entry or sample line.
#[test]
fn two_processes_on_one_cache_synthetic_repo() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let repo = d.path().join("repo");
    let mut commits = vec![
        fc("fast 0", FAST),
        fc("fast 1", FAST),
        fc("fast 2", FAST),
        fc("fast 3", FAST),
        fc("fast 4", FAST),
        fc("slow 5", SLOW),
        fc("slow 6", SLOW),
        fc("slow 7", SLOW),
        fc("slow 8", SLOW),
        fc("slowbuild 9", SLOW),
    ];
    commits[9].make_sleep = 2;
    let ids = fake_repo(&repo, &commits);

    let build = |name: &str| {
        let mut c = pb_std(&cache);
        c.args(["build", "--repo"])
            .arg(&repo)
            .arg(&ids[9])
            .env("PB_FAKE_LOG", d.path().join("fake.log"));
        spawn(c, d.path(), name)
    };
    let (a, b) = (build("build-a"), build("build-b"));
    let (ca, oa, ea) = a.wait(Duration::from_secs(60));
    let (cb, ob, eb) = b.wait(Duration::from_secs(60));
    assert_eq!((ca, cb), (Some(0), Some(0)), "{ea}\n{eb}");
    let outs = [oa, ob];
    assert_eq!(
        outs.iter().filter(|o| o.contains(": built in ")).count(),
        1,
        "{outs:?}"
    );
    // Each says what it does as a line (stderr is no terminal here): one built it, the other
    // waited for it and said on whom.
    let short = &ids[9][..10];
    let (builder, waiter) = match outs[0].contains(": built in ") {
        true => (&ea, &eb),
        false => (&eb, &ea),
    };
    assert!(
        builder.contains(&format!("  built {short} (OpenSSL 3.0.0) in ")),
        "{builder}"
    );
    assert!(
        waiter.contains(&format!(
            "  waiting for {short}: another perfbisect process is building it into "
        )),
        "{waiter}"
    );
    assert_eq!(
        outs.iter().filter(|o| o.contains(": cached -> ")).count(),
        1,
        "{outs:?}"
    );
    assert_eq!(
        fake_log(d.path()).matches("configure slowbuild 9").count(),
        1
    );

    let range = format!("{}..{}", ids[0], ids[8]);
    let run = |name: &str| {
        spawn(
            bisect_cmd(&cache, &repo, &range, &["--first-change-only"], d.path()),
            d.path(),
            name,
        )
    };
    let (a, b) = (run("bisect-a"), run("bisect-b"));
    let (ca, oa, ea) = a.wait(Duration::from_secs(120));
    let (cb, ob, eb) = b.wait(Duration::from_secs(120));
    assert_eq!((ca, cb), (Some(0), Some(0)), "{ea}\n{eb}");
    assert!(
        !ea.contains("warning") && !eb.contains("warning"),
        "{ea}\n{eb}"
    );
    let ja: BisectReport = typed_str(&oa).unwrap();
    let jb: BisectReport = typed_str(&ob).unwrap();
    assert_eq!(culprit_ids(&ja), vec![ids[5].clone()], "{}", summary(&ja));
    assert_eq!(culprit_ids(&jb), vec![ids[5].clone()], "{}", summary(&jb));
    // Every commit was built by one of them only.
    let log = fake_log(d.path());
    for c in &commits[..9] {
        let n = log.matches(&format!("installed {}\n", c.label)).count();
        assert!(n <= 1, "{} built {n} times:\n{log}", c.label);
    }
    let (ba, bb) = (builds_by_commit(&ja), builds_by_commit(&jb));
    for (commit, x) in &ba {
        if let Some(y) = bb.get(commit) {
            assert!(!(x.fresh && y.fresh), "{commit} built by both");
        }
    }
    assert_cache_consistent(&cache);
    // Sample lines appended by both at once are all whole.
    for e in fs::read_dir(cache.join("samples")).unwrap().flatten() {
        for line in fs::read_to_string(e.path()).unwrap().lines() {
            serde_json::from_str::<Value>(line)
                .unwrap_or_else(|err| panic!("{}: {err}: {line}", e.path().display()));
        }
    }
}

// ------------------------------------------------------------ 5. damaged cache

/// Damage on disk: a truncated meta.json, a build whose libcrypto is gone,
/// a meta.json copied from another entry, a truncated sample line, a kernel
/// object whose bytes changed, a truncated bisect record. Each is reported
/// on stderr and rebuilt, recompiled or ignored; never read as valid.
#[test]
fn damaged_cache_entries_are_detected_synthetic_repo() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let repo = d.path().join("repo");
    let ids = regression_repo(&repo);
    let range = format!("{}..{}", ids[0], ids[8]);
    let (j, _): (BisectReport, _) = bisect_json(&cache, &repo, &range, &["--first-change-only"]);
    assert_eq!(culprit_ids(&j), vec![ids[5].clone()], "{}", summary(&j));
    let entries = build_entries(&cache);
    assert!(entries.len() >= 4, "{entries:?}");

    // Truncated meta.json.
    let good = entry_of(&cache, &ids[0]);
    let meta = fs::read(good.join("meta.json")).unwrap();
    fs::write(good.join("meta.json"), &meta[..meta.len() / 2]).unwrap();
    // The library is gone (the libcrypto.so symlink now dangles).
    let bad = entry_of(&cache, &ids[8]);
    fs::remove_file(bad.join("prefix/lib/libcrypto.so.3")).unwrap();
    // A meta.json that parses but describes another build.
    let others: Vec<&PathBuf> = entries
        .iter()
        .filter(|p| **p != good && **p != bad)
        .collect();
    let (x, y) = (others[0], others[1]);
    fs::copy(y.join("meta.json"), x.join("meta.json")).unwrap();
    // A sample line cut short, as by a crash mid-write.
    let samples = fs::read_dir(cache.join("samples"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .max_by_key(|p| fs::metadata(p).unwrap().len())
        .unwrap();
    let text = fs::read(&samples).unwrap();
    let valid_before = String::from_utf8_lossy(&text).lines().count();
    fs::write(&samples, &text[..text.len() - 15]).unwrap();
    // A compiled kernel whose bytes changed.
    let kdir = fs::read_dir(cache.join("kernels"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .unwrap();
    let mut so = fs::read(kdir.join("kernel.so")).unwrap();
    so.extend_from_slice(b"tampered");
    fs::write(kdir.join("kernel.so"), so).unwrap();
    // The bisect record, truncated.
    let record = fs::read_dir(cache.join("bisects"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .next()
        .unwrap();
    let rec = fs::read(&record).unwrap();
    fs::write(&record, &rec[..rec.len() / 3]).unwrap();

    let o = pb(&cache).arg("log").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "warning: ignoring damaged bisect record {}",
            record.display()
        )),
        "{}",
        stderr(&o)
    );

    let (j, o): (BisectReport, _) = bisect_json(&cache, &repo, &range, &["--first-change-only"]);
    let err = stderr(&o);
    assert_eq!(culprit_ids(&j), vec![ids[5].clone()], "{}", summary(&j));
    for (what, needle) in [
        (
            "truncated meta.json",
            format!(
                "warning: damaged build entry {} (missing or unreadable meta.json); rebuilding",
                good.display()
            ),
        ),
        (
            "missing libcrypto",
            format!("warning: damaged build entry {} (", bad.display()),
        ),
        (
            "meta.json of another entry",
            format!(
                "warning: damaged build entry {} (its meta.json describes {}",
                x.display(),
                y.file_name().unwrap().to_string_lossy()
            ),
        ),
        (
            "truncated sample",
            format!(
                "warning: ignoring damaged sample at {}:{valid_before}",
                samples.display()
            ),
        ),
        (
            "altered kernel object",
            format!(
                "warning: kernel object {} is missing or altered, recompiling",
                kdir.join("kernel.so").display()
            ),
        ),
    ] {
        assert!(
            err.contains(&needle),
            "{what}: expected '{needle}' in:\n{err}"
        );
    }
    assert!(err.contains("no shared libcrypto"), "{err}");
    let builds = builds_by_commit(&j);
    assert!(builds[&ids[0]].fresh, "{}", summary(&j));
    assert!(builds[&ids[8]].fresh, "{}", summary(&j));
    assert_cache_consistent(&cache);
    // The kernel cache's meta.json has no public type: its one field read by name.
    let kmeta: Value =
        serde_json::from_str(&fs::read_to_string(kdir.join("meta.json")).unwrap()).unwrap();
    let hash = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(
            fs::read(kdir.join("kernel.so")).unwrap(),
        ))
    };
    assert_eq!(kmeta["sha256"], hash, "the kernel was recompiled");

    // Repaired: a third run rebuilds, recompiles and measures nothing.
    let (j, o): (BisectReport, _) = bisect_json(&cache, &repo, &range, &["--first-change-only"]);
    let err = stderr(&o);
    assert!(!err.contains("damaged build entry"), "{err}");
    assert!(!err.contains("kernel object"), "{err}");
    assert_eq!(j.samples_taken_now, 0, "{}", summary(&j));
    assert!(j.builds.iter().all(|b| !b.fresh), "{}", summary(&j));
}

// ------------------------------------------------------------ 6. disk full

/// Writes that fail while publishing: a build's meta.json (failpoint:
/// ENOSPC after half the bytes), the build log under `ulimit -f` (a real
/// EFBIG from the kernel), a sample line cut in half (failpoint). Each gives
/// one clear error line and exit 2; nothing half-published is visible, a
/// failed build is not cached as the commit's failure, and the next run
/// without the fault succeeds.
#[test]
fn disk_full_while_publishing_synthetic_repo() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let repo = d.path().join("repo");
    let mut commits = vec![fc("fast 0", FAST), fc("noisy 1", FAST), fc("slow 2", SLOW)];
    // 20000 lines of make output: about 1.7 MB of build log.
    commits[1].make_noise = 20000;
    let ids = fake_repo(&repo, &commits);
    let build = |rev: &str| {
        let mut c = pb(&cache);
        c.args(["build", "--repo"]).arg(&repo).arg(rev);
        c
    };

    // The build entry cannot be published.
    let o = build(&ids[0])
        .env("PERFBISECT_FAILPOINT", "publish-build")
        .output()
        .unwrap();
    assert_usage_error(&o, "No space left on device");
    assert!(
        stderr(&o).contains("cannot publish the build of"),
        "{}",
        stderr(&o)
    );
    assert!(build_entries(&cache).is_empty());
    assert_cache_consistent(&cache);
    let o = build(&ids[0]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains(": built in "), "{}", stdout(&o));

    // A file-size limit of 256 KiB: the build log cannot be written.
    let exe = assert_cmd::cargo::cargo_bin("perfbisect");
    let o = Command::new("bash")
        .arg("-c")
        .arg(r#"ulimit -f 256; exec "$@""#)
        .arg("bash")
        .arg(&exe)
        .arg("--cache")
        .arg(&cache)
        .args(["build", "--repo"])
        .arg(&repo)
        .arg(&ids[1])
        .env_remove("PERFBISECT_CACHE")
        .output()
        .unwrap();
    assert_usage_error(&o, "File too large");
    assert!(stderr(&o).contains("nothing was cached"), "{}", stderr(&o));
    assert_eq!(build_entries(&cache).len(), 1, "only the first build");
    assert_cache_consistent(&cache);
    let o = build(&ids[1]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(": built in ") && !stdout(&o).contains("cached failure"),
        "{}",
        stdout(&o)
    );

    // A sample line cannot be written (half of it reaches the file).
    let range = format!("{}..{}", ids[0], ids[2]);
    let o = pb(&cache)
        .arg("-q")
        .args(bisect_args(&repo, &range))
        .env("PERFBISECT_FAILPOINT", "publish-sample")
        .output()
        .unwrap();
    assert_usage_error(&o, "cannot write sample to");
    assert!(
        stderr(&o).contains("No space left on device"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stored_samples(&cache), 0);
    assert_cache_consistent(&cache);
    let (j, o): (BisectReport, _) = bisect_json(&cache, &repo, &range, &[]);
    assert!(
        stderr(&o).contains("warning: ignoring damaged sample at "),
        "{}",
        stderr(&o)
    );
    assert_eq!(culprit_ids(&j), vec![ids[2].clone()], "{}", summary(&j));
}

// ------------------------------------------------------------ 7. hostile arguments

/// Recipe arguments and kernel arguments with shell metacharacters reach
/// config and the kernel as literal argv, never through a shell; a revision
/// that looks like an option (`--upload-pack=…`) is refused as a revision.
#[test]
fn hostile_arguments_are_data_synthetic_repo() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let repo = d.path().join("repo");
    let ids = fake_repo(&repo, &[fc("fast 0", FAST), fc("fast 1", FAST)]);
    let mark = |n: u32| d.path().join(format!("pwned-{n}"));
    let hostile: Vec<String> = vec![
        format!("$(touch {})", mark(1).display()),
        ";".into(),
        format!("`touch {}`", mark(2).display()),
        format!("; touch {} #", mark(3).display()),
        format!("| touch {}", mark(4).display()),
        format!("&& touch {}", mark(5).display()),
        "two words".into(),
        "'quoted' \"double\" \\back".into(),
        "$HOME ${PATH} * ?".into(),
    ];
    let toml_list: Vec<String> = hostile.iter().map(|a| format!("'''{a}'''")).collect();
    let recipe = d.path().join("hostile.toml");
    fs::write(
        &recipe,
        format!(
            "description = \"hostile\"\nconfigure = [{}]\n\n[env]\nPB_HOSTILE = '''$(touch {})'''\n",
            toml_list.join(", "),
            mark(6).display()
        ),
    )
    .unwrap();
    let o = pb(&cache)
        .args(["build", "--recipe"])
        .arg(&recipe)
        .arg("--repo")
        .arg(&repo)
        .arg(&ids[1])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let log = fs::read_to_string(entry_of(&cache, &ids[1]).join("build.log")).unwrap();
    let argv: Vec<&str> = log
        .lines()
        .filter_map(|l| l.strip_prefix("fake-config-arg: [")?.strip_suffix(']'))
        .collect();
    assert_eq!(argv.len(), 3 + hostile.len() + 1, "{argv:?}");
    assert_eq!(&argv[3..3 + hostile.len()], &hostile[..], "{log}");
    assert!(argv.last().unwrap().starts_with("CC="), "{argv:?}");
    assert!(
        log.contains(&format!(
            "fake-config-env: [$(touch {})]",
            mark(6).display()
        )),
        "{log}"
    );

    // A kernel argument: reaches the sampling child as one argv element.
    let tag = format!(
        "$(touch {});`touch {}`;touch {}",
        mark(7).display(),
        mark(8).display(),
        mark(9).display()
    );
    let o = pb(&cache)
        .args([
            "run",
            "--samples",
            "1",
            "--duration",
            "0.05",
            "--format",
            "json",
        ])
        .args(["--recipe"])
        .arg(&recipe)
        .arg("--repo")
        .arg(&repo)
        .arg("--rev")
        .arg(&ids[1])
        .arg("--tool")
        .arg(format!("fakework:tag={tag}"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let j: RunReport = typed(&o);
    assert_eq!(j.results[0].args["tag"], tag, "{j:?}");
    assert_eq!(j.results[0].n, 1, "{j:?}");

    for n in 1..=9 {
        assert!(
            !mark(n).exists(),
            "marker {n} exists: a shell ran an argument"
        );
    }

    // Revisions that look like options.
    let upload = format!("--upload-pack=touch {}", mark(10).display());
    let repo_s = repo.to_str().unwrap();
    let range = format!("{upload}..{}", ids[1]);
    let cases: Vec<Vec<&str>> = vec![
        vec!["build", "--repo", repo_s, "--", &upload],
        vec![
            "bisect", "--tool", "fakework", "--repo", repo_s, "--", &range,
        ],
        vec![
            "compare", "--tool", "fakework", "--repo", repo_s, "--", &upload, &ids[1],
        ],
        vec![
            "verify", "--tool", "fakework", "--repo", repo_s, "--", &upload,
        ],
        vec!["cache", "rm", "--repo", repo_s, "--", &upload],
    ];
    for args in cases {
        let o = pb(&cache).args(&args).output().unwrap();
        assert_usage_error(&o, &format!("'{upload}' is not a valid revision"));
    }
    let o = pb(&cache)
        .args(["run", "--tool", "fakework", "--repo", repo_s])
        .arg(format!("--rev={upload}"))
        .output()
        .unwrap();
    assert_usage_error(&o, "is not a valid revision");
    assert!(!mark(10).exists());
}

// ------------------------------------------------------------ 8. private cache, checked kernels

/// The cache (and any parent perfbisect creates for it) is private (0700).
/// A kernel object is loaded only if it is the one perfbisect compiled: one
/// replaced by another shared object (here one whose constructor would
/// leave a marker file) is detected by its hash, reported, recompiled, and
/// never loaded.
#[test]
fn private_cache_and_checked_kernel_objects_synthetic_repo() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("new/deeper/cache");
    let repo = d.path().join("repo");
    let ids = fake_repo(&repo, &[fc("fast 0", FAST)]);
    let o = pb(&cache).args(["cache", "ls"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for dir in [&cache, &d.path().join("new"), &d.path().join("new/deeper")] {
        let mode = fs::metadata(dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", dir.display());
    }

    // `shared`: said with PERFBISECT_SHARED_CACHE.
    let run_as = |shared: bool| {
        let mut c = pb(&cache);
        if shared {
            c.env("PERFBISECT_SHARED_CACHE", "1");
        }
        c.args([
            "run",
            "--samples",
            "1",
            "--duration",
            "0.05",
            "--format",
            "json",
        ])
        .args(["--tool", "fakework", "--repo"])
        .arg(&repo)
        .arg("--rev")
        .arg(&ids[0])
        .output()
        .unwrap()
    };
    let run = || run_as(false);
    let o = run();
    assert!(o.status.success(), "{}", stderr(&o));
    let kdir = fs::read_dir(cache.join("kernels"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("fakework-")
        })
        .unwrap();
    let so = kdir.join("kernel.so");
    let original = fs::read(&so).unwrap();

    // An impostor with the ABI's symbols that writes a marker when loaded.
    let marker = d.path().join("impostor-was-loaded");
    let src = d.path().join("impostor.c");
    fs::write(
        &src,
        format!(
            r#"#include <stdio.h>
__attribute__((constructor)) static void pwn(void) {{
    FILE *f = fopen("{}", "w");
    if (f) fclose(f);
}}
int pb_abi_version(void) {{ return 1; }}
"#,
            marker.display()
        ),
    )
    .unwrap();
    let st = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success());
    assert_ne!(fs::read(&so).unwrap(), original);

    let o = run();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "warning: kernel object {} is missing or altered, recompiling",
            so.display()
        )),
        "{}",
        stderr(&o)
    );
    assert!(!marker.exists(), "the impostor kernel object was loaded");
    let j: RunReport = typed(&o);
    assert_eq!(j.results[0].n, 1, "{j:?}");
    assert_eq!(
        fs::read(&so).unwrap(),
        original,
        "recompiled to the same object"
    );

    // Another library in the build's place (one that loads: the built one, a byte longer):
    // not the file the build recorded, so the entry is damaged and built again.
    let entry = entry_of(&cache, &ids[0]);
    let lib = entry.join("prefix/lib/libcrypto.so.3");
    let mut other = fs::read(&lib).unwrap();
    other.push(0);
    fs::write(&lib, &other).unwrap();
    let o = run();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "warning: damaged build entry {} (the library {} of ",
            entry.display(),
            lib.display()
        )) && stderr(&o).contains("is not the file its build recorded"),
        "{}",
        stderr(&o)
    );
    assert_ne!(fs::read(&lib).unwrap(), other, "built again");
    assert_cache_consistent(&cache);
    let before: RunReport = typed(&run());

    // A cache others can write: refused in one line, used when said shared.
    fs::set_permissions(&cache, fs::Permissions::from_mode(0o777)).unwrap();
    let o = run();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("can be written by others (its mode is 777)"),
        "{}",
        stderr(&o)
    );
    let o = run_as(true);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: RunReport = typed(&o);
    // Its own samples only (a file of this user's, keyed apart): the sample stored before,
    // in a file anyone could have written, is not read; a new one is taken.
    assert_eq!(j.results[0].n, 1, "{j:?}");
    assert_ne!(
        j.results[0].samples[0].session, before.results[0].samples[0].session,
        "{j:?}"
    );
}

// ------------------------------------------------------------ 9. bad invocations

/// A catalogue of bad invocations across every command: each exits 2 with
/// one line naming the problem, no panic, and leaves the cache (a used one:
/// builds, kernels, samples, a bisect record) byte-for-byte unchanged.
#[test]
fn bad_invocations_catalogue_synthetic_repo() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let repo = d.path().join("repo");
    let ids = fake_repo(&repo, &[fc("fast 0", FAST), fc("slow 1", SLOW)]);
    let (j, _): (BisectReport, _) =
        bisect_json(&cache, &repo, &format!("{}..{}", ids[0], ids[1]), &[]);
    assert_eq!(culprit_ids(&j), vec![ids[1].clone()], "{}", summary(&j));
    let before = cache_snapshot(&cache);
    for sub in ["builds/", "kernels/", "samples/", "bisects/", "locks/"] {
        assert!(
            before.contains_key(sub),
            "{sub} missing from the used cache"
        );
    }

    let r = repo.to_str().unwrap();
    let not_repo = d.path().to_str().unwrap();
    let bad_toml = d.path().join("bad.toml");
    fs::write(
        &bad_toml,
        "description = \"x\"\nconfigure = [\"shared\"\nmake_targets = 3\n",
    )
    .unwrap();
    let bad_toml = bad_toml.to_str().unwrap();
    let range = "HEAD~1..HEAD";
    let cases: &[(&[&str], &str)] = &[
        // run
        (
            &["run", "--tool", "nosuchtool"],
            "unknown tool 'nosuchtool'",
        ),
        (
            &["run", "--tool", "fakework", "--threads", "0"],
            "thread counts must be at least 1",
        ),
        (
            &["run", "--tool", "fakework", "--duration", "-1"],
            "duration must be more than 0",
        ),
        (
            &["run", "--tool", "fakework", "--samples", "0"],
            "not a positive number of samples",
        ),
        (
            &["run", "--tool", "fakework:nosucharg=1"],
            "unknown argument 'nosucharg'",
        ),
        (&["run", "--tool", "fakework:tag"], "is not key=value"),
        // A value given twice is a slip, never silently the last one or a double measurement.
        (
            &["run", "--tool", "fakework:tag=a,tag=b"],
            "argument 'tag' of tool fakework is given twice",
        ),
        (
            &["run", "--tool", "fakework", "--tool", "fakework:tag=none"],
            "tool fakework is given twice",
        ),
        (
            &["run", "--tool", "fakework", "--threads", "1,2,1"],
            "thread count 1 is listed twice",
        ),
        (
            &["run", "--tool", "fakework", "--duration", "100000000"],
            "longer than perfbisect allows",
        ),
        (
            &[
                "compare",
                "--repo",
                r,
                "--tool",
                "fakework",
                "--threads",
                "1,1",
                "HEAD~1",
                "HEAD",
            ],
            "thread count 1 is listed twice",
        ),
        (
            &[
                "matrix",
                "--repo",
                r,
                "--tool",
                "fakework",
                "--revs",
                "HEAD,HEAD",
            ],
            "revision HEAD is listed twice",
        ),
        (
            &[
                "run", "--repo", r, "--tool", "fakework", "--rev", "HEAD", "--rev", "HEAD",
            ],
            "revision HEAD is listed twice",
        ),
        (&["simulate", "--trials", "0"], "not a count of at least 1"),
        (&["simulate", "--commits", "0"], "not a count of at least 1"),
        (
            &["build", "--repo", r, "--jobs", "0", "HEAD"],
            "not a count of at least 1",
        ),
        (
            &[
                "run",
                "--tool",
                "fakework",
                "--rev",
                "HEAD",
                "--openssl-dir",
                "/x",
            ],
            "cannot be used with",
        ),
        (
            &["run", "--tool", "fakework", "--openssl-dir", "/nonexistent"],
            "is not a directory",
        ),
        (
            &[
                "run",
                "--tool",
                "fakework",
                "--repo",
                r,
                "--rev",
                "nosuchrev",
            ],
            "unknown revision 'nosuchrev'",
        ),
        // kernels
        (&["kernels", "--format", "nosuch"], "invalid value 'nosuch'"),
        (&["kernels", "extra"], "unexpected argument 'extra'"),
        // build
        (
            &["build", "--repo", r, "nosuchrev"],
            "unknown revision 'nosuchrev'",
        ),
        (
            &["build", "--repo", "/nonexistent", "HEAD"],
            "does not exist",
        ),
        (
            &["build", "--repo", not_repo, "HEAD"],
            "is not a git repository",
        ),
        (
            &["build", "--repo", r, "--recipe", "nosuch", "HEAD"],
            "unknown recipe 'nosuch'",
        ),
        (
            &["build", "--repo", r, "--recipe", bad_toml, "HEAD"],
            "bad.toml:",
        ),
        (
            &["build", "--repo", r],
            "required arguments were not provided",
        ),
        // bisect
        (
            &["bisect", "--tool", "fakework", "--repo", r, "HEAD"],
            "malformed range 'HEAD'",
        ),
        (
            &["bisect", "--tool", "fakework", "--repo", r, "HEAD..HEAD"],
            "the same commit",
        ),
        (
            &["bisect", "--tool", "fakework", "--repo", r, "HEAD..HEAD~1"],
            "did you mean HEAD~1..HEAD?",
        ),
        (
            &[
                "bisect", "--tool", "fakework", "--repo", r, "--alpha", "1.5", range,
            ],
            "alpha must be between 0 and 1",
        ),
        // A count threshold for a search that does not count: accepted, it would change nothing.
        (
            &[
                "bisect",
                "--tool",
                "fakework",
                "--repo",
                r,
                "--threads",
                "1,2",
                "--count-min-effect",
                "0.5%",
                range,
            ],
            "this search does not locate by counts",
        ),
        (
            &[
                "scan",
                "--tool",
                "fakework",
                "--repo",
                r,
                "--count-min-effect",
                "0.5%",
                range,
            ],
            "this search does not locate by counts",
        ),
        (
            &[
                "bisect",
                "--tool",
                "fakework",
                "--repo",
                r,
                "--min-effect",
                "0",
                range,
            ],
            "minimum effect must be more than 0",
        ),
        (
            &[
                "bisect",
                "--tool",
                "fakework",
                "--repo",
                r,
                "--samples",
                "4",
                "--max-samples",
                "2",
                range,
            ],
            "must not be less than initial samples",
        ),
        (
            &[
                "bisect",
                "--tool",
                "fakework",
                "--repo",
                r,
                "--threads",
                "0",
                range,
            ],
            "thread counts must be at least 1",
        ),
        (&["bisect", "--repo", r, range], "--tool"),
        (
            &[
                "bisect", "--tool", "fakework", "--repo", r, "--format", "nosuch", range,
            ],
            "invalid value 'nosuch'",
        ),
        (
            &[
                "bisect",
                "--tool",
                "fakework",
                "--repo",
                r,
                "--recipe",
                "/nonexistent/r.toml",
                range,
            ],
            "cannot read recipe file",
        ),
        // compare, verify
        (
            &[
                "compare",
                "--tool",
                "fakework",
                "--repo",
                r,
                "HEAD",
                "nosuchrev",
            ],
            "unknown revision 'nosuchrev'",
        ),
        (
            &["compare", "--tool", "fakework", "--repo", r, "HEAD"],
            "<B>",
        ),
        (
            &[
                "compare",
                "--tool",
                "nosuchtool",
                "--repo",
                r,
                "HEAD~1",
                "HEAD",
            ],
            "unknown tool",
        ),
        (
            &["verify", "--tool", "fakework", "--repo", r, "HEAD~1"],
            "has no parent",
        ),
        (
            &[
                "verify",
                "--tool",
                "fakework",
                "--repo",
                r,
                "--threads",
                "x",
                "HEAD",
            ],
            "'x' is not a thread count",
        ),
        // log
        (&["log", "--format", "nosuch"], "invalid value 'nosuch'"),
        (&["log", "extra"], "unexpected argument 'extra'"),
        // simulate
        (
            &["simulate", "--commits", "1"],
            "--commits must be at least 2",
        ),
        (&["simulate", "--step", "abc"], "'abc' is not an effect"),
        (
            &["simulate", "--skip-rate", "2"],
            "--skip-rate must be in [0, 1)",
        ),
        (
            &["simulate", "--step", "10%@5000"],
            "step position 5000 is outside",
        ),
        (&["simulate", "--noise", "x"], "invalid value 'x'"),
        // cache
        (
            &["cache", "ls", "--format", "nosuch"],
            "invalid value 'nosuch'",
        ),
        (&["cache", "gc"], "needs --keep N or --older-than AGE"),
        (&["cache", "gc", "--older-than", "7x"], "'7x' is not an age"),
        (
            &["cache", "gc", "--keep", "x"],
            "invalid value 'x' for '--keep",
        ),
        (&["cache", "rm"], "<REV>"),
        (
            &["cache", "rm", "--repo", r, "nosuchrev"],
            "unknown revision 'nosuchrev'",
        ),
        (&["cache", "frob"], "unrecognized subcommand 'frob'"),
        // recipes, top level
        (&["recipes", "extra"], "unexpected argument 'extra'"),
        (
            &["nosuchcommand"],
            "unrecognized subcommand 'nosuchcommand'",
        ),
        (
            &["--threads", "2", "recipes"],
            "unexpected argument '--threads'",
        ),
    ];
    assert!(cases.len() >= 20);
    let mut commands = std::collections::BTreeSet::new();
    for (args, needle) in cases {
        let o = pb(&cache).args(*args).output().unwrap();
        if !(o.status.code() == Some(2)
            && stderr(&o).to_lowercase().contains(&needle.to_lowercase()))
        {
            eprintln!("case {args:?}");
        }
        assert_usage_error(&o, needle);
        assert!(stdout(&o).is_empty(), "{args:?}: stdout {}", stdout(&o));
        assert!(
            cache_snapshot(&cache) == before,
            "{args:?} changed the cache"
        );
        commands.insert(args[0]);
    }
    for c in [
        "run", "kernels", "build", "bisect", "compare", "verify", "log", "simulate", "cache",
        "recipes",
    ] {
        assert!(commands.contains(c), "no bad invocation of {c}");
    }
}

/// Parent pid of a process, from /proc.
fn ppid(pid: i32) -> Option<i32> {
    let s = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    s.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// perfbisect killed outright (SIGKILL: no handler runs) during make: make
/// dies with it, the staging directory it leaves is never visible as an
/// entry, and the next build removes it and builds normally.
#[test]
fn sigkill_during_a_build_synthetic_repo() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let repo = d.path().join("repo");
    let mut c = fc("sleepy 0", FAST);
    c.make_sleep = 60;
    let ids = fake_repo(&repo, &[c]);
    let build = || {
        let mut c = pb_std(&cache);
        c.args(["build", "--repo"])
            .arg(&repo)
            .arg(&ids[0])
            .env("PB_FAKE_PIDFILE", d.path().join("fake.pids"));
        c
    };
    let mut r = spawn(build(), d.path(), "killed");
    r.wait_for("make to start sleeping", Duration::from_secs(60), || {
        make_is_sleeping(&cache)
    });
    let sleeper: i32 = fs::read_to_string(d.path().join("fake.pids"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let make = ppid(sleeper).unwrap();
    assert!(fs::read_to_string(format!("/proc/{make}/cmdline"))
        .unwrap()
        .starts_with("make"));
    // SAFETY: kill has no memory effects.
    unsafe { libc::kill(r.pid(), libc::SIGKILL) };
    let _ = r.child.wait();
    wait_for(
        "make to die with perfbisect",
        Duration::from_secs(3),
        || !alive(make),
    );
    // SAFETY: as above (the orphaned sleep: tidy up).
    unsafe { libc::kill(sleeper, libc::SIGKILL) };
    let staging: Vec<String> = fs::read_dir(cache.join("builds"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        staging.len() == 1 && staging[0].starts_with(".tmp-"),
        "{staging:?}"
    );
    assert!(build_entries(&cache).is_empty());
    let o = pb(&cache)
        .args(["cache", "ls", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(json_of(&o), serde_json::json!({"schema": 1, "builds": []}));

    let (code, out, err) = {
        let mut c = build();
        c.env("PB_FAKE_NO_SLEEP", "1");
        spawn(c, d.path(), "again").wait(Duration::from_secs(60))
    };
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(": built in "), "{out}");
    assert_cache_consistent(&cache);
    assert_eq!(build_entries(&cache).len(), 1);
}

/// GOOD on a release branch, BAD on main: the merge base is placed between them in the same
/// rounds. Like GOOD: the search runs from the merge base to BAD. Like BAD: the change is on
/// GOOD's own branch, which is searched instead.
#[test]
fn merge_base_is_placed_between_good_and_bad_synthetic_repo() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let repo = d.path().join("branches");
    let main = fake_repo(
        &repo,
        &[fc("fast 0", FAST), fc("fast 1 (merge base)", FAST)],
    );
    git(&repo, &["checkout", "-q", "-b", "rel"]);
    let rel = fake_commits(&repo, &[fc("fast r1", FAST)]);
    git(&repo, &["checkout", "-q", "main"]);
    let more = fake_commits(
        &repo,
        &[fc("fast 2", FAST), fc("slow 3", SLOW), fc("slow 4", SLOW)],
    );

    let (j, o): (BisectReport, _) =
        bisect_json(&cache, &repo, &format!("{}..{}", rel[0], more[2]), &[]);
    let merge_base = j.merge_base.as_ref().map(|m| m.commit.as_str());
    assert_eq!(merge_base, Some(main[1].as_str()), "{}", summary(&j));
    assert_eq!(j.changes[0].info.commit, more[1], "{}", summary(&j));
    assert!(stderr(&o).contains("behaves like"), "{}", stderr(&o));

    // Now GOOD itself is the slow one: the merge base behaves like BAD (fast).
    git(&repo, &["checkout", "-q", "rel"]);
    let slow = fake_commits(&repo, &[fc("slow r2", SLOW)]);
    let (j, o): (BisectReport, _) =
        bisect_json(&cache, &repo, &format!("{}..{}", slow[0], more[0]), &[]);
    let err = stderr(&o);
    assert!(err.contains("the change is on"), "{err}");
    assert_eq!(j.good.commit, main[1], "{}", summary(&j));
    assert_eq!(j.bad.commit, slow[0], "{}", summary(&j));
    assert_eq!(j.changes[0].info.commit, slow[0], "{}", summary(&j));
}

/// Commits whose loaded binaries are byte-identical (here: the fake's reproducible builds of
/// commits that change nothing the library is built from) are one subject to the search:
/// measured once, their samples shared, and the result says how many probes that saved.
#[test]
fn byte_identical_builds_share_their_samples_synthetic_repo() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    let repo = d.path().join("repo");
    let ids = fake_repo(
        &repo,
        &[
            fc("fast 0 (good)", FAST),
            fc("fast 1", FAST),
            fc("fast 2", FAST),
            fc("fast 3", FAST),
            fc("culprit 4: slow", SLOW),
            fc("slow 5", SLOW),
            fc("slow 6 (bad)", SLOW),
        ],
    );
    let range = format!("{}..{}", ids[0], ids[6]);
    let (j, o): (BisectReport, _) = bisect_json(&cache, &repo, &range, &[]);
    assert_eq!(j.changes[0].info.commit, ids[4], "{}", summary(&j));
    assert!(j.shared_probes >= 1, "{}", summary(&j));
    // A tested commit with the good end's binaries is the good end: classified old without
    // a comparison that could come out ambiguous.
    let fast_steps: Vec<&StepJson> = (j.steps.iter())
        .filter(|st| ids[1..4].contains(&st.info.commit))
        .collect();
    assert!(!fast_steps.is_empty(), "{}", summary(&j));
    assert!(
        fast_steps
            .iter()
            .all(|st| st.verdict == "old" && st.kind == Some(StepKind::Old)),
        "{}",
        summary(&j)
    );
    let text = pb(&cache)
        .args(bisect_args(&repo, &range))
        .arg("-v")
        .output()
        .unwrap();
    assert!(
        stdout(&text).contains("probes saved:"),
        "{}\n{}",
        stdout(&text),
        stderr(&o)
    );
}

/// The explanations of a bisect's result (`BisectReport` skips them when it reads one).
#[derive(serde::Deserialize)]
struct BisectExplanations {
    explanations: Vec<ExplainReport>,
}

/// `bisect --metric instructions --explain` on the fake OpenSSL: the count finds the slow
/// commit with the metric's small schedule, and the explanation names the function whose
/// instructions per operation grew (fake_work loops 10x as often), with its flame graph.
#[test]
fn instruction_bisect_explains_its_culprit_synthetic_repo() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    let ids = fake_repo(
        &repo,
        &[
            fc("fast 0 (good)", FAST),
            fc("fast 1", FAST),
            fc("culprit 2: slow", SLOW),
            fc("slow 3 (bad)", SLOW),
        ],
    );
    let plots = d.path().join("plots");
    let o = pb(&d.path().join("cache"))
        .args(["bisect", "--tool", "fakework", "--metric", "instructions"])
        .args([
            "--duration",
            "0.05",
            "--jobs",
            "2",
            "--explain",
            "--format",
            "json",
        ])
        .args(["--plot", plots.to_str().unwrap()])
        .args(["--repo", repo.to_str().unwrap()])
        .arg(format!("{}..{}", ids[0], ids[3]))
        .output()
        .unwrap();
    assert!(o.status.success(), "bisect failed: {}", stderr(&o));
    let j: BisectReport = typed(&o);
    assert_eq!(j.metric, Metric::Instructions, "{}", summary(&j));
    assert_eq!(culprit_ids(&j), vec![ids[2].clone()], "{}", summary(&j));
    // Deterministic counts: the 3-sample start decides every step.
    for s in &j.steps {
        assert!(s.n <= 6, "{}", summary(&j));
    }
    // BisectReport does not read its explanations back (they are written, never resumed from):
    // they are read on their own, as `explain`'s result type.
    let explanations: Vec<ExplainReport> = typed::<BisectExplanations>(&o).explanations;
    let e = &explanations[0];
    assert_eq!(e.source, "callgrind");
    let top = &e.diff.functions[0];
    assert_eq!(top.function, "fake_work", "{e:?}");
    let (before, after) = (top.self_before, top.self_after);
    assert!(after > 5.0 * before && before > 0.0, "{e:?}");
    assert!(top.share > 0.9, "{e:?}");
    let svg = e.flamegraph.as_deref().expect("the flame graph's path");
    assert!(svg.starts_with(plots.to_str().unwrap()), "{svg}");
    let text = fs::read_to_string(svg).unwrap();
    assert!(
        text.contains("fake_work") && text.contains("<svg"),
        "flame graph without the function"
    );
}
