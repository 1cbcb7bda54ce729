//! The simulated machine: what happens to a commit's mean µs/op on the way to a sample, and the fit
//! of that model to an A/A run of the user's own machine.
//!
//! A sample is the commit's mean × its build's offset × the machine's state (drift and load bursts)
//! × an outlier factor × the slow mode of a bimodal process × the effect of its position in the
//! round × iid log-normal noise. Every factor but the last is off in [`NoiseModel::iid`], which is
//! the model the search was first checked on.

use crate::analysis::stats;
use anyhow::{bail, Result};
use rand::rngs::StdRng;
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct NoiseModel {
    /// Sigma of the iid log-normal noise of every sample (0.03 ≈ 3%).
    pub cv: f64,
    /// Sigma of each build's own log offset (layout effects), drawn once per commit and trial.
    pub build_offset: f64,
    /// Sigma of the machine state's step per sample (0.005 = 0.5% per sample).
    pub drift: f64,
    /// AR(1) coefficient of the machine state per sample; 1 is a random walk.
    pub drift_phi: f64,
    /// Chance per sample that a load burst starts.
    pub burst_rate: f64,
    /// A burst's slow-down, uniform in this range (0.10, 0.30 = +10–30%).
    pub burst_size: (f64, f64),
    /// A burst's length in samples, uniform in this range.
    pub burst_len: (usize, usize),
    /// Fraction of samples slowed by a neighbour (a page-fault storm, another process).
    pub outlier_rate: f64,
    /// An outlier's factor, uniform in this range (1.2, 2.0).
    pub outlier_size: (f64, f64),
    /// Fraction of processes that land in the slow mode of a bimodal timing.
    pub bimodal_rate: f64,
    /// How much slower the slow mode is (0.08 = 8%).
    pub bimodal_size: f64,
    /// Extra slow-down of the first sample of each round (the first process after a pause).
    pub order_effect: f64,
    /// Chance that a sample fails (crash, timeout); the engine then skips the commit.
    pub fail_rate: f64,
    /// A recorded machine replayed instead of drift, bursts, outliers, bimodality, order
    /// effects and iid noise (build offsets and failed samples stay the model's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Trace>,
}

/// A real machine's noise in the order it came: each sample of an A/A run as its log deviation
/// from its subject's median, the subjects' samples interleaved round by round as they were
/// taken. A simulated search replays it from a random point, so slow waves and bursts reach the
/// search with their real length and their real place between rounds. It never replays a
/// sample twice: past the trace's end it goes on from its start (one seam, not a loop), and a
/// search that needs more samples than the trace holds is marked as having run out of it
/// ([`Machine::exhausted`]), not scored on noise it already saw.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Trace {
    #[serde(skip)]
    pub logs: std::sync::Arc<Vec<f64>>,
    pub samples: usize,
    /// Robust sigma of the deviations (1.4826 × MAD).
    pub sigma: f64,
}

impl Trace {
    /// From each subject's µs/op in the order taken (at least 10 positive samples in all).
    pub fn of(series: &[Vec<f64>]) -> Result<Trace> {
        let devs: Vec<Vec<f64>> = series
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| {
                let logs: Vec<f64> = s.iter().map(|x| x.ln()).collect();
                let m = stats::median(&logs);
                logs.iter().map(|x| x - m).collect()
            })
            .collect();
        let longest = devs.iter().map(Vec::len).max().unwrap_or(0);
        let logs: Vec<f64> = (0..longest)
            .flat_map(|r| devs.iter().filter_map(move |d| d.get(r).copied()))
            .collect();
        if logs.len() < 10 || logs.iter().any(|x| !x.is_finite()) {
            bail!(
                "a trace needs at least 10 positive samples, got {}",
                logs.len()
            );
        }
        Ok(Trace {
            samples: logs.len(),
            sigma: stats::robust_sd(&logs),
            logs: std::sync::Arc::new(logs),
        })
    }
}

impl NoiseModel {
    /// Independent log-normal noise only.
    pub fn iid(cv: f64) -> NoiseModel {
        NoiseModel {
            cv,
            build_offset: 0.0,
            drift: 0.0,
            drift_phi: DEFAULT_PHI,
            burst_rate: 0.0,
            burst_size: (0.10, 0.30),
            burst_len: (20, 100),
            outlier_rate: 0.0,
            outlier_size: (1.2, 2.0),
            bimodal_rate: 0.0,
            bimodal_size: 0.08,
            order_effect: 0.0,
            fail_rate: 0.0,
            trace: None,
        }
    }

