//! The Slurm executor on a real one-node cluster (`scripts/slurm-up`, which `scripts/test` and
//! `.ci/run` start): a bisect and a scan of the fake OpenSSL give the answers the local
//! executor gives, every build and every block of samples ran as a Slurm job (checked against
//! Slurm's own job records), a measurement job cancelled mid-way is submitted again, and a
//! scan with two lanes keeps both intervals' blocks in flight. On the three-node cluster beside
//! it (`scripts/slurm-up --nodes 3`), a scan's two lanes run on two nodes, each staying on its
//! own, and a lane's node drained mid-scan stops the run within `pending_limit` with one line
//! naming the job, the node and Slurm's reason.

use crate::common;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{assert_usage_error, fake_openssl_repo, perfbisect, stderr, stdout, test_kernels};
use perfbisect::measure::exec::slurm::{BlockRecord, JobRecord, BLOCKS_FILE, JOBS_FILE};
use perfbisect::measure::exec::ExecutorKind;
use perfbisect::report::bisect::BisectReport;
use perfbisect::report::scan::ScanReport;

/// Slurm's record of every job that ended (jobcomp/filetxt, see scripts/slurm-up).
const JOBCOMP: &str = "/var/log/slurm/jobcomp.log";

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

/// The cluster must be up: a test that skipped itself here would pass without testing.
fn require_cluster() {
    let o = Command::new("sinfo").args(["-h", "-o", "%P %a"]).output();
    let ok = o.as_ref().is_ok_and(|o| {
        let t = String::from_utf8_lossy(&o.stdout);
        o.status.success() && t.contains("build") && t.contains("measure")
    });
    assert!(
        ok,
        "no Slurm cluster with partitions build and measure: run scripts/slurm-up (scripts/test does) — {o:?}"
    );
}

/// Eight commits; the fifth makes the fake kernel ten times slower.
fn repo(dir: &Path) -> (PathBuf, Vec<String>) {
    let repo = dir.join("repo");
    let slow: &[(&str, &str)] = &[("fake_cost.h", "#define FAKE_COST 2000\n")];
    let ids = fake_openssl_repo(
        &repo,
        &[
            ("base", &[("fake_cost.h", "#define FAKE_COST 200\n")]),
            ("one", &[("notes/1.txt", "1\n")]),
            ("two", &[("notes/2.txt", "2\n")]),
            ("three", &[("notes/3.txt", "3\n")]),
            ("slower", slow),
            ("five", &[("notes/5.txt", "5\n")]),
            ("six", &[("notes/6.txt", "6\n")]),
            ("seven", &[("notes/7.txt", "7\n")]),
        ],
    );
    (repo, ids)
}

const SAMPLING: &[&str] = &[
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
    "1",
    "--format",
    "json",
];

fn search(cache: &Path, repo: &Path, command: &str, executor: &[&str]) -> Output {
    perfbisect(cache)
        .arg("--kernels-dir")
        .arg(test_kernels())
        .arg(command)
        .args(SAMPLING)
        .args(executor)
        .arg("--repo")
        .arg(repo)
        .arg("HEAD~7..HEAD")
        .output()
        .unwrap()
}

fn slurm_flags(work: &Path) -> Vec<String> {
    vec![
        "--executor".into(),
        "slurm".into(),
        "--slurm-config".into(),
        work.join("slurm.toml").to_string_lossy().into_owned(),
    ]
}

/// The jobs the executor submitted, from every run directory of the cache.
fn submitted(cache: &Path) -> Vec<JobRecord> {
    records_in(cache, JOBS_FILE)
}

/// The blocks the executor handed to its lanes' jobs, from every run directory of the cache.
fn handed(cache: &Path) -> Vec<BlockRecord> {
    records_in(cache, BLOCKS_FILE)
}

fn records_in<T: serde::de::DeserializeOwned>(cache: &Path, file: &str) -> Vec<T> {
    let mut v = Vec::new();
    let Ok(runs) = std::fs::read_dir(cache.join("jobs")) else {
        return v;
    };
    for run in runs.flatten() {
        let Ok(text) = std::fs::read_to_string(run.path().join(file)) else {
            continue;
        };
        v.extend(text.lines().map(|l| serde_json::from_str(l).unwrap()));
    }
    v
}

/// The samples a handed block's answers file holds.
fn answered_in(b: &BlockRecord) -> usize {
    let t = std::fs::read_to_string(Path::new(&b.dir).join("answers.jsonl")).unwrap_or_default();
    t.lines().filter(|l| l.contains("\"sampled\"")).count()
}

/// Slurm's own records: job id → (name, state, partition). A restarted controller may hand an
/// id out again, so a record counts only with the job's name too (see `record`).
fn slurm_records() -> HashMap<String, Vec<(String, String, String)>> {
    let text = std::fs::read_to_string(JOBCOMP).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let f: HashMap<&str, &str> = l
                .split_whitespace()
                .filter_map(|kv| kv.split_once('='))
                .collect();
            let id = f.get("JobId")?.to_string();
            let field = |k: &str| f.get(k).map(|s| s.to_string()).unwrap_or_default();
            Some((id, (field("Name"), field("JobState"), field("Partition"))))
        })
        .fold(HashMap::new(), |mut m, (id, r)| {
            m.entry(id).or_insert_with(Vec::new).push(r);
            m
        })
}

/// Slurm's record of `job`: (state, partition).
fn record(
    records: &HashMap<String, Vec<(String, String, String)>>,
    job: &JobRecord,
) -> (String, String) {
    let r = records
        .get(&job.id)
        .and_then(|v| v.iter().rev().find(|(name, ..)| *name == job.name))
        .unwrap_or_else(|| panic!("Slurm has no record of job {} ({})", job.id, job.name));
    (r.1.clone(), r.2.clone())
}

