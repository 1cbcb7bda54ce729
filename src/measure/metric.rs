//! What a sample measures: wall-clock time per operation, or the user-space
//! instructions one operation of the kernel's timed loop executes.
//!
//! Instructions are counted by running the sampling child under valgrind's
//! callgrind, with collection switched on only inside [`MEASURED_FN`], the
//! one function the child calls each batch of the kernel's `pb_run` through.
//! Setup, per-thread init, the harness's own loop and the first (warm-up)
//! operation are outside it, so the count is the operations' own work. The
//! CPU's counters (`perf_event_open`) would be cheaper, but the machines this
//! runs on (VMs without a virtual PMU: PERF_COUNT_HW_INSTRUCTIONS answers
//! ENOENT) do not expose them, so that source is not implemented; every
//! sample records its source ("callgrind") so another can be added.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

use crate::analysis::alpha::Schedule;
use crate::analysis::bisect::Spread;

/// The name callgrind's `--toggle-collect` switches collection on for
/// (a `#[no_mangle]`, never-inlined function in runner.rs).
pub const MEASURED_FN: &str = "perfbisect_measured_run";

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    Serialize,
    Deserialize,
    clap::ValueEnum,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    // Wall-clock microseconds per operation (perftools' definition). Plain
    // comments: doc comments would switch clap's help to its long layout.
    #[default]
    Time,
    // User-space instructions per operation of the timed loop (1 thread only).
    Instructions,
}

impl Metric {
    pub fn is_time(&self) -> bool {
        *self == Metric::Time
    }

    /// Whether its samples may be taken side by side, one per core. A count is the
    /// instructions one process executed, which a neighbouring process does not change; a time
    /// is exactly what a neighbour disturbs (a build beside a measurement doubles its noise).
    pub fn side_by_side(&self) -> bool {
        !self.is_time()
    }

    pub fn name(&self) -> &'static str {
        match self {
            Metric::Time => "time",
            Metric::Instructions => "instructions",
        }
    }

    /// The unit of one value, for people (Markdown, HTML, SVG).
    pub fn unit(&self) -> &'static str {
        match self {
            Metric::Time => "µs/op",
            Metric::Instructions => "instructions/op",
        }
    }

    /// The same in ASCII, for the terminal tables.
    pub fn unit_ascii(&self) -> &'static str {
        match self {
            Metric::Time => "us/op",
            Metric::Instructions => "instr/op",
        }
    }

    /// The shortest form, beside a number in a line of the live output ("540.9 us [...]").
    pub fn unit_short(&self) -> &'static str {
        match self {
            Metric::Time => "us",
            Metric::Instructions => "instr",
        }
    }

    /// Axis label of the SVG plots.
    pub fn axis(&self) -> &'static str {
        match self {
            Metric::Time => "µs per operation",
            Metric::Instructions => "instructions per operation",
        }
    }

    /// A count of instructions misses the time threads spend waiting for
    /// each other's locks: with several threads it does not describe speed.
    pub fn check_threads(&self, threads: usize) -> Result<()> {
        if *self == Metric::Instructions && threads > 1 {
            bail!(
                "--metric instructions counts one thread's work and misses lock waits: use --threads 1 (or --metric time for {threads} threads)"
            );
        }
        Ok(())
    }

    /// The sequential schedule when the user gave none. Instruction counts
    /// of one build differ by 0.001-0.3% from process to process (see the
    /// README), so with 3 samples per side the (1 − alpha) interval of the
    /// ratio is 0.7-2% wide even at a search's small per-step alpha
    /// (t(0.9995, df≈4) ≈ 8.6; 8.6 × 0.1% × √(2/3) ≈ 0.7%), and min-effect
    /// decides the size. A kernel whose count does
    /// vary (random nonces, time-dependent reseeding) grows the samples
    /// as time does, up to 10.
    pub fn default_schedule(&self) -> Schedule {
        match self {
            // A search's own default: one place for 5..40.
            Metric::Time => crate::analysis::bisect::Config::default().schedule,
            Metric::Instructions => Schedule {
                initial: 3,
                max: 10,
            },
        }
    }

    /// Seconds a sample measures for when the user gave none. Time: a quarter second, which
    /// resolved about twice as much per machine-second as 1-second samples wherever it was
    /// measured here (scripts/bench-sampling: randbytes on a calm host, randbytes at 2 threads
    /// and pkeyread in slow waves; docs/how-a-number-is-made.md), because most of the noise is
    /// the host's slow waves, which no sample length averages out. Instructions: 1 s, so that a
    /// sample holds enough operations under callgrind (about 10 PEM key decodes).
    pub fn default_duration(&self) -> f64 {
        match self {
            Metric::Time => 0.25,
            Metric::Instructions => 1.0,
        }
    }

    /// How one build's samples of this metric vary ([`Spread`]): it sets a fresh block's first
    /// look, and whether a search's step reads its ends' samples again.
    pub fn spread(&self) -> Spread {
        match self {
            Metric::Time => Spread::Clock,
            Metric::Instructions => Spread::Count,
        }
    }

    /// Samples per cell of `run` and `matrix` when the user gave none.
    pub fn default_fixed_samples(&self) -> usize {
        match self {
            Metric::Time => 10,
            Metric::Instructions => 3,
        }
    }
}

