//! Ctrl-C: the first SIGINT sets a flag that every long loop checks, so the
//! process stops at a safe point (nothing half-published) and says how to
//! resume; children in the same process group get the signal too.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            // Second Ctrl-C: the user really wants out now.
            std::process::exit(130);
        }
    });
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The error every interrupted command ends with.
#[derive(Debug, thiserror::Error)]
#[error("interrupted; nothing half-written was kept. Run the same command again to resume: finished builds and samples are reused")]
pub struct Interrupted;

pub fn check() -> anyhow::Result<()> {
    if interrupted() {
        return Err(Interrupted.into());
    }
    Ok(())
}