    /// The machine of issue 11's benchmark: CV 3%, 5% outliers ×1.2–2, AR(1) drift of 0.5% per
    /// sample.
    pub fn realistic() -> NoiseModel {
        NoiseModel {
            drift: 0.005,
            outlier_rate: 0.05,
            ..NoiseModel::iid(0.03)
        }
    }

    /// Realistic plus everything else a shared runner does: per-build offsets of 0.5%, a load
    /// burst of +10–30% every ~500 samples lasting 20–100, 30% of processes 8% slower, the first
    /// sample of a round 2% slower. Failed samples stay off: one skips a commit for good today.
    pub fn harsh() -> NoiseModel {
        NoiseModel {
            build_offset: 0.005,
            burst_rate: 0.002,
            bimodal_rate: 0.3,
            order_effect: 0.02,
            ..NoiseModel::realistic()
        }
    }

    /// Nothing but iid noise: the simulator then draws exactly what it drew before the other
    /// factors existed, so seeded results stay comparable.
    pub fn is_iid(&self) -> bool {
        self.build_offset == 0.0
            && self.drift == 0.0
            && self.burst_rate == 0.0
            && self.outlier_rate == 0.0
            && self.bimodal_rate == 0.0
            && self.order_effect == 0.0
            && self.fail_rate == 0.0
            && self.trace.is_none()
    }

    pub fn validate(&self) -> Result<()> {
        let nonneg = [
            ("noise", self.cv),
            ("build offset", self.build_offset),
            ("drift", self.drift),
            ("bimodal size", self.bimodal_size),
            ("order effect", self.order_effect),
        ];
        for (name, v) in nonneg {
            if !(v >= 0.0 && v.is_finite()) {
                bail!("{name} must be a non-negative number, got {v}");
            }
        }
        let rates = [
            ("burst rate", self.burst_rate),
            ("outlier rate", self.outlier_rate),
            ("bimodal rate", self.bimodal_rate),
            ("fail rate", self.fail_rate),
        ];
        for (name, v) in rates {
            if !(0.0..1.0).contains(&v) {
                bail!("{name} must be in [0, 1), got {v}");
            }
        }
        if !(0.0..=1.0).contains(&self.drift_phi) {
            bail!("drift phi must be in [0, 1], got {}", self.drift_phi);
        }
        let (lo, hi) = self.outlier_size;
        if !(lo >= 1.0 && lo <= hi && hi.is_finite()) {
            bail!("outlier size must be a range LO..HI with 1 <= LO <= HI, got {lo}..{hi}");
        }
        let (lo, hi) = self.burst_size;
        if !(lo >= 0.0 && lo <= hi && hi.is_finite()) {
            bail!("burst size must be a range LO..HI with 0 <= LO <= HI, got {lo}..{hi}");
        }
        if self.burst_len.0 == 0 || self.burst_len.0 > self.burst_len.1 {
            bail!("burst length must be a range LO..HI with 1 <= LO <= HI");
        }
        Ok(())
    }

    /// One line for the report.
    pub fn describe(&self) -> String {
        let pct = |v: f64| format!("{:.1}%", v * 100.0);
        if let Some(t) = &self.trace {
            let mut parts = vec![format!(
                "a recorded trace of {} samples replayed (robust sigma {})",
                t.samples,
                pct(t.sigma)
            )];
            if self.build_offset > 0.0 {
                parts.push(format!("build offsets {}", pct(self.build_offset)));
            }
            if self.fail_rate > 0.0 {
                parts.push(format!("failed samples {}", pct(self.fail_rate)));
            }
            return parts.join(", ");
        }
        if self.is_iid() {
            return format!("noise {}", pct(self.cv));
        }
        let mut parts = vec![format!("noise {}", pct(self.cv))];
        if self.drift > 0.0 {
            let kind = if self.drift_phi >= 1.0 {
                "random-walk".to_string()
            } else {
                format!("AR(1) phi {}", self.drift_phi)
            };
            parts.push(format!("{kind} drift {}/sample", pct(self.drift)));
        }
        if self.outlier_rate > 0.0 {
            parts.push(format!(
                "{} outliers x{:.2}-{:.2}",
                pct(self.outlier_rate),
                self.outlier_size.0,
                self.outlier_size.1
            ));
        }
        if self.build_offset > 0.0 {
            parts.push(format!("build offsets {}", pct(self.build_offset)));
        }
        if self.burst_rate > 0.0 {
            parts.push(format!(
                "bursts {}/sample of +{}-{} for {}-{} samples",
                self.burst_rate,
                pct(self.burst_size.0),
                pct(self.burst_size.1),
                self.burst_len.0,
                self.burst_len.1
            ));
        }
        if self.bimodal_rate > 0.0 {
            parts.push(format!(
                "bimodal {} of processes +{}",
                pct(self.bimodal_rate),
                pct(self.bimodal_size)
            ));
        }
        if self.order_effect > 0.0 {
            parts.push(format!("first in round +{}", pct(self.order_effect)));
        }
        if self.fail_rate > 0.0 {
            parts.push(format!("failed samples {}", pct(self.fail_rate)));
        }
        parts.join(", ")
    }
}

