//! Published cache entries: reading and rechecking one, listing them, and clearing staging
//! directories left behind.

use super::*;

/// How much of an entry [`read_entry`] checks.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Its record, and that its libraries are there: enough to list it.
    Record,
    /// Also its libraries' sha256 against the record (once per process each): before it is
    /// used, so a changed library is a damaged entry, built again, never measured.
    Libraries,
}

/// A published entry, checked: meta.json parses and, for a successful build,
/// the libraries are there (and, with [`Check::Libraries`], are the files built).
/// A damaged entry is reported and treated as absent.
pub fn read_entry(entry: &Path, check: Check) -> Result<Option<Built>> {
    let meta_path = entry.join("meta.json");
    if !entry.exists() {
        return Ok(None);
    }
    let meta: BuildMeta = match fs::read_to_string(&meta_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
    {
        Some(m) => m,
        None => {
            eprintln!(
                "perfbisect: warning: damaged build entry {} (missing or unreadable meta.json); rebuilding",
                entry.display()
            );
            return Ok(None);
        }
    };
    // meta.json must describe this entry (`<commit12>-<recipe>-<fingerprint>`):
    // a file copied from another entry is not this build's record.
    let name = entry
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let expected = meta.entry_name();
    if meta.commit.len() < 12 || name != expected {
        eprintln!(
            "perfbisect: warning: damaged build entry {} (its meta.json describes {expected}); rebuilding",
            entry.display()
        );
        return Ok(None);
    }
    let prefix = if meta.ok {
        match Prefix::from_dir(&entry.join("prefix"), &meta.label()).and_then(|p| {
            // Prefix::from_dir checks libcrypto; a build also installed libssl.
            has_shared(&p.lib_dir, "libssl")?;
            let p = Prefix {
                binaries: meta.binaries.clone(),
                ..p
            };
            if check == Check::Libraries {
                p.check_binaries()?;
            }
            Ok(p)
        }) {
            Ok(p) => Some(p),
            Err(e) => {
                warn_once(entry, &format!("({e:#})"));
                return Ok(None);
            }
        }
    } else {
        None
    };
    let mut meta = meta;
    if meta.ok && meta.checked < installed::CHECK_VERSION && !recheck(entry, &mut meta)? {
        return Ok(None);
    }
    Ok(Some(Built {
        dir: entry.to_path_buf(),
        meta,
        prefix,
        fresh: false,
    }))
}

/// "damaged build entry ENTRY WHY; rebuilding", once per entry and reason in a process: an
/// entry is read several times per command (looked up, then again under its lock).
fn warn_once(entry: &Path, why: &str) {
    static WARNED: std::sync::Mutex<Vec<(PathBuf, String)>> = std::sync::Mutex::new(Vec::new());
    let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
    let key = (entry.to_path_buf(), why.to_string());
    if !warned.contains(&key) {
        eprintln!(
            "perfbisect: warning: damaged build entry {} {why}; rebuilding",
            entry.display()
        );
        warned.push(key);
    }
}

/// A good build published before builds were checked (or by an older check): checked now.
/// Passing, its meta.json records it (the check runs once per entry); failing, it is reported
/// and treated as absent, so it is built again — by today's publishing, which is what the
/// check most often catches (issue 29: a stub library published under the real one's name).
pub(super) fn recheck(entry: &Path, meta: &mut BuildMeta) -> Result<bool> {
    // An entry is read several times per command (looked up, then again under its lock):
    // one check and one warning each.
    static FAILED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut failed = FAILED.lock().unwrap_or_else(|e| e.into_inner());
    if failed.iter().any(|p| p == entry) {
        return Ok(false);
    }
    let prefix = entry.join("prefix");
    let problems = installed::check(&prefix)
        .with_context(|| format!("cannot check the build entry {}", entry.display()))?;
    if !problems.is_empty() {
        failed.push(entry.to_path_buf());
        eprintln!(
            "perfbisect: warning: the build of {} in {} was published before builds were checked, and fails the check ({}); rebuilding",
            meta.label(),
            entry.display(),
            installed::summary(&problems)
        );
        return Ok(false);
    }
    meta.checked = installed::CHECK_VERSION;
    // Only a record of the check: an entry that cannot be written is checked again next time.
    if let Ok(text) = serde_json::to_string_pretty(meta) {
        cache::write_atomic(&entry.join("meta.json"), text.as_bytes()).ok();
    }
    Ok(true)
}

/// Every published build entry, newest first.
pub fn list(cache: &Cache) -> Result<Vec<Built>> {
    let dir = cache.dir("builds")?;
    let mut out = Vec::new();
    for e in fs::read_dir(&dir)?.flatten() {
        let name = e.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        if let Some(b) = read_entry(&e.path(), Check::Record)? {
            out.push(b);
        }
    }
    out.sort_by_key(|b| std::cmp::Reverse(b.meta.created));
    Ok(out)
}

/// Staging directories (`.tmp-<key>-XXXXXX`) and replaced entries (`.tmp-old-<key>-<pid>`)
/// left by a process that was killed outright (SIGKILL, a second Ctrl-C). A build holds its
/// key's lock from before it stages until it publishes, so a directory whose key lock is free
/// is garbage; one whose lock is held (another build, in another work tree) is left alone.
/// `cache rm`'s `.tmp-rm-…` are not ours to touch. `held`: the key whose lock the caller
/// holds and has not staged yet (its leftovers are stale too).
pub fn remove_stale_staging(cache: &Cache, held: Option<&str>) -> Result<()> {
    let Ok(rd) = fs::read_dir(cache.dir("builds")?) else {
        return Ok(());
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let key = if let Some(rest) = name.strip_prefix(".tmp-old-") {
            rest.rsplit_once('-').map(|(k, _)| k)
        } else if name.starts_with(".tmp-rm-") {
            None
        } else {
            name.strip_prefix(".tmp-")
                .and_then(|r| r.rsplit_once('-'))
                .map(|(k, _)| k)
        };
        let Some(key) = key else { continue };
        let stale = Some(key) == held || cache.try_lock(&format!("build-{key}"))?.is_some();
        if stale {
            progress::detail(&format!("removing stale staging directory {name}"));
            fs::remove_dir_all(e.path()).ok();
        }
    }
    Ok(())
}

/// `lib/<name>.so*` exists.
pub(super) fn has_shared(lib: &Path, name: &str) -> Result<()> {
    let found = fs::read_dir(lib)
        .with_context(|| format!("cannot read {}", lib.display()))?
        .flatten()
        .any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{name}.so"))
        });
    if !found {
        bail!("no shared {name} in {}", lib.display());
    }
    Ok(())
}
