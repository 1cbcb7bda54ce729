//! The child side of a sample: loads the kernel, runs its threads behind a barrier for the
//! measuring window and prints the one JSON line the parent reads ([`ChildReport`]).

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use super::{ChildReport, CounterResult, Sample, CPU_CAPS_VARS};
use crate::hashing;
use crate::measure::metric;

pub struct ChildArgs {
    pub so: PathBuf,
    pub threads: usize,
    pub duration: f64,
    pub fixtures: PathBuf,
    pub args: Vec<(String, String)>,
    pub counters: Vec<String>,
    pub bytes_per_op: Option<f64>,
    /// One operation per thread before the clock starts, outside the
    /// measured function (instruction samples: first-use costs such as
    /// provider loading are not the operation's).
    pub warmup: bool,
}

/// Runs in the child; prints exactly one JSON line. Returns the exit code.
pub fn child_main(a: ChildArgs) -> i32 {
    let report = match child_measure(&a) {
        Ok(r) => r,
        Err(e) => ChildReport::Error {
            message: format!("{e:#}"),
        },
    };
    let line = serde_json::to_string(&report).unwrap_or_else(|e| {
        serde_json::json!({"status": "error", "message": format!("cannot encode the sample: {e}")})
            .to_string()
    });
    println!("{line}");
    0
}

#[repr(C)]
struct PbArgs {
    n: c_int,
    keys: *const *const c_char,
    values: *const *const c_char,
}

#[repr(C)]
struct PbEnv {
    args: *const PbArgs,
    threads: c_int,
    fixtures_dir: *const c_char,
}

const PB_MAX_COUNTERS: usize = 4;

#[repr(C)]
struct PbThread {
    index: c_int,
    counters: [u64; PB_MAX_COUNTERS],
    local: *mut c_void,
}

const PB_OK: c_int = 0;
const PB_NOT_APPLICABLE: c_int = 2;
const ERRLEN: usize = 512;

type SetupFn = unsafe extern "C" fn(*const PbEnv, *mut *mut c_void, *mut c_char, usize) -> c_int;
type ThreadFn = unsafe extern "C" fn(*mut c_void, *mut PbThread, *mut c_char, usize) -> c_int;
type RunFn = unsafe extern "C" fn(*mut c_void, *mut PbThread, u64, *mut c_char, usize) -> c_int;
type TeardownFn = unsafe extern "C" fn(*mut c_void);
type StrFn = unsafe extern "C" fn() -> *const c_char;
type PtrFn = unsafe extern "C" fn() -> *const c_void;
type IntFn = unsafe extern "C" fn() -> c_int;

/// The kernel's global state pointer, shared with worker threads as the ABI
/// allows (the kernel is responsible for its thread safety).
#[derive(Clone, Copy)]
struct KernelShared(*mut c_void);
unsafe impl Send for KernelShared {}
unsafe impl Sync for KernelShared {}

#[derive(Clone, Copy)]
struct Fns {
    thread_init: ThreadFn,
    run: RunFn,
    thread_done: ThreadFn,
}

fn errstr(buf: &[c_char; ERRLEN]) -> String {
    // SAFETY: the buffer is NUL-terminated (zeroed, kernel writes < ERRLEN).
    let s = unsafe { CStr::from_ptr(buf.as_ptr()) };
    let s = s.to_string_lossy().trim().to_string();
    if s.is_empty() {
        "(no message)".into()
    } else {
        s
    }
}

struct ThreadResult {
    ops: u64,
    end: Instant,
    counters: [u64; PB_MAX_COUNTERS],
}

/// The symbol of the dynamic loader's "…/kernel.so: undefined symbol: TLS_server_method".
pub(super) fn undefined_symbol(dlerror: &str) -> Option<String> {
    let (_, rest) = dlerror.split_once("undefined symbol: ")?;
    let symbol = rest.split(|c: char| c.is_whitespace() || c == ',').next()?;
    (!symbol.is_empty()).then(|| symbol.to_string())
}

