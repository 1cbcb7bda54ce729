//! Content hashes used as cache keys. Every field is length-prefixed so that
//! ("ab", "c") and ("a", "bc") never collide.

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;

pub struct Hasher(Sha256);

impl Default for Hasher {
    fn default() -> Self {
        Self::new()
    }
}

impl Hasher {
    pub fn new() -> Hasher {
        Hasher(Sha256::new())
    }

    pub fn field(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }

    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.0.update((b.len() as u64).to_le_bytes());
        self.0.update(b);
        self
    }

    pub fn finish(&self) -> String {
        hex::encode(self.0.clone().finalize())
    }

    /// 16 hex digits: plenty for a local cache, short enough for paths.
    pub fn finish_short(&self) -> String {
        self.finish()[..16].to_string()
    }
}

pub fn file_sha256(path: &Path) -> Result<String> {
    let mut f =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f
            .read(&mut buf)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

/// What says a file is unchanged since it was hashed: the inode and its size, modification
/// and status-change times. The status-change time moves on every write, rename or chmod and
/// cannot be set by a user (`touch` sets only the others).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

fn stamp(path: &Path) -> Result<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(Stamp {
        dev: m.dev(),
        ino: m.ino(),
        size: m.size(),
        mtime: (m.mtime(), m.mtime_nsec()),
        ctime: (m.ctime(), m.ctime_nsec()),
    })
}

/// [`file_sha256`], hashed once per process while the file stays the same (see [`Stamp`]): a
/// library checked before every sample costs one `stat` per sample, not a read of megabytes.
pub fn file_sha256_memo(path: &Path) -> Result<String> {
    use std::collections::HashMap;
    use std::path::PathBuf;
    use std::sync::Mutex;
    static SEEN: Mutex<Option<HashMap<PathBuf, (Stamp, String)>>> = Mutex::new(None);
    let before = stamp(path)?;
    if let Some((s, sha)) = SEEN
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .get(path)
    {
        if *s == before {
            return Ok(sha.clone());
        }
    }
    let sha = file_sha256(path)?;
    // Changed while it was read: the digest belongs to no one stamp, so it is not kept.
    if stamp(path)? == before {
        SEEN.lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(HashMap::new)
            .insert(path.to_path_buf(), (before, sha.clone()));
    }
    Ok(sha)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_delimited() {
        let a = Hasher::new().field("ab").field("c").finish();
        let b = Hasher::new().field("a").field("bc").finish();
        assert_ne!(a, b);
        assert_eq!(Hasher::new().field("x").finish_short().len(), 16);
    }

    #[test]
    fn a_remembered_digest_follows_the_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("lib.so");
        std::fs::write(&p, b"one").unwrap();
        let first = file_sha256_memo(&p).unwrap();
        assert_eq!(first, file_sha256(&p).unwrap());
        assert_eq!(file_sha256_memo(&p).unwrap(), first);
        // Same size, same modification time: the status-change time still moves.
        let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
        std::fs::write(&p, b"two").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        assert_eq!(file_sha256_memo(&p).unwrap(), file_sha256(&p).unwrap());
        assert_ne!(file_sha256_memo(&p).unwrap(), first);
        // Replaced by a rename: another inode.
        let q = d.path().join("new.so");
        std::fs::write(&q, b"one").unwrap();
        std::fs::rename(&q, &p).unwrap();
        assert_eq!(file_sha256_memo(&p).unwrap(), first);
    }
}
