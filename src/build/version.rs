//! The one version type: the OpenSSL version of a source tree, a build, an
//! installed library or a kernel's `@min_version`, parsed from any of the
//! forms they state it in and ordered the way releases follow each other.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use anyhow::{anyhow, bail, Context, Result};

/// Sort key of a pre-release tag: (is a release, kind, number, text).
type PreKey<'a> = (u8, u8, u64, &'a str);

/// An OpenSSL version, e.g. `3.2.1`, `1.1.1w`, `3.2.0-dev`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenSslVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
    /// The patch letter of 1.x releases: `w` in 1.1.1w.
    pub letter: Option<char>,
    /// `""` for a release; `dev`, `alpha1`, `beta2`, `pre9`… otherwise.
    pub pre_release: String,
}

impl OpenSslVersion {
    pub fn new(major: u32, minor: u32, patch: u32) -> Self {
        OpenSslVersion {
            major,
            minor,
            patch,
            letter: None,
            pre_release: String::new(),
        }
    }

    /// The version in a library's or header's version text, such as
    /// `OpenSSL 3.2.1 30 Jan 2024` (`OpenSSL_version()`, `OPENSSL_VERSION_TEXT`).
    pub fn from_version_text(text: &str) -> Option<OpenSslVersion> {
        text.split_whitespace().nth(1)?.parse().ok()
    }

    /// Sort key of the pre-release part: pre-releases come before the
    /// release; `dev` (a branch under development) before alpha, beta, pre.
    fn pre_key(&self) -> PreKey<'_> {
        let p = self.pre_release.as_str();
        if p.is_empty() {
            return (1, 0, 0, "");
        }
        let rank = if p.starts_with("dev") {
            0
        } else if p.starts_with("alpha") {
            1
        } else if p.starts_with("beta") || p.starts_with("pre") {
            2
        } else {
            3
        };
        let digits: String = p
            .chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(|c| c.is_ascii_digit())
            .collect();
        (0, rank, digits.parse().unwrap_or(0), p)
    }

    fn key(&self) -> (u32, u32, u32, Option<char>, PreKey<'_>) {
        (
            self.major,
            self.minor,
            self.patch,
            self.letter,
            self.pre_key(),
        )
    }
}

impl PartialOrd for OpenSslVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for OpenSslVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

impl fmt::Display for OpenSslVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if let Some(l) = self.letter {
            write!(f, "{l}")?;
        }
        if !self.pre_release.is_empty() {
            write!(f, "-{}", self.pre_release)?;
        }
        Ok(())
    }
}

impl FromStr for OpenSslVersion {
    type Err = anyhow::Error;

    /// Parses `3.2.1`, `3.2`, `1.1.1w`, `3.2.0-dev`, `1.1.1-pre9`,
    /// `openssl-3.2.1`. Build metadata (`3.0.13+quic`) is dropped: OpenSSL
    /// gives it no place in the order of versions.
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim();
        let t = t.strip_prefix("openssl-").unwrap_or(t);
        let t = t.split_once('+').map_or(t, |(version, _metadata)| version);
        let (num, pre) = match t.split_once('-') {
            Some((n, p)) => (n, p),
            None => (t, ""),
        };
        let bad = || anyhow!("'{s}' is not an OpenSSL version (expected e.g. 3.2.1 or 1.1.1w)");
        let mut parts = num.split('.');
        let major = parts.next().ok_or_else(bad)?.parse().map_err(|_| bad())?;
        let minor = parts.next().ok_or_else(bad)?.parse().map_err(|_| bad())?;
        let (patch, letter) = match parts.next() {
            None => (0, None),
            Some(p) => {
                let digits: String = p.chars().take_while(|c| c.is_ascii_digit()).collect();
                let rest = &p[digits.len()..];
                let letter = match rest.len() {
                    0 => None,
                    1 if rest.chars().all(|c| c.is_ascii_lowercase()) => rest.chars().next(),
                    _ => return Err(bad()),
                };
                (digits.parse().map_err(|_| bad())?, letter)
            }
        };
        if parts.next().is_some()
            || !pre
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        {
            return Err(bad());
        }
        Ok(OpenSslVersion {
            major,
            minor,
            patch,
            letter,
            pre_release: pre.to_string(),
        })
    }
}

