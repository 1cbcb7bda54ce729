//! The engine's sampling: blocks of interleaved rounds sent to the executor, each answer
//! checked and kept, and the callgrind profiles `explain` reads.

use super::*;

impl Session<'_> {
    /// Bring every (subject, n) to at least n samples, taken in interleaved
    /// rounds. A subject that cannot be measured stays so; callers read why
    /// from [`Session::samples`].
    pub fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<()> {
        let bar = self.progress_bar;
        let Some(ticket) = self.start_block(wants, None, bar)? else {
            return Ok(());
        };
        self.wait_for(|e| e.ticket == Some(ticket))?;
        Ok(())
    }

    /// Lane `lane`'s block of `wants` (a lane's own subjects, see
    /// [`crate::analysis::lanes`]): its builds submitted now, its samples once they are made,
    /// on any free node until the lane has one. Neither waits: the other lanes go on.
    pub fn start_lane_block(&mut self, lane: usize, wants: &[(usize, usize)]) -> Result<()> {
        let subjects: Vec<usize> = wants.iter().map(|w| w.0).collect();
        let builds = self.build_in_background(&subjects)?;
        self.lanes_building.push(Building {
            lane,
            wants: wants.to_vec(),
            builds,
        });
        self.start_built_lanes()
    }

    /// Waits until a lane's block has ended: the lane, and the subjects it asked for.
    pub fn next_lane_block(&mut self) -> Result<(usize, Vec<usize>)> {
        loop {
            self.start_built_lanes()?;
            if let Some(at) = self.ended.iter().position(|e| e.lane.is_some()) {
                let e = self.ended.remove(at).expect("found above");
                return Ok((e.lane.expect("a lane's"), e.asked));
            }
            let a = self.exec.next()?.ok_or_else(|| {
                anyhow::anyhow!(
                    "the executor stopped answering before the lanes' samples were taken"
                )
            })?;
            self.stash(a)?;
        }
    }

    /// Every lane whose builds have all answered gets its block of samples.
    fn start_built_lanes(&mut self) -> Result<()> {
        let (ready, building): (Vec<Building>, Vec<Building>) =
            std::mem::take(&mut self.lanes_building)
                .into_iter()
                .partition(|b| b.builds.iter().all(|k| !self.in_flight.contains(k)));
        self.lanes_building = building;
        for b in ready {
            if self.start_block(&b.wants, Some(b.lane), false)?.is_none() {
                self.ended.push_back(Ended {
                    ticket: None,
                    lane: Some(b.lane),
                    asked: b.wants.iter().map(|w| w.0).collect(),
                });
            }
        }
        Ok(())
    }

    /// The block that brings `wants` to their counts, submitted (`None`: nothing is missing).
    fn start_block(
        &mut self,
        wants: &[(usize, usize)],
        lane: Option<usize>,
        bar: bool,
    ) -> Result<Option<Ticket>> {
        self.build_ahead(wants)?;
        for &(i, _) in wants {
            self.prepare(i)?;
        }
        let (mut block, subjects) = self.block(&self.roots(wants));
        let missing: usize = block
            .runs
            .iter()
            .map(|r| r.want.saturating_sub(r.have))
            .sum();
        if missing == 0 {
            return Ok(None);
        }
        block.lane = lane;
        let ticket = self.exec.submit(Wave {
            builds: Vec::new(),
            blocks: vec![block],
        })?;
        let done = WaveDone {
            subjects: subjects.len(),
            samples: 0,
            rounds: 0,
            hosts: Vec::new(),
            seconds: 0.0,
        };
        let flight = InFlight {
            lane,
            asked: wants.iter().map(|w| w.0).collect(),
            subjects,
            base: self.rounds,
            done,
            started: std::time::Instant::now(),
            bar: bar.then(|| progress::bar(missing as u64, "sampling")),
        };
        self.blocks.insert(ticket, flight);
        Ok(Some(ticket))
    }

    /// Takes the executor's answers until a block that `is` has ended.
    fn wait_for(&mut self, is: impl Fn(&Ended) -> bool) -> Result<Ended> {
        loop {
            if let Some(at) = self.ended.iter().position(&is) {
                return Ok(self.ended.remove(at).expect("found above"));
            }
            let a = self.exec.next()?.ok_or_else(|| {
                anyhow::anyhow!("the executor stopped answering before its samples were taken")
            })?;
            self.stash(a)?;
        }
    }

    /// An answer of a block in flight: a sample kept, or the block ended.
    pub(super) fn block_answer(&mut self, a: Answer) -> Result<()> {
        match a {
            Answer::Sampled {
                ticket,
                run,
                outcome,
                retried,
                taken,
                ..
            } => {
                let f = self.blocks.get_mut(&ticket).expect("a block in flight");
                let d = &mut f.done;
                d.rounds = d.rounds.max(taken.round as u64);
                d.samples += 1;
                if !d.hosts.contains(&taken.host) {
                    d.hosts.push(taken.host.clone());
                }
                if let Some(b) = &f.bar {
                    b.inc(1);
                }
                let (subject, base) = (f.subjects[run], f.base);
                self.retried += retried;
                self.took(subject, outcome, taken, base)
            }
            Answer::WaveDone { ticket } => {
                let f = self.blocks.remove(&ticket).expect("a block in flight");
                let mut done = f.done;
                // Where its last samples were taken: a block that had to go on on another node
                // took every subject's samples afresh there.
                let last = done.hosts.last().cloned();
                done.hosts.sort();
                done.seconds = f.started.elapsed().as_secs_f64();
                // Blocks side by side may share round numbers: their subjects never meet in
                // one test. A lane's next block starts after its last.
                self.rounds = self.rounds.max(f.base + done.rounds);
                self.answered(&f.subjects, last.as_deref(), done);
                if let Some(b) = f.bar {
                    b.finish_and_clear();
                }
                self.ended.push_back(Ended {
                    ticket: Some(ticket),
                    lane: f.lane,
                    asked: f.asked,
                });
                Ok(())
            }
            Answer::Built { .. } => unreachable!("a build is not a block's answer"),
        }
    }

    /// Subjects measured as another are filled through it, once, at the most samples any of
    /// them wants.
    fn roots(&self, wants: &[(usize, usize)]) -> Vec<(usize, usize)> {
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for &(i, n) in wants {
            let r = self.root(i);
            match merged.iter_mut().find(|(j, _)| *j == r) {
                Some(w) => w.1 = w.1.max(n),
                None => merged.push((r, n)),
            }
        }
        merged
    }

    /// A wave of `subjects` is answered, its last samples on `host`: a subject's samples of
    /// another host are never pooled with these (a resumed run whose node is gone, a lane
    /// that went on on another node), and the wave is told.
    fn answered(&mut self, subjects: &[usize], host: Option<&str>, done: WaveDone) {
        if let Some(host) = host {
            for &i in subjects {
                if let SubjectState::Ready(r) = &mut self.subjects[i].1 {
                    Self::keep_host(&mut r.samples, host);
                }
            }
        }
        self.sampling_s += done.seconds;
        if let Some(tell) = self.on_wave {
            tell.wave(&done);
        }
    }

    /// Keeps the samples taken on `host` (and those of caches from before samples named their
    /// host), saying how many of another host were set aside.
    pub(super) fn keep_host(samples: &mut Vec<Sample>, host: &str) {
        let before = samples.len();
        samples.retain(|s| s.host.as_deref().is_none_or(|h| h == host));
        let dropped = before - samples.len();
        if dropped > 0 {
            progress::detail(&format!(
                "  {dropped} cached sample(s) of another host set aside: measuring on {host}"
            ));
        }
    }

    /// Whether `s` ran the code paths of the session's other samples (the first one sets them):
    /// counts or times of different paths are never compared.
    pub(super) fn same_code_path(&mut self, s: &Sample) -> std::result::Result<(), String> {
        let Some(caps) = &s.cpu_caps else {
            return Ok(());
        };
        match &self.cpu_caps {
            None => {
                self.cpu_caps = Some(caps.clone());
                Ok(())
            }
            Some(first) if first == caps => Ok(()),
            Some(first) => Err(format!(
                "this sample's libcrypto ran with CPU capabilities {caps}, the session's first with {first}: samples of different code paths are never compared (pin one with {}=…)",
                crate::measure::runner::CPU_CAPS_VARS[0]
            )),
        }
    }

    /// The block that brings each measurable (subject, n) to n samples, and the subject of
    /// each of its runs.
    fn block(&self, wants: &[(usize, usize)]) -> (Block, Vec<usize>) {
        let measurable: Vec<usize> = wants.iter().map(|w| w.0).collect();
        // The host the block should run on; a run holds the samples taken there (the others
        // are set aside once the block is answered, see `answered`).
        let host = self.host_of(&measurable);
        let on_host = |s: &Sample| s.host.as_deref().is_none_or(|h| Some(h) == host.as_deref());
        let mut runs = Vec::new();
        let mut subjects = Vec::new();
        for &(i, want) in wants {
            let (subject, SubjectState::Ready(r)) = &self.subjects[i] else {
                continue;
            };
            let LibState::Ready(target) = &self.libs[subject.lib].1 else {
                continue;
            };
            runs.push(Run {
                label: target.label.clone(),
                kernel: r.kernel.clone(),
                spec: subject.spec.clone(),
                prefix: target.prefix.clone(),
                threads: subject.threads,
                have: r.samples.iter().filter(|s| on_host(s)).count(),
                want,
            });
            subjects.push(i);
        }
        let timing = Timing {
            duration: self.duration,
            timeout: self.timeout,
            retries: self.retries,
            metric: self.metric,
        };
        let block = Block {
            timing,
            runs,
            host,
            lane: None,
        };
        (block, subjects)
    }

    /// The host that took most of these subjects' samples so far (a resumed run's, from the
    /// cache): new samples should come from it too.
    fn host_of(&self, subjects: &[usize]) -> Option<String> {
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for &i in subjects {
            if let SubjectState::Ready(r) = &self.subjects[i].1 {
                for h in r.samples.iter().filter_map(|s| s.host.as_deref()) {
                    *count.entry(h).or_default() += 1;
                }
            }
        }
        let most = count.into_iter().max_by_key(|(_, n)| *n)?;
        Some(most.0.to_string())
    }

    /// One callgrind profile of subject `i` (single thread), written to
    /// `out`, whatever the session's metric; never cached. The sample it
    /// comes with passed the same identity checks as any other.
    pub fn profile(
        &mut self,
        i: usize,
        out: &Path,
    ) -> Result<std::result::Result<Sample, Unavailable>> {
        self.prepare(i)?;
        let i = self.root(i);
        let (subject, state) = &self.subjects[i];
        let r = match state {
            SubjectState::Ready(r) => r,
            SubjectState::Unavailable(u) => return Ok(Err(u.clone())),
            SubjectState::Unknown | SubjectState::SameAs(_) => unreachable!("prepared above"),
        };
        let LibState::Ready(target) = &self.libs[subject.lib].1 else {
            unreachable!("a ready subject has a ready library")
        };
        Metric::Instructions.check_threads(subject.threads)?;
        metric::valgrind_version()?;
        let req = SampleRequest {
            cache: self.cache,
            kernel: &r.kernel,
            spec: &subject.spec,
            prefix: &target.prefix,
            threads: subject.threads,
            duration: self.duration,
            timeout: self.timeout,
            metric: Metric::Instructions,
            profile: Some(out),
        };
        let outcome = runner::take_sample(&req)?;
        if let Ok(s) = &outcome {
            target.check(s)?;
        }
        Ok(outcome)
    }

    /// A sample of subject `i` has come back (or why it cannot be measured any more): it counts
    /// only if it passes the library's checks, and is kept in the sample cache.
    fn took(&mut self, i: usize, outcome: SampleOutcome, taken: Taken, base: u64) -> Result<()> {
        let (subject, state) = &self.subjects[i];
        let (SubjectState::Ready(_), LibState::Ready(target)) = (state, &self.libs[subject.lib].1)
        else {
            return Ok(());
        };
        let what = format!(
            "{} {} t={}",
            target.label,
            subject.spec.short(),
            subject.threads
        );
        let mut s = match outcome {
            Ok(s) => s,
            Err(u) => {
                progress::detail(&format!("  {what}: {u}"));
                self.subjects[i].1 = SubjectState::Unavailable(u);
                return Ok(());
            }
        };
        target.check(&s)?;
        if let Err(why) = self.same_code_path(&s) {
            anyhow::bail!("{}: {why}", what);
        }
        s.round = Some(base + taken.round as u64);
        s.session = Some(self.session);
        self.hosts.insert(taken.host.clone());
        s.host = Some(taken.host);
        let SubjectState::Ready(r) = &mut self.subjects[i].1 else {
            unreachable!("matched above")
        };
        if let Some(store) = &r.store {
            store.append(&s)?;
        }
        self.samples_taken += 1;
        progress::detail(&format!(
            "  sample {what} #{}: {:.4} {}",
            r.samples.len() + 1,
            s.value(self.metric),
            self.metric.unit_ascii()
        ));
        r.samples.push(s);
        Ok(())
    }
}
