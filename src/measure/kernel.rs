//! Benchmark kernels: the C sources shipped in `kernels/` (embedded in the
//! binary) plus any from `--kernels-dir`, their self-described arguments, and
//! the parsing of tool specs such as `pkeyread:key=ec,format=der`.

use anyhow::{bail, Context, Result};
use include_dir::{include_dir, Dir};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

use crate::build::version::OpenSslVersion;
use crate::cache::Cache;
use crate::hashing;

static EMBEDDED: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/kernels");

pub const HEADER_NAME: &str = "perfbisect.h";

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArgSpec {
    pub name: String,
    pub default: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    pub integer: bool,
    pub description: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Kernel {
    pub name: String,
    pub summary: String,
    pub args: Vec<ArgSpec>,
    pub min_version: OpenSslVersion,
    pub link_ssl: bool,
    /// Argument whose value is the number of bytes one operation processes (or several joined by
    /// `*`, whose product is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_arg: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<String>,
    #[serde(skip)]
    pub source: String,
    #[serde(skip)]
    pub origin: PathBuf,
}

/// A kernel with every argument resolved: what one measurement cell runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ToolSpec {
    pub kernel: Kernel,
    pub args: BTreeMap<String, String>,
}

impl ToolSpec {
    /// `name:k=v,k=v` with every argument, defaults included, sorted: the
    /// canonical identity used for caching and in reports.
    pub fn canonical(&self) -> String {
        if self.args.is_empty() {
            return self.kernel.name.clone();
        }
        let args: Vec<String> = self.args.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{}:{}", self.kernel.name, args.join(","))
    }

    /// The spec as a user would write it: only non-default arguments.
    pub fn short(&self) -> String {
        let args: Vec<String> = self
            .kernel
            .args
            .iter()
            .filter(|a| self.args.get(&a.name) != Some(&a.default))
            .map(|a| format!("{}={}", a.name, self.args[&a.name]))
            .collect();
        if args.is_empty() {
            self.kernel.name.clone()
        } else {
            format!("{}:{}", self.kernel.name, args.join(","))
        }
    }

    /// Bytes one operation processes: the `@unit bytes=` argument, or the product of several
    /// (`bytes=size*updates`).
    pub fn bytes_per_op(&self) -> Option<f64> {
        let args = self.kernel.bytes_arg.as_ref()?;
        args.split('*')
            .map(|a| self.args.get(a.trim())?.parse::<f64>().ok())
            .product()
    }
}

pub struct Registry {
    kernels: BTreeMap<String, Kernel>,
}

