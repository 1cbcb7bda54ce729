//! One step of a build as a child process: started in a process group of its own, its output
//! streamed to the log and to the caller, killed on an interrupt, and judged by how it ended.

use super::*;

/// Runs one phase, streaming stdout and stderr to the log and to `on_event`.
/// On failure, the error names the phase, the exit status, the log and its
/// last lines.
///
/// The step runs in a process group of its own, registered with
/// [`interrupt`](crate::interrupt): on Ctrl-C (whether the terminal signalled
/// the whole foreground group or only perfbisect got it) the group gets
/// SIGTERM, then SIGKILL after [`TERM_GRACE`], and this returns
/// [`Interrupted`](crate::interrupt::Interrupted) promptly instead of waiting
/// for make to finish.
pub(super) fn run_step(
    phase: Phase,
    announce: bool,
    cmd: &mut Command,
    log: &mut File,
    log_path: &Path,
    on_event: &mut dyn FnMut(BuildEvent),
) -> Result<()> {
    if announce {
        on_event(BuildEvent::Phase(phase));
    }
    crate::interrupt::check()?;
    let shown: Vec<String> = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut out = StepLog {
        file: log,
        error: None,
    };
    out.write(format!("### perfbisect: {phase}: {}\n", shown.join(" ")).as_bytes());
    let _ = out.file.flush();
    let mut child = spawn_step(phase, cmd, &shown[0], out.file, log_path)?;
    let _group = crate::interrupt::child_group(child.id() as i32);
    let (lines, readers) = read_lines(&mut child);
    let pgid = child.id() as i32;
    stream_output(&lines, &mut out, on_event, pgid);
    let StepLog { file: log, error } = out;
    let status = child
        .wait()
        .with_context(|| format!("waiting for {phase}"))?;
    if crate::interrupt::interrupted() {
        // Whatever is left of the group (a grandchild that ignored SIGTERM).
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        let _ = writeln!(log, "### perfbisect: {phase} interrupted ({status})");
        return Err(crate::interrupt::Interrupted.into());
    }
    for r in readers {
        let _ = r.join();
    }
    let _ = log.flush();
    if let Some(e) = error {
        bail!("cannot write the build log {}: {e}", log_path.display());
    }
    judge_exit(phase, status, log, log_path)
}

/// The log as a step writes it. A log that cannot be written (disk full, `ulimit -f`) is not
/// the commit's failure: the first error is kept to fail the step with.
pub(super) struct StepLog<'a> {
    file: &'a mut File,
    error: Option<std::io::Error>,
}

impl StepLog<'_> {
    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_none() {
            if let Err(e) = self.file.write_all(bytes) {
                self.error = Some(e);
            }
        }
    }
}

/// Starts a step with its output piped, in a process group of its own (see [`run_step`]).
pub(super) fn spawn_step(
    phase: Phase,
    cmd: &mut Command,
    program: &str,
    log: &mut File,
    log_path: &Path,
) -> Result<std::process::Child> {
    use std::os::unix::process::CommandExt;
    // If perfbisect itself is killed outright (SIGKILL), the step is killed too rather than
    // left building into the shared work directory.
    // SAFETY: prctl is async-signal-safe and touches no memory of ours.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    match cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
    {
        Ok(c) => Ok(c),
        Err(e) => {
            let _ = writeln!(log, "### perfbisect: {phase}: cannot start {program}: {e}");
            let msg = format!(
                "{phase} failed: cannot start {program}: {e}; log: {}",
                log_path.display()
            );
            // A config script that cannot be executed is the tree's fault;
            // a missing make is the machine's.
            if phase == Phase::Configure {
                return Err(BuildFailed(msg).into());
            }
            bail!(msg);
        }
    }
}

/// The child's stdout and stderr, line by line, read on threads of their own; the channel
/// closes when both pipes have.
pub(super) fn read_lines(
    child: &mut std::process::Child,
) -> (mpsc::Receiver<Vec<u8>>, Vec<std::thread::JoinHandle<()>>) {
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    let readers: Vec<_> = [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .flatten()
    .map(|stream| {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stream);
            loop {
                let mut line = Vec::new();
                match r.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        })
    })
    .collect();
    (rx, readers)
}

/// Every line of the step's output to the log and to `on_event`, until its pipes close. On an
/// interrupt the step's group gets SIGTERM, then SIGKILL after [`TERM_GRACE`]: waiting for
/// the pipes must not wait for make to finish.
pub(super) fn stream_output(
    lines: &mpsc::Receiver<Vec<u8>>,
    log: &mut StepLog,
    on_event: &mut dyn FnMut(BuildEvent),
    pgid: i32,
) {
    let mut interrupted_at: Option<Instant> = None;
    let mut killed = false;
    loop {
        match lines.recv_timeout(std::time::Duration::from_millis(100)) {
            Ok(line) => {
                log.write(&line);
                if !line.ends_with(b"\n") {
                    log.write(b"\n");
                }
                let text = String::from_utf8_lossy(&line).trim_end().to_string();
                if !text.is_empty() {
                    on_event(BuildEvent::Line(text));
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if crate::interrupt::interrupted() {
            let since = *interrupted_at.get_or_insert_with(|| {
                // SAFETY: kill has no memory effects.
                unsafe { libc::kill(-pgid, libc::SIGTERM) };
                Instant::now()
            });
            if !killed && since.elapsed() >= TERM_GRACE {
                // SAFETY: as above.
                unsafe { libc::kill(-pgid, libc::SIGKILL) };
                killed = true;
            }
        }
    }
}

/// How the step ended, as [`build`]'s errors: killed from outside is not the commit's
/// failure; a non-zero exit is.
pub(super) fn judge_exit(
    phase: Phase,
    status: std::process::ExitStatus,
    log: &mut File,
    log_path: &Path,
) -> Result<()> {
    use std::os::unix::process::ExitStatusExt;
    if let Some(sig) = status.signal() {
        // Killed from outside (SIGINT to the group, the OOM killer, a
        // shutdown): says nothing about the commit, so not cached.
        if matches!(
            sig,
            libc::SIGINT | libc::SIGTERM | libc::SIGKILL | libc::SIGHUP | libc::SIGQUIT
        ) {
            let _ = writeln!(log, "### perfbisect: {phase} killed ({status})");
            bail!(
                "{phase} was killed by signal {sig}; the build was not completed and is not cached as failed"
            );
        }
    }
    if !status.success() {
        let _ = writeln!(log, "### perfbisect: {phase} failed ({status})");
        let _ = log.flush();
        failed!(
            "{phase} failed ({status}); log: {}\n{}",
            log_path.display(),
            tail(log_path, TAIL_LINES)
        );
    }
    Ok(())
}

/// One line appended to the build log while the steps hold it (`log` is theirs while they run;
/// O_APPEND keeps the order).
pub(super) fn append_to_log(log_path: &Path, line: &str) -> Result<()> {
    OpenOptions::new()
        .append(true)
        .open(log_path)
        .and_then(|mut f| writeln!(f, "{line}"))
        .with_context(|| format!("writing the build log {}", log_path.display()))
}

/// The last `n` lines of a file, indented, for error messages.
pub(super) fn tail(path: &Path, n: usize) -> String {
    let text = match fs::read(path) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(_) => return String::new(),
    };
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| format!("  | {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
