//! Objects libgit2 cannot read (a partial clone's promised blobs, alternates it does not
//! follow), read through the `git` command, and the error that names one still missing.

use git2::Oid;
use std::collections::HashMap;
use std::io::Write;
use std::process::{Command, Output, Stdio};

use super::{CommitInfo, Repo};
use crate::progress;

impl Repo {
    /// Reads blobs libgit2 cannot find, through the `git` command (see
    /// [`Repo::export_tree`]). Returns what could be read, and why the rest
    /// could not when git said so.
    pub(super) fn materialize(&self, oids: &[Oid]) -> (HashMap<Oid, Vec<u8>>, Option<String>) {
        let mut got = HashMap::new();
        let mut why = None;
        let mut rest: Vec<Oid> = oids.to_vec();
        if self.promisor.is_some() {
            if let Err(e) = self.fetch_promised(&rest) {
                why = Some(e);
            }
            rest.retain(|oid| match self.repo.find_blob(*oid) {
                Ok(b) => {
                    got.insert(*oid, b.content().to_vec());
                    false
                }
                Err(_) => true,
            });
        }
        if !rest.is_empty() {
            match self.cat_file(&rest) {
                Ok(more) => got.extend(more),
                Err(e) => {
                    why.get_or_insert(e);
                }
            }
        }
        (got, why)
    }

    /// Fetches promised objects from the partial clone's promisor remote in
    /// one request, as git does when a command needs them.
    pub(super) fn fetch_promised(&self, oids: &[Oid]) -> std::result::Result<(), String> {
        let remote = self.promisor.as_deref().unwrap_or("origin");
        progress::detail(&format!(
            "fetching {} promised object(s) from remote '{remote}' of {}",
            oids.len(),
            self.path.display()
        ));
        let mut cmd = self.git();
        cmd.args([
            "-c",
            "fetch.negotiationAlgorithm=noop",
            "fetch",
            remote,
            "--no-tags",
            "--no-write-fetch-head",
            "--recurse-submodules=no",
            "--filter=blob:none",
            "--stdin",
        ]);
        let input: String = oids.iter().map(|o| format!("{o}\n")).collect();
        let out = run_with_input(cmd, input.as_bytes())
            .map_err(|e| format!("cannot run git fetch: {e}"))?;
        // Newer packs are invisible to libgit2 until it looks again.
        if let Ok(odb) = self.repo.odb() {
            let _ = odb.refresh();
        }
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "git fetch from its promisor remote '{remote}' failed: {}",
                git_message(&out.stderr)
            ))
        }
    }

    /// `git cat-file --batch`: the blobs git can read locally. No lazy
    /// fetch here (`GIT_NO_LAZY_FETCH`): fetch_promised already asked the
    /// remote once for all of them, and one fetch per object of a large tree
    /// would take hours against an unreachable remote.
    fn cat_file(&self, oids: &[Oid]) -> std::result::Result<HashMap<Oid, Vec<u8>>, String> {
        let mut cmd = self.git();
        cmd.args(["cat-file", "--batch"])
            .env("GIT_NO_LAZY_FETCH", "1");
        let input: String = oids.iter().map(|o| format!("{o}\n")).collect();
        let out = run_with_input(cmd, input.as_bytes())
            .map_err(|e| format!("cannot run git cat-file: {e}"))?;
        if !out.status.success() {
            return Err(format!("git cat-file failed: {}", git_message(&out.stderr)));
        }
        parse_batch(&out.stdout).map_err(|e| format!("git cat-file --batch: {e}"))
    }

    /// `git -C <repo>`, with the variables that would point it at another
    /// repository (or make it prompt for a password behind our spinner)
    /// removed.
    fn git(&self) -> Command {
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(&self.path);
        for k in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_COMMON_DIR",
            "GIT_INDEX_FILE",
            "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
            "GIT_NAMESPACE",
            "GIT_CEILING_DIRECTORIES",
        ] {
            cmd.env_remove(k);
        }
        cmd.env("GIT_TERMINAL_PROMPT", "0").env("LC_ALL", "C");
        cmd
    }

    /// One line: which object, where, and what to do about it.
    pub(super) fn missing_error(
        &self,
        oid: Oid,
        path: &str,
        c: &CommitInfo,
        why: Option<&str>,
        more: usize,
    ) -> anyhow::Error {
        let repo = self.path.display();
        let more = match more {
            0 => String::new(),
            n => format!(", with {n} more missing object(s)"),
        };
        let why = why.map(|w| format!(" ({w})")).unwrap_or_default();
        match &self.promisor {
            Some(remote) => anyhow::anyhow!(
                "object {oid} ({path} in commit {}) is missing from partial clone {repo}{more}{why}; make its remote '{remote}' reachable (`git -C {repo} fetch {remote}`) or check the repository (`git -C {repo} fsck`)",
                c.short
            ),
            None => anyhow::anyhow!(
                "object {oid} ({path} in commit {}) is missing from {repo}{more}{why}; fetch it (`git -C {repo} fetch`) or check the repository (`git -C {repo} fsck`)",
                c.short
            ),
        }
    }
}

/// Runs `cmd` with `input` on its stdin, capturing stdout and stderr.
fn run_with_input(mut cmd: Command, input: &[u8]) -> std::io::Result<Output> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().expect("piped");
    let input = input.to_vec();
    // A separate writer: git answers while it reads, and a full stdout pipe
    // would otherwise block both sides.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output();
    let _ = writer.join();
    out
}

/// The line of git's stderr that says what went wrong: its first
/// `fatal:`/`error:` line (advice follows it), else its last line.
pub(super) fn git_message(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines
        .iter()
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or(lines.last())
        .copied()
        .unwrap_or("no message")
        .to_string()
}

/// The blobs of `git cat-file --batch` output (`<oid> blob <size>\n<bytes>\n`,
/// or `<oid> missing\n`).
pub(super) fn parse_batch(mut out: &[u8]) -> std::result::Result<HashMap<Oid, Vec<u8>>, String> {
    let mut got = HashMap::new();
    while !out.is_empty() {
        let nl = out
            .iter()
            .position(|&b| b == b'\n')
            .ok_or("truncated header")?;
        let header = String::from_utf8_lossy(&out[..nl]).into_owned();
        out = &out[nl + 1..];
        let mut f = header.split_whitespace();
        let (Some(oid), Some(kind)) = (f.next(), f.next()) else {
            return Err(format!("unexpected line '{header}'"));
        };
        if kind == "missing" || kind == "ambiguous" {
            continue;
        }
        let size: usize = f
            .next()
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("unexpected line '{header}'"))?;
        if out.len() < size + 1 {
            return Err("truncated object".into());
        }
        if kind == "blob" {
            let oid = Oid::from_str(oid).map_err(|e| e.message().to_string())?;
            got.insert(oid, out[..size].to_vec());
        }
        out = &out[size + 1..];
    }
    Ok(got)
}