impl Registry {
    /// The embedded kernels, plus (overriding by name) those in `extra`.
    pub fn load(extra: Option<&Path>) -> Result<Registry> {
        let mut kernels = BTreeMap::new();
        for file in EMBEDDED.files() {
            let path = file.path();
            if path.extension().and_then(|e| e.to_str()) != Some("c") {
                continue;
            }
            let text = file
                .contents_utf8()
                .with_context(|| format!("embedded kernel {} is not UTF-8", path.display()))?;
            let origin = PathBuf::from("kernels").join(path);
            let k = parse_kernel(text, &origin)?;
            kernels.insert(k.name.clone(), k);
        }
        if let Some(dir) = extra {
            let entries = std::fs::read_dir(dir)
                .with_context(|| format!("cannot read --kernels-dir {}", dir.display()))?;
            let mut paths: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("c"))
                .collect();
            paths.sort();
            for p in paths {
                let text = std::fs::read_to_string(&p)
                    .with_context(|| format!("cannot read kernel {}", p.display()))?;
                let k = parse_kernel(&text, &p)?;
                kernels.insert(k.name.clone(), k);
            }
        }
        Ok(Registry { kernels })
    }

    pub fn names(&self) -> Vec<&str> {
        self.kernels.keys().map(|s| s.as_str()).collect()
    }

    pub fn all(&self) -> impl Iterator<Item = &Kernel> {
        self.kernels.values()
    }

    pub fn get(&self, name: &str) -> Result<&Kernel> {
        self.kernels
            .get(name)
            .with_context(|| format!("unknown tool '{name}' (known: {})", self.names().join(", ")))
    }

    /// Every `--tool` given; `all` stands for every kernel but noop, with its
    /// defaults.
    pub fn parse_specs(&self, specs: &[String]) -> Result<Vec<ToolSpec>> {
        let mut out: Vec<ToolSpec> = Vec::new();
        for s in specs {
            if s == "all" {
                for k in self.all().filter(|k| k.name != "noop") {
                    out.push(self.parse_spec(&k.name)?);
                }
            } else {
                out.push(self.parse_spec(s)?);
            }
        }
        // By what is measured: `pkeyread` and `pkeyread:key=ec` are one tool when ec is the
        // default, and `all` holds every kernel.
        if let Some((_, dup)) = out
            .iter()
            .enumerate()
            .find(|(i, o)| out[..*i].iter().any(|p| p.short() == o.short()))
        {
            bail!("tool {} is given twice", dup.short());
        }
        Ok(out)
    }

    /// Parse `NAME[:k=v,k=v]`, validate every argument and fill in defaults.
    pub fn parse_spec(&self, spec: &str) -> Result<ToolSpec> {
        let spec = spec.trim();
        let (name, rest) = match spec.split_once(':') {
            Some((n, r)) => (n, Some(r)),
            None => (spec, None),
        };
        if name.is_empty() {
            bail!("empty tool name in '{spec}' (expected NAME[:key=value,...])");
        }
        let kernel = self.get(name)?;
        let mut args: BTreeMap<String, String> = kernel
            .args
            .iter()
            .map(|a| (a.name.clone(), a.default.clone()))
            .collect();
        if let Some(rest) = rest {
            let mut given = std::collections::BTreeSet::new();
            for kv in rest.split(',').filter(|s| !s.is_empty()) {
                let (k, v) = kv
                    .split_once('=')
                    .with_context(|| format!("argument '{kv}' of tool {name} is not key=value"))?;
                let a = kernel.args.iter().find(|a| a.name == k).with_context(|| {
                    let valid: Vec<&str> = kernel.args.iter().map(|a| a.name.as_str()).collect();
                    if valid.is_empty() {
                        format!("tool {name} takes no arguments, got '{k}'")
                    } else {
                        format!(
                            "unknown argument '{k}' for tool {name} (valid: {})",
                            valid.join(", ")
                        )
                    }
                })?;
                validate_value(kernel, a, v)?;
                if !given.insert(k) {
                    bail!("argument '{k}' of tool {name} is given twice in '{spec}'");
                }
                args.insert(k.to_string(), v.to_string());
            }
        }
        Ok(ToolSpec {
            kernel: kernel.clone(),
            args,
        })
    }
}

fn validate_value(kernel: &Kernel, a: &ArgSpec, v: &str) -> Result<()> {
    if !a.choices.is_empty() && !a.choices.iter().any(|c| c == v) {
        bail!(
            "invalid value '{v}' for {}:{} (valid: {})",
            kernel.name,
            a.name,
            a.choices.join(", ")
        );
    }
    if a.integer && v.parse::<u64>().is_err() {
        bail!(
            "invalid value '{v}' for {}:{} (expected a non-negative integer)",
            kernel.name,
            a.name
        );
    }
    Ok(())
}

