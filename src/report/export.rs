//! One renderer per format behind one trait (as hyperfine's `export/`): a
//! result type implements the formats it can be rendered in, and each
//! command's `--format` offers exactly those (see [`formats!`]).

use anyhow::Result;
use serde::Serialize;

pub trait Export<R: ?Sized> {
    fn export(&self, r: &R) -> Result<String>;
}

/// Aligned text for a terminal.
pub struct Text;
/// GitHub-flavoured Markdown, to paste into an issue.
pub struct Markdown;
pub struct Csv;
/// JUnit XML, one test case per comparison (CI test reports).
pub struct Junit;
/// Pretty JSON of the typed result: what `log` and `report merge` read back.
pub struct Json;

impl<R: Serialize + ?Sized> Export<R> for Json {
    fn export(&self, r: &R) -> Result<String> {
        Ok(serde_json::to_string_pretty(r)? + "\n")
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

            pub fn render(self, r: &$r) -> anyhow::Result<String> {
                self.exporter().export(r)
            }
        }
    };
}
pub(crate) use formats;
