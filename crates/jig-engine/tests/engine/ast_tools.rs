//! The AST built-ins on real source files in five languages, a real formatter (rustfmt) and a
//! real language server (pylsp).

use serde_json::json;

use crate::{Project, call_once, code, read};

const ALLOW: &str = "rules:\n  - { effects: [write, exec], action: allow }";

fn project(policy: &str) -> Project {
    let project = Project::new(policy);
    for (path, text) in [
        (
            "src/auth.rs",
            "/// Logs in.\npub fn auth_login() -> u8 {\n    1\n}\n\npub fn auth_logout() {\n    let x: Option<u8> = None;\n    x.unwrap();\n}\n",
        ),
        ("src/main.rs", "fn main() {\n    crate::auth::auth_login();\n}\n"),
        (
            "app/tool.py",
            "def run():\n    \"\"\"Run it.\"\"\"\n    return 1\n\n\nclass Tool:\n    pass\n",
        ),
        ("web/app.js", "export function start() {}\n"),
        ("web/types.ts", "export interface Shape { area(): number }\n"),
        ("cmd/main.go", "package main\n\n// Serve serves.\nfunc Serve() {}\n"),
        ("broken/bad.rs", "fn broken( {\n"),
        ("README.md", "# not code\n"),
    ] {
        project.write(path, text);
    }
    project
}

