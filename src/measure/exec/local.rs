//! The local executor: builds into the cache and samples in fresh child processes on this
//! machine, in this process, one answer per [`Executor::next`] — what every command did before
//! there was a seam. Builds of a wave far apart in history go side by side
//! ([`builds::ensure_all`]), and so do a block's samples where the metric allows it
//! ([`Metric::side_by_side`]: instruction counts, one per core, in the rounds' order).
//!
//! [`Metric::side_by_side`]: crate::measure::metric::Metric::side_by_side

use std::collections::VecDeque;

use anyhow::Result;
use rand::rngs::StdRng;
use rand::SeedableRng;

use crate::analysis::rounds::{Pick, Rounds};
use crate::build::builds::{self, BuildOptions};
use crate::build::repo::{CommitInfo, Repo};
use crate::cache::Cache;
use crate::host;
use crate::interrupt;
use crate::measure::exec::{Answer, Block, Executor, ExecutorKind, Run, Taken, Ticket, Wave};
use crate::measure::runner::{self, SampleOutcome, SampleRequest};
use crate::progress;

pub struct Local<'a> {
    cache: &'a Cache,
    repo: Option<(&'a Repo, BuildOptions<'a>)>,
    /// The order of the subjects within each round (see analysis::rounds), one stream for the
    /// whole session.
    order: StdRng,
    host: String,
    waves: VecDeque<Pending>,
    next_ticket: u64,
}

/// A submitted wave and how far it has got.
struct Pending {
    ticket: Ticket,
    wave: Wave,
    built: bool,
    answered: VecDeque<Answer>,
    /// The block being sampled and its rounds.
    block: usize,
    rounds: Option<Sampling>,
}

/// One block's rounds: per run the samples held, `None` once it cannot be measured.
struct Sampling {
    rounds: Rounds,
    have: Vec<Option<usize>>,
    round: usize,
}

impl Sampling {
    /// The next samples to take together, each as (run, round): up to `at_once` picks in the
    /// rounds' order. A group may run into the next round — side by side, a round's order
    /// stands for no moment in time, and a one-subject block (a count search's candidate) would
    /// otherwise use one core — so a run's picks in flight count as held. Empty once the block
    /// is done.
    fn group(&mut self, at_once: usize, order: &mut StdRng) -> Vec<(usize, usize)> {
        let mut picks: Vec<(usize, usize)> = Vec::new();
        while picks.len() < at_once {
            let (have, taking) = (&self.have, &picks);
            let held = |r: usize| have[r].map(|h| h + taking.iter().filter(|p| p.0 == r).count());
            match self.rounds.next(held, Some(order)) {
                Pick::Take(r) => picks.push((r, self.round)),
                Pick::NewRound => self.round += 1,
                Pick::Done => break,
            }
        }
        picks
    }
}

impl<'a> Local<'a> {
    pub fn new(cache: &'a Cache) -> Self {
        Local {
            cache,
            repo: None,
            order: StdRng::from_entropy(),
            host: host::hostname(),
            waves: VecDeque::new(),
            next_ticket: 0,
        }
    }

    /// Its samples name `host` as where they were taken (a node's Slurm name).
    pub fn on_host(mut self, host: &str) -> Self {
        self.host = host.to_string();
        self
    }

    /// Revisions are built from this repository with these options.
    pub fn with_repo(mut self, repo: &'a Repo, build: BuildOptions<'a>) -> Self {
        self.repo = Some((repo, build));
        self
    }