/// Stored and printed as its text (`"3.2.1"`, `"1.1.1w"`), as in build
/// records and `perfbisect kernels --format json`.
impl serde::Serialize for OpenSslVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Written as its text (`3.2.1`, `1.1.1w`, `3.2.0-dev`), as `Serialize` does.
impl schemars::JsonSchema for OpenSslVersion {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "OpenSslVersion".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": "An OpenSSL version: 3.2.1, 1.1.1w, 3.2.0-dev."
        })
    }
}

impl<'de> serde::Deserialize<'de> for OpenSslVersion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Reads the version of the OpenSSL source tree `src`: VERSION.dat (3.0 and
/// later), else `OPENSSL_VERSION_TEXT`/`OPENSSL_VERSION_NUMBER` in opensslv.h.
/// Fails for trees that are not OpenSSL or older than 1.1.1.
pub fn detect_version(src: &Path) -> Result<OpenSslVersion> {
    if !src.join("Configure").is_file() {
        bail!(
            "{} does not look like an OpenSSL source tree (no Configure)",
            src.display()
        );
    }
    let version_dat = src.join("VERSION.dat");
    let v = if version_dat.is_file() {
        let text = std::fs::read_to_string(&version_dat)
            .with_context(|| format!("reading {}", version_dat.display()))?;
        parse_version_dat(&text).with_context(|| format!("parsing {}", version_dat.display()))?
    } else {
        let header = ["include/openssl/opensslv.h", "crypto/opensslv.h"]
            .iter()
            .map(|p| src.join(p))
            .find(|p| p.is_file())
            .ok_or_else(|| {
                anyhow!(
                    "{} does not look like an OpenSSL source tree (no VERSION.dat or opensslv.h)",
                    src.display()
                )
            })?;
        let text = std::fs::read_to_string(&header)
            .with_context(|| format!("reading {}", header.display()))?;
        parse_opensslv_h(&text).with_context(|| format!("parsing {}", header.display()))?
    };
    if (v.major, v.minor, v.patch) < (1, 1, 1) {
        bail!("OpenSSL {v} is older than 1.1.1, which perfbisect does not support");
    }
    Ok(v)
}

/// VERSION.dat: `MAJOR=3`, `MINOR=2`, `PATCH=1`, `PRE_RELEASE_TAG=dev`, ….
fn parse_version_dat(text: &str) -> Result<OpenSslVersion> {
    let mut vars = BTreeMap::new();
    for line in text.lines() {
        if let Some((k, v)) = line.split_once('=') {
            vars.insert(k.trim(), v.trim().trim_matches('"'));
        }
    }
    let num = |k: &str| -> Result<u32> {
        vars.get(k)
            .ok_or_else(|| anyhow!("no {k}"))?
            .parse()
            .map_err(|_| anyhow!("{k} is not a number"))
    };
    let mut v = OpenSslVersion::new(num("MAJOR")?, num("MINOR")?, num("PATCH")?);
    v.pre_release = vars.get("PRE_RELEASE_TAG").unwrap_or(&"").to_string();
    Ok(v)
}

/// 1.x opensslv.h: `# define OPENSSL_VERSION_TEXT "OpenSSL 1.1.1w  11 Sep 2023"`,
/// falling back to `OPENSSL_VERSION_NUMBER 0x1010117fL` (MNNFFPPS).
fn parse_opensslv_h(text: &str) -> Result<OpenSslVersion> {
    let define = |name: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| {
                let l = l.trim_start().strip_prefix('#')?.trim_start();
                let rest = l.strip_prefix("define")?.trim_start().strip_prefix(name)?;
                rest.starts_with(char::is_whitespace)
                    .then(|| rest.trim().to_string())
            })
            .collect()
    };
    // Skip the FIPS variant of 1.0.x headers ("OpenSSL 1.0.2u-fips …").
    for value in define("OPENSSL_VERSION_TEXT") {
        let inner = value.trim_matches('"');
        let Some(rest) = inner.strip_prefix("OpenSSL ") else {
            continue;
        };
        let token = rest.split_whitespace().next().unwrap_or("");
        if token.contains("-fips") {
            continue;
        }
        if let Ok(v) = token.parse::<OpenSslVersion>() {
            return Ok(v);
        }
    }
    for value in define("OPENSSL_VERSION_NUMBER") {
        let hex = value
            .trim_start_matches("0x")
            .trim_start_matches("0X")
            .trim_end_matches(['L', 'l', 'U', 'u']);
        if let Ok(n) = u64::from_str_radix(hex, 16) {
            let mut v = OpenSslVersion::new(
                ((n >> 28) & 0xf) as u32,
                ((n >> 20) & 0xff) as u32,
                ((n >> 12) & 0xff) as u32,
            );
            let letter = ((n >> 4) & 0xff) as u8;
            if (1..=26).contains(&letter) {
                v.letter = Some((b'a' + letter - 1) as char);
            }
            match n & 0xf {
                0 => v.pre_release = "dev".into(),
                0xf => {}
                beta => v.pre_release = format!("beta{beta}"),
            }
            return Ok(v);
        }
    }
    bail!("no OPENSSL_VERSION_TEXT or OPENSSL_VERSION_NUMBER")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::fs;
    use std::path::PathBuf;

    /// crates.io's unpacked sources, where `cargo fetch` (and
    /// scripts/openssl-release-history) put the openssl-src trees.
    pub(crate) fn registry() -> PathBuf {
        let home = std::env::var_os("CARGO_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
            .unwrap_or_default();
        home.join("registry/src/index.crates.io-1949cf8c6b5b557f")
    }

    fn v(s: &str) -> OpenSslVersion {
        s.parse().unwrap()
    }

    /// Copies the version-bearing files of an openssl-src tree (read-only
    /// registry) into a temporary directory.
    fn copy_tree(crate_version: &str) -> Option<tempfile::TempDir> {
        let src = registry()
            .join(format!("openssl-src-{crate_version}"))
            .join("openssl");
        if !src.is_dir() {
            eprintln!("skipping: {} not present", src.display());
            return None;
        }
        let dst = tempfile::tempdir().unwrap();
        for rel in ["Configure", "VERSION.dat", "include/openssl/opensslv.h"] {
            if src.join(rel).is_file() {
                let to = dst.path().join(rel);
                fs::create_dir_all(to.parent().unwrap()).unwrap();
                fs::copy(src.join(rel), to).unwrap();
            }
        }
        Some(dst)
    }

    #[test]
    fn versions_of_real_trees() {
        for (krate, want) in [
            ("111.28.2+1.1.1w", "1.1.1w"),
            ("300.0.2+3.0.0", "3.0.0"),
            ("300.1.6+3.1.4", "3.1.4"),
            ("300.2.3+3.2.1", "3.2.1"),
            ("300.5.0+3.5.0", "3.5.0"),
            ("400.0.2+4.0.3", "4.0.3"),
        ] {
            let Some(dir) = copy_tree(krate) else {
                continue;
            };
            let got = detect_version(dir.path()).unwrap();
            assert_eq!(got.to_string(), want, "{krate}");
            assert_eq!(got, v(want));
        }
        if let Some(dir) = copy_tree("111.28.2+1.1.1w") {
            let got = detect_version(dir.path()).unwrap();
            assert_eq!((got.major, got.minor, got.patch), (1, 1, 1));
            assert_eq!(got.letter, Some('w'));
        }
    }

    #[test]
    fn version_number_fallback_and_dev_trees() {
        let h = "# define OPENSSL_VERSION_NUMBER  0x1010117fL\n";
        assert_eq!(parse_opensslv_h(h).unwrap().to_string(), "1.1.1w");
        let h = "# define OPENSSL_VERSION_NUMBER  0x10101180L\n";
        assert_eq!(parse_opensslv_h(h).unwrap().to_string(), "1.1.1x-dev");
        let h = "# define OPENSSL_VERSION_TEXT    \"OpenSSL 1.1.1x-dev  xx XXX xxxx\"\n";
        assert_eq!(parse_opensslv_h(h).unwrap().to_string(), "1.1.1x-dev");
        let d = "MAJOR=3\nMINOR=2\nPATCH=0\nPRE_RELEASE_TAG=dev\nRELEASE_DATE=\"\"\n";
        let dev = parse_version_dat(d).unwrap();
        assert_eq!(dev.to_string(), "3.2.0-dev");
        assert!(dev > v("3.1.4") && dev < v("3.2.0") && dev < v("3.2.0-alpha1"));
    }

    #[test]
    fn ordering() {
        let mut vs: Vec<_> = [
            "3.2.0",
            "1.1.1w",
            "3.0.0",
            "1.1.1",
            "3.2.0-dev",
            "3.2.0-alpha2",
            "3.10.0",
            "3.2.0-beta1",
            "1.1.1a",
            "3.2.0-alpha10",
        ]
        .iter()
        .map(|s| v(s))
        .collect();
        vs.sort();
        let s: Vec<String> = vs.iter().map(|v| v.to_string()).collect();
        assert_eq!(
            s,
            [
                "1.1.1",
                "1.1.1a",
                "1.1.1w",
                "3.0.0",
                "3.2.0-dev",
                "3.2.0-alpha2",
                "3.2.0-alpha10",
                "3.2.0-beta1",
                "3.2.0",
                "3.10.0"
            ]
        );
        assert_eq!(v("openssl-3.2"), v("3.2.0"));
        assert!("3.x".parse::<OpenSslVersion>().is_err());
        assert!("1.1.1ww".parse::<OpenSslVersion>().is_err());
    }

    #[test]
    fn not_openssl_and_too_old() {
        let d = tempfile::tempdir().unwrap();
        let e = detect_version(d.path()).unwrap_err().to_string();
        assert!(
            e.contains("does not look like an OpenSSL source tree (no Configure)"),
            "{e}"
        );
        fs::write(d.path().join("Configure"), "").unwrap();
        fs::create_dir_all(d.path().join("crypto")).unwrap();
        fs::write(
            d.path().join("crypto/opensslv.h"),
            "# ifdef OPENSSL_FIPS\n#  define OPENSSL_VERSION_TEXT    \"OpenSSL 1.0.2u-fips  20 Dec 2019\"\n# else\n#  define OPENSSL_VERSION_TEXT    \"OpenSSL 1.0.2u  20 Dec 2019\"\n# endif\n",
        )
        .unwrap();
        let e = detect_version(d.path()).unwrap_err().to_string();
        assert_eq!(
            e,
            "OpenSSL 1.0.2u is older than 1.1.1, which perfbisect does not support"
        );
    }

    #[test]
    fn version_texts_of_libraries_and_headers() {
        let t = OpenSslVersion::from_version_text;
        assert_eq!(t("OpenSSL 3.2.1 30 Jan 2024"), Some(v("3.2.1")));
        assert_eq!(t("OpenSSL 1.1.1w  11 Sep 2023"), Some(v("1.1.1w")));
        assert_eq!(t("OpenSSL 3.2.0-dev "), Some(v("3.2.0-dev")));
        assert_eq!(t("OpenSSL 3.0.13+quic 30 Jan 2024"), Some(v("3.0.13")));
        assert_eq!(t("garbage"), None);
        assert_eq!(t("OpenSSL x.y"), None);
    }

    #[test]
    fn stored_as_its_text() {
        for s in ["3.2.1", "1.1.1w", "3.2.0-dev", "3.0.0-alpha1"] {
            let json = serde_json::to_string(&v(s)).unwrap();
            assert_eq!(json, format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<OpenSslVersion>(&json).unwrap(), v(s));
        }
        assert!(serde_json::from_str::<OpenSslVersion>("\"3.x\"").is_err());
    }
}