/// AR(1) coefficient when none is given: a drift that forgets over ~100 samples (minutes on a
/// real machine), slow enough that interleaving is what protects a comparison.
pub const DEFAULT_PHI: f64 = 0.99;

/// The machine's state as the samples go by: drift and bursts advance once per sample taken,
/// whatever commit it is of, because they are a property of time, not of a commit.
#[derive(Clone, Debug, Default)]
pub struct Machine {
    /// Log of the drift factor.
    level: f64,
    burst_left: usize,
    burst_log: f64,
    position: usize,
    /// Where the replay of a trace started (drawn at the first sample), and how many of its
    /// samples were replayed since.
    replay: Option<usize>,
    replayed: usize,
}

impl Machine {
    pub fn new_round(&mut self) {
        self.position = 0;
    }

    /// Whether a replayed trace ran out: more samples were drawn than it holds, so some of its
    /// noise came twice.
    pub fn exhausted(&self, m: &NoiseModel) -> bool {
        m.trace
            .as_ref()
            .is_some_and(|t| self.replayed > t.logs.len())
    }

    /// Log of every factor of one sample except the commit's mean and its build offset.
    pub fn sample_log(&mut self, m: &NoiseModel, rng: &mut StdRng) -> f64 {
        if let Some(t) = &m.trace {
            let len = t.logs.len();
            let start = *self.replay.get_or_insert_with(|| rng.gen_range(0..len));
            let i = (start + self.replayed) % len;
            self.replayed += 1;
            return t.logs[i];
        }
        let z = |rng: &mut StdRng| -> f64 { StandardNormal.sample(rng) };
        if m.drift > 0.0 {
            self.level = m.drift_phi * self.level + m.drift * z(rng);
        }
        // A burst covers `burst_left` more samples after the one that starts it.
        let bursting = if self.burst_left > 0 {
            self.burst_left -= 1;
            true
        } else if m.burst_rate > 0.0 && rng.gen_bool(m.burst_rate) {
            self.burst_left = rng.gen_range(m.burst_len.0..=m.burst_len.1) - 1;
            self.burst_log = (1.0 + rng.gen_range(m.burst_size.0..=m.burst_size.1)).ln();
            true
        } else {
            false
        };
        let mut x = self.level + m.cv * z(rng);
        if bursting {
            x += self.burst_log;
        }
        if m.outlier_rate > 0.0 && rng.gen_bool(m.outlier_rate) {
            x += rng.gen_range(m.outlier_size.0..=m.outlier_size.1).ln();
        }
        if m.bimodal_rate > 0.0 && rng.gen_bool(m.bimodal_rate) {
            x += (1.0 + m.bimodal_size).ln();
        }
        if self.position == 0 {
            x += (1.0 + m.order_effect).ln();
        }
        self.position += 1;
        x
    }
}

/// What `--noise-from` fitted, and from what.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct NoiseFit {
    /// The file fitted.
    pub file: String,
    /// What it was ("compare" or "run").
    pub source: String,
    /// Subjects whose samples were used; `per_round` of them shared each round.
    pub series: usize,
    pub per_round: usize,
    pub samples: usize,
    /// Sigma of the log values around each subject's mean without the outliers: iid noise and
    /// drift together.
    pub total_cv: f64,
    /// Lag-1 autocorrelation of each subject's samples in the order taken, outliers left out.
    pub lag1: f64,
    /// The model the simulation runs on.
    pub model: NoiseModel,
    /// Parts of the model an A/A run cannot show; they keep the value of the preset and flags.
    pub not_fitted: Vec<String>,
}

