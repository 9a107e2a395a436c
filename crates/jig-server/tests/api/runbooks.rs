//! Runbooks over the API: the step graph, a run a runner starts and an approver finishes,
//! people acting in their roles, a second act on one step refused, and the news of each move
//! on the event stream.

use serde_json::{Value, json};

use crate::calls::{events, next_event};
use crate::support::{ALICE, BOB, Served, VIC, send};

const WRITE_UP: &str = "/api/runbooks/incident%2Fwrite-up";

fn edge<'a>(graph: &'a Value, source: &str, target: &str) -> Option<&'a Value> {
    let id = |step: &str| {
        graph["nodes"]
            .as_array()
            .and_then(|nodes| nodes.iter().find(|n| n["step_id"] == step))
            .and_then(|n| n["id"].as_str())
            .map(str::to_owned)
    };
    let (source, target) = (id(source)?, id(target)?);
    graph["edges"]
        .as_array()?
        .iter()
        .find(|e| e["source"] == source.as_str() && e["target"] == target.as_str())
}

#[tokio::test]
async fn a_runbooks_graph_shows_its_steps_arms_and_ends() {
    let served = Served::start().await;
    let (status, list) = send(served.get("/api/runbooks"), Some(VIC)).await;
    assert_eq!(status, 200);
    let names: Vec<&str> =
        list.as_array().expect("list").iter().filter_map(|r| r["name"].as_str()).collect();
    assert!(names.contains(&"incident/write-up") && names.contains(&"release/cut-release"));

    let (status, detail) = send(served.get(WRITE_UP), Some(VIC)).await;
    assert_eq!(status, 200, "{detail}");
    let graph = &detail["graph"];
    let steps: Vec<&str> = graph["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter_map(|n| n["step_id"].as_str())
        .collect();
    assert_eq!(steps, ["rota", "findings", "by_severity", "recorded_end", "file", "filed_end"]);
    assert_eq!(edge(graph, "rota", "findings").expect("in order")["kind"], "next");
    let sev3 = edge(graph, "by_severity", "recorded_end").expect("an arm");
    assert_eq!((&sev3["kind"], &sev3["label"]), (&json!("arm"), &json!("sev3")));
    assert_eq!(edge(graph, "by_severity", "file").expect("the other arm")["label"], "sev1 or sev2");
    assert!(edge(graph, "recorded_end", "file").is_none(), "an end goes nowhere");
    assert_eq!(detail["scenarios"], json!(["filed", "sev3"]));

    // A runbook/v1 tree draws on the same engine: its branch and its invoked runbook.
    let (_, release) = send(served.get("/api/runbooks/release%2Fcut-release"), Some(VIC)).await;
    let kinds: Vec<&str> = release["graph"]["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter_map(|n| n["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"branch") && kinds.contains(&"invoke"), "{kinds:?}");

    let (status, missing) = send(served.get("/api/runbooks/incident%2Fwriteup"), Some(VIC)).await;
    assert_eq!(status, 404);
    assert_eq!(missing["code"], "E_NOT_FOUND");
    assert!(
        missing["message"].as_str().is_some_and(|m| m.contains("did you mean `incident/write-up`"))
    );
}

