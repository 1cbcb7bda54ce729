//! One sample = one fresh child process. The parent side (here) spawns perfbisect
//! again with a hidden subcommand, in a scrubbed environment, under a
//! timeout; the child side (`child.rs`) loads the kernel, runs the threads behind a
//! barrier and prints one JSON line.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

use crate::build::prefix::Prefix;
use crate::cache::Cache;
use crate::hashing;
use crate::measure::compile::CompiledKernel;
use crate::measure::kernel::ToolSpec;
use crate::measure::metric::{self, InstructionCount, Metric};
use crate::unavailable::Unavailable;

mod child;
mod client_request;
pub use child::{child_main, ChildArgs};

pub const HIDDEN_SUBCOMMAND: &str = "__sample";

/// The perfbisect binary the engine starts for its sampling children and a fleet's jobs, when
/// the running program is not perfbisect itself but a program that calls the library's
/// commands (`drive::bisect`, `drive::run`, ...): those processes are the binary's hidden
/// subcommands, which only perfbisect's `main` answers.
pub const EXE_ENV: &str = "PERFBISECT_EXE";

/// `$PERFBISECT_EXE` when set (checked: an executable file), else none: this process is
/// perfbisect, and starts itself.
pub fn exe_from_env() -> Result<Option<PathBuf>> {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os(EXE_ENV).map(PathBuf::from) else {
        return Ok(None);
    };
    match std::fs::metadata(&path) {
        Ok(m) if m.is_file() && m.permissions().mode() & 0o111 != 0 => Ok(Some(path)),
        _ => bail!(
            "{EXE_ENV}={} is not an executable file (it names the perfbisect binary whose \
             sampling children and jobs the library starts)",
            path.display()
        ),
    }
}

/// The perfbisect binary a fleet's jobs run: `$PERFBISECT_EXE`, else this one.
pub fn perfbisect_exe() -> Result<PathBuf> {
    match exe_from_env()? {
        Some(p) => Ok(p),
        None => std::env::current_exe().context("cannot find the perfbisect executable"),
    }
}

/// The sampling child asks callgrind to start instrumenting before its measured loop (see
/// `client_request`), so callgrind may start with instrumentation off.
pub const INSTRUMENTS_LATE: bool = client_request::SUPPORTED;

/// OpenSSL's variables that pin the CPU capabilities it uses: the one setting a sampling child
/// takes from the user (every host of a fleet runs the same code path under one pin).
pub const CPU_CAPS_VARS: [&str; 2] = ["OPENSSL_ia32cap", "OPENSSL_armcap"];

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Sample {
    pub us_per_op: f64,
    pub ops_per_thread: Vec<u64>,
    pub wall_s: f64,
    pub cpu_s: f64,
    pub threads: usize,
    pub libcrypto_path: String,
    pub openssl_version: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, CounterResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mb_per_s: Option<f64>,
    /// Set for samples taken with `--metric instructions` (and only for them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<InstructionCount>,
    /// The machine that took it (set by the engine; absent in samples stored before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The round of its session it was taken in: samples of one round were taken side by side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u64>,
    /// The session (one run of perfbisect, a random id) whose rounds `round` counts: rounds
    /// of separate runs both count from 1. Samples stored before it was recorded have none and
    /// pair with no other sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<u64>,
    /// What decided libcrypto's code paths (see `cpu_caps`): samples taken under different
    /// ones may have executed different code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_caps: Option<String>,
}

