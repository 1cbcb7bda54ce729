//! Samples kept in the cache, one JSON line each, keyed by everything that
//! determines them (build, kernel source and arguments, threads, duration,
//! host). An interrupted run loses at most the sample being taken; a damaged
//! line is reported and ignored, never read as a number.

use anyhow::{Context, Result};
use std::fs::OpenOptions;
use std::io::Write;
use std::path::PathBuf;

use crate::cache::Cache;
use crate::hashing::Hasher;
use crate::host::Host;
use crate::measure::kernel::ToolSpec;
use crate::measure::metric::Metric;
use crate::measure::runner::{Sample, CPU_CAPS_VARS};

pub struct SampleSet {
    path: PathBuf,
    metric: Metric,
    /// A shared cache: only a file this user owns is read (see [`Location::shared`]).
    ///
    /// [`Location::shared`]: crate::cache::Location::shared
    own_only: bool,
}

impl SampleSet {
    /// `build` identifies the library (a build entry, or a prefix identity);
    /// `side` separates the two halves of an A/A comparison of one build.
    pub fn open(
        cache: &Cache,
        build: &str,
        spec: &ToolSpec,
        threads: usize,
        duration: f64,
        metric: Metric,
        side: &str,
    ) -> Result<SampleSet> {
        let mut h = Hasher::new();
        h.field("samples-v1")
            .field(build)
            .field(&spec.canonical())
            .field(&spec.kernel.source)
            .field(crate::measure::kernel::header_source())
            // The kernels read the fixtures: new keys are a new measurement.
            .field(&crate::measure::kernel::embedded_fixtures_hash())
            .field(&threads.to_string())
            .field(&format!("{duration}"))
            .field(&Host::current().id())
            .field(side);
        // A time sample and an instruction sample never share a file (time's
        // key is the one it had before metrics existed, so old caches stay valid).
        if !metric.is_time() {
            h.field(&format!("metric={}", metric.name()));
        }
        // A pinned capability vector is another code path (absent: the key it always had).
        for var in CPU_CAPS_VARS {
            if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
                h.field(&format!("{var}={}", v.to_string_lossy()));
            }
        }
        // In a shared cache each user's samples are a file of their own: a number is read
        // only from a file its reader wrote.
        if cache.shared {
            // SAFETY: geteuid has no preconditions and cannot fail.
            h.field(&format!("user={}", unsafe { libc::geteuid() }));
        }
        let dir = cache.dir("samples")?;
        Ok(SampleSet {
            path: dir.join(format!("{}.jsonl", h.finish_short())),
            metric,
            own_only: cache.shared,
        })
    }

    pub fn load(&self) -> Result<Vec<Sample>> {
        let metric = self.metric;
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(e).with_context(|| format!("cannot read {}", self.path.display()))
            }
        };
        if self.own_only && !owned_by_me(&self.path) {
            eprintln!(
                "perfbisect: warning: ignoring {}: another user wrote it in this shared cache",
                self.path.display()
            );
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Sample>(line) {
                Ok(s)
                    if s.us_per_op.is_finite()
                        && s.us_per_op > 0.0
                        && s.value(metric).is_finite()
                        && s.value(metric) > 0.0 =>
                {
                    out.push(s)
                }
                _ => eprintln!(
                    "perfbisect: warning: ignoring damaged sample at {}:{}",
                    self.path.display(),
                    i + 1
                ),
            }
        }
        Ok(out)
    }

    /// One write of one whole line, O_APPEND: concurrent writers and crashes
    /// leave at worst one truncated final line, which `load` skips.
    pub fn append(&self, s: &Sample) -> Result<()> {
        let mut line = serde_json::to_string(s)?;
        line.push('\n');
        // After a crash mid-line, start on a fresh line so only the damaged
        // one is lost.
        if let Ok(bytes) = std::fs::read(&self.path) {
            if bytes.last().is_some_and(|b| *b != b'\n') {
                line.insert(0, '\n');
            }
        }
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .with_context(|| format!("cannot open {}", self.path.display()))?;
        let written = if crate::cache::failpoint("publish-sample") {
            // Test-only: the disk fills up in the middle of the line.
            f.write_all(&line.as_bytes()[..line.len() / 2])
                .and_then(|_| Err(crate::cache::disk_full()))
        } else {
            f.write_all(line.as_bytes())
        };
        written
            .and_then(|_| f.sync_data())
            .with_context(|| format!("cannot write sample to {}", self.path.display()))?;
        Ok(())
    }
}

fn owned_by_me(path: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    std::fs::metadata(path).is_ok_and(|m| m.uid() == unsafe { libc::geteuid() })
}
