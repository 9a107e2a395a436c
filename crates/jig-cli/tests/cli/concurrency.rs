//! Many processes on one store, a process killed mid-run, and a tampered record.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{jig, stderr, stdout_json};

/// A project whose `count` tool appends a line per execution; its side effect is allowed.
fn counting_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    std::fs::create_dir_all(root.join("tools")).expect("mkdir");
    std::fs::write(
        root.join("jig.yaml"),
        "name: busy\npolicy:\n  rules:\n    - { tools: [busy.count, busy.hang, busy.stall], action: allow }\n",
    )
    .expect("write");
    let tool = |id: &str, script: &str| {
        format!(
            "id: {id}\nversion: 1.0.0\ndescription: test\ntags: [t]\ndeterministic: false\nsideEffects: [write]\nrisk: medium\n\
             timeoutMs: 60000\nlimits: {{ maxInputBytes: 4096, maxOutputBytes: 65536 }}\n\
             inputSchema: {{ type: object, properties: {{ label: {{ type: string }} }} }}\n\
             outputSchema: {{ type: object }}\n\
             execution: {{ kind: cli, cmd: [sh, -c, '{script}'] }}\n\
             caps: {{ subprocess: true, filesystem: {{ write: [.] }} }}\n"
        )
    };
    std::fs::write(
        root.join("tools/count.tool.yaml"),
        tool("busy.count", "sleep 0.2; echo run >> runs.log; wc -l < runs.log"),
    )
    .expect("write");
    std::fs::write(
        root.join("tools/hang.tool.yaml"),
        tool("busy.hang", "echo $$ > hang.pid; sleep 29.5; echo done > hang.done"),
    )
    .expect("write");
    std::fs::write(
        root.join("tools/stall.tool.yaml"),
        tool("busy.stall", "echo $$ > stall.pid; sleep 28.5; echo done > stall.done"),
    )
    .expect("write");
    dir
}

