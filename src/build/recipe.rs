//! Build recipes (`build-recipes/*.toml`), with conditions on the OpenSSL
//! version being built ([`crate::build::version`]).
//!
//! A recipe says how to configure and build OpenSSL: Configure arguments, make
//! targets and environment, each possibly depending on the version being built
//! (`[[when]] version = ">=3.0.0"`). Resolving a recipe for one version and one
//! compiler gives a [`ResolvedRecipe`] whose fingerprint, together with the
//! commit, keys a cached build. See `build-recipes/README.md` for the format.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{anyhow, bail, Result};
use include_dir::{include_dir, Dir};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::build::version::OpenSslVersion;

/// The recipes shipped with perfbisect.
static EMBEDDED: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/build-recipes");

/// Bumped whenever the meaning of a fingerprint changes (what it covers, or how
/// the builder turns a resolved recipe into a build), so old cache entries are
/// not mistaken for new ones. 2: builds set `SOURCE_DATE_EPOCH` (their bytes
/// changed; hashes of older builds would never match newer ones).
pub const FINGERPRINT_FORMAT: u32 = 2;

/// Configure options the builder sets itself; a recipe must not set them.
const RESERVED_OPTIONS: &[&str] = &["--prefix", "--openssldir", "--libdir"];

// ---------------------------------------------------------------------------
// Version requirements

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A conjunction of comparisons: `>=3.0.0, <3.2.0`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionReq {
    text: String,
    terms: Vec<(Op, OpenSslVersion)>,
}

impl VersionReq {
    pub fn matches(&self, v: &OpenSslVersion) -> bool {
        self.terms.iter().all(|(op, want)| {
            let o = v.cmp(want);
            match op {
                Op::Eq => o == Ordering::Equal,
                Op::Ne => o != Ordering::Equal,
                Op::Lt => o == Ordering::Less,
                Op::Le => o != Ordering::Greater,
                Op::Gt => o == Ordering::Greater,
                Op::Ge => o != Ordering::Less,
            }
        })
    }
}

impl fmt::Display for VersionReq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for VersionReq {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> Result<Self> {
        let mut terms = Vec::new();
        for term in s.split(',') {
            let term = term.trim();
            let (op, rest) = [
                (">=", Op::Ge),
                ("<=", Op::Le),
                ("!=", Op::Ne),
                ("==", Op::Eq),
                (">", Op::Gt),
                ("<", Op::Lt),
                ("=", Op::Eq),
            ]
            .iter()
            .find_map(|(p, op)| term.strip_prefix(p).map(|r| (*op, r)))
            .unwrap_or((Op::Eq, term));
            if rest.trim().is_empty() {
                bail!("version condition '{s}' has an empty comparison (expected e.g. \">=3.0.0, <3.2.0\")");
            }
            terms.push((op, rest.trim().parse()?));
        }
        Ok(VersionReq {
            text: s.trim().to_string(),
            terms,
        })
    }
}

// ---------------------------------------------------------------------------
// Recipes

/// Additions that apply when the version being built matches `version`.
#[derive(Clone, Debug)]
pub struct Conditional {
    pub version: VersionReq,
    /// Appended to the Configure arguments.
    pub configure: Vec<String>,
    /// Replaces the make targets when given.
    pub make_targets: Option<Vec<String>>,
    /// Merged into the environment (overriding keys).
    pub env: BTreeMap<String, String>,
}

/// A recipe as written, before it is resolved for a version.
#[derive(Clone, Debug)]
pub struct Recipe {
    pub name: String,
    pub description: String,
    pub configure: Vec<String>,
    pub make_targets: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub when: Vec<Conditional>,
}

/// A recipe resolved for one OpenSSL version and compiler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedRecipe {
    pub name: String,
    pub configure_args: Vec<String>,
    pub make_targets: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// 16 hex digits of a SHA-256 over the arguments, targets, environment,
    /// compiler identity and [`FINGERPRINT_FORMAT`]; part of a build's key.
    pub fingerprint: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecipeFile {
    #[serde(default)]
    description: String,
    #[serde(default)]
    configure: Vec<String>,
    make_targets: Option<Vec<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    when: Vec<WhenFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WhenFile {
    version: toml::Spanned<String>,
    #[serde(default)]
    configure: Vec<String>,
    make_targets: Option<Vec<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
}

/// `line:column` (1-based) of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
}

