//! The audit forwarded live (`config.audit.forward`) to Debian's rsyslog over TLS, with the
//! receiver stopped mid-stream, down while packets are recorded, and started again; and the
//! forwarder itself stopped and started again. Every packet arrives, in order, and a copy is
//! only ever one a receiver can drop by its seq.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use jig_audit::{NewPacket, Op, PacketKind, Store};
use jig_testkit::rsyslog::Rsyslog;
use serde_json::json;

use crate::{jig, stderr};

/// Append `count` packets to the project's store, as recorded calls would be.
fn record(root: &Path, count: usize) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let store =
            Store::open(&root.join(".jig/audit.db").display().to_string()).await.expect("open");
        let mut left = count;
        while left > 0 {
            let batch = left.min(500);
            let ops = (0..batch)
                .map(|i| {
                    Op::Append(NewPacket {
                        kind: PacketKind::CallRequest,
                        session_id: Some("forwarding".to_owned()),
                        thread_id: None,
                        principal: Some("agent".to_owned()),
                        request_id: Some(format!("req-{left}-{i}")),
                        run_id: None,
                        tool: Some("file_read".to_owned()),
                        args_hash: None,
                        data: json!({ "args": { "path": "notes.txt" } }),
                    })
                })
                .collect();
            store.apply(ops).await.expect("append");
            left -= batch;
        }
        store.close().await;
    });
}

/// A project forwarding its audit as `siem` to syslog over TLS on 127.0.0.1:`port`, trusting
/// the CAs in `ca`; `more` adds to the forwarder's entry (`, format: ocsf`).
fn syslog_project(port: u16, ca: &Path, more: &str) -> tempfile::TempDir {
    let project = tempfile::tempdir().expect("tmp");
    std::fs::write(
        project.path().join("jig.yaml"),
        format!(
            "name: forwarding\nconfig:\n  audit:\n    forward:\n      - {{ name: siem, url: \"syslog+tls://127.0.0.1:{port}\", ca: \"{}\"{more} }}\n{LOOPBACK}",
            ca.display()
        ),
    )
    .expect("manifest");
    trust(project.path());
    project
}

/// The policy that lets Jig reach a receiver on loopback.
const LOOPBACK: &str =
    "policy:\n  network: { allowed_domains: [\"127.0.0.1\"], allow_private: true }\n";

/// The person running Jig read the forwarder and consented (consent.rs tests before).
fn trust(root: &Path) {
    let trusted = crate::jig(root, &["trust", "--yes"]);
    assert_eq!(trusted.status.code(), Some(0), "{}", stderr(&trusted));
}

