//! Presets on disk, the streamed export, and `/metrics`.

use serde_json::{Value, json};

use crate::support::{ALICE, BOB, Served, VIC, send};

#[tokio::test]
async fn presets_are_files_beside_the_tool_that_a_runner_saves_lists_and_deletes() {
    let served = Served::start().await;
    let path = "/api/tools/acme.slugify/presets/release-title";
    let body =
        json!({ "description": "a release", "args": { "title": "Release 1.2", "max_length": 40 } });
    assert_eq!(send(served.put(path, &body), Some(VIC)).await.0, 403, "a viewer may not save");
    let (status, saved) = send(served.put(path, &body), Some(ALICE)).await;
    assert_eq!(status, 200, "{saved}");
    // The file sits beside the tool's definition, for git.
    let file = served.dir.path().join("tools/acme.slugify.release-title.preset.json");
    let on_disk: Value =
        serde_json::from_str(&fs_err::read_to_string(&file).expect("preset file")).expect("json");
    assert_eq!(on_disk["args"]["title"], "Release 1.2");
    assert_eq!(on_disk["tool"], "acme.slugify");

    // A file that is not a valid preset is reported, not served.
    fs_err::write(served.dir.path().join("tools/acme.slugify.broken.preset.json"), "{nope")
        .expect("write");
    let (status, listed) = send(served.get("/api/tools/acme.slugify/presets"), Some(VIC)).await;
    assert_eq!(status, 200);
    assert_eq!(listed["dir"], "tools");
    let names: Vec<&str> = listed["presets"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(names, ["release-title"]);
    assert!(
        listed["problems"][0]
            .as_str()
            .expect("problem")
            .contains("acme.slugify.broken.preset.json")
    );

    // A built-in's presets live in presets/.
    let (status, _) = send(
        served.put(
            "/api/tools/file_read/presets/manifest",
            &json!({ "args": { "path": "jig.yaml" } }),
        ),
        Some(ALICE),
    )
    .await;
    assert_eq!(status, 200);
    assert!(served.dir.path().join("presets/file_read.manifest.preset.json").is_file());

    // A package-qualified id keeps to one file name beside the package's tool (schemathesis
    // found this one answering 500: the `/` made a folder that did not exist).
    let (status, saved) = send(
        served.put("/api/tools/dnskit%2Fdig.cname/presets/mail", &json!({ "args": {} })),
        Some(ALICE),
    )
    .await;
    assert_eq!(status, 200, "{saved}");
    let (_, listed) = send(served.get("/api/tools/dnskit%2Fdig.cname/presets"), Some(VIC)).await;
    assert_eq!(listed["presets"][0]["name"], "mail", "{listed}");
    let dir = served.dir.path().join(listed["dir"].as_str().expect("dir"));
    assert!(dir.join("dnskit~dig.cname.mail.preset.json").is_file(), "{listed}");
    assert_eq!(
        send(served.delete("/api/tools/dnskit%2Fdig.cname/presets/mail"), Some(ALICE)).await.0,
        204
    );

    // Names become file names: anything else is refused, and nothing is written.
    for bad in ["..%2F..%2Fjig", "UPPER", "-dash", "a.b"] {
        let (status, error) =
            send(served.put(&format!("/api/tools/acme.slugify/presets/{bad}"), &body), Some(ALICE))
                .await;
        assert_eq!(status, 400, "{bad}: {error}");
        assert_eq!(error["code"], "E_VALIDATION_FAIL");
    }
    let (status, error) = send(
        served.put("/api/tools/acme.slugify/presets/list", &json!({ "args": [1, 2] })),
        Some(ALICE),
    )
    .await;
    assert_eq!(status, 400, "{error}");
    assert!(error["message"].as_str().expect("message").contains("args"));
    assert_eq!(send(served.put("/api/tools/nope/presets/x", &body), Some(ALICE)).await.0, 404);

    assert_eq!(send(served.delete(path), Some(ALICE)).await.0, 204);
    assert!(!file.exists());
    assert_eq!(send(served.delete(path), Some(ALICE)).await.0, 404);
}

async fn record(served: &Served, title: &str) {
    let response =
        respond(served, "acme.slugify", json!({ "title": title }), "export", "=cmd|' /C calc'!A0")
            .await;
    assert!(response.ok, "{response:?}");
}

#[tokio::test]
async fn the_export_streams_every_filtered_run_as_json_lines_or_csv() {
    let served = Served::start().await;
    for i in 0..3 {
        record(&served, &format!("Release {i}")).await;
    }
    let (status, jsonl) =
        send(served.get("/api/audit/export?tool=acme.slugify&session=export"), Some(VIC)).await;
    assert_eq!(status, 200);
    let lines: Vec<Value> = jsonl
        .as_str()
        .expect("text")
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON object per line"))
        .collect();
    assert_eq!(lines.len(), 3);
    assert!(lines.iter().all(|run| run["tool"] == "acme.slugify" && run["state"] == "succeeded"));

    let (status, csv) =
        send(served.get("/api/audit/export?format=csv&session=export"), Some(VIC)).await;
    assert_eq!(status, 200);
    let csv = csv.as_str().expect("text");
    let rows: Vec<&str> = csv.split("\r\n").filter(|r| !r.is_empty()).collect();
    assert_eq!(rows.len(), 4, "{csv}");
    assert!(rows[0].starts_with("created_us,request_id,run_id,tool"));
    // The principal reads as a formula to a spreadsheet: it is defused.
    assert!(rows[1].contains("'=cmd|' /C calc'!A0"), "{}", rows[1]);

    assert_eq!(send(served.get("/api/audit/export?after=bogus"), Some(VIC)).await.0, 400);
    assert_eq!(send(served.get("/api/audit/export"), None).await.0, 401);
}

#[tokio::test]
async fn metrics_speak_prometheus_behind_the_token() {
    let served = Served::start().await;
    record(&served, "Release").await;
    assert_eq!(send(served.get("/metrics"), None).await.0, 401);
    let (status, text) = send(served.get("/metrics"), Some(BOB)).await;
    assert_eq!(status, 200);
    let text = text.as_str().expect("text");
    assert!(text.contains("# TYPE jig_runs gauge"), "{text}");
    assert!(text.contains("jig_runs{tool=\"acme.slugify\",state=\"succeeded\"} 1"), "{text}");
    assert!(text.contains("jig_calls_total 1"), "{text}");
    // Every sample line is NAME{LABELS} VALUE or NAME VALUE.
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let value = line.rsplit(' ').next().expect("value");
        assert!(value.parse::<f64>().is_ok(), "{line}");
    }
}

