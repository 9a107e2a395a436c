//! Preview, calls followed on the event stream, the approval round trip between two people,
//! and the audit timeline's pages.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::support::{ALICE, BOB, Served, VIC, send};

pub type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub async fn events(served: &Served, token: &str) -> Socket {
    let mut request = format!("ws://127.0.0.1:{}/api/events", served.port)
        .into_client_request()
        .expect("request");
    request
        .headers_mut()
        .insert("authorization", format!("Bearer {token}").parse().expect("header"));
    tokio_tungstenite::connect_async(request).await.expect("connect").0
}

/// The next event matching `wanted`, within five seconds.
pub async fn next_event(socket: &mut Socket, wanted: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let message = tokio::time::timeout_at(deadline, socket.next())
            .await
            .expect("an event in time")
            .expect("open")
            .expect("message");
        if let Message::Text(text) = message {
            let event: Value = serde_json::from_str(&text).expect("json");
            if wanted(&event) {
                return event;
            }
        }
    }
}

#[tokio::test]
async fn preview_names_the_rule_and_records_nothing() {
    let served = Served::start().await;
    let before = served.engine.history().head().await.expect("head");
    let write = json!({ "args": { "path": "notes.txt", "content": "hi" } });
    let (status, preview) =
        send(served.post("/api/tools/file_write/preview", &write), Some(ALICE)).await;
    assert_eq!(status, 200, "{preview}");
    assert_eq!(preview["valid"], true);
    assert_eq!(preview["decision"]["action"], "require-approval");
    assert_eq!(preview["decision"]["rule"], "rules[0]");
    assert_eq!(preview["self_approval"], false);
    let bad = json!({ "args": { "path": 3 } });
    let (status, preview) =
        send(served.post("/api/tools/file_write/preview", &bad), Some(ALICE)).await;
    assert_eq!(status, 200);
    assert_eq!(preview["valid"], false);
    assert!(preview["problems"].as_array().is_some_and(|p| !p.is_empty()), "{preview}");
    assert_eq!(preview["decision"], Value::Null);
    let (status, _) =
        send(served.post("/api/tools/no_such_tool/preview", &write), Some(ALICE)).await;
    assert_eq!(status, 404);
    assert_eq!(served.engine.history().head().await.expect("head"), before, "nothing audited");
    assert!(!served.dir.path().join("notes.txt").exists());
}

#[tokio::test]
async fn a_call_answers_at_once_and_its_response_arrives_as_an_event() {
    let served = Served::start().await;
    let mut socket = events(&served, ALICE).await;
    let call = json!({ "tool": "file_read", "args": { "path": "jig.yaml" } });
    let (status, started) = send(served.post("/api/calls", &call), Some(ALICE)).await;
    assert_eq!(status, 202, "{started}");
    let request_id = started["request_id"].as_str().expect("id").to_owned();
    let response =
        next_event(&mut socket, |e| e["type"] == "ToolResponse" && e["request_id"] == request_id)
            .await;
    assert_eq!(response["ok"], true, "{response}");
    assert!(response["data"]["content"].as_str().is_some_and(|c| c.contains("policy:")));
    let (status, state) = send(served.get(&format!("/api/calls/{request_id}")), Some(ALICE)).await;
    assert_eq!(status, 200);
    assert_eq!(state["state"], "succeeded");
    let (_, detail) = send(served.get(&format!("/api/audit/runs/{request_id}")), Some(ALICE)).await;
    assert_eq!(detail["run"]["principal"], "alice");
    let kinds: Vec<&str> = detail["packets"]
        .as_array()
        .expect("packets")
        .iter()
        .filter_map(|p| p["kind"].as_str())
        .collect();
    assert_eq!(kinds.first(), Some(&"tool.call.request"));
    assert_eq!(kinds.last(), Some(&"tool.call.result"));
    let (_, cancelled) =
        send(served.post(&format!("/api/calls/{request_id}/cancel"), &json!({})), Some(ALICE))
            .await;
    assert_eq!(cancelled["cancelled"], false, "a finished call has nothing to cancel");
}