fn one_line(s: &str) -> String {
    s.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Parses recipe `text`; `origin` names the file in error messages.
fn parse(name: &str, origin: &str, text: &str) -> Result<Recipe> {
    let at = |offset: Option<usize>, msg: &str| -> anyhow::Error {
        match offset {
            Some(o) => {
                let (l, c) = line_col(text, o);
                anyhow!("{origin}:{l}:{c}: {}", one_line(msg))
            }
            None => anyhow!("{origin}: {}", one_line(msg)),
        }
    };
    let file: RecipeFile =
        toml::from_str(text).map_err(|e| at(e.span().map(|s| s.start), e.message()))?;
    let check_args = |args: &[String], offset: Option<usize>| -> Result<()> {
        for a in args {
            let opt = a.split('=').next().unwrap_or("");
            if RESERVED_OPTIONS.contains(&opt) {
                return Err(at(
                    offset,
                    &format!("configure must not contain {opt} (perfbisect sets it)"),
                ));
            }
        }
        Ok(())
    };
    check_args(&file.configure, None)?;
    let mut when = Vec::new();
    for w in file.when {
        let span = w.version.span();
        let version = w
            .version
            .get_ref()
            .parse::<VersionReq>()
            .map_err(|e| at(Some(span.start), &e.to_string()))?;
        check_args(&w.configure, Some(span.start))?;
        when.push(Conditional {
            version,
            configure: w.configure,
            make_targets: w.make_targets,
            env: w.env,
        });
    }
    Ok(Recipe {
        name: name.to_string(),
        description: file.description,
        configure: file.configure,
        make_targets: file
            .make_targets
            .unwrap_or_else(|| vec!["build_libs".to_string()]),
        env: file.env,
        when,
    })
}

fn embedded_names() -> Vec<String> {
    let mut names: Vec<String> = EMBEDDED
        .files()
        .filter_map(|f| {
            let p = f.path();
            (p.extension()? == "toml").then(|| p.file_stem()?.to_str().map(String::from))?
        })
        .collect();
    names.sort();
    names
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with('.')
}

/// Loads recipe `name`: a path to a `.toml` file (anything containing `/` or
/// ending in `.toml`), else `extra_dir/NAME.toml` if present, else the
/// embedded recipe NAME. Unknown names are an error listing the known ones.
pub fn load(name: &str, extra_dir: Option<&Path>) -> Result<Recipe> {
    if name.contains('/') || name.ends_with(".toml") {
        let path = PathBuf::from(name);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| anyhow!("cannot read recipe file {}: {e}", path.display()))?;
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(name)
            .to_string();
        let origin = path.display().to_string();
        return parse(&stem, &origin, &text);
    }
    if valid_name(name) {
        if let Some(dir) = extra_dir {
            let path = dir.join(format!("{name}.toml"));
            if path.is_file() {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| anyhow!("cannot read recipe file {}: {e}", path.display()))?;
                let origin = path.display().to_string();
                return parse(name, &origin, &text);
            }
        }
        if let Some(f) = EMBEDDED.get_file(format!("{name}.toml")) {
            let text = f
                .contents_utf8()
                .ok_or_else(|| anyhow!("embedded recipe {name} is not UTF-8"))?;
            let origin = format!("build-recipes/{name}.toml (built in)");
            return parse(name, &origin, text);
        }
    }
    let mut known = embedded_names();
    if let Some(dir) = extra_dir {
        if let Ok(rd) = std::fs::read_dir(dir) {
            for e in rd.flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "toml") {
                    if let Some(s) = p.file_stem().and_then(|s| s.to_str()) {
                        known.push(s.to_string());
                    }
                }
            }
        }
    }
    known.sort();
    known.dedup();
    bail!(
        "unknown recipe '{name}' (known recipes: {}; or give a path to a .toml file)",
        known.join(", ")
    )
}

