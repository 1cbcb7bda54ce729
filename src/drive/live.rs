//! A search's view of a measurement session: the adapter that shows a session's subjects to
//! the pure search as commits (one per thread-count series), tells each decided step and
//! confirmed change point to the run's [`Sink`] as it happens, and keeps the clock of
//! `--budget`. Shared by bisect and scan.

use std::time::Instant;

use anyhow::Result;

use super::plan::Locate;
use crate::analysis::bisect::{self, Config, Measurer, Probe, SeriesProbes, Step};
use crate::analysis::locate;
use crate::analysis::resolution::Forecast;
use crate::build::repo;
use crate::measure::engine::Session;
use crate::progress;
use crate::report::bisect::{auto_locate_line, change_point_json, ForecastEvent};
use crate::report::events::{Decided, Event, Sink, Spent};

pub struct Live<'s, 'a> {
    pub session: &'s mut Session<'a>,
    pub commits: &'s [repo::CommitInfo],
    /// The thread counts: commit c at the t-th is the session's subject c·k + t.
    pub threads: &'s [usize],
    pub sink: &'s dyn Sink,
    pub started: Instant,
    pub deadline: Option<Instant>,
    /// The counts that locate for a clock that confirms (`--locate`): their change points are
    /// announced as located, not as the run's culprits.
    pub locating: bool,
    /// What the run's decisions read of each commit, in the search's terms (a commit, not a
    /// session's subject per thread count): see [`Measurer::used`].
    pub used: bisect::Used,
}

impl Live<'_, '_> {
    /// The counts that will locate over `0..n`, as `--locate` asks: under `auto`, this clock
    /// chooses ([`locate::auto`]), tells its choice now and keeps it in `notes`; otherwise the
    /// counts as given.
    pub fn counts_to_locate<'c, 'd>(
        &mut self,
        (n, cfg, locate): (usize, &Config, Option<Locate>),
        count: Option<Live<'c, 'd>>,
        notes: &mut Vec<String>,
    ) -> Result<Option<Live<'c, 'd>>> {
        if locate != Some(Locate::Auto) || count.is_none() {
            return Ok(count);
        }
        let choice = locate::auto(n, cfg, self)?;
        self.sink.send(Event::LocateChosen(&choice));
        notes.push(auto_locate_line(&choice));
        Ok(count.filter(|_| choice.counts))
    }

    /// What would resolve more on this machine, given the forecast: more samples, and more
    /// shorter ones in the same time, when the cap falls short of --min-effect, and counting
    /// instructions for one thread.
    fn better(&self, f: &Forecast) -> Vec<String> {
        let r = &f.resolution;
        let mut v = Vec::new();
        let time = self.session.metric().is_time();
        // Past ten times the cap, the cap --min-effect needs is no advice: each decision would
        // take hours. Twice the cap still is: replaying this machine's pkeyread traces at 19%
        // noise, twice the cap found a 10% step in 17-60% of searches where the cap found it in
        // 1% (docs/how-a-number-is-made.md).
        if r.short() && r.needed <= 10 * r.cap {
            v.push(format!(
                "--max-samples {} (resolves {:.1}%)",
                r.needed,
                r.min_effect * 100.0
            ));
        } else if r.short() {
            let twice = r.smallest_at(2 * r.cap).max(r.min_effect);
            v.push(format!(
                "--max-samples {} (resolves {:.1}%)",
                2 * r.cap,
                twice * 100.0
            ));
        }
        // Longer samples did not pay where measured: on a 2-core VM a quarter-second sample was
        // barely noisier than a 1-second one and a 2-second one no quieter, so the same machine
        // time resolved about twice as much in 0.25 s samples, at 2 threads too; on a host in
        // waves no duration was safe (docs/how-a-number-is-made.md). Half the duration at twice
        // the cap costs what the cap costs now.
        let half = self.session.duration() / 2.0;
        if time && r.short() && half >= 0.25 {
            v.push(format!(
                "--duration {half} --max-samples {} (twice the samples in the same sampling time; scripts/bench-sampling says which duration resolves most on this machine)",
                2 * r.cap
            ));
        }
        // Counting pays when the clock alone cannot resolve --min-effect at the cap: on one
        // release-history range with -21%..-77% steps at 18% noise the clock alone took 126 s and
        // left two pairs bounded at 15-16%, locating 228 s and left nothing; at 15-21% noise with
        // +-5-30% steps locating finds what the clock cannot (docs/commands.md).
        if time && self.threads == [1] && r.short() && !self.locating {
            v.push(
                "--locate instructions (counts locate, the clock confirms; 1 thread, about 2.6 s per count sample, one per core side by side)"
                    .into(),
            );
        }
        v
    }