impl Sample {
    /// The sample's value in `metric`'s unit: µs/op, or instructions/op
    /// (NaN for a sample of the other kind, which the sample cache's key
    /// keeps from ever meeting this one).
    pub fn value(&self, metric: Metric) -> f64 {
        match metric {
            Metric::Time => self.us_per_op,
            Metric::Instructions => self.instructions.as_ref().map_or(f64::NAN, |i| i.per_op),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct CounterResult {
    pub ops: u64,
    /// Same definition as us_per_op, over the threads that counted it;
    /// absent when no thread counted this kind of operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub us_per_op: Option<f64>,
}

/// What one child process gave back: a sample, or why there is none.
pub type SampleOutcome = std::result::Result<Sample, Unavailable>;

/// What the child prints.
#[derive(Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
enum ChildReport {
    Ok(Box<Sample>),
    NotApplicable {
        message: String,
    },
    /// The kernel does not load: the OpenSSL it is linked to lacks this symbol.
    MissingSymbol {
        symbol: String,
    },
    Error {
        message: String,
    },
}

pub struct SampleRequest<'a> {
    pub cache: &'a Cache,
    pub kernel: &'a CompiledKernel,
    pub spec: &'a ToolSpec,
    pub prefix: &'a Prefix,
    pub threads: usize,
    pub duration: f64,
    /// Kill the child after this long; None = derived from the duration.
    pub timeout: Option<f64>,
    pub metric: Metric,
    /// Instructions only: keep callgrind's output here, with every function's
    /// cost split by its call chain (`perfbisect explain`).
    pub profile: Option<&'a Path>,
}

impl SampleRequest<'_> {
    pub fn timeout_secs(&self) -> f64 {
        sample_timeout(self.metric, self.duration, self.timeout)
    }
}

/// When a sample of `duration` seconds is killed: `timeout` when given, else a fixed allowance
/// for set-up (key generation, fixture parsing) on top of the measuring window; under valgrind
/// everything but the window runs 20-100x slower.
pub fn sample_timeout(metric: Metric, duration: f64, timeout: Option<f64>) -> f64 {
    let setup = if metric.is_time() { 30.0 } else { 300.0 };
    timeout.unwrap_or(setup + 4.0 * duration)
}

/// A fresh callgrind output path for one child.
fn callgrind_out_path() -> PathBuf {
    use std::sync::atomic::AtomicUsize;
    static N: AtomicUsize = AtomicUsize::new(0);
    std::env::temp_dir().join(format!(
        "perfbisect-callgrind-{}-{}.out",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ))
}

/// Take one sample in a fresh child process.
pub fn take_sample(req: &SampleRequest) -> Result<SampleOutcome> {
    // The object must still be the one perfbisect compiled (see compile.rs), and the libraries
    // the ones the build recorded: a block handed to a job names both by content.
    let actual = hashing::file_sha256_memo(&req.kernel.so)?;
    if actual != req.kernel.sha256 {
        bail!(
            "kernel object {} does not match its recorded hash; refusing to load it",
            req.kernel.so.display()
        );
    }
    req.prefix.check_binaries()?;
    let callgrind_out = (req.metric == Metric::Instructions).then(|| {
        req.profile
            .map(Path::to_path_buf)
            .unwrap_or_else(callgrind_out_path)
    });
    let mut cmd = sampling_command(req, callgrind_out.as_deref())?;
    let removed = RemoveOnDrop(callgrind_out.clone(), req.profile.is_none());
    let mut child = cmd
        .spawn()
        .context("cannot start the sampling child process")?;
    // Drain both pipes on threads so a chatty kernel cannot block on a full pipe.
    let out_t = read_to_end_on_thread(child.stdout.take().expect("piped"));
    let err_t = read_to_end_on_thread(child.stderr.take().expect("piped"));
    let status = match wait_for_child(&mut child, req)? {
        Ok(status) => status,
        Err(why) => return Ok(Err(why)),
    };
    crate::interrupt::check()?;
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            // The terminal's Ctrl-C reaches the child (same process group)
            // and may end it before perfbisect's own handler has set the
            // flag: that is an interruption, not a crash of this commit.
            if sig == libc::SIGINT {
                return Err(crate::interrupt::Interrupted.into());
            }
            return Ok(Err(Unavailable::Crashed {
                kernel: req.spec.kernel.name.clone(),
                signal: sig,
                name: signal_name(sig).map(str::to_string),
            }));
        }
    }
    let line = stdout.lines().rev().find(|l| l.starts_with('{'));
    let report: ChildReport = match line.map(serde_json::from_str) {
        Some(Ok(r)) => r,
        _ => {
            let last = stderr.lines().last().unwrap_or("no output");
            return Ok(Err(Unavailable::KernelFailed {
                kernel: req.spec.kernel.name.clone(),
                message: format!("the child exited with {status} without a result: {last}"),
            }));
        }
    };
    outcome(req, report, removed.0.as_deref())
}

