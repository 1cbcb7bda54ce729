//! Progress on stderr: bars and spinners when stderr is a terminal, nothing
//! otherwise (logs and CI stay clean), plain lines with -v.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
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
        eprintln!("{msg}");
    }
}

/// A line on stderr only with -v.
pub fn detail(msg: &str) {
    if verbose() {
        eprintln!("{msg}");
    }
}

pub fn spinner(msg: &str) -> ProgressBar {
    if !draws() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    pb.set_draw_target(ProgressDrawTarget::stderr());
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
