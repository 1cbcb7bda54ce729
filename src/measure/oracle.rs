//! The bridge from the pure search to the real pipeline: "give me n samples
//! of commit X" becomes build (cached) → compile kernel (cached) → samples
//! (cached, taken interleaved across the commits asked for together).

use anyhow::Result;
use std::collections::BTreeMap;

use crate::analysis::bisect::{Measurer, Probe, Step};
use crate::build::builds::{self, BuildOptions};
use crate::build::repo::{CommitInfo, Repo};
use crate::cache::Cache;
use crate::interrupt;
use crate::measure::cells::{self as measure, Target};
use crate::measure::compile::{self, CompiledKernel};
use crate::measure::kernel::ToolSpec;
use crate::measure::runner::{self, Outcome, SampleRequest};
use crate::measure::samples::SampleSet;
use crate::progress;

/// Live output: called with each decided step and its commit.
pub type StepCallback<'a> = Box<dyn FnMut(&Step, &CommitInfo) + 'a>;

pub struct Ready {
    pub target: Target,
    kernel: CompiledKernel,
    store: SampleSet,
    pub samples: Vec<f64>,
}

pub enum State {
    Unknown,
    Ready(Box<Ready>),
    Skip(String),
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct BuildUse {
    pub commit: String,
    pub fresh: bool,
    pub ok: bool,
    pub duration_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
}

pub struct Oracle<'a> {
    pub cache: &'a Cache,
    pub repo: &'a Repo,
    pub build: BuildOptions<'a>,
    pub spec: &'a ToolSpec,
    pub threads: usize,
    pub duration: f64,
    pub timeout: Option<f64>,
    pub commits: Vec<CommitInfo>,
    pub states: Vec<State>,
    /// The command these samples belong to (a bisect's id, a comparison's
    /// revisions): samples are reused when the same command runs again
    /// (resume), never mixed into another comparison, whose samples must be
    /// taken interleaved with each other rather than hours apart.
    pub context: String,
    /// Per commit index: keeps two indices of the same commit apart (A/A).
    pub side: Vec<String>,
    pub samples_taken: usize,
    pub builds: BTreeMap<String, BuildUse>,
    pub on_step: Option<StepCallback<'a>>,
}

impl<'a> Oracle<'a> {
    pub fn new(
        cache: &'a Cache,
        repo: &'a Repo,
        build: BuildOptions<'a>,
        spec: &'a ToolSpec,
        threads: usize,
        duration: f64,
        commits: Vec<CommitInfo>,
    ) -> Oracle<'a> {
        let n = commits.len();
        Oracle {
            cache,
            repo,
            build,
            spec,
            threads,
            duration,
            timeout: None,
            states: (0..n).map(|_| State::Unknown).collect(),
            context: String::new(),
            side: vec![String::new(); n],
            commits,
            samples_taken: 0,
            builds: BTreeMap::new(),
            on_step: None,
        }
    }

    /// Build and compile for commit `i`, or find out why it cannot be measured.
    fn prepare(&mut self, i: usize) -> Result<()> {
        if !matches!(self.states[i], State::Unknown) {
            return Ok(());
        }
        interrupt::check()?;
        let c = self.commits[i].clone();
        let built = builds::ensure(self.cache, self.repo, &c, &self.build)?;
        self.builds.insert(
            c.id.clone(),
            BuildUse {
                commit: c.id.clone(),
                fresh: built.fresh,
                ok: built.meta.ok,
                duration_s: built.meta.duration_s,
                log: (!built.meta.ok).then(|| built.log_path().display().to_string()),
            },
        );
        if built.fresh {
            progress::info(&format!(
                "  built {} (OpenSSL {}) in {:.0} s{}",
                c.short,
                built.meta.version,
                built.meta.duration_s,
                built
                    .meta
                    .ccache_hit_rate
                    .map(|r| format!(", ccache {:.0}%", r * 100.0))
                    .unwrap_or_default()
            ));
        }
        let Some(prefix) = built.prefix.clone() else {
            self.states[i] = State::Skip(format!(
                "build failed (log: {})",
                built.log_path().display()
            ));
            return Ok(());
        };
        if built.meta.version < self.spec.kernel.min_version {
            self.states[i] = State::Skip(format!(
                "not applicable: {} needs OpenSSL {}",
                self.spec.kernel.name, self.spec.kernel.min_version
            ));
            return Ok(());
        }
        let kernel = compile::compile(self.cache, &self.spec.kernel, &prefix)?;
        let entry = built
            .dir
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let store = SampleSet::open(
            self.cache,
            &entry,
            self.spec,
            self.threads,
            self.duration,
            &format!("{}|{}", self.context, self.side[i]),
        )?;
        let target = Target {
            label: c.short.clone(),
            prefix,
            commit: Some(c.id.clone()),
            expect_version: Some(built.meta.version.clone()),
        };
        let mut samples = Vec::new();
        for s in store.load()? {
            // A stored sample must pass the same checks as a fresh one.
            if target
                .prefix
                .contains_library(std::path::Path::new(&s.libcrypto_path))
                && measure::check_version(&target, &s).is_ok()
            {
                samples.push(s.us_per_op);
            }
        }
        self.states[i] = State::Ready(Box::new(Ready {
            target,
            kernel,
            store,
            samples,
        }));
        Ok(())
    }

    fn sample_once(&mut self, i: usize) -> Result<()> {
        let State::Ready(r) = &self.states[i] else {
            return Ok(());
        };
        let req = SampleRequest {
            cache: self.cache,
            kernel: &r.kernel,
            spec: self.spec,
            prefix: &r.target.prefix,
            threads: self.threads,
            duration: self.duration,
            timeout: self.timeout,
        };
        let outcome = runner::take_sample(&req)?;
        match outcome {
            Outcome::Sample(s) => {
                measure::check_version(&r.target, &s)?;
                r.store.append(&s)?;
                self.samples_taken += 1;
                progress::detail(&format!(
                    "  sample {} #{}: {:.4} us/op",
                    self.commits[i].short,
                    r.samples.len() + 1,
                    s.us_per_op
                ));
                if let State::Ready(r) = &mut self.states[i] {
                    r.samples.push(s.us_per_op);
                }
            }
            Outcome::NotApplicable(m) => {
                self.states[i] = State::Skip(format!("not applicable: {m}"))
            }
            Outcome::Failed(m) => self.states[i] = State::Skip(m),
        }
        Ok(())
    }

    pub fn samples_of(&self, i: usize) -> Option<&[f64]> {
        match &self.states[i] {
            State::Ready(r) => Some(&r.samples),
            _ => None,
        }
    }
}

impl Measurer for Oracle<'_> {
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        for &(i, _) in wants {
            self.prepare(i)?;
        }
        // Round-robin over the commits still short of their target, so the
        // new samples of each are spread over the same stretch of time.
        loop {
            interrupt::check()?;
            let mut progressed = false;
            for &(i, n) in wants {
                let have = self.samples_of(i).map(|s| s.len());
                if have.is_some_and(|h| h < n) {
                    self.sample_once(i)?;
                    progressed = true;
                }
            }
            if !progressed {
                break;
            }
        }
        Ok(wants
            .iter()
            .map(|&(i, _)| match &self.states[i] {
                State::Ready(r) => Probe::Samples(r.samples.clone()),
                State::Skip(s) => Probe::Skip(s.clone()),
                State::Unknown => Probe::Skip("not prepared".into()),
            })
            .collect())
    }

    fn decided(&mut self, step: &Step) {
        let c = self.commits[step.commit].clone();
        if let Some(cb) = self.on_step.as_mut() {
            cb(step, &c);
        }
    }
}
