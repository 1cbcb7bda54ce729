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
}