/// The file valgrind runs as the sampling child: this binary's path, unless the file there was
/// replaced since this process started (a rebuild during a long run), when it is a copy of this
/// very binary, made once. callgrind reads the binary's symbols by path (it needs
/// `perfbisect_measured_run`), so neither the new file nor a deleted inode would do.
fn valgrind_exe() -> Result<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    if let Some(exe) = exe_from_env()? {
        return Ok(exe);
    }
    let exe = std::env::current_exe().context("cannot find the perfbisect executable")?;
    let on_disk = std::fs::metadata(&exe).map(|m| (m.dev(), m.ino())).ok();
    let running = std::fs::metadata("/proc/self/exe")
        .map(|m| (m.dev(), m.ino()))
        .ok();
    if running.is_none() || on_disk == running {
        return Ok(exe);
    }
    let copy = RUNNING_COPY.get_or_init(copy_running_binary);
    copy.clone().with_context(|| {
        format!(
            "{} was replaced while perfbisect ran, and copying the running binary failed",
            exe.display()
        )
    })
}

static RUNNING_COPY: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();

/// A copy of this process's binary, removed when the process exits (statics are never dropped,
/// so an exit handler does it).
fn copy_running_binary() -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    extern "C" fn remove_copy() {
        if let Some(Some(p)) = RUNNING_COPY.get() {
            let _ = std::fs::remove_file(p);
        }
    }
    let path = tempfile::Builder::new()
        .prefix("perfbisect-")
        .tempfile()
        .ok()?
        .into_temp_path()
        .keep()
        .ok()?;
    let copied = std::fs::copy("/proc/self/exe", &path)
        .and_then(|_| std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)));
    if copied.is_err() {
        let _ = std::fs::remove_file(&path);
        return None;
    }
    // SAFETY: registers a function without arguments that only reads a static.
    unsafe { libc::atexit(remove_copy) };
    Some(path)
}

/// The sampling child's command line: this binary's hidden subcommand (under callgrind when
/// it writes `callgrind_out`), in a scrubbed environment, its output piped.
fn sampling_command(req: &SampleRequest, callgrind_out: Option<&Path>) -> Result<Command> {
    let mut cmd = match callgrind_out {
        None => {
            // /proc/self/exe still runs this very binary when the file on disk was
            // replaced (a rebuild during an hour-long bisect).
            let exe = match (exe_from_env()?, Path::new("/proc/self/exe")) {
                (Some(exe), _) => exe,
                (None, p) if p.exists() => p.to_path_buf(),
                _ => std::env::current_exe().context("cannot find the perfbisect executable")?,
            };
            Command::new(exe)
        }
        Some(out) => {
            // valgrind must be handed the real file: /proc/self/exe would be
            // valgrind's own launcher once it runs.
            let exe = valgrind_exe()?;
            let mut c = Command::new("valgrind");
            c.args(metric::callgrind_args(out, req.profile.is_some()))
                .arg(exe);
            c
        }
    };
    cmd.arg(HIDDEN_SUBCOMMAND)
        .arg("--so")
        .arg(&req.kernel.so)
        .arg("--threads")
        .arg(req.threads.to_string())
        .arg("--duration")
        .arg(req.duration.to_string())
        .arg("--fixtures")
        .arg(crate::measure::kernel::fixtures(req.cache)?);
    for (k, v) in &req.spec.args {
        cmd.arg("--arg").arg(format!("{k}={v}"));
    }
    for c in &req.spec.kernel.counters {
        cmd.arg("--counter").arg(c);
    }
    if let Some(b) = req.spec.bytes_per_op() {
        cmd.arg("--bytes-per-op").arg(b.to_string());
    }
    if callgrind_out.is_some() {
        cmd.arg("--warmup");
    }
    scrub_env(&mut cmd, req.cache, req.prefix)?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    Ok(cmd)
}

fn read_to_end_on_thread(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = r.read_to_string(&mut s);
        s
    })
}

/// The child's exit status, or `TimedOut` (the child killed) after the request's timeout.
/// Waits in short slices: a Ctrl-C that reached only perfbisect (not its process group) must
/// not wait for the child's whole duration, or for the timeout of a hung kernel.
fn wait_for_child(
    child: &mut std::process::Child,
    req: &SampleRequest,
) -> Result<std::result::Result<std::process::ExitStatus, Unavailable>> {
    let limit = req.timeout_secs();
    let deadline = Instant::now() + Duration::from_secs_f64(limit);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            let _ = child.kill();
            let _ = child.wait();
            crate::interrupt::check()?;
            return Ok(Err(Unavailable::TimedOut {
                kernel: req.spec.kernel.name.clone(),
                seconds: limit,
            }));
        }
        if let Some(s) = child.wait_timeout(left.min(Duration::from_millis(50)))? {
            return Ok(Ok(s));
        }
        if crate::interrupt::interrupted() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(crate::interrupt::Interrupted.into());
        }
    }
}

