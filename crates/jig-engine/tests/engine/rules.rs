//! The rules catalog: `validate` on demand, the on-commit and on-checkout gates, and
//! `emit_metrics`.

use serde_json::json;

use crate::{Project, call_once, caller, code, git, request};

/// A repository on `main` with a committed library, then uncommitted changes: a secret, a
/// TODO, an unwrap, a panic, an undocumented export and a forbidden import.
fn project(validators: &str) -> Project {
    let project = Project::new(&format!(
        "rules:\n  - {{ effects: [write, exec], action: allow }}\nvalidators:\n{validators}"
    ));
    let root = &project.root;
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["config", "user.name", "T"]);
    git(root, &["config", "user.email", "t@example.invalid"]);
    project.write(".gitignore", ".jig/\n");
    project.write("src/lib.rs", "/// Documented.\npub fn ok() {}\n");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "feat: start"]);
    project.write(
        "src/lib.rs",
        "/// Documented.\npub fn ok() {}\n\npub fn bare() {\n    // TODO: finish\n    let key = \"AKIAABCDEFGHIJKLMNOP\";\n    Some(1).unwrap();\n    panic!(\"no\");\n}\n\n#[cfg(test)]\nmod tests {\n    fn t() { Some(1).unwrap(); }\n}\n",
    );
    project.write("src/core/model.rs", "use crate::engine::Engine;\n");
    project
}