#[tokio::test]
async fn the_runner_asks_the_approver_approves_in_their_own_name_and_exactly_that_call_runs() {
    let served = Served::start().await;
    let mut socket = events(&served, ALICE).await;
    let call = json!({ "tool": "file_write", "args": { "path": "notes.txt", "content": "approved text" } });
    let (_, started) = send(served.post("/api/calls", &call), Some(ALICE)).await;
    let request_id = started["request_id"].as_str().expect("id").to_owned();
    let pending =
        next_event(&mut socket, |e| e["type"] == "ToolResponse" && e["request_id"] == request_id)
            .await;
    assert_eq!(pending["ok"], false);
    let approval_id =
        pending["errors"][0]["details"]["approval_id"].as_str().expect("approval").to_owned();
    assert!(!served.dir.path().join("notes.txt").exists());

    let (status, queue) = send(served.get("/api/approvals"), Some(BOB)).await;
    assert_eq!(status, 200);
    let asked = queue
        .as_array()
        .expect("list")
        .iter()
        .find(|a| a["id"] == approval_id.as_str())
        .expect("queued")
        .clone();
    assert_eq!(asked["principal"], "alice");
    assert_eq!(
        asked["request"]["args"]["content"], "approved text",
        "the reviewer sees the full arguments"
    );
    assert_eq!(asked["rule"], "rules[0]");

    // Alice may not approve: her role does not allow it (and the policy forbids self-approval).
    let path = format!("/api/approvals/{approval_id}/approve");
    assert_eq!(send(served.post(&path, &json!({})), Some(ALICE)).await.0, 403);
    let (status, approved) = send(served.post(&path, &json!({})), Some(BOB)).await;
    assert_eq!(status, 200, "{approved}");
    let resumed = approved["resumed_as"].as_str().expect("resumed").to_owned();
    // The news of which request carries the call comes before any event of that request (a
    // client following the call would otherwise miss a quick call's response).
    let decided = next_event(&mut socket, |e| {
        e["event"] == "ApprovalDecided" || e["request_id"] == resumed.as_str()
    })
    .await;
    assert_eq!(decided["event"], "ApprovalDecided", "{decided}");
    assert_eq!(decided["by"], "bob");
    assert_eq!(decided["resumed_as"], resumed.as_str());
    let done =
        next_event(&mut socket, |e| e["type"] == "ToolResponse" && e["request_id"] == resumed)
            .await;
    assert_eq!(done["ok"], true, "{done}");
    assert_eq!(
        fs_err::read_to_string(served.dir.path().join("notes.txt")).expect("written"),
        "approved text"
    );
    let (_, run) = send(served.get(&format!("/api/audit/runs/{resumed}")), Some(BOB)).await;
    assert_eq!(run["run"]["principal"], "alice", "the approved call runs in the asker's name");
    // Filtered by `approved`, the timeline finds the call a person approved (it reads as what
    // its run did, linked to that run); the run it resumed as was never asked about.
    let (_, approved_runs) = send(served.get("/api/audit/runs?state=approved"), Some(BOB)).await;
    let found: Vec<&str> = approved_runs["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .filter_map(|r| r["resumed_as"].as_str())
        .collect();
    assert_eq!(found, [resumed.as_str()], "{approved_runs}");
    // Approving twice is a conflict.
    assert_eq!(send(served.post(&path, &json!({})), Some(BOB)).await.0, 409);
}

#[tokio::test]
async fn the_timeline_pages_by_cursor_and_filters() {
    let served = Served::start().await;
    let mut socket = events(&served, ALICE).await;
    let calls = [
        json!({ "tool": "fs_list", "args": { "glob": "*.yaml" } }),
        json!({ "tool": "fs_list", "args": { "glob": "schemas/**" } }),
        json!({ "tool": "fs_list", "args": { "glob": "tools/**" } }),
        json!({ "tool": "file_read", "args": { "path": "no-such-file" } }),
    ];
    for call in &calls {
        let (_, started) = send(served.post("/api/calls", call), Some(ALICE)).await;
        let id = started["request_id"].as_str().expect("id").to_owned();
        next_event(&mut socket, |e| e["type"] == "ToolResponse" && e["request_id"] == id).await;
    }
    let mut seen = Vec::new();
    let mut after = String::new();
    loop {
        let (status, page) =
            send(served.get(&format!("/api/audit/runs?limit=1&tool=fs_list{after}")), Some(ALICE))
                .await;
        assert_eq!(status, 200, "{page}");
        seen.extend(page["runs"].as_array().expect("runs").iter().map(|r| r["request_id"].clone()));
        match page["next"].as_str() {
            Some(next) => after = format!("&after={next}"),
            None => break,
        }
    }
    let (_, all) = send(served.get("/api/audit/runs"), Some(ALICE)).await;
    assert_eq!(seen.len(), 3, "{all}");
    let (_, failed) = send(served.get("/api/audit/runs?state=failed"), Some(ALICE)).await;
    assert_eq!(failed["runs"].as_array().expect("runs").len(), 1);
    let (_, found) = send(served.get("/api/audit/runs?q=SCHEMAS"), Some(ALICE)).await;
    assert_eq!(
        found["runs"].as_array().expect("runs").len(),
        1,
        "text search reaches the arguments: {found}"
    );
    assert_eq!(send(served.get("/api/audit/runs?after=garbage"), Some(ALICE)).await.0, 400);
    assert_eq!(send(served.get("/api/audit/runs?state=nonsense"), Some(ALICE)).await.0, 400);
    let (_, verified) = send(served.get("/api/audit/verify"), Some(ALICE)).await;
    assert_eq!(verified["status"], "ok", "{verified}");
}

/// A low-risk tool that takes its time (allowed by the example's `risk: low` rule).
const SLOW_TOOL: &str = "id: acme.slow\nversion: 1.0.0\ndescription: Wait.\ndeterministic: false\nsideEffects: [none]\nrisk: low\nlimits: { maxInputBytes: 1024, maxOutputBytes: 1024 }\ntimeoutMs: 60000\ninputSchema: { type: object }\noutputSchema: { type: object }\nexecution:\n  kind: node\n  script: scripts/slow.mjs\n";

#[tokio::test]
async fn only_who_made_a_call_may_stop_it() {
    let served = Served::start_with(&[
        ("tools/slow.tool.yaml", SLOW_TOOL),
        ("tools/scripts/slow.mjs", "setTimeout(() => process.stdout.write('{}'), 30000);\n"),
    ])
    .await;
    let mut socket = events(&served, ALICE).await;
    let (status, started) =
        send(served.post("/api/calls", &json!({ "tool": "acme.slow", "args": {} })), Some(ALICE))
            .await;
    assert_eq!(status, 202, "{started}");
    let request_id = started["request_id"].as_str().expect("id").to_owned();
    next_event(&mut socket, |e| {
        e["request_id"] == request_id.as_str() && e["data"]["state"] == "running"
    })
    .await;

    // Bob may approve calls, but he did not make this one: he may not stop it.
    let path = format!("/api/calls/{request_id}/cancel");
    let (status, refused) = send(served.post(&path, &json!({})), Some(BOB)).await;
    assert_eq!(status, 403, "{refused}");
    assert_eq!(refused["code"], "E_POLICY");
    assert!(served.engine.is_running(&request_id), "bob's cancel did not stop it");

    let (status, cancelled) = send(served.post(&path, &json!({})), Some(ALICE)).await;
    assert_eq!(status, 200, "{cancelled}");
    assert_eq!(cancelled["cancelled"], true);
    let done = next_event(&mut socket, |e| {
        e["type"] == "ToolResponse" && e["request_id"] == request_id.as_str()
    })
    .await;
    assert_eq!(done["ok"], false, "{done}");
    let (_, state) = send(served.get(&format!("/api/calls/{request_id}")), Some(ALICE)).await;
    assert_eq!(state["state"], "cancelled", "{state}");
}

/// With every place for background calls taken for longer than a start waits, a start is
/// answered 503 with Retry-After and nothing recorded, instead of holding the request open.
#[tokio::test]
async fn a_start_while_every_place_stays_taken_is_503_with_retry_after() {
    let served = Served::start_configured(
        &[
            ("tools/slow.tool.yaml", SLOW_TOOL),
            ("tools/scripts/slow.mjs", "setTimeout(() => process.stdout.write('{}'), 30000);\n"),
        ],
        |options| {
            options.background_calls = Some(1);
            options.start_wait = Some(std::time::Duration::from_millis(200));
        },
    )
    .await;
    let start = || served.post("/api/calls", &json!({ "tool": "acme.slow", "args": {} }));
    let (status, first) = send(start(), Some(ALICE)).await;
    assert_eq!(status, 202, "{first}");
    let busy = start().bearer_auth(ALICE).send().await.expect("send");
    assert_eq!(busy.status().as_u16(), 503);
    assert_eq!(busy.headers()["retry-after"], "1");
    let body: Value = serde_json::from_slice(&busy.bytes().await.expect("body")).expect("json");
    assert_eq!(body["code"], "E_LIMIT", "{body}");
    assert!(body["message"].as_str().expect("message").contains("send it again later"), "{body}");
    let (_, runs) = send(served.get("/api/audit/runs?tool=acme.slow"), Some(ALICE)).await;
    let listed = runs["runs"].as_array().map_or(0, Vec::len);
    assert_eq!(listed, 1, "only the first call is recorded: {runs}");
    let id = first["request_id"].as_str().expect("id");
    let (status, _) =
        send(served.post(&format!("/api/calls/{id}/cancel"), &json!({})), Some(ALICE)).await;
    assert_eq!(status, 200);
}

/// Events up to and including the first that `last` accepts.
async fn events_until(socket: &mut Socket, last: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let event = next_event(socket, |_| true).await;
        let done = last(&event);
        seen.push(event);
        if done {
            return seen;
        }
    }
}