/// The embedded recipes as (name, description), sorted by name.
pub fn list() -> Vec<(String, String)> {
    embedded_names()
        .into_iter()
        .map(|n| {
            let d = match load(&n, None) {
                Ok(r) => r.description,
                Err(e) => format!("(invalid: {e})"),
            };
            (n, d)
        })
        .collect()
}

impl Recipe {
    /// The arguments, targets and environment that apply to version `v`,
    /// with the fingerprint of that combination and `compiler_id`.
    pub fn resolve(&self, v: &OpenSslVersion, compiler_id: &str) -> ResolvedRecipe {
        let mut configure_args = self.configure.clone();
        let mut make_targets = self.make_targets.clone();
        let mut env = self.env.clone();
        for w in self.when.iter().filter(|w| w.version.matches(v)) {
            configure_args.extend(w.configure.iter().cloned());
            if let Some(t) = &w.make_targets {
                make_targets = t.clone();
            }
            env.extend(w.env.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        let fingerprint = fingerprint(&configure_args, &make_targets, &env, compiler_id);
        ResolvedRecipe {
            name: self.name.clone(),
            configure_args,
            make_targets,
            env,
            fingerprint,
        }
    }
}

fn fingerprint(
    args: &[String],
    targets: &[String],
    env: &BTreeMap<String, String>,
    compiler_id: &str,
) -> String {
    let mut h = Sha256::new();
    // Every field is length-prefixed so no two different inputs collide.
    let mut put = |tag: &str, s: &str| {
        h.update(tag.as_bytes());
        h.update((s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    };
    put("format", &FINGERPRINT_FORMAT.to_string());
    put("compiler", compiler_id);
    for a in args {
        put("arg", a);
    }
    for t in targets {
        put("target", t);
    }
    for (k, v) in env {
        put("env-key", k);
        put("env-value", v);
    }
    hex::encode(h.finalize())[..16].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::version::{detect_version, tests::registry};
    use std::fs;

    fn v(s: &str) -> OpenSslVersion {
        s.parse().unwrap()
    }

    #[test]
    fn requirements() {
        let r: VersionReq = ">=3.0.0, <3.2.0".parse().unwrap();
        assert!(r.matches(&v("3.0.0")));
        assert!(r.matches(&v("3.1.4")));
        assert!(!r.matches(&v("3.2.0")));
        assert!(!r.matches(&v("1.1.1w")));
        assert!(r.matches(&v("3.2.0-dev")) == (v("3.2.0-dev") < v("3.2.0")));
        let eq: VersionReq = "=1.1.1w".parse().unwrap();
        assert!(eq.matches(&v("1.1.1w")) && !eq.matches(&v("1.1.1v")));
        let bare: VersionReq = "3.2.1".parse().unwrap();
        assert!(bare.matches(&v("3.2.1")));
        let ne: VersionReq = "!= 3.2.1".parse().unwrap();
        assert!(!ne.matches(&v("3.2.1")) && ne.matches(&v("3.2.2")));
        assert!(">=".parse::<VersionReq>().is_err());
        assert!(">=3.0.0,".parse::<VersionReq>().is_err());
    }

    #[test]
    fn embedded_recipes_resolve_per_version() {
        let names: Vec<String> = list().into_iter().map(|(n, _)| n).collect();
        for want in ["debug", "default", "noasm"] {
            assert!(names.iter().any(|n| n == want), "{names:?}");
        }
        for (_, d) in list() {
            assert!(!d.is_empty() && !d.starts_with("(invalid"), "{d}");
        }
        let r = load("default", None).unwrap();
        let old = r.resolve(&v("1.1.1w"), "cc 1");
        let new = r.resolve(&v("3.2.1"), "cc 1");
        let mid = r.resolve(&v("3.1.4"), "cc 1");
        assert!(!mid.configure_args.contains(&"no-docs".to_string()));
        let dev = r.resolve(&v("3.2.0-dev"), "cc 1");
        assert!(!dev.configure_args.contains(&"no-docs".to_string()));
        assert!(!old.configure_args.contains(&"no-docs".to_string()));
        assert!(new.configure_args.contains(&"no-docs".to_string()));
        assert_eq!(new.make_targets, ["shared_libs"]);
        assert!(new.configure_args.contains(&"shared".to_string()));
        let full = load("full", None).unwrap().resolve(&v("3.2.1"), "cc 1");
        assert_eq!(full.make_targets, ["build_libs"]);
        assert_ne!(full.fingerprint, new.fingerprint);
        assert_ne!(old.fingerprint, new.fingerprint);
        let dbg = load("debug", None).unwrap().resolve(&v("3.2.1"), "cc 1");
        assert!(dbg.configure_args.contains(&"--debug".to_string()));
        let noasm = load("noasm", None).unwrap().resolve(&v("3.2.1"), "cc 1");
        assert!(noasm.configure_args.contains(&"no-asm".to_string()));
        assert_ne!(dbg.fingerprint, new.fingerprint);
        assert_ne!(noasm.fingerprint, new.fingerprint);
    }

    /// Every `no-X`/`enable-X` a shipped recipe passes must be known to the
    /// Configure of each release it is resolved for (1.1.1 and 3.0/3.1 reject
    /// `no-docs`, for instance).
    #[test]
    fn embedded_recipes_use_only_options_each_release_knows() {
        let Ok(rd) = fs::read_dir(registry()) else {
            return;
        };
        let mut checked = 0;
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with("openssl-src-") {
                continue;
            }
            let tree = e.path().join("openssl");
            let Ok(configure) = fs::read_to_string(tree.join("Configure")) else {
                continue;
            };
            let Some(start) = configure.find("my @disablables = (") else {
                continue;
            };
            let block = &configure[start..];
            let block = &block[..block.find("\n);").unwrap()];
            let Ok(v) = detect_version(&tree) else {
                continue;
            };
            for (recipe_name, _) in list() {
                let r = load(&recipe_name, None).unwrap().resolve(&v, "cc");
                for a in &r.configure_args {
                    let feature = match a.as_str() {
                        "shared" => "shared",
                        a => match a.strip_prefix("no-").or(a.strip_prefix("enable-")) {
                            Some(f) => f,
                            None => continue,
                        },
                    };
                    assert!(
                        block.contains(&format!("\"{feature}\"")),
                        "recipe {recipe_name} passes {a} to OpenSSL {v}, whose Configure does not know it"
                    );
                }
            }
            checked += 1;
        }
        eprintln!("checked recipes against {checked} OpenSSL releases");
    }

    fn recipe(text: &str) -> Recipe {
        parse("t", "t.toml", text).unwrap()
    }

    #[test]
    fn conditions_append_replace_merge() {
        let r = recipe(
            r#"
description = "x"
configure = ["shared"]
[env]
A = "1"
B = "1"
[[when]]
version = ">=3.0.0, <3.2.0"
configure = ["no-docs"]
make_targets = ["all"]
env = { B = "2" }
[[when]]
version = "<3.0.0"
configure = ["no-foo"]
"#,
        );
        assert_eq!(r.make_targets, ["build_libs"]);
        let a = r.resolve(&v("3.1.4"), "c");
        assert_eq!(a.configure_args, ["shared", "no-docs"]);
        assert_eq!(a.make_targets, ["all"]);
        assert_eq!(a.env["A"], "1");
        assert_eq!(a.env["B"], "2");
        let b = r.resolve(&v("1.1.1w"), "c");
        assert_eq!(b.configure_args, ["shared", "no-foo"]);
        assert_eq!(b.make_targets, ["build_libs"]);
        assert_eq!(b.env["B"], "1");
        let c = r.resolve(&v("3.2.1"), "c");
        assert_eq!(c.configure_args, ["shared"]);
    }

    #[test]
    fn fingerprints() {
        let base = recipe("configure = [\"shared\"]\n");
        let f = |r: &Recipe, cc: &str| r.resolve(&v("3.2.1"), cc).fingerprint;
        let fp = f(&base, "gcc 12");
        assert_eq!(fp.len(), 16);
        assert!(fp.chars().all(|c| c.is_ascii_hexdigit()));
        // Stable: same inputs, same fingerprint, also across versions that
        // resolve to the same arguments and across recipe names/descriptions.
        assert_eq!(fp, f(&base, "gcc 12"));
        assert_eq!(fp, base.resolve(&v("3.0.0"), "gcc 12").fingerprint);
        let renamed = parse(
            "other",
            "o.toml",
            "description = \"d\"\nconfigure = [\"shared\"]\n",
        )
        .unwrap();
        assert_eq!(fp, f(&renamed, "gcc 12"));
        // Pinned: if this changes, cached builds are keyed differently; bump
        // FINGERPRINT_FORMAT deliberately rather than by accident.
        assert_eq!(fp, "7fc0f22e36dd9064");
        // Changes with compiler, arguments, their order, targets, environment.
        assert_ne!(fp, f(&base, "gcc 13"));
        assert_ne!(
            fp,
            f(&recipe("configure = [\"shared\", \"no-asm\"]\n"), "gcc 12")
        );
        assert_ne!(
            f(&recipe("configure = [\"a\", \"b\"]\n"), "c"),
            f(&recipe("configure = [\"b\", \"a\"]\n"), "c")
        );
        assert_ne!(
            f(&recipe("configure = [\"ab\"]\n"), "c"),
            f(&recipe("configure = [\"a\", \"b\"]\n"), "c")
        );
        assert_ne!(
            fp,
            f(
                &recipe("configure = [\"shared\"]\nmake_targets = [\"all\"]\n"),
                "gcc 12"
            )
        );
        assert_ne!(
            fp,
            f(
                &recipe("configure = [\"shared\"]\n[env]\nX = \"1\"\n"),
                "gcc 12"
            )
        );
    }

    #[test]
    fn parse_errors_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("broken.toml");
        fs::write(
            &p,
            "description = \"ok\"\nconfigure = [\"shared\",\n  nope ]\n",
        )
        .unwrap();
        let e = load(p.to_str().unwrap(), None).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:3:", p.display())), "{e}");
        assert!(!e.contains('\n'), "{e}");

        fs::write(&p, "description = \"ok\"\nconfigur = []\n").unwrap();
        let e = load(p.to_str().unwrap(), None).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:2:1:", p.display())), "{e}");
        assert!(e.contains("configur"), "{e}");

        fs::write(
            &p,
            "configure = []\n\n[[when]]\nversion = \">=3.x\"\nconfigure = [\"no-docs\"]\n",
        )
        .unwrap();
        let e = load(p.to_str().unwrap(), None).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:4:11:", p.display())), "{e}");
        assert!(e.contains("3.x"), "{e}");

        fs::write(&p, "configure = [\"--prefix=/usr\"]\n").unwrap();
        let e = load(p.to_str().unwrap(), None).unwrap_err().to_string();
        assert!(e.contains("--prefix"), "{e}");

        let e = load("/nonexistent/x.toml", None).unwrap_err().to_string();
        assert!(
            e.contains("cannot read recipe file /nonexistent/x.toml"),
            "{e}"
        );
    }

    #[test]
    fn unknown_recipe_lists_names_and_extra_dir() {
        let e = load("fast", None).unwrap_err().to_string();
        assert!(e.starts_with("unknown recipe 'fast'"), "{e}");
        assert!(e.contains("debug, default, full, noasm"), "{e}");
        assert!(!e.contains('\n'));

        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("lto.toml"),
            "description = \"lto\"\nconfigure = [\"-flto\"]\n",
        )
        .unwrap();
        let r = load("lto", Some(dir.path())).unwrap();
        assert_eq!((r.name.as_str(), r.description.as_str()), ("lto", "lto"));
        let e = load("fast", Some(dir.path())).unwrap_err().to_string();
        assert!(e.contains("debug, default, full, lto, noasm"), "{e}");
        // Embedded recipes stay reachable with an extra directory.
        assert!(load("noasm", Some(dir.path())).is_ok());
        assert!(load("../etc", None).is_err());
    }
}
