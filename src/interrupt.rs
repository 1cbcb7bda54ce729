//! Ctrl-C: the first SIGINT sets a flag that every long loop checks, so the
//! process stops at a safe point (nothing half-published) and says how to
//! resume. Children in perfbisect's process group (the sampling child, the
//! compiler) get the terminal's SIGINT too. A build step (config, make) runs
//! in a process group of its own, registered here, because a SIGINT sent to
//! perfbisect alone (`kill -INT <pid>`) would otherwise leave make running
//! for minutes: the handler forwards SIGTERM to that group, and a second
//! Ctrl-C kills it for good before exiting.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Process group of the running build step, 0 when none.
static CHILD_GROUP: AtomicI32 = AtomicI32::new(0);

pub fn install() {
    let _ = ctrlc::set_handler(|| {
        let group = CHILD_GROUP.load(Ordering::SeqCst);
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            // Second Ctrl-C: the user really wants out now; take the build
            // step with us rather than orphan it.
            if group > 0 {
                // SAFETY: kill has no memory effects.
                unsafe { libc::kill(-group, libc::SIGKILL) };
            }
            std::process::exit(130);
        }
        if group > 0 {
            // SAFETY: kill has no memory effects.
            unsafe { libc::kill(-group, libc::SIGTERM) };
        }
    });
    // A file-size limit (`ulimit -f`) must give a write error ("File too
    // large") that is reported and leaves nothing half-published, not kill
    // the process mid-write with SIGXFSZ.
    // SAFETY: setting a signal to SIG_IGN is async-signal-safe and has no
    // memory effects.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Marks `pgid` as the build step's process group until the guard drops.
pub fn child_group(pgid: i32) -> ChildGroup {
    CHILD_GROUP.store(pgid, Ordering::SeqCst);
    if interrupted() && pgid > 0 {
        // Ctrl-C came between the spawn and the registration.
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(-pgid, libc::SIGTERM) };
    }
    ChildGroup
}

pub struct ChildGroup;

impl Drop for ChildGroup {
    fn drop(&mut self) {
        CHILD_GROUP.store(0, Ordering::SeqCst);
    }
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

/// Whether `e` is (or wraps) [`Interrupted`].
pub fn is_interrupted(e: &anyhow::Error) -> bool {
    e.downcast_ref::<Interrupted>().is_some()
}
