//! Asking Slurm's controller while a run is under way, when it may not answer for a while (a
//! restart, a failover, a pause, an overloaded `slurmctld`): Slurm's clients give up after
//! `MessageTimeout` (10 s by default) with "Socket timed out on send/recv operation", and a run
//! of hours must not end on that. A call is asked again with growing pauses, saying so once,
//! for up to [`PATIENCE`]; any other failure is returned at once. (Before a run starts,
//! `partitions` answers at once: a controller that is not there at all is one line.)

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use wait_timeout::ChildExt;

use super::cluster::one_line;
use crate::{interrupt, progress};

/// How long a run asks a controller that does not answer before it stops (ReFrame retries
/// submissions with back-off the same way).
pub const PATIENCE: Duration = Duration::from_secs(300);
/// A client call that has not ended after this long is killed and counts as unanswered.
const CALL_LIMIT: Duration = Duration::from_secs(60);
/// The longest pause between two tries.
const MAX_PAUSE: Duration = Duration::from_secs(20);

/// What Slurm's clients print when the controller did not answer (as opposed to refusing).
const UNANSWERED: &[&str] = &[
    "Socket timed out",
    "Unable to contact slurm controller",
    "Connection refused",
    "Zero Bytes were transmitted",
    "Connection reset",
    "Transport endpoint is not connected",
    "backup controller in standby",
];

/// Runs `what` (a Slurm client, made afresh for each try by `make`) until the controller
/// answers: its output, successful or not, once it is an answer. Unanswered for [`PATIENCE`]:
/// an error naming the call and what the client said.
pub fn ask(what: &str, make: impl Fn() -> Command) -> Result<Output> {
    let started = Instant::now();
    let mut pause = Duration::from_secs(1);
    let mut told = false;
    loop {
        let why = match run_limited(make(), what)? {
            Some(out) if out.status.success() || unanswered(&out).is_none() => {
                if told {
                    progress::info(&format!(
                        "  Slurm's controller answers again after {} s",
                        started.elapsed().as_secs()
                    ));
                }
                return Ok(out);
            }
            Some(out) => unanswered(&out).expect("checked above"),
            None => format!("no answer within {} s", CALL_LIMIT.as_secs()),
        };
        if started.elapsed() + pause > PATIENCE {
            bail!(
                "Slurm's controller has not answered {what} for {} s ({why}); the run stops (the same command resumes it)",
                started.elapsed().as_secs()
            );
        }
        if !told {
            progress::info(&format!(
                "  Slurm's controller does not answer ({what}: {why}); asking again for up to {} s",
                PATIENCE.as_secs()
            ));
            told = true;
        }
        sleep(pause)?;
        pause = (pause * 2).min(MAX_PAUSE);
    }
}

/// Runs `what` once, within the call limit: for a last act (the run is ending), when waiting
/// for a silent controller would only keep the user waiting.
pub fn once(what: &str, make: impl Fn() -> Command) -> Result<Output> {
    run_limited(make(), what)?
        .with_context(|| format!("{what} had no answer within {} s", CALL_LIMIT.as_secs()))
}

/// The client's complaint, on one line, when it says the controller did not answer.
fn unanswered(out: &Output) -> Option<String> {
    let err = String::from_utf8_lossy(&out.stderr);
    (!out.status.success() && UNANSWERED.iter().any(|u| err.contains(u))).then(|| one_line(&err))
}

/// The command's output, or `None` when it did not end within [`CALL_LIMIT`] (it is killed).
fn run_limited(mut cmd: Command, what: &str) -> Result<Option<Output>> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {what}"))?;
    // Read on threads: a client that fills a pipe would otherwise never end.
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped")));
    let err = drain(Box::new(child.stderr.take().expect("piped")));
    let status = match child.wait_timeout(CALL_LIMIT)? {
        Some(s) => s,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
    };
    Ok(Some(Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }))
}

/// Sleeps `d`, ending early (with the interruption) on Ctrl-C or a signal.
fn sleep(d: Duration) -> Result<()> {
    let until = Instant::now() + d;
    while Instant::now() < until {
        interrupt::check()?;
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn failed(stderr: &str) -> Output {
        Output {
            status: std::process::ExitStatus::from_raw(1 << 8),
            stdout: Vec::new(),
            stderr: stderr.as_bytes().to_vec(),
        }
    }

    #[test]
    fn only_a_silent_controller_is_asked_again() {
        let timed_out = failed("slurm_load_jobs error: Socket timed out on send/recv operation\n");
        assert_eq!(
            unanswered(&timed_out).as_deref(),
            Some("slurm_load_jobs error: Socket timed out on send/recv operation")
        );
        let refused = failed("sbatch: error: invalid partition specified: nope\n");
        assert_eq!(unanswered(&refused), None);
    }

    #[test]
    fn an_answer_after_a_silence_is_returned() {
        let d = tempfile::tempdir().unwrap();
        let tries = d.path().join("tries");
        // A client that times out twice, then answers.
        let script = format!(
            "echo x >> {t}; [ $(wc -l < {t}) -ge 3 ] && echo answered || {{ echo 'error: Socket timed out on send/recv operation' >&2; exit 1; }}",
            t = tries.display()
        );
        let started = Instant::now();
        let out = ask("squeue", || {
            let mut c = Command::new("sh");
            c.args(["-c", &script]);
            c
        })
        .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "answered");
        // Paused 1 s, then 2 s.
        assert!(started.elapsed() >= Duration::from_secs(3));
        // Any other failure is an answer, returned at once.
        let out = ask("sbatch", || {
            let mut c = Command::new("sh");
            c.args(["-c", "echo 'invalid partition' >&2; exit 1"]);
            c
        })
        .unwrap();
        assert!(!out.status.success());
    }
}
