//! One renderer per format behind one trait (as hyperfine's `export/`): a
//! result type implements the formats it can be rendered in, and each
//! command's `--format` offers exactly those (see [`formats!`]).

use anyhow::{bail, Result};
use serde::Serialize;
use std::path::Path;

pub trait Export<R: ?Sized> {
    fn export(&self, r: &R) -> Result<String>;

    /// With shas turned into links (`--commit-url`); renderers that have no
    /// place for a link ignore them.
    fn export_linked(&self, r: &R, _links: &Links) -> Result<String> {
        self.export(r)
    }
}

/// `--commit-url TEMPLATE`: where a commit can be looked at, e.g.
/// `https://github.com/openssl/openssl/commit/{sha}`.
#[derive(Debug, Clone, Default)]
pub struct Links {
    template: Option<String>,
}

impl Links {
    pub fn new(template: Option<&str>) -> Result<Links> {
        if let Some(t) = template {
            if !t.contains("{sha}") {
                bail!("--commit-url '{t}' has no {{sha}} to put the commit in");
            }
        }
        Ok(Links {
            template: template.map(str::to_string),
        })
    }

    /// The URL of a full commit id; none for what is not a sha (a tag
    /// given on the command line, a prefix label).
    pub fn url(&self, sha: &str) -> Option<String> {
        let t = self.template.as_ref()?;
        (sha.len() >= 7 && sha.chars().all(|c| c.is_ascii_hexdigit()))
            .then(|| t.replace("{sha}", sha))
    }

    /// `` `short` `` or `` [`short`](url) ``.
    pub fn markdown(&self, sha: &str, shown: &str) -> String {
        match self.url(sha) {
            Some(u) => format!("[`{shown}`]({u})"),
            None => format!("`{shown}`"),
        }
    }

    /// " <url>" to append after a sha in text, or nothing.
    pub fn text_suffix(&self, sha: &str) -> String {
        self.url(sha).map(|u| format!(" <{u}>")).unwrap_or_default()
    }

    /// `<code>short</code>`, linked when there is a URL; escaped.
    pub fn html(&self, sha: &str, shown: &str) -> String {
        let code = format!("<code>{}</code>", esc(shown));
        match self.url(sha) {
            Some(u) => format!("<a href=\"{}\">{code}</a>", esc(&u)),
            None => code,
        }
    }
}

/// Aligned text for a terminal.
pub struct Text;
/// GitHub-flavoured Markdown, to paste into an issue.
pub struct Markdown;
pub struct Csv;
/// JUnit XML, one test case per comparison (CI test reports).
pub struct Junit;
/// A self-contained HTML page (see [`super::html`]).
pub struct Html;
/// Pretty JSON of the typed result: what `log` and `report merge` read back.
pub struct Json;
/// JSON Lines: one compact object per event as it happens (`{"event": "step", "data": …}`),
/// the typed result last as `{"event": "done", "data": …}`, so a reader can act on each line and
/// stop whenever it has what it needs.
pub struct Jsonl;

/// The version of the JSON results' shape, written first in every result as `schema`
/// (docs/schema/README.md: what raises it, and each kind's JSON Schema).
pub const SCHEMA: u32 = 1;

/// A result as `--format json` writes it: the shape's version, then the result's own fields.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Versioned<R> {
    /// The shape's version ([`SCHEMA`]).
    pub schema: u32,
    #[serde(flatten)]
    pub result: R,
}

/// Refuses a result read back from `path` that a newer perfbisect wrote: its fields may have
/// changed meaning (that is what raises [`SCHEMA`]), so reading it as this version's shape would
/// fail on some field, or worse, succeed wrongly. One with no `schema` predates it and is read.
pub fn check_schema(path: &Path, v: &serde_json::Value) -> Result<()> {
    let Some(s) = v.get("schema") else {
        return Ok(());
    };
    match s.as_u64() {
        Some(n) if n <= u64::from(SCHEMA) => Ok(()),
        Some(n) => bail!(
            "{} has result schema {n}, newer than schema {SCHEMA} this perfbisect reads: \
             read it with a newer perfbisect",
            path.display()
        ),
        None => bail!(
            "{} has result schema {s}, not a version number (this perfbisect reads {SCHEMA})",
            path.display()
        ),
    }
}

impl<R> Versioned<R> {
    pub fn new(result: R) -> Versioned<R> {
        Versioned {
            schema: SCHEMA,
            result,
        }
    }
}

impl<R: Serialize + ?Sized> Export<R> for Json {
    fn export(&self, r: &R) -> Result<String> {
        Ok(serde_json::to_string_pretty(&Versioned::new(r))? + "\n")
    }
}

impl Jsonl {
    /// One event line (with its newline).
    pub fn event<T: Serialize + ?Sized>(event: &str, data: &T) -> Result<String> {
        let line = serde_json::json!({ "event": event, "data": data });
        Ok(serde_json::to_string(&line)? + "\n")
    }
}

impl<R: Serialize + ?Sized> Export<R> for Jsonl {
    fn export(&self, r: &R) -> Result<String> {
        Jsonl::event("done", &Versioned::new(r))
    }
}

/// A `--format` value enum whose variants are exactly the renderers a result
/// type implements: `formats!(CompareFormat for CompareReport { Text, Markdown, Json })`;
/// `Text alias "table"` also accepts `--format table`.
macro_rules! formats {
    ($name:ident for $r:ty { $($variant:ident $(alias $alias:literal)?),+ $(,)? }) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
        pub enum $name {
            $($(#[value(alias = $alias)])? $variant),+
        }

        impl $name {
            pub fn exporter(self) -> Box<dyn $crate::report::export::Export<$r>> {
                match self {
                    $($name::$variant => Box::new($crate::report::export::$variant)),+
                }
            }

            // Not every command renders both ways.
            #[allow(dead_code)]
            pub fn render(self, r: &$r) -> anyhow::Result<String> {
                self.exporter().export(r)
            }

            #[allow(dead_code)]
            pub fn render_linked(
                self,
                r: &$r,
                links: &$crate::report::export::Links,
            ) -> anyhow::Result<String> {
                self.exporter().export_linked(r, links)
            }
        }
    };
}
pub(crate) use formats;

/// Text as HTML (element content and attribute values alike).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_schema_is_refused_and_an_older_or_missing_one_read() {
        let p = Path::new("results/old.json");
        assert!(check_schema(p, &serde_json::json!({"kind": "perfbisect-gate"})).is_ok());
        assert!(check_schema(p, &serde_json::json!({"schema": SCHEMA})).is_ok());
        assert!(check_schema(p, &serde_json::json!({"schema": 0})).is_ok());
        let e = check_schema(p, &serde_json::json!({"schema": 999})).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "results/old.json has result schema 999, newer than schema {SCHEMA} this \
                 perfbisect reads: read it with a newer perfbisect"
            )
        );
        let e = check_schema(p, &serde_json::json!({"schema": "two"})).unwrap_err();
        assert!(e.to_string().contains("not a version number"), "{e}");
    }
}
