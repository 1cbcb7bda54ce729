//! Progress on stderr: bars and spinners when stderr is a terminal, nothing
//! otherwise (logs and CI stay clean), plain lines with -v; a long search's
//! one status line ([`SearchStatus`]).

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

static LEVEL: AtomicU8 = AtomicU8::new(1);

/// 0 = quiet, 1 = normal, 2 = verbose.
pub fn set_level(level: u8) {
    LEVEL.store(level, Ordering::Relaxed);
}

pub fn verbose() -> bool {
    LEVEL.load(Ordering::Relaxed) >= 2
}

pub fn quiet() -> bool {
    LEVEL.load(Ordering::Relaxed) == 0
}

fn draws() -> bool {
    !quiet() && std::io::stderr().is_terminal()
}

/// A line of information on stderr, unless -q.
pub fn info(msg: &str) {
    if !quiet() {
        above_status(|| eprintln!("{msg}"));
    }
}

/// A line on stderr only with -v.
pub fn detail(msg: &str) {
    if verbose() {
        above_status(|| eprintln!("{msg}"));
    }
}

pub fn spinner(msg: &str) -> ProgressBar {
    // A second line drawn under a search's status would fight it for the terminal.
    if !draws() || ACTIVE.lock().map(|a| a.is_some()).unwrap_or(false) {
        return ProgressBar::hidden();
    }
    // One line each: builds made side by side (builds::ensure_all) spin at once.
    let pb = SPINNERS.add(ProgressBar::new_spinner());
    pb.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {prefix} {wide_msg}")
            .expect("static template"),
    );
    pb.set_prefix(msg.to_string());
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

pub fn bar(len: u64, msg: &str) -> ProgressBar {
    if !draws() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_draw_target(ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template(
            "[{elapsed_precise}] {bar:30} {pos}/{len} {prefix} (eta {eta}) {wide_msg}",
        )
        .expect("static template"),
    );
    pb.set_prefix(msg.to_string());
    pb
}

/// Spinners, one line each (see [`spinner`]).
static SPINNERS: std::sync::LazyLock<MultiProgress> = std::sync::LazyLock::new(MultiProgress::new);

/// The status line currently drawn, if any: other output is printed above
/// it instead of through it.
static ACTIVE: std::sync::Mutex<Option<ProgressBar>> = std::sync::Mutex::new(None);

/// Runs `f` (which prints) with the status line lifted out of the way.
pub fn above_status<F: FnOnce()>(f: F) {
    let active = ACTIVE.lock().ok().and_then(|a| a.clone());
    match active {
        Some(bar) => bar.suspend(f),
        None => SPINNERS.suspend(f),
    }
}

/// What a decided commit says about where the change is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Old,
    New,
    /// Between the ends or ambiguous: the change is on both sides of it.
    Both,
    Skipped,
}

/// Builds a search has used so far.
#[derive(Debug, Clone, Copy, Default)]
pub struct BuildCounts {
    pub built: usize,
    pub cached: usize,
    pub failed: usize,
}

/// A bisect's one status line on a terminal: the commits still in play,
/// steps done and about how many remain, builds, elapsed time and an
/// estimate of the rest. Off a terminal (or with -q) it draws nothing.
pub struct SearchStatus {
    bar: ProgressBar,
    started: std::time::Instant,
    known: std::collections::BTreeMap<usize, Side>,
    n: usize,
    steps: usize,
    builds: BuildCounts,
    doing: String,
}

impl SearchStatus {
    pub fn new(n: usize) -> SearchStatus {
        let bar = if draws() {
            let pb = ProgressBar::new_spinner();
            pb.set_draw_target(ProgressDrawTarget::stderr());
            pb.set_style(
                ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_msg}")
                    .expect("static template"),
            );
            pb.enable_steady_tick(Duration::from_millis(200));
            if let Ok(mut a) = ACTIVE.lock() {
                *a = Some(pb.clone());
            }
            pb
        } else {
            ProgressBar::hidden()
        };
        let mut s = SearchStatus {
            bar,
            started: std::time::Instant::now(),
            known: Default::default(),
            n,
            steps: 0,
            builds: BuildCounts::default(),
            doing: "measuring the ends".into(),
        };
        s.draw();
        s
    }

    /// What is being measured now.
    pub fn doing(&mut self, what: String) {
        self.doing = what;
        self.draw();
    }

    pub fn step(&mut self, commit: usize, side: Side, builds: BuildCounts) {
        self.known.insert(commit, side);
        self.steps += 1;
        self.builds = builds;
        self.draw();
    }

    /// Untested commits between neighbours that disagree, and about how many
    /// steps a bisection of each such stretch takes.
    fn left(&self) -> (usize, usize) {
        let measured: Vec<(usize, Side)> = self
            .known
            .iter()
            .filter(|(_, s)| **s != Side::Skipped)
            .map(|(c, s)| (*c, *s))
            .collect();
        let (mut commits, mut steps) = (0, 0);
        for w in measured.windows(2) {
            let ((a, sa), (b, sb)) = (w[0], w[1]);
            if sa == sb && sa != Side::Both {
                continue;
            }
            let gap = (a + 1..b).filter(|c| !self.known.contains_key(c)).count();
            commits += gap;
            steps += (gap + 1).next_power_of_two().trailing_zeros() as usize;
        }
        if measured.len() < 2 {
            commits = self.n.saturating_sub(2);
            steps = (commits + 1).next_power_of_two().trailing_zeros() as usize;
        }
        (commits, steps)
    }

    fn draw(&mut self) {
        if self.bar.is_hidden() {
            return;
        }
        let (commits, to_go) = self.left();
        let elapsed = self.started.elapsed().as_secs_f64();
        // The steps so far, builds included, are the best guess of the next ones.
        let eta = if self.steps > 0 {
            format!(
                " (about {})",
                human_secs(elapsed / self.steps as f64 * to_go as f64)
            )
        } else {
            String::new()
        };
        let b = self.builds;
        // Most important first: a narrow terminal cuts the end.
        self.bar.set_message(format!(
            "{} steps done, ~{to_go} to go{eta}; {commits} of {} commits left; builds: {} new, {} cached, {} failed; {}",
            self.steps, self.n, b.built, b.cached, b.failed, self.doing
        ));
    }

    pub fn finish(self) {
        self.bar.finish_and_clear();
        if let Ok(mut a) = ACTIVE.lock() {
            *a = None;
        }
    }
}

fn human_secs(s: f64) -> String {
    let s = s.round() as u64;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min", (s + 30) / 60),
        _ => format!("{}h{:02}", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_left_counts_only_stretches_that_can_hold_a_change() {
        let mut s = SearchStatus::new(101);
        assert_eq!(s.left(), (99, 7));
        let none = BuildCounts::default();
        s.step(0, Side::Old, none);
        s.step(100, Side::New, none);
        s.step(50, Side::Old, none);
        // Only 51..99 can hold the change.
        assert_eq!(s.left(), (49, 6));
        s.step(75, Side::Both, none);
        // A commit between the ends: the change is on both of its sides.
        assert_eq!(s.left(), (48, 10));
        s.step(60, Side::Skipped, none);
        assert_eq!(s.left().0, 47);
        assert_eq!(human_secs(30.0), "30 s");
        assert_eq!(human_secs(610.0), "10 min");
        assert_eq!(human_secs(3720.0), "1h02");
    }
}
