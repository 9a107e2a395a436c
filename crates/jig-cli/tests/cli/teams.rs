//! Issue #27: one Jig across processes and instances. Each person acts through a process of
//! their own — `jig serve` instances (on one SQLite file, or one PostgreSQL database), the
//! CLI beside them — and what one records, the others hear, and an approval given anywhere
//! runs the call exactly once, in the caller's name, where it waits.

use std::path::Path;
use std::time::Duration;

use jig_testkit::serve::Serve;
use serde_json::{Value, json};

use crate::{jig, stderr, stdout_json};

const ALICE: &str = "alice-runner-token-0123456789abcdef";
const BOB: &str = "bob-approver-token-0123456789abcdef";
const VIC: &str = "vic-viewer-token-0123456789abcdef0";

/// How long an event may take to arrive here (the latency goal is measured by the load test,
/// not asserted: this only bounds a test that would otherwise hang).
const SOON: Duration = Duration::from_secs(10);

/// A team's project: writes need a reviewer other than who asked; alice runs, bob approves,
/// vic reads. The same people in a `--users` file beside it.
fn team_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("project");
    std::fs::create_dir_all(&root).expect("mkdir");
    std::fs::write(
        root.join("jig.yaml"),
        "name: team\npolicy:\n  rules:\n    - { tools: [file_write], action: require-approval }\n  \
         approvals: { self_approval: false, allow_as: true }\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("users.yaml"),
        format!(
            "users:\n  - {{ name: alice, role: runner, token: {ALICE} }}\n  - {{ name: bob, role: approver, token: {BOB} }}\n  - {{ name: vic, role: viewer, token: {VIC} }}\n"
        ),
    )
    .expect("users");
    dir
}

fn serve(dir: &Path, db: Option<&str>) -> Serve {
    let users = dir.join("users.yaml").display().to_string();
    let global: Vec<&str> = db.map(|url| vec!["--db", url]).unwrap_or_default();
    Serve::start(
        Path::new(env!("CARGO_BIN_EXE_jig")),
        &dir.join("project"),
        &global,
        &["--users", &users],
    )
}

fn write_args(path: &str) -> Value {
    json!({ "path": path, "content": "reviewed\n" })
}

