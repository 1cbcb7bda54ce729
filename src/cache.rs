//! The cache directory: layout, locking and atomic publication.
//! `cache/README.md` in the repository documents the layout.

use anyhow::{bail, Context, Result};
use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

pub struct Cache {
    pub root: PathBuf,
    /// Others may write it, and the user said so ([`Location::shared`]).
    pub shared: bool,
}

/// Where the cache is, as the user named it, and whether it is shared on purpose.
#[derive(Debug, Clone, Default)]
pub struct Location {
    /// `--cache`; `None`: `$PERFBISECT_CACHE`, else `~/.cache/perfbisect`.
    pub dir: Option<PathBuf>,
    /// `--shared-cache`: a cache other users can write is used, not refused. Its builds'
    /// libraries and its kernels are checked against their digests before every use (as in
    /// any cache), and only samples this user stored are read.
    pub shared: bool,
}

impl Location {
    pub fn at(dir: &Path) -> Location {
        Location {
            dir: Some(dir.to_path_buf()),
            shared: false,
        }
    }
}

/// A cache someone else can write is refused: perfbisect loads shared objects from it, and
/// whoever writes it decides what they are. Only the user can say a cache is shared on purpose.
fn refuse_writable_by_others(root: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(root).with_context(|| format!("cannot read {}", root.display()))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let who = if m.uid() != me {
        Some(format!("it belongs to user {}", m.uid()))
    } else if m.mode() & 0o022 != 0 {
        Some(format!("its mode is {:o}", m.mode() & 0o777))
    } else {
        None
    };
    if let Some(who) = who {
        bail!(
            "cache {} can be written by others ({who}), and perfbisect loads the libraries and kernels in it: make it yours alone (chmod go-w), or say it is shared with --shared-cache (PERFBISECT_SHARED_CACHE=1)",
            root.display()
        );
    }
    Ok(())
}

/// An exclusive advisory lock held until dropped. Other perfbisect processes
/// wanting the same lock wait, so two of them never build or publish the same
/// entry at once.
pub struct Lock {
    _file: File,
}

