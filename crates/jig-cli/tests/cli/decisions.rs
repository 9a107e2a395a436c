//! Who decided, as the record keeps it: a decision made under `--as` names the OS user who
//! asserted the name (`asserted_by`), whether it was made from the queue or from a runbook's
//! approval step, approving or denying. (Issue #42: `approvals approve` had stopped recording
//! it while `deny` still did, and nothing checked either.)

use std::path::Path;

use serde_json::Value;

use crate::{jig, stderr, stdout_json};

/// The `approval.decided` packets of the record, oldest first.
fn decisions(root: &Path) -> Vec<Value> {
    crate::packets_of(root, &[], "approval.decided")
}

/// The last decision's verdict, who made it and who asserted that name.
fn last_decision(root: &Path) -> (String, String, String) {
    let all = decisions(root);
    let last = all.last().expect("a decision");
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    (text(&last["data"]["verdict"]), text(&last["principal"]), text(&last["data"]["asserted_by"]))
}

fn os_user() -> String {
    jig_engine::os_user()
}

#[test]
fn a_decision_from_the_queue_names_who_asserted_the_deciders_name() {
    let dir = crate::attacks::reviewed_project();
    let root = dir.path();
    let approval = crate::attacks::ask(root, "alice");
    let approved = jig(root, &["--as", "bob", "approvals", "approve", &approval]);
    assert_eq!(approved.status.code(), Some(0), "{}", stderr(&approved));
    assert_eq!(last_decision(root), ("approved".into(), "bob".into(), os_user()));

    let other = crate::attacks::ask(root, "carol");
    let denied =
        jig(root, &["--as", "bob", "approvals", "deny", &other, "--reason", "not this week"]);
    assert_eq!(denied.status.code(), Some(0), "{}", stderr(&denied));
    assert_eq!(last_decision(root), ("denied".into(), "bob".into(), os_user()));
}

/// The runbook's own approval (`runbook resume --approve STEP`), in another process than the
/// one that started the run. (Denying from a runbook step is asserted in jig-runbook's tests:
/// the terminal walk's `[d]eny` is the CLI's only way to it.)
#[test]
fn an_approval_on_a_runbook_step_names_who_asserted_the_deciders_name() {
    let dir = crate::calls::example_copy();
    let root = dir.path();
    let started = crate::runbooks::start_write_up(
        root,
        "INC-9",
        "3",
        r#"{"summary": "A config push; rolled back.", "checked": ["dashboards"]}"#,
    );
    let view = stdout_json(&started);
    let id = view["id"].as_str().expect("id").to_owned();
    let step = view["progress"]["waiting"][0]["key"].as_str().expect("waiting").to_owned();
    let acted = jig(root, &["--as", "bob", "runbook", "resume", &id, "--approve", &step, "--json"]);
    assert_eq!(acted.status.code(), Some(0), "{}", stderr(&acted));
    assert_eq!(last_decision(root), ("approved".into(), "bob".into(), os_user()));
}
