//! The lines a bisect prints as it goes: the forecast, each confirmed and each located change
//! point.

use super::*;

/// The forecast as a jsonl event.
#[derive(Serialize)]
pub struct ForecastEvent<'a> {
    #[serde(flatten)]
    pub forecast: &'a Forecast,
    pub seconds_per_sample: Option<f64>,
    pub better: &'a [String],
}

/// The forecast line printed before a search: the ends' noise, what a decision at
/// `--min-effect` needs, what the search may cost in sampling time, and what would do better.
pub fn forecast_line(f: &Forecast, per_sample_s: Option<f64>, better: &[String]) -> String {
    let r = &f.resolution;
    let needed = if r.needed == usize::MAX {
        "more samples than any run takes".to_string()
    } else {
        format!("about {} samples per side", r.needed)
    };
    let mut s = format!(
        "forecast: noise {:.1}% per sample (the ends); a decision at --min-effect {:.1}% needs {needed} (cap {}); about {} decisions, up to {} samples",
        r.noise * 100.0,
        r.min_effect * 100.0,
        r.cap,
        f.decisions,
        f.samples()
    );
    if let Some(t) = per_sample_s {
        s.push_str(&format!(
            ", {} of sampling at {t:.2} s per sample, builds aside",
            crate::report::plan::duration(f.samples() as f64 * t)
        ));
    }
    if r.short() {
        s.push_str(&format!(
            "; at the cap it resolves {:.1}% or more",
            r.smallest * 100.0
        ));
    }
    if !better.is_empty() {
        s.push_str(&format!("; better here: {}", better.join(", or ")));
    }
    s
}

/// How the note of what `--locate auto` chose begins.
pub const AUTO_NOTE: &str = "--locate auto:";

/// What `--locate auto` chose and why, before the search (a line, and a note of the result).
pub fn auto_locate_line(c: &crate::analysis::locate::AutoChoice) -> String {
    let Some(r) = &c.clock else {
        return format!("{AUTO_NOTE} the ends gave too few samples to tell their noise; the clock alone searches");
    };
    let seen = format!(
        "at the ends' noise ({:.1}% per sample) the clock resolves",
        r.noise * 100.0
    );
    if c.counts {
        format!(
            "{AUTO_NOTE} {seen} {:.1}% at {} samples, short of --min-effect {:.1}%: instructions locate, the clock confirms",
            r.smallest * 100.0,
            r.cap,
            r.min_effect * 100.0
        )
    } else {
        format!(
            "{AUTO_NOTE} {seen} --min-effect {:.1}% within {} samples: the clock alone searches",
            r.min_effect * 100.0,
            r.cap
        )
    }
}

/// One line for a change point as soon as its confirmation block has decided (streamed output).
pub fn confirmed_line(c: &ChangePointJson, spent: &str) -> String {
    let what = if c.range {
        format!(
            "the change is in {}..{}",
            &c.parent[..10.min(c.parent.len())],
            c.info.short
        )
    } else {
        format!("{} {}", c.info.short, c.info.subject)
    };
    let share = if c.comparison.by_tail {
        "a change in the tail".to_string()
    } else if !c.share.is_finite() {
        "the range's ends did not move".to_string()
    } else if c.share < 0.0 {
        format!(
            "{}, against the range's direction ({:.0}% of its change)",
            change_word(c.comparison.verdict),
            c.share * 100.0
        )
    } else {
        format!("{:.0}% of the range's change", c.share * 100.0)
    };
    let head = if c.identical_binaries {
        "not a culprit (byte-identical libraries)"
    } else if c.confirmed {
        "change point confirmed"
    } else if c.unresolved {
        "change point located, size unresolved"
    } else {
        "NOT CONFIRMED on a fresh block"
    };
    let located = located_note(c, "count")
        .map(|l| format!(" ({l})"))
        .or_else(|| {
            let c = &c.comparison;
            c.by_tail
                .then(|| crate::report::table::tail_note(c).map(|t| format!(" ({t})")))
                .flatten()
        })
        .unwrap_or_default();
    format!(
        "{head}: {what} ({}): {}{located}, {share}; {spent}",
        c.info.dates(),
        c.comparison.ratio.pct()
    )
}

/// One line for a change point the counts located (`--locate`), before the clock confirms it.
pub fn located_line(c: &ChangePointJson, metric: Metric) -> String {
    let what = if c.range {
        format!("{}..{}", &c.parent[..10.min(c.parent.len())], c.info.short)
    } else {
        format!("{} {}", c.info.short, c.info.subject)
    };
    let standing = if c.confirmed || c.unresolved {
        "confirming in time"
    } else {
        "not confirmed on its counts: not sent to the clock"
    };
    format!(
        "located by {}: {what}: {}; {standing}",
        metric.name(),
        c.comparison.ratio.pct()
    )
}

pub fn verdict_word(v: &StepVerdict) -> String {
    match v {
        StepVerdict::Old => "old".into(),
        StepVerdict::New => "new".into(),
        StepVerdict::Between => "between (part of the change)".into(),
        StepVerdict::Ambiguous => "ambiguous".into(),
        StepVerdict::Skipped(r) => format!("skipped: {r}"),
    }
}

/// One decided commit as a line; with several thread counts (`threads`), each one's mean.
pub fn step_line(s: &Step, c: &CommitInfo, metric: Metric, threads: &[usize]) -> String {
    let unit = metric.unit_short();
    let mean = if !s.series.is_empty() && s.mean.is_finite() {
        let each: Vec<String> = s
            .series
            .iter()
            .zip(threads)
            .map(|(p, t)| format!("t={t} {} {unit}", us(p.mean)))
            .collect();
        format!("n={:<3} {}", s.n, each.join(", "))
    } else if s.mean.is_finite() {
        format!(
            "n={:<3} {:>10} {unit} [{}, {}]",
            s.n,
            us(s.mean),
            us(s.ci95.0),
            us(s.ci95.1)
        )
    } else {
        format!("n={:<3} {:>10}", s.n, "-")
    };
    format!(
        "  {} {}  {}  {:<8} {}",
        c.short,
        c.dates(),
        mean,
        verdict_word(&s.verdict),
        c.summary
    )
}
