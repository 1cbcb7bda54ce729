//! A search's configuration: error rate, minimum effect, sample schedule and when to stop.

use super::*;

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Config {
    /// Error rate of the whole search (see the module docs for how it is split).
    pub alpha: f64,
    /// Smallest relative change worth reporting (0.03 = 3%).
    pub min_effect: f64,
    /// Sample sizes at which each decision looks at the data.
    pub schedule: Schedule,
    /// Stop after this many confirmed change points in the range's direction (the search goes to
    /// the larger share of the change first, so 1 gives the change that explains most of the
    /// range; a change against the range's direction is reported but never counts).
    pub max_changes: Option<usize>,
    /// Skip sub-ranges whose ends differ by less than this share of the ends' change (on the log
    /// scale, 0.1 = 10%).
    pub min_share: Option<f64>,
    /// `--tail`: every comparison also runs the tail check (the share of slow processes, see
    /// stats::tail), and calls two commits the same only at the schedule's cap.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tail: bool,
    /// How routing decisions are tested: inside the search's alpha, or each at a fixed level
    /// the fresh-block confirmation protects (see [`alpha::RoutingLevel`]).
    #[serde(
        default = "alpha::RoutingLevel::family",
        skip_serializing_if = "alpha::RoutingLevel::in_family_ref"
    )]
    pub routing: alpha::RoutingLevel,
    /// What the samples vary by, which sets the first look of a fresh block (a grid, a
    /// confirmation). A property of the metric, so results leave it out.
    #[serde(skip)]
    #[schemars(skip)]
    pub spread: Spread,
}

/// What one build's samples vary by, which sets how many a fresh block of them (a scan's grid,
/// a change point's confirmation) takes at its first look.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Spread {
    /// Timing noise: twice a search's first look, for the step fit and the confirmation to
    /// average.
    #[default]
    Clock,
    /// Instruction counts, which vary by 0.001-0.3% from process to process: a search's first
    /// look resolves them far below any minimum effect, and each count costs a process under
    /// valgrind.
    Count,
}

impl Spread {
    /// Samples per subject at a fresh block's first look.
    pub fn fresh_block(self, schedule: &Schedule) -> usize {
        match self {
            Spread::Clock => schedule.initial * 2,
            Spread::Count => schedule.initial,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            alpha: 0.01,
            min_effect: 0.03,
            schedule: Schedule {
                initial: 5,
                max: 40,
            },
            max_changes: None,
            min_share: None,
            spread: Spread::Clock,
            tail: false,
            routing: alpha::DEFAULT_ROUTING,
        }
    }
}

impl Config {
    /// One-line error for a configuration the search cannot work with.
    pub fn validate(&self, n: usize) -> Result<()> {
        if n < 2 {
            bail!("a bisect needs at least 2 commits, got {n}");
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            bail!(
                "alpha must be between 0 and 1 (exclusive), got {}",
                self.alpha
            );
        }
        if !(self.min_effect > 0.0 && self.min_effect.is_finite()) {
            bail!("min-effect must be greater than 0, got {}", self.min_effect);
        }
        if let Some(m) = self.min_share {
            if !(m > 0.0 && m < 1.0) {
                bail!("min-share must be between 0 and 100% (exclusive), got {m}");
            }
        }
        if let alpha::RoutingLevel::PerDecision(p) = self.routing {
            if !(p > 0.0 && p < 1.0) {
                bail!("routing level must be between 0 and 1 (exclusive), got {p}");
            }
        }
        if self.max_changes == Some(0) {
            bail!("max-changes must be at least 1");
        }
        self.schedule.validate()
    }

    /// What the comparisons test beyond the trimmed pair.
    pub fn tail_rule(&self) -> Option<stats::TailRule> {
        self.tail.then_some(stats::TailRule {
            same_from: self.schedule.max,
        })
    }

    /// Per-test significance level for a search over `n` commits measured at `series` thread
    /// counts, probing `width` commits per wave.
    pub fn alpha_per_test(&self, n: usize, series: usize, width: usize) -> f64 {
        self.routing(n, series, width).first_level()
    }

    /// The per-test level a change must pass to be reported, for the resolution line: the
    /// routing's, or, where routing is looser (outside the family), the first confirmation's per
    /// look and series (its looks counted as the schedule's and one more), each halved for the
    /// pair of tests a comparison runs.
    pub fn resolving_level(&self, n: usize, series: usize, width: usize) -> f64 {
        let routing = self.alpha_per_test(n, series, width);
        let looks = (self.schedule.len() + 1) * series.max(1);
        let confirming = alpha::confirmation_alpha(self.alpha, 1, self.max_changes) / looks as f64;
        routing.min(confirming) / alpha::TWO_TESTS
    }

    /// The routing of a search over `n` commits measured at `series` thread counts, probing
    /// `width` commits per wave.
    pub fn routing(&self, n: usize, series: usize, width: usize) -> alpha::Routing {
        alpha::Routing::at(self.routing, self.alpha, n, &self.schedule, series, width)
    }
}
