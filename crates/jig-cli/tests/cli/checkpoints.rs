//! The record leaving Jig: the head as a C2SP checkpoint signed note that a copy elsewhere
//! keeps (`jig audit head --sign`, `jig audit publish` to a file and over HTTP, `jig audit
//! verify --expect NOTE`), and the packets exported as CloudEvents and OCSF.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use crate::calls::example_copy;
use crate::{jig, stderr};

/// The example project with a key it trusts for its heads, and a few calls recorded: one
/// read, one write that waits for approval.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = example_copy();
    let root = dir.path();
    let key =
        root.join("..").join(format!("{}.key", root.file_name().expect("name").to_string_lossy()));
    let keygen = jig(root, &["audit", "keygen", key.to_str().expect("utf-8")]);
    assert_eq!(keygen.status.code(), Some(0), "{}", stderr(&keygen));
    let public = String::from_utf8_lossy(&keygen.stdout).trim().to_owned();
    let manifest = fs_err::read_to_string(root.join("jig.yaml")).expect("manifest");
    let manifest = manifest.replacen(
        "config:\n",
        &format!(
            "config:\n  audit: {{ head_key: \"{public}\", origin: \"jig.acme.example/ops\", publish: \"witness/checkpoint\" }}\n"
        ),
        1,
    );
    fs_err::write(root.join("jig.yaml"), manifest).expect("write");
    let read = jig(root, &["call", "file_read", "--args", r#"{"path": "jig.yaml"}"#]);
    assert_eq!(read.status.code(), Some(0), "{}", stderr(&read));
    let write = jig(
        root,
        &["--as", "alice", "call", "file_write", "--args", r#"{"path": "x.txt", "content": "x"}"#],
    );
    assert_eq!(write.status.code(), Some(1), "{}", stderr(&write));
    (dir, key)
}

fn head(root: &Path) -> (i64, String) {
    let out = jig(root, &["audit", "head"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (seq, hash) = text.trim().split_once(' ').expect("SEQ HASH");
    (seq.parse().expect("seq"), hash.to_owned())
}

#[test]
fn the_head_is_a_checkpoint_signed_note_that_verify_trusts_only_with_the_projects_key() {
    let (dir, key) = project();
    let root = dir.path();
    let (seq, hash) = head(root);
    let signed = jig(root, &["audit", "head", "--sign", key.to_str().expect("utf-8")]);
    assert_eq!(signed.status.code(), Some(0), "{}", stderr(&signed));
    let signed: Value = serde_json::from_slice(&signed.stdout).expect("json");
    let note = signed["checkpoint"].as_str().expect("a checkpoint beside the JSON head");
    // The C2SP tlog-checkpoint lines: origin, size, base64 hash; then the signature line.
    let lines: Vec<&str> = note.lines().collect();
    assert_eq!(lines[0], "jig.acme.example/ops");
    assert_eq!(lines[1], seq.to_string());
    let root_hash = STANDARD.decode(lines[2]).expect("base64");
    let hex: String = root_hash.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(hex, hash);
    assert_eq!(lines[3], "");
    assert!(lines[4].starts_with("\u{2014} jig.acme.example/ops "), "{note}");

    // Published where the manifest says (the directory made), and verified from there.
    let published = jig(root, &["audit", "publish", "--sign", key.to_str().expect("utf-8")]);
    assert_eq!(published.status.code(), Some(0), "{}", stderr(&published));
    let file = root.join("witness/checkpoint");
    let kept = fs_err::read_to_string(&file).expect("published");
    assert_eq!(kept.lines().take(3).collect::<Vec<_>>(), lines[..3]);
    let verified = jig(root, &["audit", "verify", "--expect", file.to_str().expect("utf-8")]);
    assert_eq!(verified.status.code(), Some(0), "{}", stderr(&verified));
    let said = String::from_utf8_lossy(&verified.stdout);
    assert!(
        said.contains("checkpoint of jig.acme.example/ops verifies with the project's key"),
        "{said}"
    );
    assert!(said.contains(&format!("holds the expected packet {seq}")), "{said}");

    // A note changed by hand, or signed by another key, is not trusted.
    let changed = root.join("changed.note");
    fs_err::write(&changed, kept.replacen(&format!("\n{seq}\n"), &format!("\n{}\n", seq - 1), 1))
        .expect("write");
    let refused = jig(root, &["audit", "verify", "--expect", changed.to_str().expect("utf-8")]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stdout).contains("not trusted"));
    let other = root.join("other.key");
    assert_eq!(
        jig(root, &["audit", "keygen", other.to_str().expect("utf-8")]).status.code(),
        Some(0)
    );
    let forged = root.join("forged.note");
    let by_other = jig(
        root,
        &["audit", "publish", "--sign", other.to_str().expect("utf-8"), "--to", "forged.note"],
    );
    assert_eq!(by_other.status.code(), Some(0), "{}", stderr(&by_other));
    let refused = jig(root, &["audit", "verify", "--expect", forged.to_str().expect("utf-8")]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stdout).contains("no signature in the note verifies"));

    // The chain cut short and its head rewritten to match: the published note says so.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let store = jig_audit::Store::open(&root.join(".jig/audit.db").display().to_string())
            .await
            .expect("open");
        for statement in [
            "DROP TRIGGER packets_no_delete".to_owned(),
            format!("DELETE FROM packets WHERE seq > {}", seq - 2),
            format!(
                "UPDATE chain_head SET seq = {0}, hash = (SELECT hash FROM packets WHERE seq = {0}) WHERE id = 1",
                seq - 2
            ),
        ] {
            store.execute_raw(&statement).await.expect("sql");
        }
        store.close().await;
    });
    let cut = jig(root, &["audit", "verify", "--expect", file.to_str().expect("utf-8")]);
    assert_eq!(cut.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&cut.stdout).contains("packets were removed"));
}