/// `jig audit forward` in `root`, in the background.
fn forwarder(root: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_jig"))
        .args(["audit", "forward"])
        .current_dir(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("jig audit forward")
}

/// Stop a forwarder as a service manager would (SIGTERM): what it said.
fn stop(forwarder: std::process::Child) -> std::process::Output {
    let _ = Command::new("kill").args(["-TERM", &forwarder.id().to_string()]).status();
    forwarder.wait_with_output().expect("forwarder")
}

fn head(root: &Path) -> i64 {
    let out = jig(root, &["audit", "head"]);
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .expect("seq")
        .parse()
        .expect("seq")
}

#[test]
fn every_packet_reaches_rsyslog_over_tls_in_order_through_receiver_and_forwarder_restarts() {
    let mut receiver = Rsyslog::start();
    let project = syslog_project(receiver.port(), &receiver.ca(), ", format: ocsf");
    let root = project.path();
    record(root, 20_000);

    let forwarder = forwarder(root);
    // Stopped mid-stream, and down while more is recorded; then back.
    receiver.wait_for(5_000, Duration::from_secs(60));
    receiver.stop();
    record(root, 5_000);
    std::thread::sleep(Duration::from_secs(2));
    receiver.resume();
    receiver.wait_for(15_000, Duration::from_secs(60));
    receiver.stop();
    receiver.resume();
    receiver.wait_for(25_000, Duration::from_secs(90));

    // The forwarder stopped and started again: it goes on from its place in the store.
    let stopped = stop(forwarder);
    assert!(stderr(&stopped).contains("forwarding the audit as `siem`"), "{}", stderr(&stopped));
    record(root, 300);
    let caught_up = jig(root, &["audit", "forward", "--until-caught-up"]);
    assert_eq!(caught_up.status.code(), Some(0), "{}", stderr(&caught_up));
    let total = head(root);
    assert_eq!(total, 25_300);
    assert_eq!(
        String::from_utf8_lossy(&caught_up.stdout).trim(),
        format!("siem: taken up to seq {total}")
    );
    receiver.stop();

    let arrived = receiver.seqs();
    let distinct: BTreeSet<i64> = arrived.iter().copied().collect();
    assert_eq!(
        distinct,
        (1..=total).collect::<BTreeSet<_>>(),
        "every packet, once copies are dropped"
    );
    // In order: after dropping copies, each packet arrives after the one before it.
    let mut seen = BTreeSet::new();
    let firsts: Vec<i64> = arrived.iter().copied().filter(|seq| seen.insert(*seq)).collect();
    assert!(firsts.windows(2).all(|w| w[1] == w[0] + 1), "out of order");
    // Copies are what was resent after a stop, not the stream again.
    // Copies are what was in flight when the receiver stopped, resent: each time the stream
    // went back, it went back a moment's worth (one batch in flight, then a quarter second
    // until it counts as taken), not to where it started. The forwarder's own stop was clean.
    let rewinds: Vec<i64> =
        arrived.windows(2).filter(|w| w[1] <= w[0]).map(|w| w[0] - w[1] + 1).collect();
    assert!(rewinds.len() <= 2, "went back {rewinds:?}");
    assert!(rewinds.iter().all(|&back| back <= 5_000), "went back {rewinds:?}");
    // The events are OCSF inside CloudEvents, as `jig audit export --format ocsf` writes them.
    let log = std::fs::read_to_string(receiver.log()).expect("log");
    let first = log.lines().next().expect("a line");
    assert!(first.starts_with("tool.call.request [jig@32473 seq=\"1\" hash=\""), "{first}");
    let body = &first[first.find('{').expect("json")..];
    let event: serde_json::Value = serde_json::from_str(body).expect("the event is JSON");
    assert_eq!(event["specversion"], "1.0");
    assert_eq!(event["data"]["class_uid"], 6003);
}

#[test]
fn a_splunk_collector_gets_every_packet_once_it_answers_with_the_token_from_the_environment() {
    // The first answer is a failure: that batch is sent again, whole, then the next one.
    let (base, receiver) =
        crate::receiver::serve(vec!["503 Service Unavailable", "200 OK", "200 OK"]);
    let project = tempfile::tempdir().expect("tmp");
    let root = project.path();
    std::fs::write(
        root.join("jig.yaml"),
        format!(
            "name: forwarding\nconfig:\n  audit:\n    forward:\n      - {{ name: splunk, url: \"{base}/services/collector/event\", shape: hec, token_env: JIG_TEST_HEC_TOKEN }}\n{LOOPBACK}"
        ),
    )
    .expect("manifest");
    trust(root);
    record(root, 600);
    let caught_up = crate::jig_env(
        root,
        &["audit", "forward", "--until-caught-up"],
        &[("JIG_TEST_HEC_TOKEN", "hec-token-1")],
    );
    assert_eq!(caught_up.status.code(), Some(0), "{}", stderr(&caught_up));
    assert_eq!(String::from_utf8_lossy(&caught_up.stdout).trim(), "splunk: taken up to seq 600");
    let received = receiver.join().expect("receiver");
    assert!(received.iter().all(|r| r.line.starts_with("POST /services/collector/event ")));
    assert!(received.iter().all(|r| r.header("authorization") == Some("Splunk hec-token-1")));
    assert_eq!(received[0].body, received[1].body, "the refused batch is sent again as it was");
    let seqs: Vec<i64> = received[1..]
        .iter()
        .flat_map(|r| r.body.lines().map(str::to_owned).collect::<Vec<_>>())
        .map(|line| {
            let event: serde_json::Value =
                serde_json::from_str(&line).expect("one JSON object a line");
            assert_eq!(event["sourcetype"], "jig:audit");
            assert!(event["time"].as_f64().is_some_and(|t| t > 1.7e9));
            event["event"]["jigseq"].as_i64().expect("the CloudEvent's seq")
        })
        .collect();
    assert_eq!(seqs, (1..=600).collect::<Vec<_>>());

    // Without its token, it says which variable is missing and sends nothing.
    let missing = jig(root, &["audit", "forward", "--until-caught-up"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains(
            "error[E_VALIDATION_FAIL]: config.audit.forward[0] (`splunk`): `token_env`: `JIG_TEST_HEC_TOKEN` is not set"
        ),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn a_forwarder_jig_cannot_run_is_named_when_the_project_loads() {
    let project = tempfile::tempdir().expect("tmp");
    std::fs::write(
        project.path().join("jig.yaml"),
        "name: forwarding\nconfig:\n  audit:\n    forward:\n      - { name: siem, url: \"syslog://10.0.0.1:514\" }\n      - { name: siem, url: \"https://splunk.example/services/collector\", shape: kafka, format: xml }\n",
    )
    .expect("manifest");
    let check = jig(project.path(), &["validate"]);
    assert_eq!(check.status.code(), Some(3), "{}", stderr(&check));
    for said in [
        "audit forwarder: `syslog://10.0.0.1:514` is neither `syslog+tls://HOST:PORT` nor an http(s) URL\n --> jig.yaml:5:28",
        "two audit forwarders are named `siem`: each keeps its own place\n --> jig.yaml:6:17",
        "audit forwarder: unknown shape `kafka` (hec, elastic)\n --> jig.yaml:6:80",
        "audit forwarder: unknown format `xml` (cloudevents, ocsf, jsonl)\n --> jig.yaml:6:95",
    ] {
        assert!(stderr(&check).contains(said), "{said}: {}", stderr(&check));
    }
}

#[test]
fn a_receiver_the_named_ca_does_not_vouch_for_gets_nothing() {
    // A syslog server on the address, with a certificate of its own CA; the forwarder trusts
    // another CA only: the handshake fails, nothing is sent, and its place stays at 0.
    let receiver = Rsyslog::start();
    let stranger = Rsyslog::start();
    let project = syslog_project(receiver.port(), &stranger.ca(), "");
    let root = project.path();
    record(root, 50);
    let forwarder = forwarder(root);
    std::thread::sleep(Duration::from_secs(3));
    let stopped = stop(forwarder);
    assert_eq!(String::from_utf8_lossy(&stopped.stdout).trim(), "siem: taken up to seq 0");
    assert!(stderr(&stopped).contains("TLS"), "{}", stderr(&stopped));
    assert!(receiver.seqs().is_empty(), "{:?}", receiver.seqs());
}
