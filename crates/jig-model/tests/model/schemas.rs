//! The JSON Schemas under `schemas/` are generated from the types; this test fails when they
//! are stale. `UPDATE_SCHEMAS=1 cargo test -p jig-model` rewrites them.

use std::path::PathBuf;

use jig_model::file_schemas::{FileFormat, tool_file_schema};
use serde_json::Value;

fn schemas_dir() -> PathBuf {
    PathBuf::from(
        std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR").as_str(),
    )
    .join("../../schemas")
}

#[test]
fn committed_schemas_are_current() {
    let mut expected: Vec<(String, Value)> =
        FileFormat::ALL.iter().map(|f| (f.schema_file_name().to_owned(), f.schema())).collect();
    expected.push(("tool-file.schema.json".to_owned(), tool_file_schema()));
    let update = std::env::var_os("UPDATE_SCHEMAS").is_some();
    let mut stale = Vec::new();
    for (name, schema) in expected {
        let path = schemas_dir().join(&name);
        let text = serde_json::to_string_pretty(&schema).expect("json") + "\n";
        if update {
            std::fs::write(&path, &text).expect("write");
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "stale schemas {stale:?}: run `UPDATE_SCHEMAS=1 cargo test -p jig-model`"
    );
}

#[test]
fn every_generated_schema_is_a_valid_json_schema() {
    for format in FileFormat::ALL {
        let schema = format.schema();
        assert!(jsonschema::meta::is_valid(&schema), "{format:?}");
        assert_eq!(schema["additionalProperties"], false, "{format:?} is strict");
    }
}

#[test]
fn every_diagnostic_code_is_documented() {
    use jig_model::diagnostic::codes;
    let source = include_str!("../../src/diagnostic.rs");
    let declared = source.matches("pub const ").count() - 1; // minus `ALL` itself
    assert_eq!(codes::ALL.len(), declared, "add the new code to codes::ALL");
    let docs = std::fs::read_to_string(schemas_dir().join("../docs/diagnostics.md")).expect("docs");
    for code in codes::ALL {
        assert!(docs.contains(&format!("| `{code}` |")), "docs/diagnostics.md lacks `{code}`");
    }
}