#[tokio::test]
async fn a_runner_starts_a_run_gives_evidence_and_an_approver_approves_its_write() {
    let served = Served::start().await;
    let mut news = events(&served, VIC).await;
    let start = json!({
        "runbook": "incident/write-up",
        "inputs": { "incident": "INC-9", "week": 12 },
        "stepwise": false,
    });
    assert_eq!(send(served.post("/api/runbook-runs", &start), Some(VIC)).await.0, 403);
    let (status, run) = send(served.post("/api/runbook-runs", &start), Some(ALICE)).await;
    assert_eq!(status, 201, "{run}");
    let id = run["id"].as_str().expect("id").to_owned();
    assert_eq!(run["started_by"], "alice");
    assert_eq!(run["progress"]["status"], "paused");
    let waiting = &run["progress"]["waiting"][0];
    assert_eq!(
        (&waiting["key"], &waiting["need"]["need"]),
        (&json!("findings"), &json!("evidence"))
    );
    assert!(
        waiting["instructions"].as_str().is_some_and(|i| i.starts_with("ada was primary")),
        "rendered with the rota's answer: {waiting}"
    );
    let moved = next_event(&mut news, |e| e["event"] == "RunbookRunChanged").await;
    assert_eq!((&moved["run_id"], &moved["status"]), (&json!(id), &json!("paused")));

    let act = format!("/api/runbook-runs/{id}/act");
    let partial = json!({ "key": "findings", "action": "evidence", "values": { "summary": "x" } });
    let (status, refused) = send(served.post(&act, &partial), Some(ALICE)).await;
    assert_eq!(status, 409);
    assert!(refused["message"].as_str().is_some_and(|m| m.contains("`checked`")), "{refused}");
    let evidence = json!({
        "key": "findings",
        "action": "evidence",
        "values": { "summary": "A config push; rolled back.", "checked": ["dashboards"] },
    });
    assert_eq!(send(served.post(&act, &evidence), Some(VIC)).await.0, 403, "a viewer looks only");
    let (status, run) = send(served.post(&act, &evidence), Some(ALICE)).await;
    assert_eq!(status, 200, "{run}");
    let waiting = &run["progress"]["waiting"][0];
    let key = waiting["key"].as_str().expect("key").to_owned();
    assert_eq!(waiting["need"]["need"], "approval");
    assert_eq!(waiting["inputs"]["path"], "incidents/INC-9.md", "the reviewer sees what will run");
    assert_eq!(run["verdicts"][&key]["decision"]["action"], "require-approval");
    assert_eq!(run["verdicts"][&key]["decision"]["rule"], "rules[0]");
    assert!(!served.dir.path().join("incidents/INC-9.md").exists());

    let approve = json!({ "key": key, "action": "approve" });
    assert_eq!(
        send(served.post(&act, &approve), Some(ALICE)).await.0,
        403,
        "a runner cannot approve"
    );
    let (status, run) = send(served.post(&act, &approve), Some(BOB)).await;
    assert_eq!(status, 200, "{run}");
    assert_eq!(run["progress"]["status"], "completed");
    assert_eq!(run["progress"]["outcome"]["category"], "resolved");
    assert_eq!(run["progress"]["outcome"]["code"], "write_up_filed");
    let written =
        fs_err::read_to_string(served.dir.path().join("incidents/INC-9.md")).expect("filed");
    assert!(written.contains("A config push; rolled back."), "{written}");

    // The step was acted on: a second evidence is a conflict, and the record is unchanged.
    let (status, conflict) = send(served.post(&act, &evidence), Some(ALICE)).await;
    assert_eq!(status, 409, "{conflict}");
    assert_eq!(conflict["code"], "E_CONFLICT");
    let (status, shown) = send(served.get(&format!("/api/runbook-runs/{id}")), Some(VIC)).await;
    assert_eq!(status, 200);
    assert_eq!(shown["progress"], run["progress"]);
    let (status, trace) =
        send(served.get(&format!("/api/runbook-runs/{id}/trace")), Some(VIC)).await;
    assert_eq!(status, 200);
    let events: Vec<(&str, &str)> = trace
        .as_array()
        .expect("packets")
        .iter()
        .map(|p| {
            (p["data"]["event"].as_str().unwrap_or("?"), p["principal"].as_str().unwrap_or("?"))
        })
        .collect();
    for wanted in [
        ("run_start", "alice"),
        ("person", "alice"),
        ("person", "bob"),
        ("outcome_resolved", "kernel"),
    ] {
        assert!(events.contains(&wanted), "{wanted:?} in {events:?}");
    }
    let seqs: Vec<i64> =
        trace.as_array().expect("packets").iter().filter_map(|p| p["seq"].as_i64()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "in chain order");
    let (_, runs) = send(served.get("/api/runbook-runs?limit=5"), Some(VIC)).await;
    assert_eq!(runs[0]["id"], id.as_str());
    assert_eq!(runs[0]["status"], "completed");
}

#[tokio::test]
async fn bad_starts_name_what_is_wrong_and_record_nothing() {
    let served = Served::start().await;
    let bad =
        json!({ "runbook": "incident/write-up", "inputs": { "incident": "1042", "week": 12 } });
    let (status, error) = send(served.post("/api/runbook-runs", &bad), Some(ALICE)).await;
    assert_eq!(status, 400, "{error}");
    assert!(error["message"].as_str().is_some_and(|m| m.contains("incident")), "{error}");
    let unknown = json!({ "runbook": "incident/write-up", "inputs": {}, "colour": "red" });
    assert_eq!(send(served.post("/api/runbook-runs", &unknown), Some(ALICE)).await.0, 400);
    let (_, runs) = send(served.get("/api/runbook-runs"), Some(ALICE)).await;
    assert_eq!(runs, json!([]), "nothing recorded");
    let (status, _) = send(served.get("/api/runbook-runs?limit=0"), Some(ALICE)).await;
    assert_eq!(status, 400);
    let (status, _) = send(served.get("/api/runbook-runs/no-such-run"), Some(ALICE)).await;
    assert_eq!(status, 404);
}