fn rules_of(response: &jig_engine::ToolResponse) -> Vec<(String, Option<u64>)> {
    response.data["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .map(|v| (v["rule"].as_str().expect("rule").to_owned(), v["line"].as_u64()))
        .collect()
}

const ALL: &str = "  - { rule: secrets.scan, enforcement: blocking }
  - { rule: code.todo.blockers, enforcement: blocking }
  - { rule: test.required.changed, enforcement: warning }
  - { rule: commit.message.conventional, enforcement: warning }
  - { rule: branch.naming.convention, enforcement: warning }
  - { rule: build.must.pass, enforcement: blocking, command: [sh, -c, 'echo broken >&2; exit 2'] }
  - { rule: lint.must.pass, enforcement: blocking, command: ['true'] }
  - { rule: code.fn.docs.exported, enforcement: blocking }
  - { rule: code.no.unwrap, enforcement: warning }
  - { rule: code.no.panic.in.lib, enforcement: warning }
  - { rule: code.mod.import.rules, enforcement: blocking, boundaries: [{ from: 'src/core/**', deny: 'engine' }] }
  - { rule: sec.paths.sandbox, enforcement: blocking }";

#[tokio::test(flavor = "multi_thread")]
async fn validate_runs_every_rule_of_the_policy_for_real() {
    let project = project(ALL);
    let engine = project.engine().await;
    let response = call_once(&engine, "validate", json!({})).await;
    assert!(response.ok, "{response:?}");
    let mut found = rules_of(&response);
    found.sort();
    assert_eq!(
        found,
        [
            ("build.must.pass".to_owned(), None),
            ("code.fn.docs.exported".to_owned(), Some(4)),
            ("code.mod.import.rules".to_owned(), Some(1)),
            ("code.no.panic.in.lib".to_owned(), Some(8)),
            ("code.no.unwrap".to_owned(), Some(7)),
            ("code.todo.blockers".to_owned(), Some(5)),
            ("secrets.scan".to_owned(), Some(6)),
            ("test.required.changed".to_owned(), None),
        ],
        "{:#}",
        response.data
    );
    assert_eq!(response.data["passed"], false);
    let text = response.data.to_string();
    assert!(!text.contains("AKIAABCDEFGHIJKLMNOP"), "a violation must not repeat the secret");
    assert!(text.contains("broken"), "the build's stderr is reported");

    let one = call_once(&engine, "validate", json!({ "rule_id": "secrets.scan" })).await;
    assert_eq!(rules_of(&one), [("secrets.scan".to_owned(), Some(6))]);
    let warnings = call_once(&engine, "validate", json!({ "enforcement": "warning" })).await;
    assert!(rules_of(&warnings).iter().all(|(r, _)| {
        ["test.required.changed", "code.no.unwrap", "code.no.panic.in.lib"].contains(&r.as_str())
    }));
    assert_eq!(warnings.data["passed"], true);
    let scoped =
        call_once(&engine, "validate", json!({ "rule_id": "secrets.scan", "glob": "docs/**" }))
            .await;
    assert_eq!(rules_of(&scoped), []);
    let unknown = call_once(&engine, "validate", json!({ "rule_id": "no.such.rule" })).await;
    assert_eq!(code(&unknown), "E_VALIDATION_FAIL");
    // Off the protected branches TODOs are fine; a bad branch name is reported.
    git(&project.root, &["checkout", "-q", "-b", "Scratch"]);
    let branch = call_once(&engine, "validate", json!({})).await;
    let rules: Vec<String> = rules_of(&branch).into_iter().map(|(r, _)| r).collect();
    assert!(!rules.contains(&"code.todo.blockers".to_owned()), "{rules:?}");
    assert!(rules.contains(&"branch.naming.convention".to_owned()), "{rules:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn commit_rules_run_before_git_commit_writes_anything() {
    let project = project(
        "  - { rule: secrets.scan, enforcement: blocking }\n  - { rule: commit.message.conventional, enforcement: warning }",
    );
    let engine = project.engine().await;
    let root = &project.root;
    let head = git(root, &["rev-parse", "HEAD"]);
    git(root, &["add", "src/lib.rs"]);
    let refused = call_once(&engine, "git_commit", json!({ "message": "feat: add bare" })).await;
    assert_eq!(code(&refused), "E_VALIDATION_FAIL", "{refused:?}");
    assert_eq!(git(root, &["rev-parse", "HEAD"]), head, "nothing was committed");
    let details = refused.errors[0].details.as_ref().expect("details");
    assert_eq!(details["violations"][0]["rule"], "secrets.scan");

    project.write("src/lib.rs", "/// Documented.\npub fn ok() {}\npub fn more() {}\n");
    git(root, &["add", "src/lib.rs"]);
    let warned = call_once(&engine, "git_commit", json!({ "message": "added more stuff" })).await;
    assert!(warned.ok, "{warned:?}");
    assert_eq!(warned.data["violations"][0]["rule"], "commit.message.conventional");
    assert_ne!(git(root, &["rev-parse", "HEAD"]), head);
}

#[tokio::test(flavor = "multi_thread")]
async fn branch_naming_is_checked_on_checkout() {
    let project = project(
        "  - { rule: branch.naming.convention, enforcement: blocking, pattern: '^(main|feat/.+)$' }",
    );
    let engine = project.engine().await;
    let root = &project.root;
    git(root, &["stash", "-q", "-u"]);
    let refused =
        call_once(&engine, "git_checkout", json!({ "target": "Bad_Name", "create": true })).await;
    assert_eq!(code(&refused), "E_VALIDATION_FAIL", "{refused:?}");
    assert_eq!(git(root, &["branch", "--show-current"]), "main");
    let ok =
        call_once(&engine, "git_checkout", json!({ "target": "feat/x", "create": true })).await;
    assert!(ok.ok, "{ok:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn emit_metrics_rolls_up_a_session() {
    let project = Project::new("");
    let engine = project.engine().await;
    for text in ["a", "b"] {
        let response = engine
            .dispatch(request("t.echo", json!({ "text": text })), caller("metered", "alice"))
            .await;
        assert!(response.ok);
    }
    engine.dispatch(request("t.echo", json!({})), caller("metered", "alice")).await;
    let metrics =
        call_once(&engine, "emit_metrics", json!({ "session_id": "metered", "interval": "1h" }))
            .await;
    assert!(metrics.ok, "{metrics:?}");
    let m = &metrics.data["metrics"];
    assert_eq!(m["calls"], json!(3.0));
    assert_eq!(m["errors"], json!(1.0));
    assert!(m["latency_p99_ms"].as_f64().expect("p99") > 0.0);
    // The figures come from the audit store: another process (here another engine) sees them.
    let later = project.engine().await;
    let seen = call_once(&later, "emit_metrics", json!({ "session_id": "metered" })).await;
    assert_eq!(seen.data["metrics"]["calls"], json!(3.0), "{seen:?}");
    let other = call_once(&engine, "emit_metrics", json!({ "session_id": "nobody" })).await;
    assert_eq!(other.data["metrics"]["calls"], json!(0.0));
    let bad = call_once(&engine, "emit_metrics", json!({ "interval": "5 minutes" })).await;
    assert_eq!(code(&bad), "E_VALIDATION_FAIL");
}