    fn build(&self, p: &mut Pending) {
        let jobs = &p.wave.builds;
        let results: Vec<Result<builds::Built>> = match &self.repo {
            None => jobs
                .iter()
                .map(|j| Err(anyhow::anyhow!("no repository to build {} from", j.label)))
                .collect(),
            Some((repo, opts)) if jobs.len() >= 2 => {
                let commits: Vec<&CommitInfo> = jobs.iter().map(|j| &j.commit).collect();
                builds::ensure_all(self.cache, repo, &commits, opts)
            }
            Some((repo, opts)) => jobs
                .iter()
                .map(|j| builds::ensure(self.cache, repo, &j.commit, opts))
                .collect(),
        };
        for (job, built) in results.into_iter().enumerate() {
            p.answered.push_back(Answer::Built {
                ticket: p.ticket,
                job,
                built,
            });
        }
        p.built = true;
    }

    /// The next sample of the wave's current block, or `None` when its blocks are done. Samples
    /// taken side by side are answered in the order they were picked.
    fn sample(&mut self, p: &mut Pending) -> Result<Option<Answer>> {
        while p.block < p.wave.blocks.len() {
            let block = &p.wave.blocks[p.block];
            let s = p.rounds.get_or_insert_with(|| Sampling {
                rounds: Rounds::new(
                    &(0..block.runs.len())
                        .map(|r| (r, block.runs[r].want))
                        .collect::<Vec<_>>(),
                ),
                have: block.runs.iter().map(|r| Some(r.have)).collect(),
                round: 0,
            });
            let picks = s.group(at_once(block), &mut self.order);
            if picks.is_empty() {
                p.block += 1;
                p.rounds = None;
                continue;
            }
            interrupt::check()?;
            let runs: Vec<usize> = picks.iter().map(|&(r, _)| r).collect();
            let taken = take_group(self.cache, block, &runs)?;
            for (&(r, round), (outcome, retried)) in picks.iter().zip(taken) {
                // A run that failed leaves the rounds; a sample of it still in flight is dropped.
                s.have[r] = match (s.have[r], outcome.is_ok()) {
                    (Some(h), true) => Some(h + 1),
                    _ => None,
                };
                p.answered.push_back(Answer::Sampled {
                    ticket: p.ticket,
                    block: p.block,
                    run: r,
                    outcome,
                    retried,
                    taken: Taken {
                        host: self.host.clone(),
                        round,
                    },
                });
            }
            return Ok(p.answered.pop_front());
        }
        Ok(None)
    }
}

