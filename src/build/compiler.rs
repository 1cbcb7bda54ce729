//! The C compiler: the one that builds OpenSSL and compiles the kernels
//! against it, and its identity, which keys both caches.

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

/// `$CC` split on whitespace (so `CC="gcc -m64"` works), or `cc`.
pub fn command() -> Vec<String> {
    let cc: Vec<String> = std::env::var("CC")
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect();
    if cc.is_empty() {
        vec!["cc".to_string()]
    } else {
        cc
    }
}

/// [`command`] without a leading `ccache`: the compiler itself, which is
/// what an object depends on.
pub fn program() -> Vec<String> {
    let mut cc = command();
    if cc.len() > 1 && Path::new(&cc[0]).file_name().is_some_and(|n| n == "ccache") {
        cc.remove(0);
    }
    cc
}

/// The first line of `program --version`, e.g. `cc (Debian 12.2.0-14)
/// 12.2.0`: part of every build fingerprint and kernel key, so a compiler
/// upgrade rebuilds rather than mixing objects.
pub fn id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let cc = program();
        let out = Command::new(&cc[0])
            .args(&cc[1..])
            .arg("--version")
            .env("LC_ALL", "C")
            .output();
        let first = out.ok().filter(|o| o.status.success()).and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .map(String::from)
        });
        match first {
            Some(line) => line,
            None => format!("{} (version unknown)", cc.join(" ")),
        }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn id_is_a_line() {
        let id = super::id();
        assert!(!id.is_empty() && !id.contains('\n'), "{id}");
    }
}
