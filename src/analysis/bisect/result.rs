//! What a search found: its steps, change points, what it left unexplored and why.

use super::*;

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepVerdict {
    /// Like the old end of its interval.
    Old,
    /// Like the new end of its interval.
    New,
    /// Significantly different from both ends: part of the change, or a second change.
    Between,
    /// Still undecided at max samples; the search went on by the closer end.
    Ambiguous,
    Skipped(Unavailable),
}

/// One decided commit, for live output and the report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Step {
    pub commit: usize,
    /// Samples of this commit the decision used.
    pub n: usize,
    pub mean: f64,
    pub ci95: (f64, f64),
    pub verdict: StepVerdict,
    /// (mean − mean_old) / (mean_new − mean_old) against the interval's ends at the time (of
    /// the series that steered the decision).
    pub position: Option<f64>,
    /// With several thread counts: each one's mean, interval and position, in the measurer's
    /// series order (`mean`/`ci95` above are of the primary series). Empty with one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<SeriesPoint>,
}

/// One thread count's figures at a decided commit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeriesPoint {
    pub mean: f64,
    pub ci95: (f64, f64),
    pub position: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChangePoint {
    pub last_old: usize,
    /// `last_old + 1` for a single culprit; larger when skipped commits leave a range.
    pub first_new: usize,
    pub skipped_between: Vec<usize>,
    /// Confirmation: `last_old` (a) against `first_new` (b) on a fresh block of samples taken
    /// for it alone (interleaved, in random order), never the samples that selected the pair, so
    /// its ratio, interval and p-values are not biased by the selection.
    pub comparison: Comparison,
    /// The confirmation found the change significant (at its own share of alpha), and the two
    /// commits' binaries are not byte-identical.
    pub confirmed: bool,
    /// Not confirmed, and not refuted either: the fresh block was still undecided after
    /// [`UNRESOLVED_CAP`] × the sample cap. The search's tests located the change here; its size
    /// is the (wide) interval of `comparison`.
    #[serde(default)]
    pub unresolved: bool,
    /// Parent and culprit load byte-identical libraries: never a culprit.
    pub identical_binaries: bool,
    /// This change's share of the ends' change, on the log scale (ln ratio / ln ends' ratio):
    /// 1 explains the whole range, negative goes against the range's direction.
    pub share: f64,
    /// This change explains only part of the end-to-end change (the range holds more than one).
    pub partial: bool,
    /// A commit on the way here stayed ambiguous (the search went on by the closer end).
    pub uncertain: bool,
    /// With several thread counts: the confirmation's comparison at each, in the measurer's
    /// series order (`comparison` above is the primary series'). A thread count is affected when
    /// its comparison is significant. Empty with one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<Comparison>,
    /// Located on another metric than the one that confirmed it (see [`crate::analysis::locate`]):
    /// parent against culprit on the locating metric's confirmation block. `comparison` and
    /// `confirmed` are then the confirming metric's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub located: Option<Comparison>,
}

impl ChangePoint {
    /// This change's share of a change whose log ratio is `ln_ends` (a wider range's ends than
    /// the search's own, whose share `share` is).
    pub fn share_of(&self, ln_ends: f64) -> f64 {
        self.comparison.ratio.ratio.ln() / ln_ends
    }

    /// The direction of this change: the primary series' when it changed there, else that of the
    /// thread count that changed most.
    pub fn verdict(&self) -> Verdict {
        if significant(&self.comparison) || self.series.is_empty() {
            self.comparison.verdict
        } else {
            self.series[dominant(&self.series, significant)].verdict
        }
    }
}

/// Why a sub-range was not searched.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum LeftBecause {
    /// The time budget was spent ([`Measurer::should_stop`]).
    Budget,
    /// `max_changes` change points were confirmed.
    MaxChanges,
    /// Its estimated share of the ends' change is below `min_share`.
    MinShare,
    /// Its ends' check was still undecided at the sample cap: neither shown to differ nor
    /// shown the same, so a net change up to the interval's far end may hide in it.
    Undecided,
    /// Its ends' check passed it as the same (their net change within ±min-effect). Only the
    /// net change is bounded: steps that cancel inside it are not, and are never reported.
    Same,
}

/// A sub-range the search did not (finish to) search.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Unexplored {
    pub lo: usize,
    pub hi: usize,
    /// Its ends are known to differ (a Between split it off, or its check said so); otherwise it
    /// was never checked.
    pub differs: bool,
    /// Its estimated share of the ends' change, when known.
    pub share: Option<f64>,
    pub because: LeftBecause,
    /// For [`LeftBecause::Undecided`] and [`LeftBecause::Same`]: its ends' ratio (new/old,
    /// primary series) with the interval the check decided on — the net change that may hide
    /// in it (steps that cancel inside can be larger).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio: Option<RatioCi>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    NoChange,
    /// Oldest first.
    Changes(Vec<ChangePoint>),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchResult {
    /// Old end (a) against new end (b).
    pub ends: Comparison,
    /// `Slower` = regression, `Faster` = fix; `Same`/`Undecided` with `NoChange`.
    pub direction: Verdict,
    pub outcome: Outcome,
    pub steps: Vec<Step>,
    /// Distinct commits asked for (skipped ones included: their build was attempted).
    pub commits_measured: usize,
    /// Samples as observed via `ensure` (the most seen per commit, summed).
    pub samples_taken: usize,
    /// Sequential decisions made: the ends, each classified candidate, each sub-range check.
    pub decisions: usize,
    pub alpha_per_test: f64,
    /// Significance tests actually run by the search (every look of every decision; a candidate's
    /// look is two tests) and by the confirmations.
    pub tests: usize,
    /// The sum of the levels of the tests run that count in `alpha` (routing's only when it is in
    /// the family): what this run spent of its allocation. It bounds nothing by itself (which
    /// tests ran depended on what they saw); [`crate::analysis::alpha::false_culprit_bound`]
    /// does.
    pub family_alpha: f64,
    /// Sub-ranges left unsearched (budget, max-changes, min-share), oldest first.
    pub unexplored: Vec<Unexplored>,
    /// What the search could resolve at its cap, from the noise of every commit it sampled
    /// (primary series); `None` when no commit holds enough samples to show its spread.
    pub resolution: Option<Resolution>,
    /// Sum of the shares of the confirmed change points: how much of the ends' change they
    /// explain (0 with no change).
    pub explained: f64,
    /// With several thread counts: the ends' comparison at each (`ends` is the primary one, the
    /// thread count whose ends moved most). Empty with one.
    pub ends_series: Vec<Comparison>,
    /// Which series leads (its index in `ends_series`, the thread counts' order): `ends`, the
    /// change points' figures and the steps' means are its. 0 with one series.
    pub primary: usize,
    /// The noise and degrees of freedom per sample of the test that decided each decision
    /// (primary series): what `resolution` states, kept for a scan to state its searches'.
    #[serde(skip)]
    pub tested: Vec<(f64, f64)>,
}