/// Beyond this many robust sigmas above the median a sample counts as an outlier.
const OUTLIER_SIGMAS: f64 = 3.0;
/// P(Z > 3): iid noise alone puts this fraction beyond the threshold.
const NORMAL_TAIL: f64 = 0.00135;

/// Fit CV, outliers and AR(1) drift to an A/A run: `series` holds each subject's µs/op in the
/// order taken, `per_round` subjects shared each round (so consecutive samples of one subject are
/// `per_round` machine samples apart), `phi` is the AR(1) coefficient assumed (a run of tens of
/// samples cannot tell 0.98 from 0.995, but it can tell how much of the variance moves slowly).
/// `base` supplies everything an A/A run cannot show.
pub fn fit(
    series: &[Vec<f64>],
    per_round: usize,
    phi: f64,
    base: &NoiseModel,
    source: &str,
) -> Result<NoiseFit> {
    let series = fittable(series, phi)?;
    let samples: usize = series.iter().map(|s| s.len()).sum();
    let devs = median_deviations(&series);
    let outliers = Outliers::of(&devs, samples, base);
    let clean = CleanMoments::of(&devs, outliers.thr, samples, outliers.sigma);
    let n = samples as f64 / series.len() as f64;
    let (s_e2, s_m2) = split_drift(&clean, per_round, n, phi);
    let mut model = base.clone();
    model.cv = s_e2.sqrt();
    model.drift = (s_m2 * (1.0 - phi * phi)).sqrt();
    model.drift_phi = phi;
    model.outlier_rate = outliers.rate;
    model.outlier_size = outliers.size;
    Ok(NoiseFit {
        file: String::new(),
        source: source.to_string(),
        series: series.len(),
        per_round,
        samples,
        total_cv: clean.w.sqrt(),
        lag1: clean.lag1,
        model,
        not_fitted: not_fitted(source),
    })
}

/// The series long enough to fit (3 samples or more), or why the run cannot be fitted.
fn fittable(series: &[Vec<f64>], phi: f64) -> Result<Vec<&Vec<f64>>> {
    if !(0.0..1.0).contains(&phi) {
        bail!("fitting needs an AR(1) drift with phi in [0, 1), got {phi}");
    }
    let series: Vec<&Vec<f64>> = series.iter().filter(|s| s.len() >= 3).collect();
    let samples: usize = series.iter().map(|s| s.len()).sum();
    if samples < 10 {
        bail!(
            "too few samples to fit a noise model: {samples} (at least 10 in series of 3 or more)"
        );
    }
    if let Some(x) = series
        .iter()
        .flat_map(|s| s.iter())
        .find(|x| !(**x > 0.0 && x.is_finite()))
    {
        bail!("a sample of {x} µs/op cannot be fitted");
    }
    Ok(series)
}

/// Deviations of log µs/op from each subject's median: subjects may differ (a run of several
/// versions), the machine's noise is what they share.
fn median_deviations(series: &[&Vec<f64>]) -> Vec<Vec<f64>> {
    series
        .iter()
        .map(|s| {
            let logs: Vec<f64> = s.iter().map(|x| x.ln()).collect();
            let m = stats::median(&logs);
            logs.iter().map(|x| x - m).collect()
        })
        .collect()
}

/// The samples beyond [`OUTLIER_SIGMAS`] robust sigmas above their subject's median.
struct Outliers {
    /// The pool's robust sigma of the log deviations.
    sigma: f64,
    /// The deviation beyond which a sample is an outlier.
    thr: f64,
    /// The fraction of samples that are outliers beyond what iid noise puts there.
    rate: f64,
    /// The range of the outliers' ratios to their median (`base`'s where there are none).
    size: (f64, f64),
}

impl Outliers {
    fn of(devs: &[Vec<f64>], samples: usize, base: &NoiseModel) -> Outliers {
        let abs: Vec<f64> = devs.iter().flatten().map(|d| d.abs()).collect();
        // Each subject's deviations are centred on its own median already: the MAD of the pool.
        let sigma = 1.4826 * stats::median(&abs);
        let thr = OUTLIER_SIGMAS * sigma;
        let out: Vec<f64> = devs
            .iter()
            .flatten()
            .filter(|d| **d > thr)
            .map(|d| d.exp())
            .collect();
        let rate = (out.len() as f64 / samples as f64 - NORMAL_TAIL).max(0.0);
        let size = if rate > 0.0 {
            let lo = out.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = out.iter().copied().fold(1.0, f64::max);
            (lo.max(1.0), hi)
        } else {
            base.outlier_size
        };
        Outliers {
            sigma,
            thr,
            rate,
            size,
        }
    }
}

