//! The committed OpenAPI document (docs/openapi.json) is the one the code generates.
//! `UPDATE_OPENAPI=1 cargo test -p jig-server` rewrites it.

#[test]
fn committed_openapi_document_is_current() {
    let path = std::path::Path::new(
        std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR").as_str(),
    )
    .join("../../docs/openapi.json");
    let generated = jig_server::openapi().to_pretty_json().expect("json") + "\n";
    assert!(generated.contains("\"openapi\": \"3.1"), "OpenAPI 3.1");
    if std::env::var_os("UPDATE_OPENAPI").is_some() {
        fs_err::write(&path, &generated).expect("write");
    }
    let committed = fs_err::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/openapi.json is stale: run `UPDATE_OPENAPI=1 cargo test -p jig-server`"
    );
}

/// Every `$ref` points at a schema the document has (a dangling one breaks every generator).
#[test]
fn every_reference_resolves_and_every_operation_has_a_unique_id() {
    let document: serde_json::Value =
        serde_json::from_str(&jig_server::openapi().to_json().expect("json")).expect("parse");
    fn refs<'a>(value: &'a serde_json::Value, out: &mut Vec<&'a str>) {
        match value {
            serde_json::Value::Object(map) => {
                if let Some(target) = map.get("$ref").and_then(|r| r.as_str()) {
                    out.push(target);
                }
                map.values().for_each(|v| refs(v, out));
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    refs(&document, &mut found);
    assert!(!found.is_empty());
    for target in found {
        let pointer = target.strip_prefix('#').expect("a local reference");
        assert!(document.pointer(pointer).is_some(), "dangling $ref {target}");
    }
    let mut ids: Vec<&str> = document["paths"]
        .as_object()
        .expect("paths")
        .values()
        .flat_map(|item| item.as_object().expect("item").values())
        .filter_map(|operation| operation["operationId"].as_str())
        .collect();
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "operation ids repeat");
}

/// No two Rust types give the document the same schema name: utoipa keeps the last one it
/// registers without a word, so every reference to the first then describes the second (the
/// envelope's `Progress` was once the runbook's). Read from the source: each type deriving
/// `ToSchema`, under its name or the `schema(as = …)` it takes.
#[test]
fn no_two_types_share_a_schema_name() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let document: serde_json::Value =
        serde_json::from_str(&jig_server::openapi().to_json().expect("json")).expect("parse");
    let components = document["components"]["schemas"].as_object().expect("components");
    let mut defined: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let mut files = Vec::new();
    sources(&root.join("crates"), &mut files);
    assert!(files.len() > 100, "the crates' sources are where they were ({})", files.len());
    for file in files {
        let text = fs_err::read_to_string(&file).expect("read");
        for (name, line) in schema_types(&text) {
            defined.entry(name).or_default().push(format!("{}:{line}", file.display()));
        }
    }
    assert!(defined.contains_key("ApprovalVerdict"), "a renamed type is read under its name");
    let shared: Vec<String> = defined
        .iter()
        .filter(|(name, at)| at.len() > 1 && components.contains_key(name.as_str()))
        .map(|(name, at)| format!("{name}: {}", at.join(", ")))
        .collect();
    assert!(shared.is_empty(), "schema names defined twice: {shared:#?}");
}

/// Every `.rs` file under `dir`, tests aside.
fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs_err::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if path.is_dir() && name != "tests" && name != "target" {
            sources(&path, out);
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

/// The schema name of each type in `text` that derives `ToSchema`, with its line.
fn schema_types(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let attribute = line.trim_start();
        if !(attribute.starts_with("#[")
            && attribute.contains("derive(")
            && line.contains("ToSchema"))
        {
            continue;
        }
        let mut renamed = None;
        for (j, next) in lines.iter().enumerate().skip(i).take(20) {
            if let Some(after) = next.split("schema(as = ").nth(1) {
                renamed = after.split([')', ',']).next().map(|n| n.trim().to_owned());
            }
            let item =
                next.trim_start().trim_start_matches("pub ").trim_start_matches("pub(crate) ");
            let Some(rest) = item.strip_prefix("struct ").or_else(|| item.strip_prefix("enum "))
            else {
                continue;
            };
            let own: String =
                rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            found.push((renamed.unwrap_or(own), j + 1));
            break;
        }
    }
    found
}
