//! Notices to a project's webhooks: a write waiting for approval and its decision reach a
//! real HTTP receiver on loopback, signed with HMAC-SHA256 of the body under the webhook's
//! secret, retried while the receiver fails — each sent by the process that recorded it (the
//! asker's `jig call`, the reviewer's `jig approvals approve`).

use ring::hmac;
use serde_json::Value;

use crate::receiver::{Received, serve};
use crate::{jig, stderr, stdout_json};

const SECRET: &str = "the-team-webhook-secret";

fn project(url: &str, format: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let manifest = format!(
        "name: notices\nnotifications:\n  workbench_url: https://jig.acme.example/\n  webhooks:\n    - {{ url: \"{url}\", secret: \"{SECRET}\"{format} }}\npolicy:\n  network: {{ allowed_domains: [\"127.0.0.1\"], allow_private: true }}\n  rules:\n    - {{ effects: [write], action: require-approval }}\n  approvals: {{ self_approval: false, allow_as: true }}\n"
    );
    std::fs::write(dir.path().join("jig.yaml"), manifest).expect("manifest");
    // The person running Jig here read the webhook and consented (crates/jig-cli/tests/cli/
    // consent.rs tests what happens before).
    let trusted = jig(dir.path(), &["trust", "--yes"]);
    assert_eq!(trusted.status.code(), Some(0), "{}", stderr(&trusted));
    dir
}

/// Alice asks to write `path`; the call waits for approval: its id.
fn alice_asks_to_write(root: &std::path::Path, path: &str) -> String {
    let args = format!(r#"{{"path": "{path}", "content": "x"}}"#);
    let asked = jig(root, &["--as", "alice", "call", "file_write", "--args", &args]);
    assert_eq!(asked.status.code(), Some(1), "{}", stderr(&asked));
    stdout_json(&asked)["errors"][0]["details"]["approval_id"]
        .as_str()
        .expect("waits for approval")
        .to_owned()
}

/// The notice's body, after checking its signature is the HMAC of `<timestamp>.<body>` under
/// the secret: the timestamp header is signed, so a captured notice replayed with a fresh one
/// does not verify.
fn signed(received: &Received) -> Value {
    let key = hmac::Key::new(hmac::HMAC_SHA256, SECRET.as_bytes());
    let signature = received.header("x-jig-signature").expect("a signature header");
    let bytes: Vec<u8> = (0..signature.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&signature[i..i + 2], 16).expect("hex"))
        .collect();
    let timestamp = received.header("x-jig-timestamp").expect("a timestamp header");
    assert!(timestamp.parse::<i64>().is_ok(), "{timestamp}");
    let signed = format!("{timestamp}.{}", received.body);
    hmac::verify(&key, signed.as_bytes(), &bytes).expect("HMAC-SHA256 of timestamp.body");
    let replayed =
        format!("{}.{}", timestamp.parse::<i64>().expect("seconds") + 600, received.body);
    assert!(hmac::verify(&key, replayed.as_bytes(), &bytes).is_err(), "a fresh timestamp verifies");
    assert!(
        hmac::verify(&key, received.body.as_bytes(), &bytes).is_err(),
        "the body alone verifies"
    );
    assert_eq!(
        received.header("x-jig-signature-256"),
        Some(format!("sha256={signature}").as_str())
    );
    assert_eq!(received.header("content-type"), Some("application/json"));
    serde_json::from_str(&received.body).expect("JSON")
}

#[test]
fn a_waiting_write_and_its_approval_reach_the_webhook_signed_after_two_failures() {
    // Two failures, then taken; then the decision taken at once.
    let (base, receiver) =
        serve(vec!["503 Service Unavailable", "502 Bad Gateway", "200 OK", "204 No Content"]);
    let dir = project(&format!("{base}/hooks/jig"), "");
    let root = dir.path();
    let approval = alice_asks_to_write(root, "x.txt");
    let approved = jig(root, &["--as", "bob", "approvals", "approve", &approval]);
    assert_eq!(approved.status.code(), Some(0), "{}", stderr(&approved));

    let received = receiver.join().expect("receiver");
    assert!(received.iter().all(|r| r.line.starts_with("POST /hooks/jig ")), "{received:?}");
    // The same notice three times (the same id and signature), until the receiver took it.
    let tries: Vec<Value> = received[..3].iter().map(signed).collect();
    assert!(tries.windows(2).all(|w| w[0] == w[1]), "{tries:?}");
    let asked = &tries[0];
    assert_eq!(asked["type"], "approval.requested");
    assert_eq!(asked["approval_id"], approval);
    assert_eq!(asked["tool"], "file_write");
    assert_eq!(asked["asked_by"], "alice");
    assert_eq!(asked["project"], "notices");
    assert_eq!(asked["link"], format!("https://jig.acme.example/#/approvals/{approval}"));
    let decided = signed(&received[3]);
    assert_eq!(decided["type"], "approval.decided");
    assert_eq!(
        (decided["verdict"].as_str(), decided["by"].as_str()),
        (Some("approved"), Some("bob"))
    );
    assert_ne!(decided["id"], asked["id"]);
}

#[test]
fn a_slack_webhook_gets_a_line_of_text_and_a_refusal_is_not_retried() {
    // A 4xx is an answer: the notice is not sent again.
    let (base, receiver) = serve(vec!["400 Bad Request", "200 OK"]);
    let dir = project(&format!("{base}/services/T0/B0"), ", format: slack");
    let root = dir.path();
    let approval = alice_asks_to_write(root, "y.txt");
    let denied =
        jig(root, &["--as", "bob", "approvals", "deny", &approval, "--reason", "not today"]);
    assert_eq!(denied.status.code(), Some(0), "{}", stderr(&denied));
    let received = receiver.join().expect("receiver");
    let first = signed(&received[0]);
    assert!(
        first["text"]
            .as_str()
            .expect("text")
            .starts_with("alice asks to run file_write in notices"),
        "{first}"
    );
    let second = signed(&received[1]);
    assert_eq!(second["jig"]["type"], "approval.decided", "the refused notice was not sent again");
    assert!(
        second["text"]
            .as_str()
            .expect("text")
            .contains("bob denied a call of file_write in notices: not today"),
        "{second}"
    );
}

#[test]
fn a_long_running_jig_says_where_the_manifest_sends_notices() {
    // The manifest chooses the receiver; who runs Jig on it is told where notices go.
    let dir = project("http://127.0.0.1:9/hooks/jig", "");
    let mcp = std::process::Command::new(env!("CARGO_BIN_EXE_jig"))
        .arg("mcp")
        .current_dir(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("jig mcp");
    assert!(
        stderr(&mcp).contains("notices of approvals and paused runs go to 127.0.0.1:9"),
        "{}",
        stderr(&mcp)
    );
}