/// What the child's report means for the sample: a sample is refused when it loaded another
/// libcrypto than the one under test; under callgrind it gets its instruction count.
fn outcome(
    req: &SampleRequest,
    report: ChildReport,
    callgrind_out: Option<&Path>,
) -> Result<SampleOutcome> {
    match report {
        ChildReport::Ok(mut s) => {
            if let Some(out) = callgrind_out {
                s.instructions = Some(instruction_count(out, &s)?);
            }
            let loaded = Path::new(&s.libcrypto_path);
            if !req.prefix.contains_library(loaded) {
                bail!(
                    "the kernel loaded {} but the OpenSSL under test is in {}: refusing this sample",
                    loaded.display(),
                    req.prefix.lib_dir.display()
                );
            }
            Ok(Ok(*s))
        }
        ChildReport::NotApplicable { message } => Ok(Err(Unavailable::NotApplicable { message })),
        ChildReport::MissingSymbol { symbol } => Ok(Err(Unavailable::MissingSymbol {
            build: req.prefix.label.clone(),
            library: library_of(&symbol).to_string(),
            symbol,
        })),
        ChildReport::Error { message } => Ok(Err(Unavailable::KernelFailed {
            kernel: req.spec.kernel.name.clone(),
            message,
        })),
    }
}

/// Instructions per operation of sample `s`, from callgrind's output `out`.
fn instruction_count(out: &Path, s: &Sample) -> Result<InstructionCount> {
    let total = metric::callgrind_total(out)?;
    let ops: u64 = s.ops_per_thread.iter().sum();
    if total == 0 {
        bail!(
            "callgrind counted no instruction inside {}: is the perfbisect binary stripped?",
            metric::MEASURED_FN
        );
    }
    Ok(InstructionCount {
        per_op: total as f64 / ops as f64,
        total,
        ops,
        source: "callgrind".into(),
    })
}

/// Removes the callgrind output file however the sample ends.
struct RemoveOnDrop(Option<PathBuf>, bool);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let (Some(p), true) = (&self.0, self.1) {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// The child sees no LD_LIBRARY_PATH/LD_PRELOAD and only our OpenSSL
/// settings, so nothing outside the build under test is loaded or read.
fn scrub_env(cmd: &mut Command, cache: &Cache, prefix: &Prefix) -> Result<()> {
    for (k, _) in std::env::vars_os() {
        let Some(k) = k.to_str() else { continue };
        let keep_cpu_caps = CPU_CAPS_VARS.contains(&k);
        if k.starts_with("LD_") || (k.starts_with("OPENSSL_") && !keep_cpu_caps) {
            cmd.env_remove(k);
        }
    }
    cmd.env("OPENSSL_CONF", cache.openssl_conf()?);
    if let Some(m) = &prefix.modules_dir {
        cmd.env("OPENSSL_MODULES", m);
    }
    if let Some(e) = &prefix.engines_dir {
        cmd.env("OPENSSL_ENGINES", e);
    }
    Ok(())
}

fn signal_name(sig: i32) -> Option<&'static str> {
    Some(match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGKILL => "SIGKILL",
        _ => return None,
    })
}

/// the SSL, TLS, DTLS and QUIC calls and the SSL BIOs are libssl's, everything else
/// libcrypto's. For a message only: the library that lacks it cannot be asked.
fn library_of(symbol: &str) -> &'static str {
    const SSL: &[&str] = &[
        "SSL_",
        "SSLv",
        "TLS",
        "DTLS",
        "OSSL_QUIC",
        "d2i_SSL",
        "i2d_SSL",
        "PEM_read_SSL",
        "PEM_write_SSL",
        "PEM_read_bio_SSL",
        "PEM_write_bio_SSL",
        "ERR_load_SSL",
        "BIO_f_ssl",
        "BIO_new_ssl",
        "BIO_ssl",
        "OPENSSL_init_ssl",
        "SRP_Calc_A_param",
    ];
    if SSL.iter().any(|p| symbol.starts_with(p)) {
        "libssl"
    } else {
        "libcrypto"
    }
}

#[cfg(test)]
#[path = "runner_tests.rs"]
mod tests;