#[tokio::test]
async fn what_if_replays_a_draft_policy_against_the_history_and_records_nothing() {
    let served = Served::start().await;
    record(&served, "Release").await;
    let ask = json!({ "tool": "file_write", "args": { "path": "w.txt", "content": "x" } });
    assert_eq!(send(served.post("/api/calls", &ask), Some(ALICE)).await.0, 202);
    // Wait for the write to be recorded as waiting for approval.
    for _ in 0..100 {
        let (_, page) = send(served.get("/api/audit/runs?tool=file_write"), Some(VIC)).await;
        if page["runs"][0]["state"] == "pending_approval" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let head = served.engine.history().head().await.expect("head");

    // The draft: the current policy with writes allowed and low-risk tools denied.
    let (_, current) = send(served.get("/api/policy"), Some(VIC)).await;
    let mut draft = current["config"].clone();
    draft["rules"] = json!([
        { "effects": ["write"], "action": "allow" },
        { "risk": "low", "action": "deny" }
    ]);
    let (status, answer) = send(
        served.post("/api/policy/what-if", &json!({ "draft": draft.to_string(), "last": 10 })),
        Some(VIC),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let calls = answer["calls"].as_array().expect("calls");
    let by_tool = |tool: &str| calls.iter().find(|c| c["tool"] == tool).expect(tool).clone();
    let write = by_tool("file_write");
    assert_eq!(write["was"], "require-approval");
    assert_eq!(write["now"]["action"], "allow");
    assert_eq!(write["now"]["rule"], "rules[0]");
    assert_eq!(write["changed"], true);
    let slug = by_tool("acme.slugify");
    assert_eq!(
        (slug["was"].as_str(), slug["now"]["action"].as_str()),
        (Some("allow"), Some("deny"))
    );
    assert_ne!(answer["draft_hash"], current["hash"]);
    assert_eq!(served.engine.history().head().await.expect("head"), head, "nothing recorded");

    // A draft with a misspelt key is refused, naming it.
    let (status, error) =
        send(served.post("/api/policy/what-if", &json!({ "draft": "rulez: []" })), Some(VIC)).await;
    assert_eq!(status, 400);
    assert!(error["message"].as_str().expect("message").contains("rulez"), "{error}");
}

/// `tool` called with `args` as `principal` in `session`, through the engine: its response.
async fn respond(
    served: &Served,
    tool: &str,
    args: Value,
    session: &str,
    principal: &str,
) -> jig_engine::ToolResponse {
    let request = jig_engine::ToolRequest {
        kind: Default::default(),
        tool: tool.to_owned(),
        args,
        request_id: uuid::Uuid::new_v4().to_string(),
        session_id: Some(session.to_owned()),
        timestamp: None,
    };
    let context = jig_engine::CallContext {
        session_id: session.to_owned(),
        principal: principal.to_owned(),
        ..jig_engine::CallContext::default()
    };
    served.engine.dispatch(request, context).await
}

async fn dispatch(served: &Served, tool: &str, args: Value, session: &str) -> bool {
    respond(served, tool, args, session, "alice").await.ok
}

#[tokio::test]
async fn the_series_counts_calls_per_tool_and_bucket_from_the_store() {
    let served = Served::start().await;
    for title in ["One", "Two", "Three"] {
        assert!(dispatch(&served, "acme.slugify", json!({ "title": title }), "series-a").await);
    }
    // A network tool of medium risk: no rule allows it, so the default decides.
    let deploy = json!({ "service": "checkout", "environment": "staging" });
    let deploy_ok = dispatch(&served, "acme.deploy_status", deploy, "series-b").await;
    let (_, page) = send(served.get("/api/audit/runs?tool=acme.deploy_status"), Some(VIC)).await;
    let deploy_run = page["runs"][0].clone();

    let (status, series) = send(served.get("/api/metrics/series?buckets=12"), Some(VIC)).await;
    assert_eq!(status, 200, "{series}");
    let calls: Vec<u64> =
        serde_json::from_value(series["overall"]["calls"].clone()).expect("calls");
    assert_eq!(calls.len(), 12);
    assert_eq!(calls.iter().sum::<u64>(), 4, "every call of the hour, in some bucket: {series}");
    // The window ends now: the calls just made fall in the last bucket.
    assert_eq!(calls[11], 4);
    assert!(series["overall"]["p50"][11].is_number(), "a latency where runs finished");
    assert!(series["overall"]["p50"][0].is_null(), "none where nothing ran");

    let slugify = &series["tools"][0];
    assert_eq!(slugify["tool"], "acme.slugify", "busiest first: {series}");
    assert_eq!(slugify["calls"], 3);
    assert_eq!(slugify["failed"], 0);
    assert_eq!(slugify["denied"], 0);
    // The window's percentiles are of its runs' own durations (nearest rank of three: the
    // middle one, then the slowest).
    let (_, runs) = send(served.get("/api/audit/runs?tool=acme.slugify"), Some(VIC)).await;
    let mut took: Vec<f64> = runs["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["duration_ms"].as_f64().expect("duration"))
        .collect();
    took.sort_by(f64::total_cmp);
    assert_eq!(took.len(), 3, "{runs}");
    assert_eq!(slugify["p50"].as_f64(), Some(took[1]), "{slugify}");
    assert_eq!(slugify["p95"].as_f64(), Some(took[2]), "{slugify}");
    assert_eq!(slugify["p99"].as_f64(), Some(took[2]), "{slugify}");
    assert_eq!(series["sessions"][0], json!({ "name": "series-a", "count": 3 }));
    assert_eq!(series["sessions"][1], json!({ "name": "series-b", "count": 1 }));
    let denied_total: u64 = serde_json::from_value::<Vec<u64>>(series["overall"]["denied"].clone())
        .expect("denied")
        .iter()
        .sum();
    if deploy_run["state"] == "denied" {
        assert!(!deploy_ok);
        assert_eq!(denied_total, 1);
        assert_eq!(
            series["denials"][0]["name"],
            deploy_run["rule"].as_str().unwrap_or("(no rule)")
        );
    } else {
        assert_eq!(denied_total, 0, "{deploy_run}");
    }

    // A window before any call is empty.
    let (_, old) =
        send(served.get("/api/metrics/series?since_us=1000&until_us=2000&buckets=2"), Some(VIC))
            .await;
    assert_eq!(old["tools"], json!([]));
    assert_eq!(old["overall"]["calls"], json!([0, 0]));

    // The widest window there is: answered, not overflowed (schemathesis found the overflow).
    let (status, widest) = send(
        served.get(&format!(
            "/api/metrics/series?since_us={}&until_us={}&buckets=240",
            i64::MIN,
            i64::MAX
        )),
        Some(VIC),
    )
    .await;
    assert_eq!(status, 200, "{widest}");
    let until_min = format!("until_us={}", i64::MIN);
    let too_long = format!("since_us={}&until_us={}&buckets=1", i64::MIN, i64::MAX);
    for bad in [
        "buckets=0",
        "buckets=241",
        "since_us=2000&until_us=1000",
        "buckets=x",
        &until_min,
        &too_long,
    ] {
        let (status, error) =
            send(served.get(&format!("/api/metrics/series?{bad}")), Some(VIC)).await;
        assert_eq!(status, 400, "{bad}: {error}");
    }
}

/// Ask for a write under the example's policy (it needs approval): the approval's id.
async fn ask_to_write(served: &Served, path: &str) -> String {
    let args = json!({ "path": path, "content": "x" });
    let response = respond(served, "file_write", args, "series-approvals", "alice").await;
    response.waits_for().expect("the write waits for approval").to_string()
}

#[tokio::test]
async fn the_series_counts_approvals_by_what_became_of_them() {
    let served = Served::start().await;
    let denied = ask_to_write(&served, "no.txt").await;
    let approved = ask_to_write(&served, "yes.txt").await;
    let _waiting = ask_to_write(&served, "later.txt").await;
    served.engine.deny(&denied, "bob", Some("not now"), None).await.expect("deny");
    served.engine.approve(&approved, "bob", None).await.expect("approve");

    let (status, series) = send(served.get("/api/metrics/series?buckets=4"), Some(VIC)).await;
    assert_eq!(status, 200, "{series}");
    let counts: std::collections::BTreeMap<String, u64> = series["approvals"]
        .as_array()
        .expect("approvals")
        .iter()
        .map(|c| (c["name"].as_str().expect("name").to_owned(), c["count"].as_u64().expect("n")))
        .collect();
    let expected: std::collections::BTreeMap<String, u64> =
        [("approved", 1), ("denied", 1), ("pending", 1)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
    assert_eq!(counts, expected, "{series}");
}