/// Which of OpenSSL's two libraries exports `symbol`, by OpenSSL's naming (util/libssl.num):
fn child_measure(a: &ChildArgs) -> Result<ChildReport> {
    refuse_library_path(a)?;
    let lib = match open_kernel(a)? {
        Ok(lib) => lib,
        Err(report) => return Ok(report),
    };
    // SAFETY: symbol types follow kernels/perfbisect.h.
    unsafe {
        let abi: libloading::Symbol<IntFn> = lib.get(b"pb_abi_version\0")?;
        if abi() != 1 {
            bail!("kernel ABI version {} is not 1", abi());
        }
        let setup: libloading::Symbol<SetupFn> = lib.get(b"pb_setup\0")?;
        let fns = Fns {
            thread_init: *lib.get::<ThreadFn>(b"pb_thread_init\0")?,
            run: *lib.get::<RunFn>(b"pb_run\0")?,
            thread_done: *lib.get::<ThreadFn>(b"pb_thread_done\0")?,
        };
        let teardown: libloading::Symbol<TeardownFn> = lib.get(b"pb_teardown\0")?;
        let version: libloading::Symbol<StrFn> = lib.get(b"pb_openssl_version\0")?;
        let sym: libloading::Symbol<PtrFn> = lib.get(b"pb_libcrypto_symbol\0")?;

        let loaded = Loaded::check(version(), sym())?;
        let cargs = KernelArgs::new(a)?;
        let pargs = cargs.pb_args();
        let env = PbEnv {
            args: &pargs,
            threads: a.threads as c_int,
            fixtures_dir: cargs.fixtures.as_ptr(),
        };
        let mut global: *mut c_void = std::ptr::null_mut();
        let mut err = [0 as c_char; ERRLEN];
        let status = setup(&env, &mut global, err.as_mut_ptr(), ERRLEN);
        if status != PB_OK {
            // Kernels free partly built state in pb_teardown only, never on
            // their error paths (perfbisect.h, "Cleanup has one place").
            if !global.is_null() {
                teardown(global);
            }
            if status == PB_NOT_APPLICABLE {
                return Ok(ChildReport::NotApplicable {
                    message: errstr(&err),
                });
            }
            bail!("setup: {}", errstr(&err));
        }
        let result = run_threads(a, KernelShared(global), &fns);
        teardown(global);
        let (wall, cpu, per_thread) = result?;
        let sample = sample_of(a, loaded, wall, cpu, &per_thread)?;
        Ok(ChildReport::Ok(Box::new(sample)))
    }
}

/// Refuses a loader path in the sampling child: a library found through it could stand in
/// for the OpenSSL under test.
fn refuse_library_path(a: &ChildArgs) -> Result<()> {
    if let Some(p) = std::env::var_os("LD_LIBRARY_PATH") {
        // Debian's valgrind wrapper adds its debug-library directory (which
        // holds only .debug files); anything else is refused.
        let only_valgrinds = a.warmup
            && std::env::split_paths(&p).all(|d| d == Path::new(metric::VALGRIND_DEBUG_DIR));
        if !only_valgrinds {
            bail!("LD_LIBRARY_PATH is set in the sampling child");
        }
    }
    Ok(())
}

/// The kernel, loaded; or the report that it does not load because the OpenSSL under test
/// lacks a symbol it needs.
fn open_kernel(a: &ChildArgs) -> Result<std::result::Result<libloading::Library, ChildReport>> {
    // SAFETY: loading a kernel runs its initialisers; it is our own object,
    // whose hash the parent checked. RTLD_NOW: a symbol the OpenSSL under test lacks fails
    // here, as the build's problem, not in the middle of a measurement.
    let flags = libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL;
    match unsafe { libloading::os::unix::Library::open(Some(&a.so), flags) } {
        Ok(lib) => Ok(Ok(libloading::Library::from(lib))),
        Err(e) => {
            let text = e.to_string();
            if let Some(symbol) = undefined_symbol(&text) {
                return Ok(Err(ChildReport::MissingSymbol { symbol }));
            }
            Err(e).with_context(|| format!("cannot load kernel {}", a.so.display()))
        }
    }
}

/// The kernel arguments as C strings, kept alive for the [`PbArgs`] that point into them.
struct KernelArgs {
    /// What `key_ptrs` and `value_ptrs` point to.
    _keys: Vec<CString>,
    _values: Vec<CString>,
    key_ptrs: Vec<*const c_char>,
    value_ptrs: Vec<*const c_char>,
    fixtures: CString,
}