/// Variance and lag-1 autocovariance of the deviations without the outliers.
struct CleanMoments {
    /// The variance (W).
    w: f64,
    /// The lag-1 autocovariance (C1).
    c1: f64,
    /// C1 / W.
    lag1: f64,
}

impl CleanMoments {
    /// Without the outliers because one would otherwise pass for noise, or for a jump of the
    /// machine state: an outlier is replaced by its subject's clean mean, which leaves a fraction
    /// `clean²` of the lag-1 pairs intact; the clean values' variance misses the normal tails
    /// beyond the threshold (a factor 0.9733 at 3 sigma).
    fn of(devs: &[Vec<f64>], thr: f64, samples: usize, sigma: f64) -> CleanMoments {
        let (mut ss, mut c1, mut pairs, mut kept) = (0.0, 0.0, 0usize, 0usize);
        for d in devs {
            let ok: Vec<f64> = d.iter().copied().filter(|x| x.abs() <= thr).collect();
            if ok.is_empty() {
                continue;
            }
            let mean = ok.iter().sum::<f64>() / ok.len() as f64;
            ss += ok.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
            kept += ok.len();
            let c: Vec<f64> = d
                .iter()
                .map(|x| if x.abs() <= thr { x - mean } else { 0.0 })
                .collect();
            c1 += c.windows(2).map(|w| w[0] * w[1]).sum::<f64>();
            pairs += c.len() - 1;
        }
        let clean = kept as f64 / samples as f64;
        let w = if kept > 1 {
            ss / (kept - 1) as f64 / 0.9733
        } else {
            sigma * sigma
        };
        let c1 = if pairs > 0 && clean > 0.0 {
            c1 / pairs as f64 / (clean * clean)
        } else {
            0.0
        };
        let lag1 = if w > 0.0 { c1 / w } else { 0.0 };
        CleanMoments { w, c1, lag1 }
    }
}

/// The iid noise's and the drift's variances (s_e², s_m²) that give the clean moments, with
/// `n` samples per subject on average.
///
/// Removing each subject's mean takes g·s_m² of the drift's variance, g the variance of the mean
/// of n drift values k apart over s_m², and −s_e²/n of the iid lag-1 covariance:
///   W  = s_e² (1 − 1/n) + s_m² (1 − g)
///   C1 = s_m² (phi^k − g) − s_e² / n,   C1 = lag1 · W
fn split_drift(m: &CleanMoments, per_round: usize, n: f64, phi: f64) -> (f64, f64) {
    let (w, c1) = (m.w, m.c1);
    let k = per_round.max(1) as i32;
    let ni = n.round().max(2.0) as usize;
    let pk = phi.powi(k);
    let mut sum = 0.0;
    for i in 0..ni {
        for j in 0..ni {
            sum += pk.powi((i as i32 - j as i32).abs());
        }
    }
    let g = sum / (ni * ni) as f64;
    let denom = (pk - g) + (1.0 - g) / (n - 1.0);
    let s_m2 = if denom > 1e-3 {
        ((c1 + w / (n - 1.0)) / denom).clamp(0.0, 0.95 * w / (1.0 - g).max(1e-9))
    } else {
        0.0
    };
    let s_e2 = ((w - s_m2 * (1.0 - g)) / (1.0 - 1.0 / n)).max(0.0);
    (s_e2, s_m2)
}

/// Parts of the model an A/A run of `source` cannot show.
fn not_fitted(source: &str) -> Vec<String> {
    let mut not_fitted = vec![
        "load bursts",
        "bimodality",
        "order effects",
        "failed samples",
    ];
    if source == "compare" {
        not_fitted.insert(0, "build offsets (an A/A run measures one build)");
    } else {
        not_fitted.insert(0, "build offsets (not told apart from real differences)");
    }
    not_fitted.into_iter().map(String::from).collect()
}

#[cfg(test)]
#[path = "noise_tests.rs"]
mod tests;