/// Waits until Slurm has recorded each job (jobcomp is written as a job ends).
fn records_of(jobs: &[JobRecord]) -> HashMap<String, Vec<(String, String, String)>> {
    let started = Instant::now();
    loop {
        let r = slurm_records();
        let all = jobs.iter().all(|j| {
            r.get(&j.id)
                .is_some_and(|v| v.iter().any(|(name, ..)| *name == j.name))
        });
        if all || started.elapsed() > Duration::from_secs(30) {
            return r;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Cancels the lane job sampling the first block of `cache` once it has answered a sample: a
/// job lost mid-way. Returns its id.
fn cancel_first_block_midway(cache: PathBuf) -> std::thread::JoinHandle<Option<String>> {
    std::thread::spawn(move || {
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(120) {
            if let Some(b) = handed(&cache).first() {
                if answered_in(b) >= 1 {
                    let o = Command::new("scancel").arg(&b.job).output().unwrap();
                    assert!(o.status.success(), "{}", stderr(&o));
                    return Some(b.job.clone());
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    })
}

fn submitted_or_none(cache: &Path) -> Vec<JobRecord> {
    if cache.join("jobs").is_dir() {
        submitted(cache)
    } else {
        Vec::new()
    }
}

#[test]
fn bisect_and_scan_through_slurm_answer_as_the_local_executor_does() {
    require_cluster();
    let d = tempfile::tempdir().unwrap();
    let (repo, ids) = repo(d.path());
    std::fs::write(
        d.path().join("slurm.toml"),
        format!(
            "[slurm]\nbuild_partition = \"build\"\nmeasure_partition = \"measure\"\nmax_jobs = 4\njob_retries = 2\nprefetch = true\nwork_dir = \"{}\"\n",
            d.path().join("node-work").display()
        ),
    )
    .unwrap();
    let flags = slurm_flags(d.path());
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();

    let local = search(&d.path().join("local"), &repo, "bisect", &[]);
    assert!(local.status.success(), "{}", stderr(&local));
    let local: BisectReport = serde_json::from_slice(&local.stdout).unwrap();

    let cache = d.path().join("slurm");
    let killer = cancel_first_block_midway(cache.clone());
    let o = search(&cache, &repo, "bisect", &flags);
    let cancelled = killer.join().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let slurm: BisectReport = serde_json::from_slice(&o.stdout).unwrap();

    let culprits = |r: &BisectReport| -> Vec<String> {
        r.changes.iter().map(|c| c.info.commit.clone()).collect()
    };
    assert_eq!(culprits(&slurm), vec![ids[4].clone()], "{}", stdout(&o));
    assert_eq!(culprits(&slurm), culprits(&local));
    // Every sample was taken on the cluster's one node, and the report says so.
    assert_eq!(slurm.placement.executor, ExecutorKind::Slurm);
    assert_eq!(slurm.placement.hosts, vec![hostname()]);
    assert_eq!(local.placement.executor, ExecutorKind::Local);

    // Every build the bisect used was made by a Slurm build job, every sample by a lane job,
    // and Slurm recorded each.
    let jobs = submitted(&cache);
    let records = records_of(&jobs);
    for b in &slurm.builds {
        let job = jobs
            .iter()
            .find(|j| j.partition == "build" && j.what.starts_with(&b.commit))
            .unwrap_or_else(|| panic!("no Slurm build job for {}: {jobs:?}", b.commit));
        assert_eq!(record(&records, job), ("COMPLETED".into(), "build".into()));
        assert!(b.ok && b.fresh, "{b:?}");
    }
    // prefetch = true: the commits the search might probe next were built while it measured,
    // so some builds were made that the search then did not need.
    let build_jobs = jobs.iter().filter(|j| j.partition == "build").count();
    assert!(
        build_jobs > slurm.builds.len(),
        "{build_jobs} build jobs: {jobs:?}"
    );
    let lane_jobs: Vec<&JobRecord> = jobs.iter().filter(|j| j.partition == "measure").collect();
    let blocks = handed(&cache);
    let answered: usize = blocks.iter().map(answered_in).sum();
    assert_eq!(answered, slurm.samples_taken_now, "{blocks:?}");

    // The cancelled job: Slurm says so, and its block was handed again to the lane's next
    // job, which finished it.
    let cancelled = cancelled.expect("no measurement job was seen running");
    let lost = lane_jobs.iter().find(|j| j.id == cancelled).unwrap();
    assert_eq!(record(&records, lost).0, "CANCELLED");
    let cut = blocks.iter().find(|b| b.job == cancelled).unwrap();
    let again = blocks
        .iter()
        .find(|b| b.attempt == 2 && b.block == cut.block)
        .unwrap_or_else(|| panic!("the cancelled block was not handed again: {blocks:?}"));
    let next = lane_jobs.iter().find(|j| j.id == again.job).unwrap();
    assert_eq!(
        record(&records, next),
        ("COMPLETED".into(), "measure".into())
    );
    for j in &lane_jobs {
        let (state, partition) = record(&records, j);
        assert_eq!(partition, "measure");
        assert!(state == "COMPLETED" || j.id == cancelled, "{j:?}: {state}");
    }
    assert!(stderr(&o).contains("ended before"), "{}", stderr(&o));

    // A scan: its grid's builds are one wave of jobs; the same change as the local scan.
    let local = search(&d.path().join("local"), &repo, "scan", &[]);
    assert!(local.status.success(), "{}", stderr(&local));
    let local: ScanReport = serde_json::from_slice(&local.stdout).unwrap();
    let o = search(&cache, &repo, "scan", &flags);
    assert!(o.status.success(), "{}", stderr(&o));
    let scan: ScanReport = serde_json::from_slice(&o.stdout).unwrap();
    let confirmed = |r: &ScanReport| -> Vec<String> {
        r.changes
            .iter()
            .filter(|c| c.point.confirmed)
            .map(|c| c.point.info.commit.clone())
            .collect()
    };
    assert_eq!(confirmed(&scan), vec![ids[4].clone()]);
    assert_eq!(confirmed(&scan), confirmed(&local));
}

/// Thirteen commits: the third makes the fake kernel ten times slower, the eleventh ten times
/// slower again (a speed-up would never reach `--min-effect 100%`).
fn two_steps(dir: &Path) -> (PathBuf, Vec<String>) {
    let repo = dir.join("repo");
    let cost = |c: &str| format!("#define FAKE_COST {c}\n");
    let (fast, slow, slower) = (cost("200"), cost("2000"), cost("20000"));
    let note = |i: usize| (format!("notes/{i}.txt"), format!("{i}\n"));
    let mut owned: Vec<(String, Vec<(String, String)>)> =
        (0..13).map(|i| (format!("c{i}"), vec![note(i)])).collect();
    owned[0].1.push(("fake_cost.h".into(), fast));
    owned[2].1.push(("fake_cost.h".into(), slow));
    owned[10].1.push(("fake_cost.h".into(), slower));
    let ids = owned_repo(&repo, &owned);
    (repo, ids)
}

/// A fake OpenSSL repository at `repo` of commits given as (message, files).
fn owned_repo(repo: &Path, owned: &[(String, Vec<(String, String)>)]) -> Vec<String> {
    let files: Vec<Vec<(&str, &str)>> = owned
        .iter()
        .map(|(_, f)| f.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect())
        .collect();
    let commits: Vec<(&str, &[(&str, &str)])> = owned
        .iter()
        .zip(&files)
        .map(|((m, _), f)| (m.as_str(), &f[..]))
        .collect();
    fake_openssl_repo(repo, &commits)
}

/// The flags of a run through Slurm with `lanes` lanes, its configuration (a work directory
/// under `dir`) written to `dir`.
fn lanes_flags(dir: &Path, lanes: usize) -> Vec<String> {
    let work = dir.join("node-work").display().to_string();
    let toml = dir.join("slurm.toml");
    std::fs::write(&toml, format!("[slurm]\nwork_dir = \"{work}\"\n")).unwrap();
    let lanes = lanes.to_string();
    let toml = toml.display().to_string();
    let flags = [
        "--executor",
        "slurm",
        "--slurm-lanes",
        &lanes,
        "--slurm-config",
        &toml,
    ];
    flags.map(String::from).to_vec()
}

#[test]
fn a_scan_through_slurm_searches_its_intervals_side_by_side() {
    require_cluster();
    let d = tempfile::tempdir().unwrap();
    let (repo, ids) = two_steps(d.path());
    let scan = |cache: &str, executor: &[&str]| -> (Output, ScanReport) {
        let o = perfbisect(&d.path().join(cache))
            .arg("--kernels-dir")
            .arg(test_kernels())
            .args(["scan", "--grid", "4"])
            .args(SAMPLING)
            .args(executor)
            .arg("--repo")
            .arg(&repo)
            .arg("HEAD~12..HEAD")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let r = serde_json::from_slice(&o.stdout).unwrap();
        (o, r)
    };
    let flags = lanes_flags(d.path(), 2);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let (o, lanes) = scan("slurm", &flags);

    let confirmed = |r: &ScanReport| -> Vec<String> {
        let c = r.changes.iter().filter(|c| c.point.confirmed);
        c.map(|c| c.point.info.commit.clone()).collect()
    };
    // The two changes, each found in its own interval (the other test holds the Slurm
    // executor's answers to the local executor's).
    assert_eq!(
        confirmed(&lanes),
        vec![ids[2].clone(), ids[10].clone()],
        "{}",
        stderr(&o)
    );

    // Each change was told as soon as its lane confirmed it, with its share of the range's
    // change (each ×10 of a ×100 range: about half).
    let err = stderr(&o);
    let told: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("change point confirmed:"))
        .collect();
    assert_eq!(told.len(), 2, "{err}");
    for l in &told {
        let share: f64 = l
            .split("% of the range's change")
            .next()
            .and_then(|h| h.rsplit(' ').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no share in {l}"));
        assert!((35.0..=65.0).contains(&share), "{l}");
    }

    // The two intervals' searches ran side by side: a lane's block was submitted while
    // another was queued or running, every block after the grid's was a lane's own, and each
    // lane sampled only its own interval's commits (0..=4 or 8..=12).
    let cache = d.path().join("slurm");
    let jobs = submitted(&cache);
    let records = records_of(&jobs);
    for j in jobs.iter().filter(|j| j.partition == "measure") {
        assert_eq!(record(&records, j), ("COMPLETED".into(), "measure".into()));
    }
    let lane_blocks: Vec<(BlockRecord, serde_json::Value)> = (handed(&cache).into_iter())
        .filter(|b| b.lane.is_some())
        .map(|b| {
            let v = block_of(&b);
            (b, v)
        })
        .collect();
    assert!(
        lane_blocks.iter().any(|(b, _)| b.alongside >= 1),
        "no lane's block was handed beside another: {lane_blocks:#?}"
    );
    let in_span = |b: &serde_json::Value, span: std::ops::RangeInclusive<usize>| {
        let runs = b["runs"].as_array().unwrap();
        runs.iter().all(|r| {
            let label = r["label"].as_str().unwrap();
            span.clone().any(|i| ids[i].starts_with(label))
        })
    };
    for (j, b) in &lane_blocks {
        assert!(in_span(b, 0..=4) || in_span(b, 8..=12), "{j:?}: {b}");
    }
    assert!(lane_blocks.iter().any(|(_, b)| in_span(b, 0..=4)));
    assert!(lane_blocks.iter().any(|(_, b)| in_span(b, 8..=12)));
}

/// A handed block, as the executor wrote it for its lane's job.
fn block_of(b: &BlockRecord) -> serde_json::Value {
    let text = std::fs::read_to_string(Path::new(&b.dir).join("block.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The commits a block samples, by their place in `ids`.
fn block_commits(block: &serde_json::Value, ids: &[String]) -> Vec<usize> {
    let runs = block["runs"].as_array().unwrap();
    let mut at: Vec<usize> = runs
        .iter()
        .map(|r| {
            let label = r["label"].as_str().unwrap();
            ids.iter().position(|id| id.starts_with(label)).unwrap()
        })
        .collect();
    at.sort_unstable();
    at
}

/// Eight commits that each build other binaries (a cost one higher each time), the fifth ten
/// times slower: none is measured as another's twin, so each probe of a wave needs a lane.
fn distinct(dir: &Path) -> (PathBuf, Vec<String>) {
    let repo = dir.join("repo");
    let cost = |i: usize| format!("#define FAKE_COST {}\n", if i < 4 { 200 } else { 2000 } + i);
    let owned: Vec<(String, Vec<(String, String)>)> = (0..8)
        .map(|i| (format!("c{i}"), vec![("fake_cost.h".into(), cost(i))]))
        .collect();
    let ids = owned_repo(&repo, &owned);
    (repo, ids)
}

#[test]
fn a_bisect_through_slurm_probes_a_wave_of_commits_side_by_side() {
    require_cluster();
    let d = tempfile::tempdir().unwrap();
    let (repo, ids) = distinct(d.path());
    let flags = lanes_flags(d.path(), 3);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let bisect = |cache: &str, executor: &[&str]| -> (Output, BisectReport) {
        let o = search(&d.path().join(cache), &repo, "bisect", executor);
        assert!(o.status.success(), "{}", stderr(&o));
        let r = serde_json::from_slice(&o.stdout).unwrap();
        (o, r)
    };
    let (_, local) = bisect("local", &[]);
    let (o, wide) = bisect("slurm", &flags);
    let culprits = |r: &BisectReport| -> Vec<String> {
        r.changes.iter().map(|c| c.info.commit.clone()).collect()
    };
    assert_eq!(culprits(&wide), vec![ids[4].clone()], "{}", stderr(&o));
    assert_eq!(culprits(&wide), culprits(&local));

    // The first wave: three candidates cutting 0..7 into four, each in a block of its own
    // with the range's two ends, submitted while the others were queued or running; then the
    // one commit left between the newest Old and the first New.
    let cache = d.path().join("slurm");
    let jobs = submitted(&cache);
    let records = records_of(&jobs);
    let blocks = handed(&cache);
    let lane_blocks: Vec<(&BlockRecord, Vec<usize>)> = (blocks.iter())
        .filter(|b| b.lane.is_some())
        .map(|b| (b, block_commits(&block_of(b), &ids)))
        .collect();
    // A lane's later looks ask for the same three commits again.
    let mut waves: Vec<&Vec<usize>> = Vec::new();
    for (_, c) in &lane_blocks {
        if !waves.contains(&c) {
            waves.push(c);
        }
    }
    assert_eq!(
        waves,
        [
            &vec![0, 1, 7],
            &vec![0, 3, 7],
            &vec![0, 5, 7],
            &vec![3, 4, 5]
        ],
        "{lane_blocks:?}"
    );
    let alongside: Vec<usize> = lane_blocks
        .iter()
        .take(3)
        .map(|(b, _)| b.alongside)
        .collect();
    assert_eq!(alongside, [0, 1, 2], "{blocks:#?}");
    for j in jobs.iter().filter(|j| j.partition == "measure") {
        assert_eq!(record(&records, j), ("COMPLETED".into(), "measure".into()));
    }
    // The report counts every lane's samples, as the jobs answered them.
    let answered: usize = blocks.iter().map(answered_in).sum();
    assert_eq!(answered, wide.samples_taken_now);
    assert_eq!(wide.samples, wide.samples_taken_now);

    // The same command again replays the same waves on the lanes' samples: nothing new.
    let (o, again) = bisect("slurm", &flags);
    assert_eq!(culprits(&again), culprits(&wide), "{}", stderr(&o));
    assert_eq!(again.samples_taken_now, 0, "{}", stderr(&o));
}

#[test]
fn slurm_that_cannot_serve_the_run_is_one_line_and_exit_2() {
    require_cluster();
    let d = tempfile::tempdir().unwrap();
    let (repo, _) = repo(d.path());
    let cache = d.path().join("cache");
    let o = search(
        &cache,
        &repo,
        "bisect",
        &["--executor", "slurm", "--slurm-measure-partition", "nosuch"],
    );
    assert_usage_error(
        &o,
        "unknown Slurm partition 'nosuch' (the cluster has: build, measure)",
    );
    let o = search(&cache, &repo, "bisect", &["--slurm-max-jobs", "2"]);
    assert_usage_error(&o, "--slurm-* and --sbatch-arg need --executor slurm");
    // A config file the run refuses, in one line.
    let refused = |command: &str, table: &str, needle: &str| {
        let file = d.path().join("slurm.toml");
        std::fs::write(&file, format!("[slurm]\n{table}\n")).unwrap();
        let file = file.to_string_lossy().into_owned();
        let flags = ["--executor", "slurm", "--slurm-config", &file];
        assert_usage_error(&search(&cache, &repo, command, &flags), needle);
    };
    refused("bisect", "max_job = 3", "unknown field `max_job`");
    refused("scan", "lanes = 0", "lanes must be at least 1");
    refused("bisect", "build_cpus = 0", "build_cpus must be at least 1");
    refused(
        "scan",
        "lane_time_limit = 0",
        "lane_time_limit must be at least 1",
    );
}

/// The configuration of the three-node cluster (`scripts/slurm-up --nodes 3`).
const NODES_CONF: &str = "/etc/slurm-nodes/slurm.conf";
const NODES_JOBCOMP: &str = "/var/log/slurm-nodes/jobcomp.log";

/// The node cluster must be up with three idle nodes: a test that skipped itself would pass
/// without testing.
fn require_nodes() -> Vec<String> {
    let o = Command::new("sinfo")
        .env("SLURM_CONF", NODES_CONF)
        .args(["-h", "-N", "-p", "measure", "-o", "%N"])
        .output();
    let nodes: Vec<String> = o.as_ref().map_or(Vec::new(), |o| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    });
    assert!(
        nodes.len() >= 3,
        "no Slurm cluster of three nodes at {NODES_CONF}: run scripts/slurm-up --nodes 3 (scripts/test does) — {o:?}"
    );
    nodes
}

/// The node each of the node cluster's jobs ran on, from Slurm's own record: job id → NodeList
/// (jobcomp is written as a job ends, so it waits until every job of `jobs` is there).
fn nodes_of(jobs: &[&JobRecord]) -> HashMap<String, String> {
    let started = Instant::now();
    loop {
        let ran = jobcomp_now(jobs, "NodeList");
        if jobs.iter().all(|j| ran.contains_key(&j.id))
            || started.elapsed() > Duration::from_secs(30)
        {
            return ran;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A scan of the 13 commits of `two_steps` at `repo` through the three-node cluster, with
/// `flags` (a process of its own, so a test may watch it run).
fn node_scan(cache: &Path, repo: &Path, flags: &[String]) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("perfbisect"));
    c.arg("--cache")
        .arg(cache)
        .env_remove("PERFBISECT_CACHE")
        .env("SLURM_CONF", NODES_CONF)
        .arg("--kernels-dir")
        .arg(test_kernels())
        .args(["scan", "--grid", "4"])
        .args(SAMPLING)
        .args(flags)
        .arg("--repo")
        .arg(repo)
        .arg("HEAD~12..HEAD");
    c
}

/// A scan with two lanes on a real cluster of three nodes (slurmd each in a network namespace of
/// its own, named n1..n3): each lane's search is one job that holds its node for every block
/// of the search, the two on two different nodes side by side (named by Slurm's NodeName), and
/// the scan names the two changes. Before, each block was a job of its own, queued anew.
#[test]
fn a_scan_through_three_nodes_keeps_each_lane_on_a_node_of_its_own() {
    let nodes = require_nodes();
    let d = tempfile::tempdir().unwrap();
    let (repo, ids) = two_steps(d.path());
    let flags = lanes_flags(d.path(), 2);
    let cache = d.path().join("cache");
    let o = node_scan(&cache, &repo, &flags).output().unwrap();
    assert_both_named(&o, &ids);

    let jobs = submitted(&cache);
    let lane_jobs: Vec<&JobRecord> = jobs.iter().filter(|j| j.partition == "measure").collect();
    let ran = nodes_of(&lane_jobs);
    let mut per_lane: HashMap<usize, (BTreeSet<String>, BTreeSet<String>)> = HashMap::new();
    for b in handed(&cache).iter().filter(|b| b.lane.is_some()) {
        let node = ran
            .get(&b.job)
            .unwrap_or_else(|| panic!("no record of {b:?}"));
        assert!(nodes.contains(node), "{node} is not one of {nodes:?}");
        // The samples a lane's block continues from were taken on its node, by NodeName.
        if let Some(host) = block_of(b)["host"].as_str() {
            assert_eq!(host, node, "{b:?}");
        }
        let (jobs, nodes) = per_lane.entry(b.lane.unwrap()).or_default();
        jobs.insert(b.job.clone());
        nodes.insert(node.clone());
    }
    assert!(per_lane.len() >= 2, "{per_lane:?}");
    for (lane, (jobs, nodes)) in &per_lane {
        assert_eq!(jobs.len(), 1, "lane {lane} took several jobs: {jobs:?}");
        assert_eq!(nodes.len(), 1, "lane {lane} on several nodes: {nodes:?}");
    }
    let used: BTreeSet<&String> = per_lane.values().flat_map(|(_, n)| n).collect();
    assert!(used.len() >= 2, "the two lanes shared one node: {used:?}");
    // Every job carried a time limit derived from what it does (none is UNLIMITED), and
    // none ran again under its id after a failure (--no-requeue).
    let all: Vec<&JobRecord> = jobs.iter().collect();
    nodes_of(&all);
    let limits = jobcomp_now(&all, "TimeLimit");
    assert_eq!(limits.len(), all.len(), "{limits:?}");
    assert!(limits.values().all(|t| t != "UNLIMITED"), "{limits:?}");
    // A build job asked for the cores of a build node (2 here), which its make uses; at
    // daa1ec0 it asked for Slurm's default, one, and ran make -j of every core it saw.
    let builds: Vec<&JobRecord> = jobs.iter().filter(|j| j.partition == "build").collect();
    assert!(!builds.is_empty(), "{jobs:#?}");
    let cpus = jobcomp_now(&builds, "ProcCnt");
    assert_eq!(cpus.len(), builds.len(), "{cpus:?}");
    assert!(cpus.values().all(|c| c == "2"), "{cpus:?}");
    // Each node kept its work trees in a directory of its own, though the nodes share the
    // filesystem it is on (at d2f61ec they shared one, and its slot locks).
    for node in nodes_of(&builds).values() {
        let own = d.path().join("node-work").join(node);
        assert!(own.is_dir(), "no work directory of {node}");
    }
}

/// A scan of `two_steps` on the three-node cluster with two lanes: its repository, commits,
/// flags and cache, with `extra` added to its `[slurm]` table.
fn node_run(dir: &Path, extra: &str) -> (PathBuf, Vec<String>, Vec<String>, PathBuf) {
    let (repo, ids) = two_steps(dir);
    let flags = lanes_flags(dir, 2);
    let toml = dir.join("slurm.toml");
    let text = std::fs::read_to_string(&toml).unwrap() + extra;
    std::fs::write(&toml, text).unwrap();
    (repo, ids, flags, dir.join("cache"))
}

/// The scan of `two_steps` succeeded and confirmed both its changes.
fn assert_both_named(o: &Output, ids: &[String]) {
    assert!(o.status.success(), "{:?}: {}", o.status, stderr(o));
    let both = vec![ids[2].clone(), ids[10].clone()];
    assert_eq!(confirmed(o), both, "{}", stderr(o));
}

/// The changes a scan's JSON report confirmed.
fn confirmed(o: &Output) -> Vec<String> {
    let r: ScanReport = serde_json::from_slice(&o.stdout).unwrap();
    (r.changes.iter().filter(|c| c.point.confirmed))
        .map(|c| c.point.info.commit.clone())
        .collect()
}

/// Resumes a drained node when dropped, whatever the test did: the node cluster is shared.
struct Drained(String);

impl Drop for Drained {
    fn drop(&mut self) {
        let _ = Command::new("scontrol")
            .env("SLURM_CONF", NODES_CONF)
            .args(["update", &format!("nodename={}", self.0), "state=resume"])
            .status();
    }
}

/// The node job `id` runs on, if the node cluster's queue says it runs.
fn running_on(id: &str) -> Option<String> {
    let o = Command::new("squeue")
        .env("SLURM_CONF", NODES_CONF)
        .args(["-h", "-t", "running", "-o", "%N", "-j", id])
        .output()
        .ok()?;
    let node = stdout(&o).trim().to_string();
    (!node.is_empty()).then_some(node)
}

/// A lane's node drained mid-scan (an admin takes it out), with lane jobs short enough
/// (`lane_time_limit = 1`) that the lane needs a new job for its next block: that job, sent to
/// the lane's node, waits for a node that will not come back; within `pending_limit` it is
/// cancelled and the lane goes on on another node, sampling its block's subjects afresh there,
/// and the scan names both changes. At 07d6d4e the block stayed PENDING (ReqNodeNotAvail)
/// forever; at 57e29c4 the run stopped.
#[test]
fn a_lane_whose_node_is_drained_goes_on_afresh_on_another() {
    let nodes = require_nodes();
    let d = tempfile::tempdir().unwrap();
    let (repo, ids, flags, cache) = node_run(d.path(), "pending_limit = 5\nlane_time_limit = 1\n");
    let child = piped(node_scan(&cache, &repo, &flags));
    // The first lane job seen running with a sample answered: drain its node.
    let started = Instant::now();
    let (drained, lane) = loop {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no lane block ran"
        );
        let blocks = handed(&cache);
        let running = (blocks.iter())
            .filter(|b| b.lane.is_some() && answered_in(b) >= 1)
            .find_map(|b| running_on(&b.job).map(|n| (n, b.lane)));
        if let Some((node, lane)) = running {
            let o = Command::new("scontrol")
                .env("SLURM_CONF", NODES_CONF)
                .args([
                    "update",
                    &format!("nodename={node}"),
                    "state=drain",
                    "reason=perfbisect-test",
                ])
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", stderr(&o));
            break (Drained(node), lane);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(nodes.contains(&drained.0));
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_both_named(&o, &ids);
    assert!(
        err.contains("waited")
            && err.contains(&format!("for node {}", drained.0))
            && err.contains("the lane goes on on another node"),
        "{err}"
    );
    // The lane's blocks after the move: on another node, each continuing from samples taken
    // on the drained one and so sampled afresh (every run to its full count there).
    let jobs = submitted(&cache);
    let ran = nodes_of(&jobs.iter().collect::<Vec<_>>());
    let moved: Vec<BlockRecord> = (handed(&cache).into_iter())
        .filter(|b| b.lane == lane && answered_in(b) > 0)
        .filter(|b| {
            ran.get(&b.job)
                .is_some_and(|n| *n != drained.0 && nodes.contains(n))
        })
        .collect();
    assert!(!moved.is_empty(), "{err}");
    let first = &moved[0];
    let block = block_of(first);
    assert_eq!(block["host"].as_str(), Some(drained.0.as_str()), "{block}");
    let want: u64 = (block["runs"].as_array().unwrap().iter())
        .map(|r| r["want"].as_u64().unwrap())
        .sum();
    assert_eq!(answered_in(first) as u64, want, "{block}");
}

/// A job that will never start by itself (held: `sbatch --hold`) stops the run within
/// `pending_limit` with one line naming the job and Slurm's reason, and the run's jobs are
/// cancelled. At 07d6d4e it waited forever, with no message.
#[test]
fn a_held_job_stops_the_run_with_one_line_within_the_limit() {
    require_nodes();
    let d = tempfile::tempdir().unwrap();
    let hold = "pending_limit = 5\nsbatch_args = [\"--hold\"]\n";
    let (repo, _, flags, cache) = node_run(d.path(), hold);
    let started = Instant::now();
    let o = node_scan(&cache, &repo, &flags).output().unwrap();
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(started.elapsed() < Duration::from_secs(60), "{err}");
    let last = err
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    assert!(
        last.contains("Slurm job") && last.contains("will not clear") && last.contains("JobHeld"),
        "{err}"
    );
    assert_no_job_left("a held job");
}

/// A field of each of `jobs`' lines in the node cluster's jobcomp as it is now (no waiting):
/// job id → value.
fn jobcomp_now(jobs: &[&JobRecord], field: &str) -> HashMap<String, String> {
    let text = std::fs::read_to_string(NODES_JOBCOMP).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let f: HashMap<&str, &str> = l
                .split_whitespace()
                .filter_map(|kv| kv.split_once('='))
                .collect();
            let job = jobs.iter().find(|j| {
                f.get("JobId") == Some(&j.id.as_str()) && f.get("Name") == Some(&j.name.as_str())
            })?;
            Some((job.id.clone(), f.get(field)?.to_string()))
        })
        .collect()
}

/// `c` started with its output kept for the test to read.
fn piped(mut c: Command) -> std::process::Child {
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Whether any job of a perfbisect run is in the node cluster's queue (`squeue` as it is now).
fn perfbisect_jobs_queued() -> Option<String> {
    let q = Command::new("squeue")
        .env("SLURM_CONF", NODES_CONF)
        .args(["-h", "-o", "%i %j %T"])
        .output()
        .unwrap();
    let text = stdout(&q);
    text.contains("perfbisect").then_some(text)
}

/// SIGHUP (a login session dropping) once, and SIGTERM twice in a row (the second exits at
/// once, without the executor's own clean-up), while a scan's jobs are queued on the
/// three-node cluster: each ends with 128 + the signal and leaves no job of the run in the
/// queue. At 07d6d4e SIGTERM and SIGHUP killed perfbisect with its jobs left queued, and a
/// second Ctrl-C exited without scancel.
#[test]
fn signals_cancel_the_runs_jobs_before_exit() {
    require_nodes();
    for (sig, times) in [(libc::SIGHUP, 1), (libc::SIGTERM, 2)] {
        let d = tempfile::tempdir().unwrap();
        let (repo, _) = two_steps(d.path());
        let flags = lanes_flags(d.path(), 2);
        let cache = d.path().join("cache");
        let mut child = piped(node_scan(&cache, &repo, &flags));
        wait_until(&mut child, "a measurement job was submitted", || {
            (submitted_or_none(&cache).iter()).any(|j| j.partition == "measure")
        });
        for _ in 0..times {
            // SAFETY: kill has no memory effects.
            assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
            std::thread::sleep(Duration::from_millis(100));
        }
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(128 + sig), "{}", stderr(&o));
        assert_no_job_left(&format!("signal {sig} x{times}"));
    }
}

/// No job of a perfbisect run stays in the queue once scancel has taken effect (20 s).
fn assert_no_job_left(after: &str) {
    let started = Instant::now();
    while perfbisect_jobs_queued().is_some() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(perfbisect_jobs_queued(), None, "after {after}");
}

/// SIGHUP (a login session dropping) mid-scan, then the same command again: nothing of the
/// first run is left in the queue, every sample its lanes answered before they were stopped is
/// in the cache and used again (the second run takes only what the first did not), and the
/// second run names both changes.
#[test]
fn sighup_mid_scan_then_the_same_command_loses_nothing() {
    require_nodes();
    let d = tempfile::tempdir().unwrap();
    let (repo, ids, flags, cache) = node_run(d.path(), "");
    let mut child = piped(node_scan(&cache, &repo, &flags));
    wait_until(&mut child, "a lane answered", || {
        (handed(&cache).iter()).any(|b| b.lane.is_some() && answered_in(b) >= 2)
    });
    // SAFETY: kill has no memory effects.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGHUP) }, 0);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(128 + libc::SIGHUP), "{}", stderr(&o));
    assert_no_job_left("SIGHUP");
    let answered: usize = handed(&cache).iter().map(answered_in).sum();
    assert!(answered > 0);

    let o = node_scan(&cache, &repo, &flags).output().unwrap();
    assert_both_named(&o, &ids);
    let r: ScanReport = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        r.samples - r.samples_taken_now,
        answered,
        "the second run did not find every sample the first was answered: {}",
        stderr(&o)
    );
    eprintln!(
        "SIGHUP mid-scan: {answered} samples answered by the first run's lanes; the same command used {} again and took {} more",
        r.samples - r.samples_taken_now,
        r.samples_taken_now
    );
    assert_no_job_left("the same command again");
}

/// A run killed where it could not cancel its jobs (SIGKILL) while its build jobs wait in the
/// queue (`--begin`, so they are still there): the same command again takes those build jobs
/// over instead of submitting its own (each recorded as adopted, and no second build job of
/// the same commit), and names both changes; nothing is left in the queue after it.
#[test]
fn a_killed_runs_build_jobs_are_taken_over_by_the_same_command() {
    require_nodes();
    let d = tempfile::tempdir().unwrap();
    let (repo, ids) = two_steps(d.path());
    let flags = lanes_flags(d.path(), 2);
    let toml = d.path().join("slurm.toml");
    let plain = std::fs::read_to_string(&toml).unwrap();
    let later = d.path().join("later.toml");
    std::fs::write(&later, plain + "sbatch_args = [\"--begin=now+20\"]\n").unwrap();
    let later_flags: Vec<String> = (flags.iter())
        .map(|f| match f == &toml.display().to_string() {
            true => later.display().to_string(),
            false => f.clone(),
        })
        .collect();
    let cache = d.path().join("cache");
    let mut child = piped(node_scan(&cache, &repo, &later_flags));
    wait_until(&mut child, "a build job was submitted", || {
        (submitted_or_none(&cache).iter()).any(|j| j.partition == "build")
    });
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap();
    child.wait().unwrap();
    let first: Vec<JobRecord> = submitted(&cache);
    let waiting: Vec<&JobRecord> = first.iter().filter(|j| j.partition == "build").collect();
    assert!(
        perfbisect_jobs_queued().is_some(),
        "the killed run left nothing queued"
    );

    let o = node_scan(&cache, &repo, &flags).output().unwrap();
    let err = stderr(&o);
    assert_both_named(&o, &ids);
    let all = submitted(&cache);
    let second: Vec<&JobRecord> = (all.iter())
        .filter(|j| !first.iter().any(|f| f.id == j.id && !j.adopted))
        .collect();
    for w in &waiting {
        assert!(
            second.iter().any(|j| j.adopted && j.id == w.id),
            "{w:?} was not taken over: {err}"
        );
        let again = (second.iter()).filter(|j| !j.adopted && j.what == w.what);
        assert_eq!(again.count(), 0, "{w:?} was built again: {err}");
    }
    assert!(err.contains("taken over"), "{err}");
    assert_no_job_left("the same command after SIGKILL");
}

/// Waits (two minutes at most) until `done` says `what` happened while `child` still runs.
fn wait_until(child: &mut std::process::Child, what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "not within 2 minutes: {what}"
        );
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            panic!("the scan ended ({status}) before {what}:\n{err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

// ---------------------------------------------------------------- faults (issue 48, item 8)

/// What perfbisect said about Slurm during a fault (printed for the record of the run).
fn slurm_lines(err: &str) -> String {
    (err.lines())
        .filter(|l| l.contains("Slurm") || l.contains("lane"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What each fault test asserts beside the answer: every block's answers were taken on one
/// host, and a block that continued from samples of another node was sampled afresh there (no
/// test pools two hosts); no job of the run is left in the queue; nothing half-written is in
/// the cache.
fn assert_clean_after(cache: &Path, fault: &str) {
    for b in handed(cache) {
        let text =
            std::fs::read_to_string(Path::new(&b.dir).join("answers.jsonl")).unwrap_or_default();
        let lines: Vec<serde_json::Value> = (text.lines())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let sampled: Vec<&serde_json::Value> =
            lines.iter().filter(|l| l["kind"] == "sampled").collect();
        let hosts: BTreeSet<&str> = (sampled.iter())
            .map(|l| l["taken"]["host"].as_str().unwrap())
            .collect();
        assert!(
            hosts.len() <= 1,
            "{fault}: {} answered from {hosts:?}",
            b.dir
        );
        let block = block_of(&b);
        let done = lines.last().is_some_and(|l| l["kind"] == "done");
        let moved = block["host"]
            .as_str()
            .is_some_and(|h| hosts.first().is_some_and(|now| *now != h));
        if done && moved {
            for (i, r) in block["runs"].as_array().unwrap().iter().enumerate() {
                let n = sampled.iter().filter(|l| l["run"] == i).count() as u64;
                assert_eq!(n, r["want"].as_u64().unwrap(), "{fault}: {} run {i}", b.dir);
            }
        }
    }
    assert_no_job_left(fault);
    common::assert_cache_consistent(cache);
}

/// The first lane block seen running on the node cluster with `answered` samples answered:
/// its record and the node it runs on.
fn a_running_lane_block(
    child: &mut std::process::Child,
    cache: &Path,
    answered: usize,
) -> (BlockRecord, String) {
    let mut found = None;
    wait_until(child, "a lane block running", || {
        found = (handed(cache).into_iter())
            .filter(|b| b.lane.is_some() && answered_in(b) >= answered)
            .find_map(|b| running_on(&b.job).map(|n| (b, n)));
        found.is_some()
    });
    found.unwrap()
}

/// Continues a stopped slurmctld when dropped, whatever the test did: the cluster is shared.
struct Paused(i32);

impl Drop for Paused {
    fn drop(&mut self) {
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(self.0, libc::SIGCONT) };
    }
}

fn pid_in(file: &str) -> i32 {
    let text = std::fs::read_to_string(file).unwrap();
    text.trim().parse().unwrap()
}

/// The node cluster's controller stops answering mid-scan (SIGSTOP, then SIGCONT 25 s later:
/// longer than the 15 s, so that a client call surely fails — Slurm's clients wait
/// MessageTimeout, 10 s, twice): the run asks again with growing pauses, says so, and names
/// both changes. At 591826b the first `squeue` that timed out ended the run (exit 2).
#[test]
fn a_controller_that_stops_answering_is_asked_again() {
    require_nodes();
    let d = tempfile::tempdir().unwrap();
    let (repo, ids, flags, cache) = node_run(d.path(), "");
    let started = Instant::now();
    let mut child = piped(node_scan(&cache, &repo, &flags));
    a_running_lane_block(&mut child, &cache, 1);
    let ctld = pid_in("/run/perfbisect-slurm-nodes/slurmctld.pid");
    // SAFETY: kill has no memory effects.
    assert_eq!(unsafe { libc::kill(ctld, libc::SIGSTOP) }, 0);
    let paused = Paused(ctld);
    std::thread::sleep(Duration::from_secs(25));
    drop(paused);
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_both_named(&o, &ids);
    assert!(
        err.contains("Slurm's controller does not answer (") && err.contains("answers again"),
        "{err}"
    );
    assert_clean_after(&cache, "a paused controller");
    eprintln!(
        "controller paused 25 s: the scan ended after {} s\n{}",
        started.elapsed().as_secs(),
        slurm_lines(&err)
    );
}

/// `scontrol requeue` of a lane job mid-block. As submitted (`--no-requeue`) Slurm refuses it;
/// an admin who turns requeueing back on and requeues it gets the job queued again under its
/// id: the run cancels it at its next look at the queue (Slurm counts a restart), and the
/// block goes to a new job; started again first, it would sample nothing
/// (SLURM_RESTART_COUNT). No block was answered beyond what it wanted. At 591826b the run
/// waited for the requeued job to start again (the scan took 159 s instead of 16).
#[test]
fn a_requeued_lane_job_never_samples_its_blocks_again() {
    require_nodes();
    let d = tempfile::tempdir().unwrap();
    let (repo, ids, flags, cache) = node_run(d.path(), "");
    let mut child = piped(node_scan(&cache, &repo, &flags));
    let scontrol = |args: &[&str]| {
        Command::new("scontrol")
            .env("SLURM_CONF", NODES_CONF)
            .args(args)
            .output()
            .unwrap()
    };
    // A lane's job may end between the look and the requeue (its search done): then the next.
    let mut tries = 0;
    let block = loop {
        tries += 1;
        assert!(tries <= 5, "no lane job stayed to be requeued");
        let (block, _) = a_running_lane_block(&mut child, &cache, 1);
        let refused = scontrol(&["requeue", &block.job]);
        assert!(!refused.status.success(), "{}", stderr(&refused));
        if stderr(&refused).contains("already finished") {
            continue;
        }
        assert!(
            stderr(&refused).contains("disabled"),
            "{}",
            stderr(&refused)
        );
        let on = scontrol(&["update", &format!("jobid={}", block.job), "requeue=1"]);
        let requeued = scontrol(&["requeue", &block.job]);
        if [&on, &requeued]
            .iter()
            .any(|o| stderr(o).contains("already finished"))
        {
            continue;
        }
        assert!(on.status.success(), "{}", stderr(&on));
        assert!(requeued.status.success(), "{}", stderr(&requeued));
        break block;
    };
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_both_named(&o, &ids);
    let said = format!("Slurm job {} (the measurement lane of", block.job);
    assert!(
        err.contains(&said) && err.contains("was queued again after it ran"),
        "{err}"
    );
    // The requeued job's blocks: none was answered beyond what it wanted.
    for b in handed(&cache).iter().filter(|b| b.job == block.job) {
        let want: u64 = (block_of(b)["runs"].as_array().unwrap().iter())
            .map(|r| r["want"].as_u64().unwrap() - r["have"].as_u64().unwrap())
            .sum();
        assert!(answered_in(b) as u64 <= want, "{b:?}: {err}");
    }
    assert_clean_after(&cache, "a requeued lane job");
    eprintln!("lane job {} requeued:\n{}", block.job, slurm_lines(&err));
}

/// Brings the node cluster back (`slurm-up` starts only the daemons that are not running, and
/// a node that went down returns once its slurmd registers) when dropped.
struct Revive;

impl Drop for Revive {
    fn drop(&mut self) {
        let up = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-up");
        let _ = Command::new("timeout")
            .arg("120")
            .arg(up)
            .args(["--nodes", "3"])
            .output();
    }
}

/// A node dies mid-block: its slurmd is killed (SIGKILL), and with it the lane job's
/// processes there. Slurm marks the node DOWN after SlurmdTimeout (20 s on the test cluster)
/// and the job NODE_FAIL; the block goes to a new job, which cannot have the dead node: within
/// `pending_limit` the lane goes on on another node, afresh, and the scan names both changes.
#[test]
fn a_node_that_dies_mid_block_is_left_for_another() {
    require_nodes();
    let d = tempfile::tempdir().unwrap();
    let (repo, ids, flags, cache) = node_run(d.path(), "pending_limit = 5\n");
    let started = Instant::now();
    let mut child = piped(node_scan(&cache, &repo, &flags));
    let (block, node) = a_running_lane_block(&mut child, &cache, 1);
    let revive = Revive;
    let slurmd = pid_in(&format!("/run/perfbisect-slurm-nodes/slurmd-{node}.pid"));
    let lane = Path::new(&block.dir)
        .parent()
        .unwrap()
        .display()
        .to_string();
    let pkill = |pattern: &str| {
        Command::new("pkill")
            .args(["-KILL", "-f", pattern])
            .status()
            .unwrap()
    };
    // SAFETY: kill has no memory effects.
    assert_eq!(unsafe { libc::kill(slurmd, libc::SIGKILL) }, 0);
    assert!(pkill(&format!("slurmstepd: \\[{}\\.", block.job)).success());
    assert!(pkill(&format!("__lane {lane}")).success());
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_both_named(&o, &ids);
    assert!(
        err.contains(&format!("for node {node}"))
            && err.contains("the lane goes on on another node"),
        "{err}"
    );
    let took = started.elapsed().as_secs();
    drop(revive);
    assert_clean_after(&cache, "a node that died");
    eprintln!(
        "node {node} died mid-block: the scan ended after {took} s\n{}",
        slurm_lines(&err)
    );
}

/// A second user's symbolic links where work trees go: at the old fixed path
/// (`$TMPDIR/perfbisect-work`, which nothing uses any more) and at this user's own
/// (`$TMPDIR/perfbisect-work-UID`). Neither is followed: the first run builds in a directory
/// of its own, and with the second planted the run stops in one line naming it; the files the
/// links point at are untouched, and nothing is left queued or half-written.
#[test]
fn a_planted_work_directory_link_is_never_followed() {
    require_nodes();
    let d = tempfile::tempdir().unwrap();
    let (repo, ids) = two_steps(d.path());
    let toml = d.path().join("slurm.toml");
    std::fs::write(&toml, "[slurm]\n").unwrap();
    let flags: Vec<String> = ["--executor", "slurm", "--slurm-config"]
        .map(String::from)
        .into_iter()
        .chain([toml.display().to_string()])
        .collect();
    let tmp = d.path().join("tmp");
    let victim = d.path().join("victim");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(victim.join("src")).unwrap();
    std::fs::write(victim.join("src/precious"), "keep me").unwrap();
    std::os::unix::fs::symlink(&victim, tmp.join("perfbisect-work")).unwrap();
    let run = |cache: &Path| {
        let mut c = node_scan(cache, &repo, &flags);
        c.env("TMPDIR", &tmp);
        c.output().unwrap()
    };
    let cache = d.path().join("cache");
    let o = run(&cache);
    assert_both_named(&o, &ids);
    // SAFETY: geteuid has no preconditions and cannot fail.
    let own = tmp.join(format!("perfbisect-work-{}", unsafe { libc::geteuid() }));
    assert!(std::fs::symlink_metadata(&own).unwrap().is_dir());
    assert_clean_after(&cache, "a link at the old work path");

    std::fs::remove_dir_all(&own).unwrap();
    std::os::unix::fs::symlink(&victim, &own).unwrap();
    let cache = d.path().join("cache-2");
    let o = run(&cache);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    // One line, naming the job's own reason (not only its log).
    let last = err.trim().lines().last().unwrap_or_default();
    assert!(
        last.starts_with("perfbisect: error: the Slurm build job of ")
            && last.contains(&format!(
                "work directory {} is a symbolic link: refused, never followed",
                own.display()
            )),
        "{err}"
    );
    let listed: Vec<_> = std::fs::read_dir(&victim).unwrap().flatten().collect();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(
        std::fs::read_to_string(victim.join("src/precious")).unwrap(),
        "keep me"
    );
    assert_clean_after(&cache, "a link at this user's work path");
}