#[tokio::test]
async fn another_persons_calls_never_reach_my_event_stream() {
    let served = Served::start().await;
    let mut alice = events(&served, ALICE).await;
    let mut bob = events(&served, BOB).await;
    let mut vic = events(&served, VIC).await;
    let read = json!({ "tool": "file_read", "args": { "path": "jig.yaml" } });
    let (_, started) = send(served.post("/api/calls", &read), Some(ALICE)).await;
    let read_id = started["request_id"].as_str().expect("id").to_owned();
    let response =
        next_event(&mut alice, |e| e["type"] == "ToolResponse" && e["request_id"] == read_id).await;
    assert!(response["data"]["content"].is_string(), "alice sees her own result");

    // A call that waits for approval, then Bob's denial: an event for everyone, published after
    // everything of Alice's calls, so whatever reached Bob and Vic of them came before it.
    let write = json!({ "tool": "file_write", "args": { "path": "n.txt", "content": "x" } });
    let (_, started) = send(served.post("/api/calls", &write), Some(ALICE)).await;
    let write_id = started["request_id"].as_str().expect("id").to_owned();
    let pending =
        next_event(&mut alice, |e| e["type"] == "ToolResponse" && e["request_id"] == write_id)
            .await;
    let approval = pending["errors"][0]["details"]["approval_id"].as_str().expect("approval");
    let path = format!("/api/approvals/{approval}/deny");
    assert_eq!(send(served.post(&path, &json!({})), Some(BOB)).await.0, 204);

    for (who, socket) in [("bob", &mut bob), ("vic", &mut vic)] {
        let seen = events_until(socket, |e| e["event"] == "ApprovalDecided").await;
        let leaked: Vec<&Value> = seen
            .iter()
            .filter(|e| e["request_id"] == read_id.as_str() || e["request_id"] == write_id.as_str())
            .collect();
        assert!(leaked.is_empty(), "{who} received alice's events: {leaked:?}");
    }
}
