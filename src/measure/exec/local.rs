//! The local executor: builds into the cache and samples in fresh child processes on this
//! machine, in this process, one answer per [`Executor::next`] — what every command did before
//! there was a seam. Builds of a wave far apart in history go side by side
//! ([`builds::ensure_all`]).

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

    /// The next sample of the wave's current block, or `None` when its blocks are done.
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
            match s.rounds.next(|r| s.have[r], Some(&mut self.order)) {
                Pick::NewRound => s.round += 1,
                Pick::Take(r) => {
                    interrupt::check()?;
                    let (outcome, retried) = take(self.cache, block, &block.runs[r])?;
                    s.have[r] = outcome.is_ok().then(|| s.have[r].map_or(0, |h| h + 1));
                    return Ok(Some(Answer::Sampled {
                        ticket: p.ticket,
                        block: p.block,
                        run: r,
                        outcome,
                        retried,
                        taken: Taken {
                            host: self.host.clone(),
                            round: s.round,
                        },
                    }));
                }
                Pick::Done => {
                    p.block += 1;
                    p.rounds = None;
                }
            }
        }
        Ok(None)
    }
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
