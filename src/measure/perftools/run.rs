//! Running one perftools program and reading its number: µs per operation, or instructions
//! under callgrind.

use anyhow::{bail, Context, Result};
use std::process::Command;

use super::{Counterpart, Perftools};
use crate::build::prefix::Prefix;
use crate::cache::Cache;
use crate::measure::metric;

impl Perftools {
    /// Whether this build has the program (CMake leaves out the 3.0-only ones on 1.1.1).
    pub fn has(&self, cp: &Counterpart) -> bool {
        self.bin_dir.join(cp.program).is_file()
    }

    /// Run one program once and return µs per our operation. The environment is the sampling
    /// child's: our empty OPENSSL_CONF, the prefix's modules, and its lib directory.
    pub fn run(
        &self,
        cp: &Counterpart,
        threads: usize,
        prefix: &Prefix,
        cache: &Cache,
    ) -> Result<f64> {
        let mut cmd = self.command(None, cp, threads, prefix, cache)?;
        Ok(self.calls(&mut cmd, cp, threads)?.us_per_call / cp.calls_per_op)
    }

    /// Run one program once under callgrind and return the instructions per our operation that
    /// its worker thread executed: perftools' loop with its clock read per call, and the
    /// thread's own setup (perflib's `thread_run` and everything it calls), over the number of
    /// calls its terse figure implies.
    pub fn count(
        &self,
        cp: &Counterpart,
        threads: usize,
        prefix: &Prefix,
        cache: &Cache,
    ) -> Result<f64> {
        let out = tempfile::Builder::new()
            .prefix("perftools-callgrind-")
            .tempfile_in(cache.dir("run")?)?;
        let wrapper = metric::callgrind_args_inside(PERFTOOLS_THREAD_FN, out.path(), false);
        let mut cmd = self.command(Some(wrapper), cp, threads, prefix, cache)?;
        let calls = self.calls(&mut cmd, cp, threads)?;
        let total = metric::callgrind_total(out.path())?;
        Ok(total as f64 / (calls.total as f64 / cp.calls_per_op))
    }

    /// The command of one run: the program, or valgrind with `wrapper`'s arguments before it.
    fn command(
        &self,
        wrapper: Option<Vec<String>>,
        cp: &Counterpart,
        threads: usize,
        prefix: &Prefix,
        cache: &Cache,
    ) -> Result<Command> {
        let program = self.bin_dir.join(cp.program);
        let mut cmd = match wrapper {
            Some(args) => {
                let mut c = Command::new("valgrind");
                c.args(args).arg(&program);
                c
            }
            None => Command::new(&program),
        };
        for (k, _) in std::env::vars_os() {
            if let Some(k) = k.to_str() {
                if k.starts_with("LD_") || k.starts_with("OPENSSL_") || k.starts_with("SSL_CERT") {
                    cmd.env_remove(k);
                }
            }
        }
        cmd.env("OPENSSL_CONF", cache.openssl_conf()?)
            .env("LD_LIBRARY_PATH", &prefix.lib_dir)
            .env("SSL_CERT_DIR", self.empty_certs.path())
            .env("SSL_CERT_FILE", self.empty_certs.path().join("none.pem"));
        if let Some(m) = &prefix.modules_dir {
            cmd.env("OPENSSL_MODULES", m);
        }
        cmd.arg("-t").args(&cp.options);
        if cp.certs {
            cmd.arg(&self.certs);
        }
        cmd.arg(threads.to_string());
        Ok(cmd)
    }

    /// Run `cmd` and read its terse figure.
    fn calls(&self, cmd: &mut Command, cp: &Counterpart, threads: usize) -> Result<Calls> {
        let line = format!("{cmd:?}");
        let out = cmd
            .output()
            .with_context(|| format!("cannot run perftools' {}", cp.program))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let first: Option<f64> = stdout
            .split_whitespace()
            .nth(cp.column)
            .and_then(|w| w.parse().ok());
        match first {
            Some(us) if out.status.success() && us > 0.0 => Ok(Calls::from_figure(us, threads)),
            _ => bail!(
                "perftools' {} gave no number ({}): {} {}\n  command: {line}",
                cp.program,
                out.status,
                stdout.trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        }
    }
}

/// perflib's thread entry point: every perftools program runs its operation loop in threads
/// started through it.
const PERFTOOLS_THREAD_FN: &str = "thread_run";

/// The run window of every perftools program we drive: 5 s compiled in (RUN_TIME), and
/// pkeyread's `-T 5`.
const PERFTOOLS_WINDOW_US: f64 = 5e6;

/// What one perftools run reported.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Calls {
    us_per_call: f64,
    /// Calls of all threads: perftools prints window × threads / calls.
    pub(super) total: u64,
}

impl Calls {
    pub(super) fn from_figure(us_per_call: f64, threads: usize) -> Self {
        Calls {
            us_per_call,
            total: (PERFTOOLS_WINDOW_US * threads as f64 / us_per_call).round() as u64,
        }
    }
}