impl KernelArgs {
    fn new(a: &ChildArgs) -> Result<KernelArgs> {
        let keys: Vec<CString> = a
            .args
            .iter()
            .map(|(k, _)| CString::new(k.as_str()))
            .collect::<Result<_, _>>()?;
        let values: Vec<CString> = a
            .args
            .iter()
            .map(|(_, v)| CString::new(v.as_str()))
            .collect::<Result<_, _>>()?;
        let key_ptrs = keys.iter().map(|c| c.as_ptr()).collect();
        let value_ptrs = values.iter().map(|c| c.as_ptr()).collect();
        Ok(KernelArgs {
            _keys: keys,
            _values: values,
            key_ptrs,
            value_ptrs,
            fixtures: CString::new(a.fixtures.to_string_lossy().as_bytes())?,
        })
    }

    /// Valid while `self` is.
    fn pb_args(&self) -> PbArgs {
        PbArgs {
            n: self.key_ptrs.len() as c_int,
            keys: self.key_ptrs.as_ptr(),
            values: self.value_ptrs.as_ptr(),
        }
    }
}

/// The OpenSSL the kernel really loaded.
struct Loaded {
    libcrypto_path: String,
    openssl_version: String,
}

impl Loaded {
    /// From the kernel's `pb_openssl_version()` and the address of a libcrypto symbol it is
    /// bound to; more than one libcrypto mapped into the child is refused.
    ///
    /// # Safety
    /// `version` is a NUL-terminated string.
    unsafe fn check(version: *const c_char, symbol: *const c_void) -> Result<Loaded> {
        // SAFETY: as the caller promises.
        let openssl_version = unsafe { CStr::from_ptr(version) }
            .to_string_lossy()
            .into_owned();
        let libcrypto_path = loaded_object_of(symbol)?;
        let loaded = loaded_libcryptos();
        if loaded.len() > 1 {
            bail!(
                "more than one libcrypto is mapped in the sampling child: {}",
                loaded.join(", ")
            );
        }
        Ok(Loaded {
            libcrypto_path,
            openssl_version,
        })
    }
}

/// The sample of a run that took `wall` seconds (`cpu` of CPU time) on its threads.
fn sample_of(
    a: &ChildArgs,
    loaded: Loaded,
    wall: f64,
    cpu: f64,
    per_thread: &[ThreadResult],
) -> Result<Sample> {
    let total: u64 = per_thread.iter().map(|t| t.ops).sum();
    if total == 0 {
        bail!("no operation completed");
    }
    let us_per_op = wall * 1e6 * a.threads as f64 / total as f64;
    let mut counters = BTreeMap::new();
    for (i, name) in a.counters.iter().enumerate().take(PB_MAX_COUNTERS) {
        let ops: u64 = per_thread.iter().map(|t| t.counters[i]).sum();
        let contributing = per_thread.iter().filter(|t| t.counters[i] > 0).count();
        let us = (ops > 0).then(|| wall * 1e6 * contributing as f64 / ops as f64);
        counters.insert(name.clone(), CounterResult { ops, us_per_op: us });
    }
    let mb_per_s = a
        .bytes_per_op
        .map(|bytes| bytes * total as f64 / wall / 1e6);
    let cpu_caps = cpu_caps();
    Ok(Sample {
        us_per_op,
        ops_per_thread: per_thread.iter().map(|t| t.ops).collect(),
        wall_s: wall,
        cpu_s: cpu,
        threads: a.threads,
        libcrypto_path: loaded.libcrypto_path,
        openssl_version: loaded.openssl_version,
        counters,
        mb_per_s,
        instructions: None,
        host: None,
        round: None,
        session: None,
        cpu_caps,
    })
}

/// What decides the code paths libcrypto takes on this machine: the CPU's feature flags
/// (`/proc/cpuinfo`, as a short hash) narrowed by a pin of [`CPU_CAPS_VARS`], or the pin alone
/// when it sets every word outright (no `~`: the detected features are then not used).
/// OpenSSL 3 exports no accessor of the vector it settled on, so this is read, not asked.
fn cpu_caps() -> Option<String> {
    let pin = CPU_CAPS_VARS.iter().find_map(|v| {
        let p = std::env::var(v).ok().filter(|p| !p.is_empty())?;
        Some(format!("{v}={p}"))
    });
    if let Some(p) = &pin {
        if !p.contains('~') {
            return Some(p.clone());
        }
    }
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let flags = info
        .lines()
        .find(|l| l.starts_with("flags") || l.starts_with("Features"))?
        .split_once(':')?
        .1;
    let mut sorted: Vec<&str> = flags.split_whitespace().collect();
    sorted.sort_unstable();
    let id = hashing::Hasher::new()
        .field(&sorted.join(" "))
        .finish_short();
    let flags = format!("cpu flags {id}");
    Some(match pin {
        Some(p) => format!("{flags}, {p}"),
        None => flags,
    })
}