/// Instructions of one sample.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct InstructionCount {
    pub per_op: f64,
    /// Instructions counted inside the measured loop.
    pub total: u64,
    /// Operations of the measured loop (the warm-up operation excluded).
    pub ops: u64,
    /// "callgrind" or "perf".
    pub source: String,
}

/// The directory Debian's `valgrind` wrapper script puts on LD_LIBRARY_PATH.
pub const VALGRIND_DEBUG_DIR: &str = "/usr/lib/debug";

/// valgrind's callgrind, with collection only inside [`MEASURED_FN`], for perfbisect's own
/// sampling child: it asks callgrind to start instrumenting just before its measured loop, so
/// its start-up runs uninstrumented.
pub fn callgrind_args(out_file: &Path, call_chains: bool) -> Vec<String> {
    let mut v = callgrind_args_inside(MEASURED_FN, out_file, call_chains);
    if crate::measure::runner::INSTRUMENTS_LATE {
        v.insert(1, "--instr-atstart=no".into());
    }
    v
}

/// valgrind's callgrind, with collection only inside `function` (and what it calls).
pub fn callgrind_args_inside(function: &str, out_file: &Path, call_chains: bool) -> Vec<String> {
    let mut v = vec![
        "--tool=callgrind".into(),
        "--collect-atstart=no".into(),
        format!("--toggle-collect={function}"),
        // valgrind runs one thread at a time; unfair, a spinning worker keeps the lock from
        // the thread that sleeps `--duration` and then stops it, so a 0.05 s sample ran for
        // 2-18 s (measured); fair, it stops on time.
        "--fair-sched=yes".into(),
        format!("--callgrind-out-file={}", out_file.display()),
        // Dump once at exit, not per thread.
        "--separate-threads=no".into(),
        "-q".into(),
    ];
    if call_chains {
        // Each function's cost per chain of up to this many callers: the
        // folded stacks of a flame graph (deeper chains are cut at the top).
        v.push(format!("--separate-callers={PROFILE_DEPTH}"));
    }
    v
}

/// Callers kept per function in a profile.
pub const PROFILE_DEPTH: usize = 40;

/// The collected instruction total of a callgrind output file (its
/// `totals:` line, else the `summary:` line).
pub fn callgrind_total(path: &Path) -> Result<u64> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read callgrind output {}", path.display()))?;
    parse_callgrind_total(&text).with_context(|| {
        format!(
            "no instruction total in callgrind output {}",
            path.display()
        )
    })
}

fn parse_callgrind_total(text: &str) -> Option<u64> {
    let mut summary = None;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("totals:") {
            return v.split_whitespace().next()?.parse().ok();
        }
        if let Some(v) = line.strip_prefix("summary:") {
            summary = v.split_whitespace().next().and_then(|v| v.parse().ok());
        }
    }
    summary
}

/// Whether valgrind can be run here, with its version ("valgrind-3.19.0").
pub fn valgrind_version() -> Result<String> {
    let o = std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .context("--metric instructions needs valgrind on PATH (this machine has no CPU instruction counter; scripts/setup installs valgrind)")?;
    if !o.status.success() {
        bail!("valgrind --version failed: is valgrind installed? (scripts/setup installs it)");
    }
    Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callgrind_totals_are_read() {
        let t = "version: 1\ncmd: x\nevents: Ir\nsummary: 1234\nfn=(1) f\n1 5\ntotals: 1200\n";
        assert_eq!(parse_callgrind_total(t), Some(1200));
        assert_eq!(parse_callgrind_total("summary: 77\n"), Some(77));
        assert_eq!(parse_callgrind_total("events: Ir\n"), None);
    }

    #[test]
    fn instructions_refuse_more_than_one_thread() {
        assert!(Metric::Instructions.check_threads(1).is_ok());
        let e = Metric::Instructions
            .check_threads(4)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--threads 1"), "{e}");
        assert!(!e.contains('\n'));
        assert!(Metric::Time.check_threads(64).is_ok());
    }
}
