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
