//! Signals: the first SIGINT, SIGTERM or SIGHUP (an ssh session to a login node dropping) sets a
//! flag that every long loop checks, so the process stops at a safe point (nothing
//! half-published), cancels the Slurm jobs it queued, and says how to resume. Children in
//! perfbisect's process group (the sampling child, the compiler) get the terminal's SIGINT too.
//! A build step (config, make) runs in a process group of its own, registered here, because a
//! signal sent to perfbisect alone (`kill -INT <pid>`) would otherwise leave make running for
//! minutes: the handler forwards SIGTERM to that group. A second signal kills that group for
//! good, cancels every Slurm job the run still has (at 07d6d4e a second Ctrl-C orphaned them,
//! and SIGTERM or SIGHUP killed perfbisect with its jobs left queued), and exits. The exit code
//! is 128 + the first signal: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Mutex;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// The first signal received (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Process group of the running build step, 0 when none.
static CHILD_GROUP: AtomicI32 = AtomicI32::new(0);
/// A scheduler's jobs of this run that may still be queued or running, and how to cancel
/// them (the executor that queued them says; this module knows no scheduler).
static JOBS: Mutex<Jobs> = Mutex::new(Jobs {
    ids: BTreeSet::new(),
    cancel: None,
});

struct Jobs {
    ids: BTreeSet<String>,
    cancel: Option<fn(&[String])>,
}

pub fn install() {
    if let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
        std::thread::spawn(move || {
            for sig in signals.forever() {
                on_signal(sig);
            }
        });
    }
    // A file-size limit (`ulimit -f`) must give a write error ("File too
    // large") that is reported and leaves nothing half-published, not kill
    // the process mid-write with SIGXFSZ.
    // SAFETY: setting a signal to SIG_IGN is async-signal-safe and has no
    // memory effects.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
}

/// Runs on the signal thread (not in the handler): it may take locks and start `scancel`.
fn on_signal(sig: i32) {
    let group = CHILD_GROUP.load(Ordering::SeqCst);
    if INTERRUPTED.swap(true, Ordering::SeqCst) {
        // A second signal: the user really wants out now; take the build step and the
        // run's jobs with us rather than orphan them.
        if group > 0 {
            // SAFETY: kill has no memory effects.
            unsafe { libc::kill(-group, libc::SIGKILL) };
        }
        cancel_jobs();
        std::process::exit(exit_code());
    }
    SIGNAL.store(sig, Ordering::SeqCst);
    if group > 0 {
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(-group, libc::SIGTERM) };
    }
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// 128 + the first signal (130 when none was received: an interrupted error by other means).
pub fn exit_code() -> i32 {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => 128 + SIGINT,
        s => 128 + s,
    }
}

/// The run's jobs that may still be queued or running are now `ids` (replacing the last set),
/// cancelled by `cancel`: a second signal, or the way out of an interrupted command, cancels
/// them.
pub fn jobs(ids: Vec<String>, cancel: fn(&[String])) {
    if let Ok(mut jobs) = JOBS.lock() {
        jobs.ids = ids.into_iter().collect();
        jobs.cancel = Some(cancel);
    }
}

/// Cancels every job the run still has; called on the way out of an interrupted command and
/// by a second signal.
pub fn cancel_jobs() {
    let (ids, cancel) = match JOBS.lock() {
        Ok(mut jobs) => (std::mem::take(&mut jobs.ids), jobs.cancel),
        Err(_) => return,
    };
    let ids: Vec<String> = ids.into_iter().collect();
    if let (false, Some(cancel)) = (ids.is_empty(), cancel) {
        cancel(&ids);
    }
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