/// Every batch of operations runs through this one function, so that
/// callgrind (`--toggle-collect`, see measure::metric) counts exactly the
/// instructions of the kernel's operations: not setup, not the harness.
/// For the time metric it is one call more per batch (batches last
/// milliseconds).
#[no_mangle]
#[inline(never)]
unsafe extern "C" fn perfbisect_measured_run(
    run: RunFn,
    global: *mut c_void,
    t: *mut PbThread,
    n: u64,
    err: *mut c_char,
) -> c_int {
    // SAFETY: the caller's contract is pb_run's (kernels/perfbisect.h).
    unsafe { run(global, t, n, err, ERRLEN) }
}

/// Worker threads wait at a barrier, the clock starts when they are all
/// released, and each runs batches sized so that timing and the stop check
/// cost nothing measurable per operation.
fn run_threads(
    a: &ChildArgs,
    global: KernelShared,
    fns: &Fns,
) -> Result<(f64, f64, Vec<ThreadResult>)> {
    let barrier = Arc::new(Barrier::new(a.threads + 1));
    // Under callgrind the workers warm up before it instruments anything, so OpenSSL's lazy
    // initialisation and the kernel's first operation run uninstrumented (as client_request.rs
    // says they do): what is collected is the same, only valgrind's time changes.
    let warmed = a.warmup.then(|| Arc::new(Barrier::new(a.threads + 1)));
    let stop = Arc::new(AtomicBool::new(false));
    let failed = Arc::new(AtomicBool::new(false));
    let target_batch = Duration::from_secs_f64((a.duration / 200.0).clamp(0.0005, 0.01));
    let mut handles = Vec::new();
    for index in 0..a.threads {
        let worker = Worker {
            index,
            global,
            fns: *fns,
            warmed: warmed.clone(),
            target_batch,
            barrier: barrier.clone(),
            stop: stop.clone(),
            failed: failed.clone(),
        };
        handles.push(std::thread::spawn(move || worker.run()));
    }
    if let Some(warmed) = &warmed {
        // Under callgrind (--warmup is its sign), instrument from here: every worker has
        // warmed up, and none enters the measured function before this thread reaches the
        // barrier.
        warmed.wait();
        super::client_request::start_instrumentation();
    }
    barrier.wait();
    let start = Instant::now();
    let cpu0 = cpu_seconds();
    let deadline = start + Duration::from_secs_f64(a.duration);
    while Instant::now() < deadline && !failed.load(Ordering::SeqCst) {
        std::thread::sleep(
            deadline
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(20)),
        );
    }
    stop.store(true, Ordering::SeqCst);
    let mut results = Vec::new();
    let mut first_err = None;
    for h in handles {
        match h.join() {
            Ok(Ok(r)) => results.push(r),
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(_) => {
                first_err.get_or_insert(anyhow::anyhow!("a worker thread panicked"));
            }
        }
    }
    let cpu = cpu_seconds() - cpu0;
    if warmed.is_some() {
        // Nothing is collected after the loop: the teardown and the exit run uninstrumented.
        super::client_request::stop_instrumentation();
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    let end = results.iter().map(|r| r.end).max().unwrap_or(start);
    Ok((end.duration_since(start).as_secs_f64(), cpu, results))
}

/// One worker thread of [`run_threads`].
struct Worker {
    index: usize,
    global: KernelShared,
    fns: Fns,
    /// Under callgrind: warm up with one operation, then wait here before instrumentation
    /// starts.
    warmed: Option<Arc<Barrier>>,
    target_batch: Duration,
    barrier: Arc<Barrier>,
    stop: Arc<AtomicBool>,
    /// Set by any worker that fails: the run ends early.
    failed: Arc<AtomicBool>,
}