/// How many of a block's samples are taken at once: one per core where the metric allows it
/// (see the module docs), else one.
fn at_once(block: &Block) -> usize {
    if !block.timing.metric.side_by_side() {
        return 1;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// One sample of each of `runs` (indices into the block), side by side when there are several:
/// each outcome with its retries, in the order of `runs`.
fn take_group(cache: &Cache, block: &Block, runs: &[usize]) -> Result<Vec<(SampleOutcome, usize)>> {
    if let [r] = runs {
        return Ok(vec![take(cache, block, &block.runs[*r])?]);
    }
    std::thread::scope(|scope| {
        let children: Vec<_> = (runs.iter())
            .map(|&r| scope.spawn(move || take(cache, block, &block.runs[r])))
            .collect();
        children
            .into_iter()
            .map(|c| c.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// One sample of `run` in a fresh child, a crashed or timed-out one taken again up to the
/// block's retries: the outcome and how many were taken again.
fn take(cache: &Cache, block: &Block, run: &Run) -> Result<(SampleOutcome, usize)> {
    let req = SampleRequest {
        cache,
        kernel: &run.kernel,
        spec: &run.spec,
        prefix: &run.prefix,
        threads: run.threads,
        duration: block.timing.duration,
        timeout: block.timing.timeout,
        metric: block.timing.metric,
        profile: None,
    };
    let mut outcome = runner::take_sample(&req)?;
    let mut retried = 0;
    while retried < block.timing.retries {
        match &outcome {
            Err(u) if u.is_kernel_failure() => {
                progress::detail(&format!(
                    "  {} {} t={}: {u}; trying again in a new process",
                    run.label,
                    run.spec.short(),
                    run.threads
                ));
                retried += 1;
                outcome = runner::take_sample(&req)?;
            }
            _ => break,
        }
    }
    Ok((outcome, retried))
}

impl Executor for Local<'_> {
    fn measures_on(&self) -> Option<&str> {
        Some(&self.host)
    }

    fn kind(&self) -> ExecutorKind {
        ExecutorKind::Local
    }

    fn submit(&mut self, wave: Wave) -> Result<Ticket> {
        let ticket = Ticket(self.next_ticket);
        self.next_ticket += 1;
        self.waves.push_back(Pending {
            ticket,
            wave,
            built: false,
            answered: VecDeque::new(),
            block: 0,
            rounds: None,
        });
        Ok(ticket)
    }

    fn next(&mut self) -> Result<Option<Answer>> {
        let Some(mut p) = self.waves.pop_front() else {
            return Ok(None);
        };
        if !p.built {
            self.build(&mut p);
        }
        let answer = match p.answered.pop_front() {
            Some(a) => Some(a),
            None => self.sample(&mut p)?,
        };
        match answer {
            Some(a) => {
                self.waves.push_front(p);
                Ok(Some(a))
            }
            None => Ok(Some(Answer::WaveDone { ticket: p.ticket })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampling(wants: &[usize]) -> Sampling {
        Sampling {
            rounds: Rounds::new(&wants.iter().copied().enumerate().collect::<Vec<_>>()),
            have: vec![Some(0); wants.len()],
            round: 0,
        }
    }

    /// Whatever the group size: no round holds a run twice, the rounds are those one sample at
    /// a time walks, and every run gets exactly its count (picks in flight count as held).
    #[test]
    fn groups_of_side_by_side_samples_walk_the_rounds_and_take_no_more_than_wanted() {
        for at_once in [1, 2, 3, 8] {
            let mut s = sampling(&[3, 2, 3]);
            let mut order = StdRng::seed_from_u64(7);
            let mut rounds: Vec<Vec<usize>> = Vec::new();
            loop {
                let picks = s.group(at_once, &mut order);
                if picks.is_empty() {
                    break;
                }
                assert!(picks.len() <= at_once, "{at_once}: {picks:?}");
                for (r, round) in picks {
                    rounds.resize(rounds.len().max(round), Vec::new());
                    let runs = &mut rounds[round - 1];
                    assert!(!runs.contains(&r), "{at_once}: {r} twice in round {round}");
                    runs.push(r);
                    s.have[r] = s.have[r].map(|h| h + 1);
                }
            }
            assert_eq!(s.have, [Some(3), Some(2), Some(3)], "{at_once}");
            let sizes: Vec<usize> = rounds.iter().map(|r| r.len()).collect();
            assert_eq!(sizes, [3, 3, 2], "{at_once}");
            assert!(s.group(at_once, &mut order).is_empty());
        }
    }

    /// A lone subject (a count search's candidate) is sampled on every core at once.
    #[test]
    fn a_lone_subject_fills_the_group() {
        let mut s = sampling(&[3]);
        let mut order = StdRng::seed_from_u64(1);
        assert_eq!(s.group(2, &mut order), [(0, 1), (0, 2)]);
        s.have[0] = Some(2);
        assert_eq!(s.group(2, &mut order), [(0, 3)]);
        s.have[0] = Some(3);
        assert!(s.group(2, &mut order).is_empty());
    }

    /// A run that cannot be measured leaves the rounds: the others still get their count.
    #[test]
    fn a_failed_run_leaves_the_groups() {
        let mut s = sampling(&[2, 2]);
        let mut order = StdRng::seed_from_u64(1);
        let mut taken = [0, 0];
        loop {
            let picks = s.group(2, &mut order);
            if picks.is_empty() {
                break;
            }
            for (r, _) in picks {
                taken[r] += 1;
                s.have[r] = if r == 1 {
                    None
                } else {
                    s.have[r].map(|h| h + 1)
                };
            }
        }
        assert_eq!(taken, [2, 1]);
    }
}
