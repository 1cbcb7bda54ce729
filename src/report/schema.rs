//! The written-down shape of the JSON results: a JSON Schema per kind, generated from the
//! result types into docs/schema/KIND.json (docs/schema/README.md: what each file is and when
//! [`SCHEMA`], the version every result carries, goes up), and a test that every JSON
//! snapshot and fixture in the repository matches its kind's schema.

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{JsonSchema, Schema};

use super::export::Versioned;
pub use super::export::SCHEMA;

/// serde_json writes a float with no value (NaN) as null, so any number may be null.
fn number_or_null(s: &mut Schema) {
    if s.get("type").and_then(|t| t.as_str()) == Some("number") {
        s.insert("type".into(), serde_json::json!(["number", "null"]));
    }
}

/// The schema of a result of type `R` as `--format json` writes it (its `schema` first).
fn of<R: JsonSchema>() -> Schema {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .with_transform(RecursiveTransform(number_or_null as fn(&mut Schema)))
        .into_generator()
        .into_root_schema_for::<Versioned<R>>()
}

/// Every kind of JSON result that has a schema, by the name of its file in docs/schema/.
pub fn kinds() -> Vec<(&'static str, Schema)> {
    use super::{
        bisect, compare, explain, gate, interrupted, listing, matrix, parity, plan, run, scan,
        simulate,
    };
    vec![
        ("bisect", of::<bisect::BisectReport>()),
        ("scan", of::<scan::ScanReport>()),
        ("compare", of::<compare::CompareReport>()),
        ("gate", of::<gate::GateReport>()),
        ("matrix", of::<matrix::MatrixReport>()),
        ("run", of::<run::RunReport>()),
        ("parity", of::<parity::ParityReport>()),
        ("explain", of::<explain::ExplainReport>()),
        ("simulate", of::<simulate::Simulated>()),
        ("plan", of::<plan::Planned>()),
        ("log", of::<listing::BisectLog>()),
        ("cache", of::<listing::BuildList>()),
        ("kernels", of::<listing::KernelList>()),
        ("interrupted", of::<interrupted::InterruptedReport>()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    /// Kinds no snapshot or fixture holds a result of (render_tests.rs has no report of
    /// theirs to render).
    const NO_STORED_RESULT: [&str; 3] = ["parity", "explain", "interrupted"];

    fn repo() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
    }

    /// docs/schema/KIND.json is what the types generate; `PERFBISECT_UPDATE_SCHEMA=1` rewrites.
    #[test]
    fn schema_files_are_current() {
        let dir = repo().join("docs/schema");
        for (kind, schema) in kinds() {
            let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
            let path = dir.join(format!("{kind}.json"));
            if std::env::var_os("PERFBISECT_UPDATE_SCHEMA").is_some() {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &text).unwrap();
            }
            let have = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                have == text,
                "{} is out of date: PERFBISECT_UPDATE_SCHEMA=1 cargo test --lib schema",
                path.display()
            );
        }
    }

    /// The kind a stored result's file name says: `bisect-sparse.json`, `…__compare_json.snap`,
    /// `fast__golden__simulate-json.snap`.
    fn kind_of(name: &str) -> Option<&'static str> {
        let all: Vec<&'static str> = kinds().into_iter().map(|(k, _)| k).collect();
        let stem = name.rsplit("__").next().unwrap_or(name);
        all.into_iter().find(|k| {
            stem.strip_prefix(k)
                .is_some_and(|rest| rest.starts_with(['.', '-', '_']))
        })
    }

    /// Every JSON result stored in the repository: the report fixtures, and each insta
    /// snapshot whose body is a JSON object with a `schema` (a result, not a help text).
    fn stored_results() -> Vec<(PathBuf, serde_json::Value)> {
        let mut out = Vec::new();
        for dir in [
            "tests/fixtures/report",
            "tests/snapshots",
            "src/report/snapshots",
        ] {
            for e in std::fs::read_dir(repo().join(dir)).unwrap() {
                let path = e.unwrap().path();
                let text = std::fs::read_to_string(&path).unwrap();
                // An insta snapshot: a `---` header, then the body.
                let body = match path.extension().and_then(|x| x.to_str()) {
                    Some("snap") => text.splitn(3, "---\n").nth(2).unwrap_or("").to_string(),
                    _ => text,
                };
                match serde_json::from_str::<serde_json::Value>(&body) {
                    Ok(v) if v.get("schema").is_some() => out.push((path, v)),
                    _ => {}
                }
            }
        }
        out
    }

    /// Every stored result matches its kind's schema (validated by boon, draft 2020-12).
    #[test]
    fn every_stored_result_matches_its_schema() {
        let mut compiler = boon::Compiler::new();
        let mut schemas = boon::Schemas::new();
        let mut index = std::collections::BTreeMap::new();
        for (kind, schema) in kinds() {
            let url = format!("file:///perfbisect/{kind}.json");
            compiler
                .add_resource(&url, serde_json::to_value(&schema).unwrap())
                .unwrap();
            index.insert(kind, compiler.compile(&url, &mut schemas).unwrap());
        }
        let stored = stored_results();
        let mut validated = std::collections::BTreeSet::new();
        for (path, v) in &stored {
            let name = path.file_name().unwrap().to_string_lossy();
            let kind = kind_of(&name).unwrap_or_else(|| panic!("{name}: which kind of result?"));
            if let Err(e) = schemas.validate(v, index[kind]) {
                panic!(
                    "{} does not match docs/schema/{kind}.json: {e:#}",
                    path.display()
                );
            }
            validated.insert(kind);
        }
        // So that a kind's schema cannot drift from its output unseen, each kind but these has
        // a stored result; when one gets a snapshot, it leaves this list.
        let unstored: Vec<&str> = kinds()
            .into_iter()
            .map(|(k, _)| k)
            .filter(|k| !validated.contains(k))
            .collect();
        assert_eq!(unstored, NO_STORED_RESULT, "validated {validated:?}");
    }

    #[test]
    fn a_result_that_breaks_its_schema_is_caught() {
        let mut compiler = boon::Compiler::new();
        let mut schemas = boon::Schemas::new();
        let (_, gate) = kinds().into_iter().find(|(k, _)| *k == "gate").unwrap();
        let url = "file:///perfbisect/gate.json";
        compiler
            .add_resource(url, serde_json::to_value(&gate).unwrap())
            .unwrap();
        let i = compiler.compile(url, &mut schemas).unwrap();
        let path = repo().join("tests/fixtures/report/gate.json");
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert!(schemas.validate(&v, i).is_ok());
        v["results"][0]["outcome"] = "slower".into();
        assert!(schemas.validate(&v, i).is_err());
    }
}
