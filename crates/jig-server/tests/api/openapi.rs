//! The committed OpenAPI document (docs/openapi.json) is the one the code generates.
//! `UPDATE_OPENAPI=1 cargo test -p jig-server` rewrites it.

#[test]
fn committed_openapi_document_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json");
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