/// Start a write-up run as alice and give its evidence: it then waits on the write's approval.
async fn waiting_for_the_write(served: &Served, incident: &str) -> (String, String) {
    let start = json!({ "runbook": "incident/write-up", "inputs": { "incident": incident, "week": 3 }, "stepwise": false });
    let (_, run) = send(served.post("/api/runbook-runs", &start), Some(ALICE)).await;
    let id = run["id"].as_str().expect("id").to_owned();
    let evidence = json!({ "key": "findings", "action": "evidence", "values": { "summary": "s", "checked": [] } });
    let (_, run) =
        send(served.post(&format!("/api/runbook-runs/{id}/act"), &evidence), Some(ALICE)).await;
    let approval = run["progress"]["waiting"][0]["need"]["approval_id"].as_str().expect("approval");
    (id, approval.to_owned())
}

#[tokio::test]
async fn a_runbook_steps_approval_decided_in_the_approvals_queue_moves_the_run_at_once() {
    let served = Served::start().await;
    let (id, approval) = waiting_for_the_write(&served, "INC-21").await;
    let (status, approved) =
        send(served.post(&format!("/api/approvals/{approval}/approve"), &json!({})), Some(BOB))
            .await;
    assert_eq!(status, 200, "{approved}");
    assert_eq!(approved["runbook_run"], id.as_str());
    let (_, run) = send(served.get(&format!("/api/runbook-runs/{id}")), Some(ALICE)).await;
    assert_eq!(run["progress"]["status"], "completed", "{run}");
    assert!(served.dir.path().join("incidents/INC-21.md").exists());

    let (id, approval) = waiting_for_the_write(&served, "INC-22").await;
    let status =
        send(served.post(&format!("/api/approvals/{approval}/deny"), &json!({})), Some(BOB))
            .await
            .0;
    assert_eq!(status, 204);
    let (_, run) = send(served.get(&format!("/api/runbook-runs/{id}")), Some(ALICE)).await;
    assert_eq!(run["progress"]["status"], "denied", "{run}");
    assert!(!served.dir.path().join("incidents/INC-22.md").exists());
    let (_, approvals) = send(served.get("/api/approvals?all=true"), Some(BOB)).await;
    let asked = approvals.as_array().expect("list").iter().filter(|a| a["tool"] == "file_write");
    assert_eq!(asked.count(), 2, "walking a run again asks nobody twice: {approvals}");

    // Denied from the run itself.
    let (id, _) = waiting_for_the_write(&served, "INC-23").await;
    let deny = json!({ "key": "by_severity/sev1 or sev2/file", "action": "deny" });
    let (status, run) =
        send(served.post(&format!("/api/runbook-runs/{id}/act"), &deny), Some(BOB)).await;
    assert_eq!(status, 200, "{run}");
    assert_eq!(run["progress"]["status"], "denied");
    assert!(
        run["progress"]["failure"]["failure"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("bob denied")),
        "{run}"
    );
}

const ATTACH: &str = "apiVersion: kernel/v0\nmeta: { name: attach }\nsteps:\n  - id: logs\n    type: manual\n    instructions: Attach the service's log.\n    contract: { side_effects: false }\n    required_evidence: [{ kind: attachment, name: log }, { kind: text, name: note }]\n  - id: done\n    type: end\n    outcome: { category: resolved, code: attached }\n";

