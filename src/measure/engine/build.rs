//! The engine's libraries: building (ahead, in waves through the executor) or taking each
//! OpenSSL, checking it, and readying its subjects' kernels and cached samples.

use super::*;

impl Session<'_> {
    /// Build (cached) a revision, or take an installed prefix as it is.
    pub fn prepare_library(
        &mut self,
        lib: usize,
    ) -> Result<std::result::Result<&Target, Unavailable>> {
        if matches!(self.libs[lib].1, LibState::Unknown) {
            interrupt::check()?;
            let state = match &self.libs[lib].0 {
                Library::Installed(t) => LibState::Ready(Box::new(t.clone())),
                Library::Revision { label, commit } => {
                    let job = BuildJob {
                        label: label.clone(),
                        commit: commit.clone(),
                    };
                    let built = match self.prebuilt.remove(&commit.key()) {
                        Some(b) => b?,
                        None => self.build(vec![job])?.swap_remove(0)?,
                    };
                    let Library::Revision { label, commit } = &self.libs[lib].0 else {
                        unreachable!("matched above")
                    };
                    self.builds.insert(
                        commit.key(),
                        BuildUse {
                            commit: commit.id.clone(),
                            fresh: built.fresh,
                            ok: built.meta.ok,
                            duration_s: built.meta.duration_s,
                            log: (!built.meta.ok).then(|| built.log_path().display().to_string()),
                        },
                    );
                    match built.prefix.clone() {
                        Some(prefix) => LibState::Ready(Box::new(Target {
                            label: label.clone(),
                            prefix,
                            commit: Some(commit.id.clone()),
                            expect_version: Some(built.meta.version.clone()),
                            binaries: built.meta.binaries_id(),
                        })),
                        None => LibState::Unavailable(Unavailable::BuildFailed {
                            log: built.log_path().display().to_string(),
                        }),
                    }
                }
            };
            self.libs[lib].1 = state;
        }
        Ok(match &self.libs[lib].1 {
            LibState::Ready(t) => Ok(t),
            LibState::Unavailable(u) => Err(u.clone()),
            LibState::Unknown => unreachable!("prepared above"),
        })
    }

    /// The revisions the wanted subjects need and that are not known yet, built together where
    /// [`builds::ensure_all`] can (a bisect's two ends). Errors are kept for `prepare_library`,
    /// which reports them as it would its own.
    pub(super) fn build_ahead(&mut self, wants: &[(usize, usize)]) -> Result<()> {
        let mut jobs: Vec<BuildJob> = Vec::new();
        for &(i, _) in wants {
            let lib = &self.libs[self.subjects[i].0.lib];
            if let (Library::Revision { label, commit }, LibState::Unknown) = (&lib.0, &lib.1) {
                let made = self.prebuilt.contains_key(&commit.key());
                if !made && !jobs.iter().any(|j| j.commit.key() == commit.key()) {
                    jobs.push(BuildJob {
                        label: label.clone(),
                        commit: commit.clone(),
                    });
                }
            }
        }
        if jobs.len() < 2 {
            return Ok(());
        }
        let ids: Vec<String> = jobs.iter().map(|j| j.commit.key()).collect();
        let built = self.build(jobs)?;
        self.prebuilt.extend(ids.into_iter().zip(built));
        Ok(())
    }

    /// One wave of builds, answered in the order of `jobs`.
    /// Builds made ahead are taken as they are (or waited for), the rest go out as one wave.
    fn build(&mut self, jobs: Vec<BuildJob>) -> Result<Vec<Result<builds::Built>>> {
        let keys: Vec<String> = jobs.iter().map(|j| j.commit.key()).collect();
        let (ahead, now): (Vec<BuildJob>, Vec<BuildJob>) = jobs
            .into_iter()
            .partition(|j| self.in_flight.contains(&j.commit.key()));
        let ahead_keys: Vec<String> = ahead.iter().map(|j| j.commit.key()).collect();
        let now_keys: Vec<String> = now.iter().map(|j| j.commit.key()).collect();
        if !now.is_empty() {
            let ticket = self.exec.submit(Wave {
                builds: now,
                blocks: Vec::new(),
            })?;
            self.ahead.insert(ticket, now_keys.clone());
            self.in_flight.extend(now_keys.iter().cloned());
        }
        while !now_keys
            .iter()
            .chain(&ahead_keys)
            .all(|k| self.prebuilt.contains_key(k))
        {
            let a = self.exec.next()?.ok_or_else(|| {
                anyhow::anyhow!("the executor stopped answering before its builds were done")
            })?;
            self.stash(a)?;
        }
        Ok(keys
            .iter()
            .map(|k| self.prebuilt.remove(k).expect("waited for above"))
            .collect())
    }

    /// Keeps a build's answer until its library is prepared; an answer of a block of samples
    /// in flight goes to it.
    pub(super) fn stash(&mut self, a: Answer) -> Result<()> {
        match a {
            Answer::Built { ticket, job, built } => {
                let key = self
                    .ahead
                    .get(&ticket)
                    .and_then(|keys| keys.get(job))
                    .cloned()
                    .ok_or_else(|| {
                        anyhow::anyhow!("the executor answered a build not asked for")
                    })?;
                self.in_flight.remove(&key);
                self.prebuilt.insert(key, built);
            }
            Answer::WaveDone { ticket } if self.ahead.remove(&ticket).is_some() => {}
            Answer::Sampled { ticket, .. } | Answer::WaveDone { ticket }
                if self.blocks.contains_key(&ticket) =>
            {
                self.block_answer(a)?
            }
            _ => anyhow::bail!("the executor answered a wave that is not waited for"),
        }
        Ok(())
    }

    /// Builds the search may ask for next, made now where builds do not disturb measurements
    /// ([`Executor::builds_apart`]); elsewhere nothing is built before it is needed.
    pub fn prefetch(&mut self, subjects: &[usize]) {
        if !self.exec.builds_apart() {
            return;
        }
        // A hint only: the build is made when it is needed.
        if let Err(e) = self.build_in_background(subjects) {
            progress::detail(&format!("  cannot build ahead: {e:#}"));
        }
    }

    /// Submits the builds these subjects' revisions need and nothing has asked for yet, without
    /// waiting for them; returns the commit keys of every build of theirs still to answer.
    pub(super) fn build_in_background(&mut self, subjects: &[usize]) -> Result<Vec<String>> {
        let mut jobs: Vec<BuildJob> = Vec::new();
        let mut pending = Vec::new();
        for &i in subjects {
            let lib = &self.libs[self.subjects[i].0.lib];
            if let (Library::Revision { label, commit }, LibState::Unknown) = (&lib.0, &lib.1) {
                let key = commit.key();
                if self.prebuilt.contains_key(&key) || pending.contains(&key) {
                    continue;
                }
                if !self.in_flight.contains(&key) {
                    jobs.push(BuildJob {
                        label: label.clone(),
                        commit: commit.clone(),
                    });
                }
                pending.push(key);
            }
        }
        if jobs.is_empty() {
            return Ok(pending);
        }
        let keys: Vec<String> = jobs.iter().map(|j| j.commit.key()).collect();
        let ticket = self.exec.submit(Wave {
            builds: jobs,
            blocks: Vec::new(),
        })?;
        self.in_flight.extend(keys.iter().cloned());
        self.ahead.insert(ticket, keys);
        Ok(pending)
    }

    /// [`Session::prepare`] for each subject, their builds made in one wave.
    pub fn prepare_all(&mut self, subjects: &[usize]) -> Result<()> {
        let wants: Vec<(usize, usize)> = subjects.iter().map(|&i| (i, 0)).collect();
        self.build_ahead(&wants)?;
        subjects.iter().try_for_each(|&i| self.prepare(i))
    }

    /// Library, version check, kernel compile and cached samples of subject `i`.
    pub fn prepare(&mut self, i: usize) -> Result<()> {
        if !matches!(self.subjects[i].1, SubjectState::Unknown) {
            return Ok(());
        }
        let lib = self.subjects[i].0.lib;
        let target = match self.prepare_library(lib)? {
            Ok(t) => t.clone(),
            Err(u) => {
                self.subjects[i].1 = SubjectState::Unavailable(u);
                return Ok(());
            }
        };
        let (spec, threads, side) = {
            let s = &self.subjects[i].0;
            (s.spec.clone(), s.threads, s.side)
        };
        if let Some(v) = target.prefix.version() {
            if v < spec.kernel.min_version {
                self.subjects[i].1 = SubjectState::Unavailable(Unavailable::TooOld {
                    kernel: spec.kernel.name.clone(),
                    needs: spec.kernel.min_version.to_string(),
                    have: v.to_string(),
                });
                return Ok(());
            }
        }
        if let Some(j) = self.same_binaries(i, &target) {
            self.subjects[i].1 = SubjectState::SameAs(j);
            self.shared += 1;
            return Ok(());
        }
        let key = (lib, spec.kernel.name.clone());
        let kernel = match self.kernels.get(&key) {
            Some(k) => k.clone(),
            None => {
                let sp = progress::spinner(&format!(
                    "compiling {} for {}",
                    spec.kernel.name, target.label
                ));
                let k = compile::compile(self.cache, &spec.kernel, &target.prefix)?;
                sp.finish_and_clear();
                self.kernels.insert(key, k.clone());
                k
            }
        };
        let (store, samples) = match &self.reuse {
            Reuse::Nothing => (None, Vec::new()),
            Reuse::Context(context) => {
                let store = SampleSet::open(
                    self.cache,
                    &target.prefix.identity()?,
                    &spec,
                    threads,
                    self.duration,
                    self.metric,
                    &format!("{context}|{}", side.key()),
                )?;
                // A stored sample must pass the same checks as a fresh one.
                let mut samples: Vec<Sample> = store
                    .load()?
                    .into_iter()
                    .filter(|s| target.check(s).is_ok())
                    .collect();
                samples.retain(|s| self.same_code_path(s).is_ok());
                if let Some(here) = self.exec.measures_on() {
                    Self::keep_host(&mut samples, here);
                }
                self.samples_reused += samples.len();
                (Some(store), samples)
            }
        };
        self.subjects[i].1 = SubjectState::Ready(Box::new(Ready {
            kernel,
            store,
            samples,
        }));
        Ok(())
    }

    /// A prepared subject that measures what subject `i` would: same kernel spec, threads and
    /// side, on a build with the same loaded binaries.
    fn same_binaries(&self, i: usize, target: &Target) -> Option<usize> {
        let binaries = target.binaries.as_ref()?;
        let s = &self.subjects[i].0;
        self.subjects
            .iter()
            .enumerate()
            .find_map(|(j, (o, state))| {
                let same = j != i
                    && matches!(state, SubjectState::Ready(_))
                    && o.threads == s.threads
                    && o.side == s.side
                    && o.spec.canonical() == s.spec.canonical()
                    && self.target(o.lib).and_then(|t| t.binaries.as_ref()) == Some(binaries);
                same.then_some(j)
            })
    }
}