fn names(response: &jig_engine::ToolResponse) -> Vec<String> {
    response.data["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| n["name"].as_str().expect("name").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn ast_generate_indexes_five_languages_incrementally_and_reports_errors() {
    let project = project(ALLOW);
    let engine = project.engine().await;
    let first = call_once(&engine, "ast_generate", json!({ "paths": ["**"] })).await;
    assert!(first.ok, "{first:?}");
    assert_eq!(first.data["parsed_files"], 7);
    assert_eq!(
        first.data["errors"],
        json!([{ "file": "broken/bad.rs", "line": 1, "message": first.data["errors"][0]["message"] }])
    );
    let again =
        call_once(&engine, "ast_generate", json!({ "paths": ["**"], "incremental": true })).await;
    assert_eq!(again.data["parsed_files"], 0, "nothing changed: {again:?}");
    let rust = call_once(
        &engine,
        "ast_generate",
        json!({ "paths": ["**"], "language": "rust", "incremental": false }),
    )
    .await;
    assert_eq!(rust.data["parsed_files"], 3);
    // A write through Jig is re-parsed at once (the sync step), no generate needed.
    let written = call_once(
        &engine,
        "file_write",
        json!({ "path": "src/session.rs", "content": "pub struct Session;\n" }),
    )
    .await;
    assert!(written.ok, "{written:?}");
    let query = call_once(&engine, "ast_query", json!({ "where": { "type": "struct" } })).await;
    assert_eq!(names(&query), ["Session"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn ast_query_filters_by_type_name_file_and_export() {
    let project = project(ALLOW);
    let engine = project.engine().await;
    let query = call_once(
        &engine,
        "ast_query",
        json!({ "where": { "type": "fn", "name_like": "auth*", "file_glob": "src/**", "exported": true } }),
    )
    .await;
    assert!(query.ok, "{query:?}");
    assert_eq!(names(&query), ["auth_login", "auth_logout"]);
    let node = &query.data["nodes"][0];
    assert_eq!(node["id"], "src/auth.rs:fn:auth_login");
    assert_eq!(node["has_doc"], true);
    assert_eq!(node["file"], "src/auth.rs");
    let start = node["span"]["start"].as_u64().expect("start") as usize;
    let end = node["span"]["end"].as_u64().expect("end") as usize;
    assert!(read(&project.path("src/auth.rs"))[start..end].starts_with("pub fn auth_login"));
    let go = call_once(&engine, "ast_query", json!({ "where": { "file_glob": "cmd/*.go" } })).await;
    assert_eq!(names(&go), ["Serve"]);
    let limited = call_once(&engine, "ast_query", json!({ "where": {}, "limit": 2 })).await;
    assert_eq!(limited.data["nodes"].as_array().expect("nodes").len(), 2);
    assert_eq!(limited.data["truncated"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn ast_edit_renames_across_files_formats_and_rolls_back_a_failed_build() {
    let project = project(ALLOW);
    let engine = project.engine().await;
    let renamed = call_once(
        &engine,
        "ast_edit",
        json!({ "operation": "rename_symbol", "target_node_id": "src/auth.rs:fn:auth_login", "new_name": "auth_signin" }),
    )
    .await;
    assert!(renamed.ok, "{renamed:?}");
    assert_eq!(renamed.data["files_touched"], json!(["src/auth.rs", "src/main.rs"]));
    assert!(read(&project.path("src/auth.rs")).contains("pub fn auth_signin() -> u8"));
    assert!(read(&project.path("src/main.rs")).contains("crate::auth::auth_signin();"));
    assert_eq!(
        renamed.data["formatted"],
        json!(["src/auth.rs", "src/main.rs"]),
        "rustfmt is installed"
    );
    // The index follows the edit.
    let query =
        call_once(&engine, "ast_query", json!({ "where": { "name_like": "auth_s*" } })).await;
    assert_eq!(names(&query), ["auth_signin"]);
    let missing = call_once(
        &engine,
        "ast_edit",
        json!({ "operation": "rename_symbol", "target_node_id": "src/auth.rs:fn:nope", "new_name": "x" }),
    )
    .await;
    assert_eq!(code(&missing), "E_NOT_FOUND");
    let keyword = call_once(
        &engine,
        "ast_edit",
        json!({ "operation": "rename_symbol", "target_node_id": "src/auth.rs:fn:auth_signin", "new_name": "match" }),
    )
    .await;
    assert_eq!(code(&keyword), "E_AST_EDIT");

    project.set_policy(&format!(
        "{ALLOW}\nvalidators:\n  - {{ rule: build.must.pass, enforcement: blocking, command: [sh, -c, 'exit 3'] }}"
    ));
    let engine = project.engine().await;
    let before = read(&project.path("src/main.rs"));
    let failed = call_once(
        &engine,
        "ast_edit",
        json!({ "operation": "rename_symbol", "target_node_id": "src/auth.rs:fn:auth_signin", "new_name": "sign_in", "validate_build": true }),
    )
    .await;
    assert_eq!(code(&failed), "E_AST_EDIT", "{failed:?}");
    assert_eq!(read(&project.path("src/main.rs")), before, "the rename was rolled back");
}

#[tokio::test(flavor = "multi_thread")]
async fn ast_validate_reports_missing_docs_and_forbidden_text() {
    let project = project(ALLOW);
    let engine = project.engine().await;
    let response = call_once(
        &engine,
        "ast_validate",
        json!({ "rules": [
            { "id": "exported_fn_docs", "enforcement": "blocking", "where": { "type": "fn", "exported": true, "file_glob": "src/**" }, "must_have": ["docstring"] },
            { "id": "code.no.unwrap", "enforcement": "warning", "where": { "file_glob": "src/**" }, "must_not_contain": [".unwrap()"] },
        ] }),
    )
    .await;
    assert!(response.ok, "{response:?}");
    assert_eq!(
        response.data["violations"],
        json!([
            { "rule": "exported_fn_docs", "enforcement": "blocking", "file": "src/auth.rs", "line": 6, "node_id": "src/auth.rs:fn:auth_logout", "message": "`auth_logout` has no doc comment" },
            { "rule": "code.no.unwrap", "enforcement": "warning", "file": "src/auth.rs", "line": 8, "node_id": "src/auth.rs:fn:auth_logout", "message": "`auth_logout` contains `.unwrap()`" },
        ])
    );
    assert_eq!(response.data["blocking"], 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_that_breaks_the_syntax_is_refused_or_warned_by_code_ast_parsed() {
    let project = project(&format!(
        "{ALLOW}\nvalidators:\n  - {{ rule: code.ast.parsed, enforcement: blocking }}"
    ));
    let engine = project.engine().await;
    let before = read(&project.path("src/main.rs"));
    let refused = call_once(
        &engine,
        "file_write",
        json!({ "path": "src/main.rs", "content": "fn main( {\n" }),
    )
    .await;
    assert_eq!(code(&refused), "E_AST_PARSE", "{refused:?}");
    assert_eq!(read(&project.path("src/main.rs")), before);
    let diff = "@@ -1,3 +1,3 @@\n-fn main() {\n+fn main( {\n     crate::auth::auth_login();\n }\n";
    let patched =
        call_once(&engine, "file_patch", json!({ "path": "src/main.rs", "unified_diff": diff }))
            .await;
    assert_eq!(code(&patched), "E_AST_PARSE", "{patched:?}");
    assert_eq!(read(&project.path("src/main.rs")), before);
    let prose =
        call_once(&engine, "file_write", json!({ "path": "notes.md", "content": "fn main( {" }))
            .await;
    assert!(prose.ok, "not source code: {prose:?}");

    project.set_policy(&format!(
        "{ALLOW}\nvalidators:\n  - {{ rule: code.ast.parsed, enforcement: warning }}"
    ));
    let engine = project.engine().await;
    let warned = call_once(
        &engine,
        "file_write",
        json!({ "path": "src/main.rs", "content": "fn main( {\n" }),
    )
    .await;
    assert!(warned.ok, "{warned:?}");
    assert_eq!(warned.data["violations"][0]["rule"], "code.ast.parsed");
    assert_eq!(read(&project.path("src/main.rs")), "fn main( {\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn ast_external_asks_a_real_language_server() {
    let project = project(&format!("{ALLOW}\nast:\n  providers:\n    pylsp: [pylsp]"));
    let engine = project.engine().await;
    let uri =
        format!("file://{}", project.path("app/tool.py").canonicalize().expect("canon").display());
    let response = call_once(
        &engine,
        "ast_external",
        json!({ "provider": "pylsp", "request": { "method": "textDocument/documentSymbol", "params": { "textDocument": { "uri": uri } } } }),
    )
    .await;
    assert!(response.ok, "{response:?}");
    let symbols: Vec<&str> = response.data["response"]
        .as_array()
        .expect("symbols")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(symbols.contains(&"run") && symbols.contains(&"Tool"), "{symbols:?}");
    // A file whose name needs percent-encoding in its URI.
    project.write("app/my tool.py", "def spaced():\n    pass\n");
    let root = project.root.canonicalize().expect("canon");
    let spaced = format!("file://{}/app/my%20tool.py", root.display());
    let found = call_once(
        &engine,
        "ast_external",
        json!({ "provider": "pylsp", "request": { "method": "textDocument/documentSymbol", "params": { "textDocument": { "uri": spaced } } } }),
    )
    .await;
    assert!(found.data["response"].to_string().contains("spaced"), "{found:?}");
    let unknown = call_once(
        &engine,
        "ast_external",
        json!({ "provider": "rust-analyzer", "request": { "method": "x" } }),
    )
    .await;
    assert_eq!(code(&unknown), "E_POLICY");
    let outside = call_once(
        &engine,
        "ast_external",
        json!({ "provider": "pylsp", "request": { "method": "textDocument/documentSymbol", "params": { "textDocument": { "uri": "file:///etc/passwd" } } } }),
    )
    .await;
    assert_eq!(code(&outside), "E_POLICY", "{outside:?}");
}