impl Worker {
    fn run(self) -> Result<ThreadResult> {
        let index = self.index;
        let (g, td) = (self.global, self.fns.thread_done);
        let mut t = PbThread {
            index: index as c_int,
            counters: [0; PB_MAX_COUNTERS],
            local: std::ptr::null_mut(),
        };
        let mut err = [0 as c_char; ERRLEN];
        // SAFETY: ABI calls on this thread's own PbThread.
        let init = unsafe { (self.fns.thread_init)(g.0, &mut t, err.as_mut_ptr(), ERRLEN) };
        if init != PB_OK {
            self.failed.store(true, Ordering::SeqCst);
        }
        let mut warm_err = None;
        if init == PB_OK && self.warmed.is_some() {
            // SAFETY: as above.
            if unsafe { (self.fns.run)(g.0, &mut t, 1, err.as_mut_ptr(), ERRLEN) } != PB_OK {
                warm_err = Some(errstr(&err));
                self.failed.store(true, Ordering::SeqCst);
            }
            t.counters = [0; PB_MAX_COUNTERS];
        }
        if let Some(warmed) = &self.warmed {
            warmed.wait();
        }
        self.barrier.wait();
        if let Some(e) = warm_err {
            // SAFETY: as above.
            unsafe { td(g.0, &mut t, err.as_mut_ptr(), ERRLEN) };
            bail!("thread {index} warm-up run: {e}");
        }
        if init != PB_OK {
            let message = errstr(&err);
            // As for pb_teardown: the one place a kernel frees its state.
            if !t.local.is_null() {
                // SAFETY: as above.
                unsafe { td(g.0, &mut t, err.as_mut_ptr(), ERRLEN) };
            }
            bail!("thread {index} init: {message}");
        }
        let (ops, run_err) = self.batches(&mut t, &mut err);
        let end = Instant::now();
        let counters = t.counters;
        // SAFETY: as above.
        let done = unsafe { td(g.0, &mut t, err.as_mut_ptr(), ERRLEN) };
        if let Some(e) = run_err {
            bail!("thread {index} run: {e}");
        }
        if done != PB_OK {
            bail!("thread {index} done: {}", errstr(&err));
        }
        Ok(ThreadResult { ops, end, counters })
    }

    /// Runs batches until told to stop, doubling a batch while it is shorter than the target.
    /// Returns the operations done and the kernel's message if a batch failed.
    fn batches(&self, t: &mut PbThread, err: &mut [c_char; ERRLEN]) -> (u64, Option<String>) {
        let mut ops = 0u64;
        let mut batch = 1u64;
        while !self.stop.load(Ordering::Relaxed) {
            let t0 = Instant::now();
            // SAFETY: ABI calls on this thread's own PbThread.
            if unsafe {
                perfbisect_measured_run(self.fns.run, self.global.0, t, batch, err.as_mut_ptr())
            } != PB_OK
            {
                let message = errstr(err);
                self.failed.store(true, Ordering::SeqCst);
                return (ops, Some(message));
            }
            ops += batch;
            if t0.elapsed() < self.target_batch && batch < (1 << 30) {
                batch *= 2;
            }
        }
        (ops, None)
    }
}

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct we own.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        tv(u.ru_utime) + tv(u.ru_stime)
    }
}

/// The file the dynamic loader mapped the given address from.
fn loaded_object_of(addr: *const c_void) -> Result<String> {
    // SAFETY: dladdr only reads the loader's tables.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(addr, &mut info) == 0 || info.dli_fname.is_null() {
            bail!("cannot tell which libcrypto the kernel is bound to (dladdr failed)");
        }
        Ok(CStr::from_ptr(info.dli_fname)
            .to_string_lossy()
            .into_owned())
    }
}

/// Every libcrypto mapped into this process (by real path).
fn loaded_libcryptos() -> Vec<String> {
    unsafe extern "C" fn cb(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: called by dl_iterate_phdr with valid pointers; data is our Vec.
        let out = &mut *(data as *mut Vec<String>);
        let name = (*info).dlpi_name;
        if !name.is_null() {
            let s = CStr::from_ptr(name).to_string_lossy().into_owned();
            let file = Path::new(&s)
                .file_name()
                .and_then(|f| f.to_str())
                .unwrap_or("");
            if file.starts_with("libcrypto.so") {
                let real = std::fs::canonicalize(&s)
                    .map(|p| p.display().to_string())
                    .unwrap_or(s);
                if !out.contains(&real) {
                    out.push(real);
                }
            }
        }
        0
    }
    let mut out: Vec<String> = Vec::new();
    // SAFETY: the callback only touches `out`.
    unsafe {
        libc::dl_iterate_phdr(Some(cb), &mut out as *mut Vec<String> as *mut c_void);
    }
    out
}