/// Read the `// @tag value` metadata lines at the top of a kernel source.
pub fn parse_kernel(text: &str, origin: &Path) -> Result<Kernel> {
    let mut name = None;
    let mut summary = String::new();
    let mut args = Vec::new();
    let mut min_version = OpenSslVersion::new(1, 1, 1);
    let mut link_ssl = false;
    let mut bytes_arg = None;
    let mut counters = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("// @") else {
            continue;
        };
        let (tag, value) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let value = value.trim();
        let at = || format!("{}:{}", origin.display(), lineno + 1);
        match tag {
            "kernel" => name = Some(value.to_string()),
            "summary" => summary = value.to_string(),
            "min_version" => min_version = value.parse().with_context(at)?,
            "link" => link_ssl |= value.split_whitespace().any(|l| l == "ssl"),
            "unit" => {
                bytes_arg = value.strip_prefix("bytes=").map(|s| s.trim().to_string());
            }
            "counters" => {
                counters = value.split(',').map(|s| s.trim().to_string()).collect();
            }
            "arg" => args.push(parse_arg(value).with_context(at)?),
            _ => bail!("{}: unknown kernel metadata tag @{tag}", at()),
        }
    }
    let name = name.with_context(|| format!("{}: no '// @kernel NAME' line", origin.display()))?;
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        bail!("{}: invalid kernel name '{name}'", origin.display());
    }
    Ok(Kernel {
        name,
        summary,
        args,
        min_version,
        link_ssl,
        bytes_arg,
        counters,
        source: text.to_string(),
        origin: origin.to_path_buf(),
    })
}

/// `NAME=DEFAULT [choices=a,b] [int] description…`
fn parse_arg(value: &str) -> Result<ArgSpec> {
    let mut words = value.split_whitespace();
    let first = words.next().context("@arg needs NAME=DEFAULT")?;
    let (name, default) = first.split_once('=').context("@arg needs NAME=DEFAULT")?;
    let mut choices = Vec::new();
    let mut integer = false;
    let mut desc = Vec::new();
    for w in words {
        if let Some(c) = w.strip_prefix("choices=") {
            choices = c.split(',').map(str::to_string).collect();
        } else if w == "int" && desc.is_empty() {
            integer = true;
        } else {
            desc.push(w);
        }
    }
    Ok(ArgSpec {
        name: name.to_string(),
        default: default.to_string(),
        choices,
        integer,
        description: desc.join(" "),
    })
}

/// Write the header and every fixture into `dir` (content-addressed by the
/// caller), so kernels read identical inputs whatever the build.
pub fn embedded_fixtures_hash() -> String {
    let mut h = hashing::Hasher::new();
    if let Some(d) = EMBEDDED.get_dir("fixtures") {
        hash_dir(d, &mut h);
    }
    h.finish_short()
}

fn hash_dir(d: &Dir<'_>, h: &mut hashing::Hasher) {
    for f in d.files() {
        h.field(&f.path().to_string_lossy());
        h.bytes(f.contents());
    }
    for sub in d.dirs() {
        hash_dir(sub, h);
    }
}

/// The shipped fixtures in `cache`, written once per content hash.
pub fn fixtures(cache: &Cache) -> Result<PathBuf> {
    let hash = embedded_fixtures_hash();
    let dir = cache.dir("fixtures")?.join(&hash);
    if dir.join(".complete").exists() {
        return Ok(dir);
    }
    let _l = cache.lock(&format!("fixtures-{hash}"))?;
    if dir.join(".complete").exists() {
        return Ok(dir);
    }
    let tmp = tempfile::Builder::new()
        .prefix(".tmp-fixtures-")
        .tempdir_in(cache.dir("fixtures")?)?;
    write_fixtures(tmp.path())?;
    File::create(tmp.path().join(".complete"))?;
    let tmp = tmp.keep();
    if dir.exists() {
        fs::remove_dir_all(&dir)
            .with_context(|| format!("cannot replace incomplete {}", dir.display()))?;
    }
    fs::rename(&tmp, &dir).with_context(|| format!("cannot publish {}", dir.display()))?;
    Ok(dir)
}

pub fn write_fixtures(dir: &Path) -> Result<()> {
    if let Some(d) = EMBEDDED.get_dir("fixtures") {
        write_dir(d, dir, Path::new("fixtures"))?;
    }
    Ok(())
}

fn write_dir(d: &Dir<'_>, out: &Path, strip: &Path) -> Result<()> {
    for f in d.files() {
        let rel = f.path().strip_prefix(strip).unwrap_or(f.path());
        let dest = out.join(rel);
        if let Some(p) = dest.parent() {
            std::fs::create_dir_all(p).with_context(|| format!("creating {}", p.display()))?;
        }
        std::fs::write(&dest, f.contents())
            .with_context(|| format!("writing fixture {}", dest.display()))?;
    }
    for sub in d.dirs() {
        let rel = sub.path().strip_prefix(strip).unwrap_or(sub.path());
        std::fs::create_dir_all(out.join(rel))?;
        write_dir(sub, out, strip)?;
    }
    Ok(())
}