/// Wait until the call `request_id` is no longer running nor waiting to run; its state.
fn settled(client: &jig_testkit::serve::Client, request_id: &str) -> Value {
    let deadline = std::time::Instant::now() + SOON;
    loop {
        let (status, call) = client.get(&format!("/api/calls/{request_id}"));
        assert_eq!(status, 200, "{call:#}");
        let state = call["state"].as_str().unwrap_or_default();
        if !matches!(state, "running" | "created" | "approved" | "pending_approval") {
            return call;
        }
        assert!(std::time::Instant::now() < deadline, "{request_id} did not settle: {call:#}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// On one machine and one SQLite store: a call from the terminal shows live in the workbench
/// (the reviewer's event stream), and the reviewer's approval there lets the caller's next
/// identical call run it — once, linked to the call that asked.
#[test]
fn a_call_from_the_terminal_reaches_the_reviewer_live_and_runs_once_approved() {
    let dir = team_project();
    let root = dir.path().join("project");
    let server = serve(dir.path(), None);
    let bob = server.client_as(BOB);
    let mut bobs_events = bob.events();
    let args = write_args("from-terminal.txt").to_string();
    let asked = jig(&root, &["--as", "alice", "call", "file_write", "--args", &args]);
    let asked = stdout_json(&asked);
    let approval = asked["errors"][0]["details"]["approval_id"].as_str().expect("waits").to_owned();
    let heard = bobs_events.next_matching(SOON, |e| e["event"] == "ApprovalRequested");
    assert_eq!(heard["approval_id"], approval.as_str());
    assert_eq!(heard["asked_by"], "alice");
    // bob sees what will run, and approves; he is handed no token for alice's call.
    let (_, queue) = bob.get("/api/approvals");
    assert_eq!(queue[0]["request"]["args"]["content"], "reviewed\n", "{queue:#}");
    let (status, approved) = bob.post(&format!("/api/approvals/{approval}/approve"), &json!({}));
    assert_eq!(status, 200, "{approved:#}");
    assert_eq!(approved["token"], Value::Null, "{approved:#}");
    assert!(!root.join("from-terminal.txt").exists(), "nothing runs before alice calls again");
    // alice's next identical call runs it.
    let ran = stdout_json(&jig(&root, &["--as", "alice", "call", "file_write", "--args", &args]));
    assert_eq!(ran["ok"], true, "{ran:#}");
    assert_eq!(ran["replayed"], false, "{ran:#}");
    assert_eq!(std::fs::read_to_string(root.join("from-terminal.txt")).expect("ran"), "reviewed\n");
    // The call that asked ends as the run that executed it, linked.
    let first = asked["request_id"].as_str().expect("id");
    let call = settled(&bob, first);
    assert_eq!(call["state"], "succeeded", "{call:#}");
    assert_eq!(call["resumed_as"], ran["request_id"], "{call:#}");
    let verify = jig(&root, &["audit", "verify"]);
    assert_eq!(verify.status.code(), Some(0), "{}", stderr(&verify));
}

/// The other way round: a call waits in the workbench; the reviewer approves in the terminal,
/// another process; the workbench hears it and runs the call, and its asker sees it finish.
#[test]
fn an_approval_given_in_the_terminal_runs_the_call_waiting_in_the_workbench() {
    let dir = team_project();
    let root = dir.path().join("project");
    let server = serve(dir.path(), None);
    let alice = server.client_as(ALICE);
    let mut alices_events = alice.events();
    let (status, started) = alice
        .post("/api/calls", &json!({ "tool": "file_write", "args": write_args("from-web.txt") }));
    assert_eq!(status, 202, "{started:#}");
    let request = started["request_id"].as_str().expect("id").to_owned();
    let pending = alices_events.next_matching(SOON, |e| {
        e["type"] == "ToolResponse" && e["request_id"] == request.as_str()
    });
    let approval =
        pending["errors"][0]["details"]["approval_id"].as_str().expect("waits").to_owned();
    let approved = jig(&root, &["--as", "bob", "approvals", "approve", &approval]);
    assert_eq!(approved.status.code(), Some(0), "{}", stderr(&approved));
    assert!(approved.stdout.is_empty(), "no token for alice's call");
    let decided = alices_events
        .next_matching(SOON, |e| e["event"] == "ApprovalDecided" && e["resumed_as"].is_string());
    assert_eq!(decided["by"], "bob");
    let resumed = decided["resumed_as"].as_str().expect("resumed").to_owned();
    let done = alices_events.next_matching(SOON, |e| {
        e["type"] == "ToolResponse" && e["request_id"] == resumed.as_str()
    });
    assert_eq!(done["ok"], true, "{done:#}");
    assert_eq!(std::fs::read_to_string(root.join("from-web.txt")).expect("ran"), "reviewed\n");
    let call = settled(&alice, &request);
    assert_eq!(
        (call["state"].as_str(), call["resumed_as"].as_str()),
        (Some("succeeded"), Some(resumed.as_str()))
    );
}

/// Two `jig serve` instances on one PostgreSQL database, as behind a load balancer: alice on
/// A, bob on B. B's stream hears A's request; bob's approval on B runs the call on A, once,
/// in alice's name; a denial on B reaches A with its reason; viewers cannot call; both
/// instances tell the same story; the chain verifies.
#[test]
fn two_instances_on_one_postgres_database_work_as_one() {
    let url = jig_testkit::postgres_url();
    let a_dir = team_project();
    let b_dir = team_project();
    let a = serve(a_dir.path(), Some(&url));
    let b = serve(b_dir.path(), Some(&url));
    let (alice, bob) = (a.client_as(ALICE), b.client_as(BOB));
    let mut bobs_events = bob.events();
    let mut alices_events = alice.events();

    // A viewer cannot call, on either instance.
    let (status, _) = b
        .client_as(VIC)
        .post("/api/calls", &json!({ "tool": "file_read", "args": { "path": "jig.yaml" } }));
    assert_eq!(status, 403);

    let (_, started) = alice
        .post("/api/calls", &json!({ "tool": "file_write", "args": write_args("approved.txt") }));
    let request = started["request_id"].as_str().expect("id").to_owned();
    let asked = bobs_events.next_matching(SOON, |e| e["event"] == "ApprovalRequested");
    let approval = asked["approval_id"].as_str().expect("id").to_owned();
    assert_eq!(asked["asked_by"], "alice");
    let (status, approved) = bob.post(
        &format!("/api/approvals/{approval}/approve"),
        &json!({ "comment": "ship it after lunch" }),
    );
    assert_eq!(status, 200, "{approved:#}");
    assert_eq!(
        (approved["token"].clone(), approved["resumed_as"].clone()),
        (Value::Null, Value::Null)
    );
    // A holds the call and runs it, once, in alice's name.
    let decided = alices_events
        .next_matching(SOON, |e| e["event"] == "ApprovalDecided" && e["resumed_as"].is_string());
    let resumed = decided["resumed_as"].as_str().expect("resumed").to_owned();
    let done = alices_events.next_matching(SOON, |e| {
        e["type"] == "ToolResponse" && e["request_id"] == resumed.as_str()
    });
    assert_eq!(done["ok"], true, "{done:#}");
    let written = a_dir.path().join("project/approved.txt");
    assert_eq!(std::fs::read_to_string(&written).expect("ran on A"), "reviewed\n");
    assert!(!b_dir.path().join("project/approved.txt").exists(), "B ran nothing");
    for client in [&alice, &bob] {
        let call = settled(client, &request);
        assert_eq!(call["state"], "succeeded", "{call:#}");
        assert_eq!(call["resumed_as"], resumed.as_str(), "{call:#}");
    }
    let (_, run) = bob.get(&format!("/api/audit/runs/{resumed}"));
    assert_eq!(run["run"]["principal"], "alice", "{run:#}");
    // Approving again, on either instance, changes nothing.
    assert_eq!(alice.post(&format!("/api/approvals/{approval}/approve"), &json!({})).0, 403);
    assert_eq!(bob.post(&format!("/api/approvals/{approval}/approve"), &json!({})).0, 409);

    // A denial on B: A's call ends denied, with bob's reason.
    let (_, started) = alice
        .post("/api/calls", &json!({ "tool": "file_write", "args": write_args("denied.txt") }));
    let denied_request = started["request_id"].as_str().expect("id").to_owned();
    let asked = bobs_events.next_matching(SOON, |e| e["event"] == "ApprovalRequested");
    let approval = asked["approval_id"].as_str().expect("id").to_owned();
    let (status, _) = bob.post(
        &format!("/api/approvals/{approval}/deny"),
        &json!({ "reason": "not during the freeze" }),
    );
    assert_eq!(status, 204);
    let heard = alices_events.next_matching(SOON, |e| {
        e["event"] == "ApprovalDecided" && e["approval_id"] == approval.as_str()
    });
    assert_eq!(
        (heard["verdict"].as_str(), heard["reason"].as_str()),
        (Some("denied"), Some("not during the freeze"))
    );
    let call = settled(&alice, &denied_request);
    assert_eq!(call["state"], "denied", "{call:#}");
    assert!(
        call["error"].as_str().is_some_and(|e| e.contains("bob") && e.contains("freeze")),
        "{call:#}"
    );
    assert!(!a_dir.path().join("project/denied.txt").exists());
    // Both decisions keep what the reviewer wrote, for the asker on either instance.
    let (_, approvals) = alice.get("/api/approvals?all=true");
    let notes: Vec<(&str, &str)> = approvals
        .as_array()
        .expect("approvals")
        .iter()
        .filter_map(|a| Some((a["state"].as_str()?, a["note"].as_str()?)))
        .collect();
    assert!(notes.contains(&("consumed", "ship it after lunch")), "{approvals:#}");
    assert!(notes.contains(&("denied", "not during the freeze")), "{approvals:#}");

    let verify = jig(&a_dir.path().join("project"), &["--db", &url, "audit", "verify"]);
    assert_eq!(verify.status.code(), Some(0), "{}", stderr(&verify));
}

/// Behind a load balancer, a cancel may reach another instance than the one running the call:
/// alice's long call runs on A; bob (not hers) cannot stop it through B; alice can, through B,
/// and A stops it — recorded as cancelled, with who asked, in the chain.
#[test]
fn a_call_running_on_one_instance_stops_when_its_caller_cancels_on_another() {
    let url = jig_testkit::postgres_url();
    let project = |dir: &tempfile::TempDir| {
        std::fs::write(
            dir.path().join("project/jig.yaml"),
            "name: team\npolicy:\n  shell_allow: [\"^sleep(\\\\s|$)\"]\n  rules:\n    - { tools: [shell_exec], action: allow }\n",
        )
        .expect("manifest");
    };
    let (a_dir, b_dir) = (team_project(), team_project());
    project(&a_dir);
    project(&b_dir);
    let (a, b) = (serve(a_dir.path(), Some(&url)), serve(b_dir.path(), Some(&url)));
    let (status, started) = a
        .client_as(ALICE)
        .post("/api/calls", &json!({ "tool": "shell_exec", "args": { "cmd": "sleep 60" } }));
    assert_eq!(status, 202, "{started:#}");
    let request = started["request_id"].as_str().expect("id").to_owned();
    let alice_on_b = b.client_as(ALICE);
    let deadline = std::time::Instant::now() + SOON;
    loop {
        let (_, call) = alice_on_b.get(&format!("/api/calls/{request}"));
        if call["state"] == "running" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never seen running on B: {call:#}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (status, refused) =
        b.client_as(BOB).post(&format!("/api/calls/{request}/cancel"), &json!({}));
    assert_eq!(status, 403, "not bob's call: {refused:#}");

    let asked = std::time::Instant::now();
    let (status, cancelled) = alice_on_b.post(&format!("/api/calls/{request}/cancel"), &json!({}));
    assert_eq!((status, cancelled["cancelled"].as_bool()), (200, Some(true)), "{cancelled:#}");
    let call = settled(&alice_on_b, &request);
    assert_eq!(call["state"], "cancelled", "{call:#}");
    assert!(asked.elapsed() < Duration::from_secs(10), "stopped long before its 60 s");
    // Who asked is in the record, and the chain holds.
    let (_, run) = alice_on_b.get(&format!("/api/audit/runs/{request}"));
    let asked_for = run["packets"]
        .as_array()
        .expect("packets")
        .iter()
        .find(|p| p["kind"] == "tool.call.cancel_requested")
        .unwrap_or_else(|| panic!("no cancel request in {run:#}"));
    assert_eq!(asked_for["principal"], "alice", "{asked_for:#}");
    let (_, chain) = alice_on_b.get("/api/audit/verify");
    assert_eq!(chain["status"], "ok", "{chain:#}");
}
