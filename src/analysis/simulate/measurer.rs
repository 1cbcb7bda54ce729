//! The simulated machine: synthetic commits with steps, sampled under a noise model in rounds
//! as the real engine samples them.

use super::*;

/// Synthetic commits: mean = product of (1 + effect) over the steps at or before the commit; a
/// sample is that mean times the noise model's factors. Draws only missing samples, in rounds
/// like the real engine (shuffled unless the noise is iid, where order cannot matter and the
/// fixed order keeps seeded results as they were).
pub struct SimMeasurer {
    /// (first commit with the change, factor), sorted.
    pub(super) steps: Vec<(usize, f64)>,
    /// The steps its count twin ([`SimMeasurer::counting`]) sees: all of them unless some
    /// changed the time alone.
    pub(super) count_steps: Vec<(usize, f64)>,
    /// Tail steps: from this commit on, this share of processes is this factor slower.
    pub(super) tails: Vec<(usize, f64, f64)>,
    pub(super) commits: usize,
    pub(super) noise: Normal<f64>,
    pub(super) model: NoiseModel,
    pub(super) iid: bool,
    pub(super) machine: Machine,
    pub(super) offsets: HashMap<usize, f64>,
    pub(super) order: Option<StdRng>,
    pub(super) skip_rate: f64,
    pub(super) rng: StdRng,
    pub(super) samples: HashMap<usize, Samples>,
    /// Searches that may sample at once, and each (lane, commit)'s samples.
    pub(super) lanes: usize,
    pub(super) lane_samples: HashMap<(usize, usize), Samples>,
    /// Each lane's block asked for and not sampled yet.
    pub(super) lanes_in_flight: std::collections::BTreeMap<usize, Vec<(usize, usize)>>,
    /// The round being sampled (samples of one round pair in the paired test).
    pub(super) round: u64,
    pub(super) skips: HashMap<usize, bool>,
    /// The first confirmed change point as it was streamed: (last_old, first_new, builds and
    /// samples spent by then).
    pub(super) first_confirmed: Option<(usize, usize, usize, usize)>,
    /// What the run's decisions read (see [`Measurer::used`]).
    pub(super) used: crate::analysis::bisect::Used,
}

impl SimMeasurer {
    pub fn new(
        commits: usize,
        steps: &[(usize, f64)],
        model: &NoiseModel,
        skip_rate: f64,
        seed: u64,
    ) -> Result<Self> {
        let Ok(normal) = Normal::new(0.0, model.cv) else {
            bail!("noise must be a non-negative number, got {}", model.cv);
        };
        model.validate()?;
        let mut steps: Vec<(usize, f64)> = steps.to_vec();
        steps.sort_by_key(|s| s.0);
        let mut rng = StdRng::seed_from_u64(seed);
        let iid = model.is_iid();
        let order = (!iid).then(|| StdRng::seed_from_u64(rng.gen()));
        Ok(SimMeasurer {
            count_steps: steps.clone(),
            tails: Vec::new(),
            steps,
            commits,
            noise: normal,
            model: model.clone(),
            iid,
            machine: Machine::default(),
            offsets: HashMap::new(),
            order,
            skip_rate,
            rng,
            samples: HashMap::new(),
            lanes: 1,
            lane_samples: HashMap::new(),
            lanes_in_flight: Default::default(),
            round: 0,
            skips: HashMap::new(),
            first_confirmed: None,
            used: Default::default(),
        })
    }

    /// The commit's mean from its steps alone.
    pub fn mean(&self, commit: usize) -> f64 {
        self.steps
            .iter()
            .take_while(|s| s.0 <= commit)
            .map(|s| s.1)
            .product()
    }

    /// Log of the commit's build offset, drawn the first time the commit is built.
    pub(super) fn offset(&mut self, c: usize) -> f64 {
        if self.model.build_offset == 0.0 {
            return 0.0;
        }
        let (sd, rng) = (self.model.build_offset, &mut self.rng);
        *self.offsets.entry(c).or_insert_with(|| {
            let z: f64 = StandardNormal.sample(rng);
            sd * z
        })
    }

    /// What a comparison of this commit estimates: its mean with its build's offset (the
    /// machine's factors are common to every commit and cancel in a ratio).
    pub fn true_mean(&mut self, c: usize) -> f64 {
        self.mean(c) * self.offset(c).exp()
    }

    /// The count of the same commits: the steps the count sees, iid `noise`, and the same
    /// builds failing (drawn now for every commit, from `seed`, into both).
    pub fn counting(&mut self, noise: f64, seed: u64) -> Result<SimMeasurer> {
        let mut count = SimMeasurer::new(
            self.commits,
            &self.count_steps,
            &NoiseModel::iid(noise),
            self.skip_rate,
            seed,
        )?;
        for c in 0..self.commits {
            let skip = count.is_skipped(c);
            self.skips.entry(c).or_insert(skip);
        }
        Ok(count)
    }

    /// Whether its noise ran out: a replayed trace gave more samples than it holds.
    pub fn exhausted(&self) -> bool {
        self.machine.exhausted(&self.model)
    }

    /// Samples taken, lanes' included.
    pub(crate) fn samples_held(&self) -> usize {
        let lanes = self.lane_samples.values();
        self.samples.values().chain(lanes).map(Samples::len).sum()
    }

    /// One sample of commit `c`, or `None` when it failed (the commit is then skipped for good,
    /// as the engine does).
    fn draw(&mut self, c: usize) -> Option<f64> {
        let tail = self.tail_factor(c);
        if self.iid {
            return Some(tail * self.mean(c) * self.noise.sample(&mut self.rng).exp());
        }
        let log = self.mean(c).ln()
            + self.offset(c)
            + self.machine.sample_log(&self.model, &mut self.rng);
        if self.model.fail_rate > 0.0 && self.rng.gen_bool(self.model.fail_rate) {
            self.skips.insert(c, true);
            return None;
        }
        Some(tail * log.exp())
    }