pub fn header_source() -> &'static str {
    EMBEDDED
        .get_file(HEADER_NAME)
        .and_then(|f| f.contents_utf8())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_kernel_parses_and_noop_exists() {
        let r = Registry::load(None).unwrap();
        assert!(r.names().contains(&"noop"));
        for k in r.all() {
            assert!(!k.summary.is_empty(), "{} has no @summary", k.name);
            for a in &k.args {
                if !a.choices.is_empty() {
                    assert!(a.choices.contains(&a.default), "{}:{}", k.name, a.name);
                }
            }
        }
    }

    #[test]
    fn min_version_is_a_version() {
        let k = |v: &str| {
            parse_kernel(
                &format!("// @kernel k\n// @min_version {v}\n"),
                Path::new("k.c"),
            )
        };
        let three = k("3.0.0").unwrap().min_version;
        assert!("1.1.1w".parse::<OpenSslVersion>().unwrap() < three);
        assert!(three <= "3.0.0".parse().unwrap());
        let e = format!("{:#}", k("3.x").unwrap_err());
        assert!(
            e.starts_with("k.c:2: ") && e.contains("'3.x' is not an OpenSSL version"),
            "{e}"
        );
        let dflt = parse_kernel("// @kernel k\n", Path::new("k.c")).unwrap();
        assert_eq!(dflt.min_version.to_string(), "1.1.1");
    }

    #[test]
    fn spec_fills_defaults_and_rejects_bad_values() {
        let src = "// @kernel demo\n// @summary x\n// @arg key=ec choices=ec,rsa the key\n// @arg size=32 int bytes\n";
        let k = parse_kernel(src, Path::new("demo.c")).unwrap();
        let reg = Registry {
            kernels: [(k.name.clone(), k)].into_iter().collect(),
        };
        let s = reg.parse_spec("demo").unwrap();
        assert_eq!(s.canonical(), "demo:key=ec,size=32");
        assert_eq!(s.short(), "demo");
        let s = reg.parse_spec("demo:size=64").unwrap();
        assert_eq!(s.short(), "demo:size=64");
        let e = reg.parse_spec("demo:key=dsa").unwrap_err().to_string();
        assert!(e.contains("valid: ec, rsa"), "{e}");
        let e = reg.parse_spec("demo:size=-1").unwrap_err().to_string();
        assert!(e.contains("non-negative integer"), "{e}");
        let e = reg.parse_spec("demo:colour=red").unwrap_err().to_string();
        assert!(e.contains("valid: key, size"), "{e}");
        let e = reg.parse_spec("nope").unwrap_err().to_string();
        assert!(e.contains("known: demo"), "{e}");
        let e = reg.parse_spec("demo:key").unwrap_err().to_string();
        assert!(e.contains("not key=value"), "{e}");
    }

    #[test]
    fn bytes_per_op_is_an_argument_or_a_product_of_them() {
        let src = "// @kernel h\n// @arg size=16 int\n// @arg updates=1 int\n// @unit bytes=size*updates\n";
        let k = parse_kernel(src, Path::new("h.c")).unwrap();
        let reg = Registry {
            kernels: [(k.name.clone(), k)].into_iter().collect(),
        };
        assert_eq!(reg.parse_spec("h").unwrap().bytes_per_op(), Some(16.0));
        let s = reg.parse_spec("h:size=1500,updates=5").unwrap();
        assert_eq!(s.bytes_per_op(), Some(7500.0));
        let one = parse_kernel(
            "// @kernel o\n// @arg size=8 int\n// @unit bytes=size\n",
            Path::new("o.c"),
        )
        .unwrap();
        let reg = Registry {
            kernels: [(one.name.clone(), one)].into_iter().collect(),
        };
        assert_eq!(reg.parse_spec("o").unwrap().bytes_per_op(), Some(8.0));
    }
}