/// A file attached as evidence is kept content-addressed: the record names it by size and
/// SHA-256 and holds none of its bytes; it downloads as exactly what was attached, never
/// rendered; what is not a file is refused naming the piece.
#[tokio::test]
async fn an_attachment_is_stored_by_its_hash_and_downloads_as_it_was() {
    let served = Served::start_with(&[("playbooks/attach.runbook.yaml", ATTACH)]).await;
    let start = json!({ "runbook": "attach", "stepwise": false });
    let (status, run) = send(served.post("/api/runbook-runs", &start), Some(ALICE)).await;
    assert_eq!(status, 201, "{run}");
    let id = run["id"].as_str().expect("id").to_owned();
    let act = format!("/api/runbook-runs/{id}/act");

    let bad = json!({ "key": "logs", "action": "evidence", "values": { "log": { "name": "x.log", "content_base64": "%%%" }, "note": "n" } });
    let (status, refused) = send(served.post(&act, &bad), Some(ALICE)).await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["code"], "E_VALIDATION_FAIL");
    assert!(refused["message"].as_str().is_some_and(|m| m.contains("`log`")), "{refused}");

    let file = b"12:00 started\n<script>alert(1)</script>\n";
    let encoded = "MTI6MDAgc3RhcnRlZAo8c2NyaXB0PmFsZXJ0KDEpPC9zY3JpcHQ+Cg==";
    let evidence = json!({ "key": "logs", "action": "evidence", "values": {
        "log": { "name": "service.log", "content_base64": encoded, "media_type": "text/html" },
        "note": "the restart is at 12:00" } });
    let (status, run) = send(served.post(&act, &evidence), Some(ALICE)).await;
    assert_eq!(status, 200, "{run}");
    assert_eq!(run["progress"]["status"], "completed");
    let kept = &run["progress"]["variables"]["log"];
    let sha256: String = {
        use sha2::Digest;
        sha2::Sha256::digest(file).iter().map(|b| format!("{b:02x}")).collect()
    };
    assert_eq!((&kept["sha256"], &kept["bytes"]), (&json!(sha256), &json!(file.len())), "{kept}");
    let (_, trace) = send(served.get(&format!("/api/runbook-runs/{id}/trace")), Some(VIC)).await;
    assert!(!trace.to_string().contains(encoded), "the chain holds no bytes of the file");
    assert!(trace.to_string().contains(&sha256), "the chain names the file by its hash");

    let response = served
        .get(&format!("/api/runbook-runs/{id}/attachments/{sha256}"))
        .bearer_auth(VIC)
        .send()
        .await
        .expect("download");
    assert_eq!(response.status().as_u16(), 200);
    let header = |name: &str| {
        response.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned()
    };
    assert_eq!(header("content-type"), "application/octet-stream", "never rendered as html");
    assert_eq!(header("x-content-type-options"), "nosniff");
    assert!(header("content-disposition").contains("service.log"));
    assert_eq!(response.bytes().await.expect("body").as_ref(), file);
    let missing = format!("/api/runbook-runs/{id}/attachments/{}", "0".repeat(64));
    assert_eq!(send(served.get(&missing), Some(VIC)).await.0, 404);
    assert!(served.engine.history().verify(None, None).await.expect("verify").is_ok());
}

#[tokio::test]
async fn a_runner_pauses_a_run_and_a_go_ahead_at_the_held_step_resumes_it() {
    let served = Served::start().await;
    let start = json!({ "runbook": "incident/write-up", "inputs": { "incident": "INC-4", "week": 2 }, "stepwise": false });
    let (_, run) = send(served.post("/api/runbook-runs", &start), Some(ALICE)).await;
    let id = run["id"].as_str().expect("id").to_owned();
    let pause = format!("/api/runbook-runs/{id}/pause");
    assert_eq!(
        send(served.post(&pause, &json!({})), Some(VIC)).await.0,
        403,
        "a viewer looks only"
    );
    let (status, held) = send(served.post(&pause, &json!({})), Some(ALICE)).await;
    assert_eq!(status, 200, "{held}");
    let waiting = &held["progress"]["waiting"][0];
    assert_eq!((&waiting["key"], &waiting["need"]["need"]), (&json!("findings"), &json!("paused")));
    let (status, again) = send(served.post(&pause, &json!({})), Some(BOB)).await;
    assert_eq!((status, &again["code"]), (409, &json!("E_CONFLICT")), "{again}");

    let go = json!({ "key": "findings", "action": "run" });
    let (status, resumed) =
        send(served.post(&format!("/api/runbook-runs/{id}/act"), &go), Some(BOB)).await;
    assert_eq!(status, 200, "{resumed}");
    assert_eq!(resumed["progress"]["waiting"][0]["need"]["need"], "evidence");
    let (_, trace) = send(served.get(&format!("/api/runbook-runs/{id}/trace")), Some(VIC)).await;
    let acts: Vec<(&str, &str)> = trace
        .as_array()
        .expect("packets")
        .iter()
        .filter(|p| p["data"]["event"] == "person")
        .map(|p| {
            let action = p["data"]["action"]["action"].as_str().unwrap_or("?");
            (action, p["principal"].as_str().unwrap_or("?"))
        })
        .collect();
    assert_eq!(acts, [("pause", "alice"), ("run", "bob")]);
}