    /// The tail steps' factor for one process of commit `c`: each hits it with its share.
    fn tail_factor(&mut self, c: usize) -> f64 {
        let mut f = 1.0;
        for &(_, share, factor) in self.tails.iter().filter(|t| t.0 <= c) {
            if self.rng.gen_bool(share) {
                f *= factor;
            }
        }
        f
    }

    fn round_key(&self) -> RoundKey {
        RoundKey {
            session: 0,
            round: self.round,
        }
    }

    /// Searches that may sample at once (see [`crate::analysis::lanes`]); 1 by default.
    pub fn with_lanes(mut self, lanes: usize) -> Self {
        self.lanes = lanes;
        self
    }

    /// These commits' builds fail, whatever the skip rate.
    pub fn failing(mut self, commits: &[usize]) -> Self {
        self.skips.extend(commits.iter().map(|&c| (c, true)));
        self
    }

    /// The probes of `wants` from `held`, per commit (a skipped commit skips).
    fn probes(&self, wants: &[(usize, usize)], held: impl Fn(usize) -> Samples) -> Vec<Probe> {
        wants
            .iter()
            .map(|&(c, _)| match self.have(c) {
                None => Probe::Skip(Unavailable::Simulated {
                    message: "build failed (simulated)".into(),
                }),
                Some(_) => Probe::Samples(held(c)),
            })
            .collect()
    }

    pub(super) fn is_skipped(&mut self, c: usize) -> bool {
        if c == 0 || c + 1 >= self.commits || self.skip_rate <= 0.0 {
            return false;
        }
        let rate = self.skip_rate.min(1.0);
        let rng = &mut self.rng;
        *self.skips.entry(c).or_insert_with(|| rng.gen_bool(rate))
    }
}

impl Sampler for SimMeasurer {
    fn have(&self, c: usize) -> Option<usize> {
        if self.skips.get(&c).copied().unwrap_or(false) {
            return None;
        }
        Some(self.samples.get(&c).map_or(0, Samples::len))
    }

    fn take_one(&mut self, c: usize) -> Result<()> {
        if let Some(x) = self.draw(c) {
            let round = self.round_key();
            self.samples.entry(c).or_default().push(x, Some(round));
        }
        Ok(())
    }

    fn new_round(&mut self) {
        self.round += 1;
        self.machine.new_round();
    }
}

/// One lane's view of the simulated machine: its commits' samples are its own.
struct LaneView<'a> {
    sim: &'a mut SimMeasurer,
    lane: usize,
}

impl Sampler for LaneView<'_> {
    fn have(&self, c: usize) -> Option<usize> {
        self.sim.have(c)?;
        Some(
            self.sim
                .lane_samples
                .get(&(self.lane, c))
                .map_or(0, Samples::len),
        )
    }

    fn take_one(&mut self, c: usize) -> Result<()> {
        if let Some(x) = self.sim.draw(c) {
            let round = self.sim.round_key();
            let held = self.sim.lane_samples.entry((self.lane, c)).or_default();
            held.push(x, Some(round));
        }
        Ok(())
    }

    fn new_round(&mut self) {
        self.sim.new_round()
    }
}

impl Measurer for SimMeasurer {
    fn used(&mut self) -> &mut crate::analysis::bisect::Used {
        &mut self.used
    }
    fn ensure(&mut self, wants: &[(usize, usize)]) -> Result<Vec<Probe>> {
        for w in wants {
            self.is_skipped(w.0);
        }
        let mut order = self.order.take();
        let filled = rounds::fill(self, wants, order.as_mut());
        self.order = order;
        filled?;
        Ok(self.probes(wants, |c| self.samples.get(&c).cloned().unwrap_or_default()))
    }

    fn lanes(&self) -> usize {
        self.lanes
    }

    fn start_lane(&mut self, lane: usize, wants: &[(usize, usize)]) -> Result<()> {
        if self.lanes_in_flight.insert(lane, wants.to_vec()).is_some() {
            bail!("lane {lane} started a block with one in flight");
        }
        Ok(())
    }

    /// The lowest lane in flight's block, sampled now: the simulated machine has no clock, and
    /// this order makes a scan's samples independent of which search thread asked first.
    fn next_lane(&mut self) -> Result<(usize, SeriesProbes)> {
        let Some((lane, wants)) = self.lanes_in_flight.pop_first() else {
            bail!("no lane has a block in flight");
        };
        for w in &wants {
            self.is_skipped(w.0);
        }
        let mut order = self.order.take();
        let mut view = LaneView { sim: self, lane };
        let filled = rounds::fill(&mut view, &wants, order.as_mut());
        self.order = order;
        filled?;
        let probes = self.probes(&wants, |c| {
            let held = self.lane_samples.get(&(lane, c));
            held.cloned().unwrap_or_default()
        });
        Ok((lane, probes.into_iter().map(|p| vec![p]).collect()))
    }

    fn confirmed(&mut self, cp: &ChangePoint) {
        if cp.confirmed && self.first_confirmed.is_none() {
            let lanes = self.lane_samples.keys().map(|k| k.1);
            let sampled: std::collections::HashSet<usize> =
                self.samples.keys().copied().chain(lanes).collect();
            let builds = sampled.len() + self.skips.values().filter(|s| **s).count();
            let samples = self.samples_held();
            self.first_confirmed = Some((cp.last_old, cp.first_new, builds, samples));
        }
    }
}