    /// `take` run on the session for `wants` at every thread count (commit c at the t-th is
    /// subject c·k + t), told as sampling, and what it took up from the cache told after.
    fn sampled<T>(
        &mut self,
        wants: &[(usize, usize)],
        take: impl FnOnce(&mut Session, &[(usize, usize)]) -> Result<T>,
    ) -> Result<T> {
        let commits = self.commits;
        let shorts: Vec<&str> = wants
            .iter()
            .filter_map(|(i, _)| commits.get(*i).map(|c| c.short.as_str()))
            .collect();
        self.sink.send(Event::Sampling(&shorts));
        let k = self.threads.len();
        let subjects: Vec<(usize, usize)> = wants
            .iter()
            .flat_map(|&(c, n)| (0..k).map(move |t| (c * k + t, n)))
            .collect();
        let reused = self.session.samples_reused;
        let taken = take(&mut *self.session, &subjects)?;
        self.tell_reused(reused, &shorts);
        Ok(taken)
    }

    /// Samples of `commits` taken up from the cache since the session held `before` of them.
    fn tell_reused(&self, before: usize, commits: &[&str]) {
        let samples = self.session.samples_reused - before;
        if samples > 0 {
            self.sink.send(Event::Reused { commits, samples });
        }
    }

    fn builds(&self) -> progress::BuildCounts {
        let b = self.session.builds.values();
        progress::BuildCounts {
            built: b.clone().filter(|b| b.fresh && b.ok).count(),
            cached: b.clone().filter(|b| !b.fresh && b.ok).count(),
            failed: b.filter(|b| !b.ok).count(),
        }
    }
}

impl Measurer for Live<'_, '_> {
    fn used(&mut self) -> &mut bisect::Used {
        &mut self.used
    }

    fn prepare(&mut self, c: usize) -> Result<()> {
        self.prepare_all(&[c])
    }

    /// Every thread count's subject of each commit; their builds in one wave.
    fn prepare_all(&mut self, commits: &[usize]) -> Result<()> {
        let k = self.threads.len();
        let reused = self.session.samples_reused;
        let subjects: Vec<usize> = commits
            .iter()
            .flat_map(|c| (0..k).map(move |t| c * k + t))
            .collect();
        Measurer::prepare_all(self.session, &subjects)?;
        let shorts: Vec<&str> = (commits.iter())
            .filter_map(|&c| self.commits.get(c).map(|x| x.short.as_str()))
            .collect();
        self.tell_reused(reused, &shorts);
        Ok(())
    }

    fn identical(&self, a: usize, b: usize) -> bool {
        let k = self.threads.len();
        self.session.identical(a * k, b * k)
    }

    fn name(&self, i: usize) -> String {
        self.session.name(i * self.threads.len())
    }

    fn series(&self) -> usize {
        self.threads.len()
    }

    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        Ok(bisect::first_series(self.ensure_series(wants)?))
    }

    /// Every listed commit at every thread count, in the engine's interleaved rounds.
    fn ensure_series(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Vec<Probe>>> {
        let k = self.threads.len();
        let mut probes = self
            .sampled(wants, |s, subjects| Measurer::ensure(s, subjects))?
            .into_iter();
        Ok(wants
            .iter()
            .map(|_| probes.by_ref().take(k).collect())
            .collect())
    }

    fn lanes(&self) -> usize {
        self.session.lanes()
    }

    /// The lane's commits at every thread count, in a block of its own.
    fn start_lane(&mut self, lane: usize, wants: &[(usize, usize)]) -> Result<()> {
        self.sampled(wants, |s, subjects| Measurer::start_lane(s, lane, subjects))
    }

    fn lane_done(&mut self, lane: usize) -> Result<()> {
        Measurer::lane_done(&mut *self.session, lane)
    }

    fn next_lane(&mut self) -> Result<(usize, SeriesProbes)> {
        let (lane, per_subject) = Measurer::next_lane(&mut *self.session)?;
        let probes: Vec<Probe> = per_subject.into_iter().flatten().collect();
        let k = self.threads.len();
        Ok((lane, probes.chunks(k).map(<[Probe]>::to_vec).collect()))
    }

    fn prefetch(&mut self, commits: &[usize]) {
        let k = self.threads.len();
        let subjects: Vec<usize> = commits.iter().map(|c| c * k).collect();
        self.session.prefetch(&subjects);
    }

    fn should_stop(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    fn forecast(&mut self, f: &Forecast) {
        let better = self.better(f);
        self.sink.send(Event::Forecast(ForecastEvent {
            forecast: f,
            seconds_per_sample: self.session.seconds_per_sample(),
            better: &better,
        }));
    }

    fn confirmed(&mut self, cp: &bisect::ChangePoint) {
        let point = change_point_json(cp, self.commits, self.threads);
        if self.locating {
            let metric = self.session.metric();
            self.sink.send(Event::Located {
                point: &point,
                metric,
            });
            return;
        }
        let spent = Spent {
            seconds: self.started.elapsed().as_secs_f64(),
            builds: self.session.builds.len(),
            samples_taken: self.session.samples_taken,
        };
        self.sink.send(Event::Confirmed {
            point: &point,
            spent,
        });
    }

    fn decided(&mut self, s: &Step) {
        let builds = self.builds();
        self.sink.send(Event::Decided(Decided {
            step: s,
            commits: self.commits,
            metric: self.session.metric(),
            threads: self.threads,
            builds,
        }));
    }
}