#[test]
fn publish_puts_the_note_to_a_url_and_says_when_the_server_refuses() {
    let (dir, key) = project();
    let root = dir.path();
    // A real HTTP server on loopback: the first PUT is refused, the second kept.
    let (base, server) = crate::receiver::serve(vec!["503 Service Unavailable", "201 Created"]);
    let url = format!("{base}/logs/acme/checkpoint");
    let key = key.to_str().expect("utf-8");
    let refused = jig(root, &["audit", "publish", "--sign", key, "--to", &url]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(stderr(&refused).contains("503"), "{}", stderr(&refused));
    let kept = jig(root, &["audit", "publish", "--sign", key, "--to", &url]);
    assert_eq!(kept.status.code(), Some(0), "{}", stderr(&kept));
    let bodies = server.join().expect("server");
    assert!(bodies[1].line.starts_with("PUT /logs/acme/checkpoint "), "{:?}", bodies[1]);
    let (seq, _) = head(root);
    assert!(
        bodies[1].body.starts_with(&format!("jig.acme.example/ops\n{seq}\n")),
        "{:?}",
        bodies[1]
    );
}

#[test]
fn the_record_exports_as_cloudevents_and_ocsf_one_event_per_packet() {
    let (dir, _) = project();
    let root = dir.path();
    let export = |format: &str| -> Vec<Value> {
        let out = jig(root, &["audit", "export", "--format", format]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("one JSON event per line"))
            .collect()
    };
    let packets = export("jsonl");
    let events = export("cloudevents");
    assert_eq!(events.len(), packets.len());
    for (event, packet) in events.iter().zip(&packets) {
        assert_eq!(event["specversion"], "1.0");
        assert_eq!(event["id"], packet["hash"]);
        assert_eq!(event["source"], "jig.acme.example/ops");
        assert_eq!(
            event["type"],
            format!("dev.jig.audit.{}", packet["kind"].as_str().expect("kind"))
        );
        assert_eq!(event["jigseq"], packet["seq"]);
        assert_eq!(&event["data"], packet);
    }
    let ocsf = export("ocsf");
    assert_eq!(ocsf.len(), packets.len());
    assert!(
        ocsf.iter()
            .all(|e| e["data"]["class_uid"] == 6003 && e["data"]["metadata"]["version"] == "1.3.0")
    );
    // The write's decision: who asked, the rule, and that a person must decide.
    let decision = ocsf
        .iter()
        .map(|e| &e["data"])
        .find(|e| {
            e["api"]["operation"] == "tool.call.decision"
                && e["resources"][0]["name"] == "file_write"
        })
        .expect("the write's decision");
    assert_eq!(decision["actor"]["user"]["name"], "alice");
    assert_eq!(decision["actor"]["authorizations"][0]["decision"], "require-approval");
    assert!(decision["actor"]["authorizations"][0]["policy"]["name"].is_string());
    // The read's result: a success.
    assert!(ocsf.iter().any(
        |e| e["data"]["api"]["operation"] == "tool.call.result" && e["data"]["status_id"] == 1
    ));

    let bad = jig(root, &["audit", "export", "--format", "csv"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("--format") && stderr(&bad).contains("jsonl, cloudevents, ocsf"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn an_empty_record_has_no_head_to_sign_and_says_so() {
    let dir = tempfile::tempdir().expect("tmp");
    fs_err::write(dir.path().join("jig.yaml"), "name: empty\n").expect("manifest");
    let key = dir.path().join("head.key");
    let keygen = jig(dir.path(), &["audit", "keygen", key.to_str().expect("utf-8")]);
    assert_eq!(keygen.status.code(), Some(0), "{}", stderr(&keygen));
    let signed = jig(dir.path(), &["audit", "head", "--sign", key.to_str().expect("utf-8")]);
    assert_eq!(signed.status.code(), Some(1), "{}", stderr(&signed));
    assert!(signed.stdout.is_empty());
    assert!(
        stderr(&signed)
            .contains("error[E_NOT_FOUND]: nothing recorded yet: there is no head to sign")
    );
}
