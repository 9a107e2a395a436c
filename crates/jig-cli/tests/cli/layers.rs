//! Policy layers above the project (issue #44): a cloned repository that allows everything
//! beneath a machine layer that sends writes and commands to a person. Real `jig` processes,
//! the layers in files outside the project, as an administrator would set them.

use std::path::Path;

use serde_json::Value;

use crate::{jig_env, stderr, stdout_json};

/// A cloned project whose own policy lets everything run and lets anyone speak for anyone.
fn cloned() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(
        dir.path().join("jig.yaml"),
        "name: cloned\npolicy:\n  shell_allow: ['.*']\n  rules:\n    - { default: allow }\n    - { effects: [write, exec], action: allow }\n  approvals: { self_approval: true, allow_as: true }\n",
    )
    .expect("write");
    dir
}

/// The machine's managed policy, in a directory of its own.
fn machine(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("policy.yaml"), text).expect("write");
    dir
}

const REQUIRE: &str = "policy:\n  rules:\n    - { effects: [write, exec], action: require-approval }\n  approvals: { self_approval: false }\n";

fn under(layer: &Path) -> Vec<(&'static str, String)> {
    vec![("JIG_MANAGED_POLICY", layer.join("policy.yaml").display().to_string())]
}

fn run(root: &Path, env: &[(&'static str, String)], args: &[&str]) -> std::process::Output {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    jig_env(root, args, &env)
}

const WRITE: &str = r#"{"path": "out.txt", "content": "from the clone\n"}"#;

/// The `tool.call.decision` packets of the record.
fn decisions(root: &Path, env: &[(&'static str, String)]) -> Vec<Value> {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    crate::packets_of(root, &env, "tool.call.decision")
}

#[test]
fn a_machine_layer_holds_over_a_cloned_projects_allows() {
    let dir = cloned();
    let root = dir.path();
    let layer = machine(REQUIRE);
    let env = under(layer.path());
    let asked = run(root, &env, &["--as", "alice", "call", "file_write", "--args", WRITE]);
    assert_eq!(asked.status.code(), Some(1), "{}", stderr(&asked));
    let answer = stdout_json(&asked);
    let details = &answer["errors"][0]["details"];
    assert_eq!(answer["errors"][0]["code"], "E_POLICY", "{answer}");
    assert_eq!(
        (details["rule"].as_str(), details["layer"].as_str()),
        (Some("machine:rules[0]"), Some("machine"))
    );
    assert!(!root.join("out.txt").exists(), "nothing ran");
    let shell = run(root, &env, &["call", "shell_exec", "--args", r#"{"cmd": "touch ran"}"#]);
    assert_eq!(stdout_json(&shell)["errors"][0]["details"]["layer"], "machine");
    assert!(!root.join("ran").exists(), "nothing ran");
    // The record credits the layer.
    let decided = decisions(root, &env);
    assert!(decided.iter().all(|p| p["data"]["layer"] == "machine"), "{decided:?}");

    // The project's `self_approval: true` is narrowed: alice cannot approve her own call.
    let id = details["approval_id"].as_str().expect("approval id");
    let own = run(root, &env, &["--as", "alice", "approvals", "approve", id]);
    assert_ne!(own.status.code(), Some(0), "self-approval is the machine's to allow");
    let bob = run(root, &env, &["--as", "bob", "approvals", "approve", id]);
    assert_eq!(bob.status.code(), Some(0), "{}", stderr(&bob));
    let again = run(root, &env, &["--as", "alice", "call", "file_write", "--args", WRITE]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(std::fs::read_to_string(root.join("out.txt")).expect("written"), "from the clone\n");

    // Without the layer the clone's word stands: the difference is the layer's.
    let alone =
        run(root, &[], &["call", "file_write", "--args", r#"{"path": "b.txt", "content": "x"}"#]);
    assert_eq!(alone.status.code(), Some(0), "{}", stderr(&alone));
}

#[test]
fn policy_show_names_each_rules_layer_and_what_it_overrode() {
    let dir = cloned();
    let root = dir.path();
    let layer = machine(REQUIRE);
    let env = under(layer.path());
    let shown = run(root, &env, &["policy", "show", "--json"]);
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    let report = stdout_json(&shown);
    let source = layer.path().join("policy.yaml").display().to_string();
    assert_eq!(report["layers"][0]["layer"], "machine");
    assert_eq!(report["layers"][0]["source"], source.as_str());
    let rules = report["rules"].as_array().expect("rules");
    let rule = |name: &str| {
        rules.iter().find(|r| r["rule"] == name).unwrap_or_else(|| panic!("{name} in {report}"))
    };
    let above = rule("machine:rules[0]");
    assert_eq!(
        (above["layer"].as_str(), above["action"].as_str()),
        (Some("machine"), Some("require-approval"))
    );
    assert!(
        above["overrode"].as_array().expect("overrode").iter().any(|o| o["tool"] == "file_write"
            && o["rule"] == "rules[1]"
            && o["action"] == "allow"),
        "{above}"
    );
    let project = rule("rules[1]");
    assert_eq!(project["layer"], "project");
    assert!(
        project["overridden_by"].as_array().expect("list").iter().any(|o| o["layer"] == "machine")
    );
    let narrowed = report["settings"].as_array().expect("settings");
    assert!(
        narrowed.iter().any(|s| s["setting"] == "/approvals/self_approval"
            && s["now"] == false
            && s["layer"] == "machine"),
        "{narrowed:?}"
    );
    // The text form says the same for people.
    let text = run(root, &env, &["policy", "show"]);
    let text = String::from_utf8_lossy(&text.stdout).into_owned();
    assert!(
        text.contains("machine:rules[0]")
            && text.contains("overrode rules[1] (allow, project layer)"),
        "{text}"
    );
}

#[test]
fn a_layer_that_cannot_be_read_stops_jig_naming_its_file() {
    let dir = cloned();
    let root = dir.path();
    let layers = tempfile::tempdir().expect("tmp");
    let cases = [
        ("missing.yaml", None, "cannot be read"),
        ("broken.yaml", Some("policy: [unclosed\n"), ""),
        ("plans.yaml", Some("policy:\n  plans: {}\n"), "`policy.plans` is the project's to set"),
        ("wrong.yaml", Some("policy:\n  rules: [{ action: maybe }]\n"), ""),
        ("a-directory", None, "cannot be read"),
        ("a-fifo", None, "not a regular file"),
    ];
    std::fs::create_dir(layers.path().join("a-directory")).expect("mkdir");
    // A FIFO where the file should be: refused at once, never waited on.
    let fifo = layers.path().join("a-fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    for (name, text, says) in cases {
        let path = layers.path().join(name);
        if let Some(text) = text {
            std::fs::write(&path, text).expect("write");
        }
        let env = vec![("JIG_MANAGED_POLICY", path.display().to_string())];
        let call = run(root, &env, &["call", "file_write", "--args", WRITE]);
        assert_ne!(call.status.code(), Some(0), "{name}: {}", stderr(&call));
        let err = stderr(&call);
        assert!(err.contains(&path.display().to_string()) && err.contains(says), "{name}: {err}");
        assert!(!root.join("out.txt").exists(), "{name}: the project's word alone ran the write");
        let validate = run(root, &env, &["validate"]);
        assert_eq!(validate.status.code(), Some(3), "{name}: {}", stderr(&validate));
        let shown = run(root, &env, &["policy", "show"]);
        assert_eq!(shown.status.code(), Some(3), "{name}");
    }
}

#[test]
fn a_persons_layer_can_bar_the_projects_allows_for_commands() {
    let dir = cloned();
    let root = dir.path();
    let config = tempfile::tempdir().expect("tmp");
    std::fs::create_dir_all(config.path().join("jig")).expect("mkdir");
    std::fs::write(
        config.path().join("jig/policy.yaml"),
        "project:\n  may_not_allow: [{ effects: [exec] }]\n",
    )
    .expect("write");
    let env = vec![("XDG_CONFIG_HOME", config.path().display().to_string())];
    let shell = run(root, &env, &["call", "shell_exec", "--args", r#"{"cmd": "touch ran"}"#]);
    let answer = stdout_json(&shell);
    assert_eq!(
        answer["errors"][0]["details"]["rule"], "person:project.may_not_allow[0]",
        "{answer}"
    );
    assert_eq!(answer["errors"][0]["details"]["layer"], "person");
    assert!(!root.join("ran").exists());
    // A write is not barred by this layer: the project's allow stands.
    let write = run(root, &env, &["call", "file_write", "--args", WRITE]);
    assert_eq!(write.status.code(), Some(0), "{}", stderr(&write));
}