impl Cache {
    /// `--cache DIR`, else `$PERFBISECT_CACHE`, else `~/.cache/perfbisect`.
    pub fn open(at: &Location) -> Result<Cache> {
        let root = match &at.dir {
            Some(p) => p.to_path_buf(),
            None => match std::env::var_os("PERFBISECT_CACHE") {
                Some(p) if !p.is_empty() => PathBuf::from(p),
                _ => {
                    let base = std::env::var_os("XDG_CACHE_HOME")
                        .filter(|p| !p.is_empty())
                        .map(PathBuf::from)
                        .or_else(|| {
                            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache"))
                        })
                        .context(
                            "cannot find a cache directory: set --cache or PERFBISECT_CACHE",
                        )?;
                    base.join("perfbisect")
                }
            },
        };
        if root.exists() && !root.is_dir() {
            bail!("cache {} exists and is not a directory", root.display());
        }
        if !root.exists() {
            // Private: the cache holds shared objects perfbisect later loads.
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&root)
                .with_context(|| format!("cannot create cache directory {}", root.display()))?;
            fs::set_permissions(&root, fs::Permissions::from_mode(0o700))
                .with_context(|| format!("cannot set permissions of {}", root.display()))?;
        }
        let probe = root.join(format!(".write-test-{}", std::process::id()));
        File::create(&probe)
            .and_then(|_| fs::remove_file(&probe))
            .map_err(|e| {
                anyhow::anyhow!("cache directory {} is not writable: {e}", root.display())
            })?;
        let root = root.canonicalize().unwrap_or(root);
        if !at.shared {
            refuse_writable_by_others(&root)?;
        }
        Ok(Cache {
            root,
            shared: at.shared,
        })
    }

    /// A subdirectory of the cache, created on demand.
    pub fn dir(&self, sub: &str) -> Result<PathBuf> {
        let d = self.root.join(sub);
        fs::create_dir_all(&d).with_context(|| format!("cannot create {}", d.display()))?;
        Ok(d)
    }

    /// Waits for the lock. The wait polls rather than blocking in flock, so
    /// that Ctrl-C while another process holds the lock (e.g. builds the
    /// same commit) ends this one promptly with
    /// [`Interrupted`](crate::interrupt::Interrupted).
    pub fn lock(&self, name: &str) -> Result<Lock> {
        loop {
            if let Some(l) = self.try_lock(name)? {
                return Ok(l);
            }
            crate::interrupt::check()?;
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Like `lock`, but gives up at once when someone else holds it.
    pub fn try_lock(&self, name: &str) -> Result<Option<Lock>> {
        Lock::try_at(&self.dir("locks")?.join(format!("{name}.lock")))
    }

    /// An empty OpenSSL config file: the child's OPENSSL_CONF, so the system's
    /// openssl.cnf cannot change what is measured.
    pub fn openssl_conf(&self) -> Result<PathBuf> {
        let p = self.dir("run")?.join("openssl.cnf");
        if !p.exists() {
            write_atomic(&p, b"# perfbisect: intentionally empty\n")?;
        }
        Ok(p)
    }
}

impl Lock {
    /// The lock file `path` (created when missing), or `None` when someone else holds it.
    pub fn try_at(path: &Path) -> Result<Option<Lock>> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .with_context(|| format!("cannot open lock {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => Ok(Some(Lock { _file: file })),
            Err(fs::TryLockError::WouldBlock) => Ok(None),
            Err(fs::TryLockError::Error(e)) => {
                Err(e).with_context(|| format!("cannot lock {}", path.display()))
            }
        }
    }

    /// The lock file `path` (created when missing), held until dropped, waiting for it.
    pub fn at(path: &Path) -> Result<Lock> {
        loop {
            if let Some(l) = Lock::try_at(path)? {
                return Ok(l);
            }
            crate::interrupt::check()?;
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

/// Write a file so that readers see either nothing or all of it.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    write_atomic_at(path, contents, None)
}

/// [`write_atomic`], which fails like a full disk (half the bytes written,
/// then ENOSPC) when the named [`failpoint`] is set.
pub fn write_atomic_at(path: &Path, contents: &[u8], point: Option<&str>) -> Result<()> {
    use std::io::Write;
    let dir = path.parent().context("path has no parent")?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    let fail = point.is_some_and(failpoint);
    let written = if fail {
        tmp.write_all(&contents[..contents.len() / 2])
            .and_then(|_| Err(disk_full()))
    } else {
        tmp.write_all(contents)
    };
    // On error the temporary file is removed when `tmp` drops.
    written
        .and_then(|_| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("cannot publish {}", path.display()))?;
    Ok(())
}

/// Test-only fault injection: `PERFBISECT_FAILPOINT=NAME[,NAME…]` makes the
/// write at that point fail as on a full disk (see tests/hardening.rs).
/// Names: `publish-build` (a build entry's meta.json), `publish-sample` (a
/// sample line: half of it is written first, as when the disk fills mid-line).
pub fn failpoint(name: &str) -> bool {
    std::env::var("PERFBISECT_FAILPOINT")
        .map(|v| v.split(',').any(|p| p.trim() == name))
        .unwrap_or(false)
}

/// The error a full disk gives (ENOSPC).
pub fn disk_full() -> std::io::Error {
    std::io::Error::from_raw_os_error(libc::ENOSPC)
}

/// Total size in bytes of a directory tree (for `cache ls`).
pub fn dir_size(path: &Path) -> u64 {
    let mut total = 0;
    if let Ok(rd) = fs::read_dir(path) {
        for e in rd.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => total += dir_size(&e.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_cache_is_private() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("c");
        let c = Cache::open(&Location::at(&root)).unwrap();
        let mode = fs::metadata(&c.root).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }

    #[test]
    fn unwritable_cache_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("f");
        fs::write(&file, "x").unwrap();
        let e = Cache::open(&Location::at(&file)).err().unwrap().to_string();
        assert!(e.contains("not a directory"), "{e}");
    }

    #[test]
    fn a_cache_others_can_write_is_used_only_when_said_shared() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("c");
        Cache::open(&Location::at(&root)).unwrap();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o777)).unwrap();
        let e = Cache::open(&Location::at(&root)).err().unwrap().to_string();
        assert!(
            e.contains("can be written by others (its mode is 777)"),
            "{e}"
        );
        assert!(e.contains("--shared-cache"), "{e}");
        let shared = Location {
            shared: true,
            ..Location::at(&root)
        };
        assert!(Cache::open(&shared).unwrap().shared);
        fs::set_permissions(&root, fs::Permissions::from_mode(0o750)).unwrap();
        assert!(!Cache::open(&Location::at(&root)).unwrap().shared);
    }
}