/// 32 processes started together with the same side-effecting request: one execution, one
/// result, the rest replays, and no caller sees SQLITE_BUSY.
#[test]
fn thirty_two_identical_calls_execute_once() {
    let dir = counting_project();
    let root = dir.path();
    // Create the store first so that all 32 race on the calls, not on migrations too.
    assert_eq!(
        jig(root, &["call", "busy.count", "--args", r#"{"label": "warm-up"}"#]).status.code(),
        Some(0)
    );
    let outputs = together(
        root,
        (0..32).map(|_| {
            ["call", "busy.count", "--args", r#"{"label": "once"}"#].map(str::to_owned).to_vec()
        }),
    );
    let mut replayed = 0;
    for output in &outputs {
        let text = stderr(output);
        assert!(!text.to_lowercase().contains("busy") && !text.contains("locked"), "{text}");
        assert_eq!(output.status.code(), Some(0), "{text}");
        let response = stdout_json(output);
        assert_eq!(response["ok"], true, "{response}");
        replayed += usize::from(response["replayed"] == true);
    }
    assert_eq!(replayed, 31);
    let log = std::fs::read_to_string(root.join("runs.log")).expect("log");
    assert_eq!(log.lines().count(), 2, "warm-up plus exactly one execution: {log}");
    let packets = export(root);
    let executed: Vec<&Value> = packets
        .iter()
        .filter(|p| p["kind"] == "tool.call.result" && p["data"].get("replayed_from").is_none())
        .collect();
    assert_eq!(executed.len(), 2, "one result packet per execution");
    assert_eq!(jig(root, &["audit", "verify"]).status.code(), Some(0));
}

/// Defect: a later process's start-up recovery marked calls failed after their owners had
/// answered them. Rounds of concurrent identical calls: every answered call's record matches
/// its answer, and no answered call has a `tool.call.failed` packet.
#[test]
fn every_answered_call_is_recorded_as_answered_under_concurrent_identical_calls() {
    let dir = counting_project();
    let root = dir.path();
    assert_eq!(jig(root, &["call", "busy.count", "--args", "{}"]).status.code(), Some(0));
    for round in 0..6 {
        let args = format!(r#"{{"label": "round-{round}"}}"#);
        let thread = format!("t-{round}");
        let outputs = together(
            root,
            (0..12).map(|_| {
                ["call", "busy.count", "--args", &args, "--thread", &thread]
                    .map(str::to_owned)
                    .to_vec()
            }),
        );
        let packets = export(root);
        for output in &outputs {
            let response = stdout_json(output);
            assert_eq!(response["ok"], true, "{response}");
            let request_id = response["request_id"].as_str().expect("request id");
            let show = jig(root, &["audit", "show", request_id, "--json"]);
            let run = &stdout_json(&show)["run"];
            assert_eq!(run["state"], "succeeded", "round {round}: answered ok, recorded {run}");
            let failed = packets
                .iter()
                .any(|p| p["request_id"] == request_id && p["kind"] == "tool.call.failed");
            assert!(!failed, "round {round}: {request_id} answered ok but has a failed packet");
        }
    }
    assert_eq!(jig(root, &["audit", "verify"]).status.code(), Some(0));
}

/// Processes writing one PostgreSQL store at once (a team's shared store): the chain stays
/// gapless and verifies, and a side effect asked for by all of them runs exactly once.
#[test]
fn processes_on_one_postgres_store_keep_the_chain_sound_and_run_once() {
    let url = jig_testkit::postgres_url();
    let dir = counting_project();
    let root = dir.path();
    let warm =
        jig(root, &["--db", &url, "call", "busy.count", "--args", r#"{"label": "warm-up"}"#]);
    assert_eq!(warm.status.code(), Some(0), "{}", stderr(&warm));
    let outputs = together(
        root,
        (0..12).map(|n| {
            // Half the same side effect, half calls of their own.
            let label = if n % 2 == 0 { "once".to_owned() } else { format!("own-{n}") };
            let args = format!(r#"{{"label": "{label}"}}"#);
            ["--db", &url, "call", "busy.count", "--args", &args].map(str::to_owned).to_vec()
        }),
    );
    for output in outputs {
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(stdout_json(&output)["ok"], true);
    }
    let log = std::fs::read_to_string(root.join("runs.log")).expect("log");
    assert_eq!(log.lines().count(), 1 + 1 + 6, "warm-up, `once` exactly once, six of their own");
    let verify = jig(root, &["--db", &url, "audit", "verify"]);
    assert_eq!(verify.status.code(), Some(0), "{}", String::from_utf8_lossy(&verify.stdout));
}

/// SIGKILL in the middle of a run; the next start marks it incomplete, the database is sound
/// and the chain verifies.
#[test]
fn a_killed_process_leaves_a_sound_store_and_an_incomplete_run() {
    let dir = counting_project();
    let root = dir.path();
    let mut child = start_call(root, "busy.hang", "hang.pid");
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    // The tool dies with Jig (its sandbox's parent-death signal and PID namespace), even though
    // Jig had no chance to kill it.
    let deadline = Instant::now() + Duration::from_secs(5);
    while sleeping("29.5") {
        assert!(Instant::now() < deadline, "the tool outlived the SIGKILLed jig");
        std::thread::sleep(Duration::from_millis(50));
    }

    let verify = jig(root, &["audit", "verify"]);
    assert_eq!(verify.status.code(), Some(0), "{}", String::from_utf8_lossy(&verify.stdout));
    assert!(String::from_utf8_lossy(&verify.stdout).contains("integrity_check ok"));

    // The next process to open the engine recovers the run.
    let next = jig(root, &["call", "busy.count", "--args", r#"{"label": "after"}"#]);
    assert_eq!(next.status.code(), Some(0), "{}", stderr(&next));
    let packets = export(root);
    let hang = packets
        .iter()
        .find(|p| p["tool"] == "busy.hang")
        .expect("the hang call was recorded before it ran");
    let request_id = hang["request_id"].as_str().expect("request id");
    let show = jig(root, &["audit", "show", request_id, "--json"]);
    let run = &stdout_json(&show)["run"];
    assert_eq!(run["state"], "failed");
    assert!(run["error"].as_str().expect("error").starts_with("incomplete"), "{run}");
    let incomplete =
        packets.iter().any(|p| p["request_id"] == request_id && p["data"]["incomplete"] == true);
    assert!(incomplete, "a tool.call.failed packet marks it");
    assert_eq!(jig(root, &["audit", "verify"]).status.code(), Some(0));
    // Its idempotency key was released: the same call may run again.
    std::fs::remove_file(root.join("hang.pid")).expect("rm");
}

/// SIGTERM (and Ctrl-C) end the call through the engine: the tool stops, the response says
/// cancelled, and the run is recorded as such — not left for recovery.
#[test]
fn sigterm_ends_the_call_with_a_record() {
    let dir = counting_project();
    let root = dir.path();
    let child = start_call(root, "busy.stall", "stall.pid");
    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().expect("kill").success());
    let output = child.wait_with_output().expect("wait");
    let response = stdout_json(&output);
    assert_eq!(response["ok"], false, "{response}");
    assert!(
        response["errors"][0]["message"].as_str().expect("message").contains("cancel"),
        "{response}"
    );
    let request_id = response["request_id"].as_str().expect("request id");
    let show = jig(root, &["audit", "show", request_id, "--json"]);
    let run = &stdout_json(&show)["run"];
    assert_eq!(run["state"], "cancelled", "{run}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while sleeping("28.5") {
        assert!(Instant::now() < deadline, "the tool outlived its cancelled call");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!root.join("stall.done").exists());
}

/// A packet changed behind Jig's back (triggers dropped first) is found by its seq.
#[test]
fn a_tampered_packet_fails_verify_naming_its_seq() {
    let dir = counting_project();
    let root = dir.path();
    for label in ["a", "b"] {
        assert_eq!(
            jig(root, &["call", "busy.count", "--args", &format!(r#"{{"label": "{label}"}}"#)])
                .status
                .code(),
            Some(0)
        );
    }
    let db = root.join(".jig/audit.db");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let store = jig_audit::Store::open(&db.display().to_string()).await.expect("open");
        let refused = store.execute_raw("UPDATE packets SET payload = '{}' WHERE seq = 2").await;
        let refused = refused.expect_err("the trigger refuses updates").to_string();
        assert!(refused.contains("append-only"), "{refused}");
        assert!(
            store.execute_raw("DELETE FROM packets WHERE seq = 2").await.is_err(),
            "and deletes"
        );
        store.execute_raw("DROP TRIGGER packets_no_update").await.expect("drop trigger");
        store
            .execute_raw(
                "UPDATE packets SET payload = replace(payload, 'allow', 'deny') WHERE seq = 2",
            )
            .await
            .expect("tamper");
        store.close().await;
    });
    let verify = jig(root, &["audit", "verify"]);
    assert_eq!(verify.status.code(), Some(1));
    let text = String::from_utf8_lossy(&verify.stdout);
    assert!(text.contains("seq 2"), "{text}");
}

fn export(root: &Path) -> Vec<Value> {
    let output = jig(root, &["audit", "export"]);
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

/// `jig` with each of `commands`, all started before any is waited for; their outputs in order.
fn together(root: &Path, commands: impl Iterator<Item = Vec<String>>) -> Vec<std::process::Output> {
    let children: Vec<_> = commands
        .map(|args| {
            Command::new(env!("CARGO_BIN_EXE_jig"))
                .args(args)
                .current_dir(root)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    children.into_iter().map(|c| c.wait_with_output().expect("wait")).collect()
}

/// `jig call TOOL` started in `root`, returned once the tool has written its `pid_file`.
fn start_call(root: &Path, tool: &str, pid_file: &str) -> std::process::Child {
    let child = Command::new(env!("CARGO_BIN_EXE_jig"))
        .args(["call", tool, "--args", r#"{"label": "x"}"#])
        .current_dir(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(root.join(pid_file)).map_or(true, |t| !t.ends_with('\n')) {
        assert!(Instant::now() < deadline, "the tool never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// Whether a `sleep SECONDS` process is running anywhere on the machine.
fn sleeping(seconds: &str) -> bool {
    std::fs::read_dir("/proc").expect("/proc").flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .is_ok_and(|cmdline| cmdline == format!("sleep\0{seconds}\0").as_bytes())
    })
}
