//! Artifacts read back by hash, and the list of batch jobs.

use jig_audit::{JobRecord, Op, RunRecord, RunState, RunUpdate};
use jig_model::canonical::Sha256Hash;
use serde_json::json;

use crate::support::{ALICE, Served, VIC, send};

/// Store `bytes` where the runtime stores an artifact; its hash.
fn store(served: &Served, bytes: &[u8]) -> String {
    let hash = Sha256Hash::of_bytes(bytes).to_hex();
    let dir = served.dir.path().join(".jig/artifacts/sha256").join(&hash[..2]);
    fs_err::create_dir_all(&dir).expect("mkdir");
    fs_err::write(dir.join(&hash), bytes).expect("write");
    hash
}

#[tokio::test]
async fn an_artifact_is_served_as_a_download_the_browser_never_renders() {
    let served = Served::start().await;
    let page = b"<html><script>fetch('/api/tools')</script>report</html>";
    let hash = store(&served, page);
    let path = format!("/api/artifacts/{hash}?name=release%20notes%22%0d.html");

    assert_eq!(send(served.get(&path), None).await.0, 401, "behind the token");
    let response = served.get(&path).bearer_auth(VIC).send().await.expect("send");
    assert_eq!(response.status(), 200, "a viewer reads what runs produced");
    let header = |name: &str| {
        response.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned()
    };
    assert_eq!(header("content-type"), "application/octet-stream");
    assert_eq!(header("x-content-type-options"), "nosniff");
    assert!(header("content-security-policy").starts_with("sandbox"), "no script runs from it");
    assert_eq!(
        header("content-disposition"),
        "attachment; filename=\"release_notes__.html\"",
        "the name cannot break out of its header"
    );
    assert!(header("cache-control").contains("immutable"), "content-addressed");
    assert_eq!(response.bytes().await.expect("body").as_ref(), page);

    let (status, body) =
        send(served.get(&format!("/api/artifacts/{}", "0".repeat(64))), Some(VIC)).await;
    assert_eq!((status, body["code"].as_str()), (404, Some("E_NOT_FOUND")));
    let (status, body) = send(served.get("/api/artifacts/..%2F..%2Fjig.yaml"), Some(VIC)).await;
    assert_eq!((status, body["code"].as_str()), (400, Some("E_VALIDATION_FAIL")), "{body}");

    let stored = served.dir.path().join(".jig/artifacts/sha256").join(&hash[..2]).join(&hash);
    fs_err::write(&stored, "changed after the run").expect("tamper");
    let (status, body) = send(served.get(&format!("/api/artifacts/{hash}")), Some(VIC)).await;
    assert_eq!((status, body["code"].as_str()), (500, Some("E_FILE_IO")), "{body}");
    assert!(body["message"].as_str().unwrap_or("").contains("no longer matches"), "{body}");
}

fn queued(request: &str) -> RunRecord {
    RunRecord {
        request_id: request.into(),
        run_id: format!("run-{request}"),
        tool: "acme.latency_report".into(),
        version: "1.0.0".into(),
        session_id: Some("web".into()),
        thread_id: None,
        principal: Some("alice".into()),
        params_hash: "p".into(),
        policy_hash: "h".into(),
        deterministic: false,
        state: RunState::Queued,
        rule: None,
        created_us: 1,
        updated_us: 1,
        duration_ms: None,
        response: Some(json!({ "ok": true })),
        error: None,
        replayed_from: None,
        owner: None,
        deadline_us: None,
        person: None,
        definition: None,
        resumed_as: None,
        resumes: None,
    }
}

#[tokio::test]
async fn jobs_are_listed_newest_first_and_a_run_names_its_job() {
    let served = Served::start().await;
    let (status, body) = send(served.get("/api/jobs"), Some(VIC)).await;
    assert_eq!((status, body), (200, json!([])));
    for (n, request) in ["first", "second"].into_iter().enumerate() {
        let job = JobRecord {
            request_id: request.into(),
            engine: "slurm".into(),
            handle: format!("{}", 7 + n),
            dir: "/runs/x".into(),
            tool: json!({}),
            open: true,
            created_us: 10 + i64::try_from(n).expect("small"),
            updated_us: 10,
        };
        served
            .engine
            .store()
            .apply(vec![Op::CreateRun(Box::new(queued(request))), Op::CreateJob(Box::new(job))])
            .await
            .expect("submit");
    }
    served
        .engine
        .store()
        .apply(vec![Op::SetRun(RunUpdate {
            request_id: "first".into(),
            state: Some(RunState::Running),
            ..RunUpdate::default()
        })])
        .await
        .expect("running");

    let (status, body) = send(served.get("/api/jobs?limit=10"), Some(ALICE)).await;
    assert_eq!(status, 200, "{body}");
    let rows: Vec<(&str, &str, &str)> = body
        .as_array()
        .expect("list")
        .iter()
        .map(|j| {
            (
                j["request_id"].as_str().unwrap_or(""),
                j["handle"].as_str().unwrap_or(""),
                j["state"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(rows, [("second", "8", "queued"), ("first", "7", "running")]);
    assert_eq!(body[0]["tool"], "acme.latency_report");

    let (status, detail) = send(served.get("/api/audit/runs/first"), Some(VIC)).await;
    assert_eq!(status, 200, "{detail}");
    assert_eq!(detail["job"]["engine"], "slurm");
    assert_eq!(detail["job"]["handle"], "7");
    assert_eq!(detail["job"]["open"], true);

    let (status, body) = send(served.get("/api/jobs/no-such-call/log"), Some(VIC)).await;
    assert_eq!((status, body), (204, serde_json::Value::Null), "no open job: nothing more");
}
