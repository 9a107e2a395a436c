//! `kind: docker` against Podman's Docker API service.

use std::time::Duration;

use jig_audit::RunState;
use serde_json::json;

use super::*;

/// A docker plan running `script` (sh -c) with `$1` = the title and `$2` = the notes' path.
fn tool(id: &str, script: &str, outputs: &str, extra: &str) -> String {
    format!(
        "abiVersion: v1\nid: {id}\nversion: 1.0.0\ndeterministic: true\nsideEffects: [exec]\ntimeoutMs: 60000\n{LIMITS}\n\
         inputSchema:\n  type: object\n  required: [notes, title]\n  properties:\n    notes: {{type: string, format: workspace-path}}\n    title: {{type: string}}\n\
         outputSchema:\n  type: object\n  required: [exit_code, artifacts]\n  properties:\n    exit_code: {{type: integer}}\n    artifacts: {{type: array}}\n\
         templating: {{engine: jinja2}}\n\
         execution:\n  kind: docker\n  image: '{{image}}'\n  command: [/bin/sh, -c, {script:?}, plan]\n  args: [\"{{{{ title }}}}\", \"{{{{ notes }}}}\"]\n  inputs: [{{role: notes, destName: notes.md}}]\n  resources: {{cpus: 1, memoryMb: 64{extra}}}\n\
         outputs:\n{outputs}\n"
    )
}

const REPORT: &str = "  - {role: report, type: text/html, label: The report, path: report.html}";

const RENDER: &str = "echo \"rendering $1\"; { echo \"<h1>$1</h1>\"; sed 's/^- /<li>/' \"$2\"; } > /work/out/report.html";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_docker_plan_runs_to_success_with_exactly_its_outputs_and_its_log() {
    let project = Project::new();
    project
        .tool("render", &tool("t.render", RENDER, REPORT, ""))
        .file("notes/2.4.md", "- faster\n- safer\n");
    let engine = project.engine().await;
    let response =
        call(&engine, "t.render", json!({"notes": "notes/2.4.md", "title": "Release 2.4"})).await;
    assert!(response.ok, "{response:?}");
    assert_eq!(response.data["exit_code"], 0);
    assert_eq!(
        project.artifact(&response, "report"),
        "<h1>Release 2.4</h1>\n<li>faster\n<li>safer\n"
    );
    assert_eq!(project.artifact(&response, "log"), "rendering Release 2.4\n");
    assert_eq!(
        kinds(&engine, &response.request_id).await,
        ["tool.call.request", "tool.call.decision", "tool.call.result"]
    );
    // The container is gone, and so is the run directory.
    assert_eq!(containers("t.render"), "", "containers left behind");
    assert!(!project.root.join(".jig/runs").join(&response.request_id).exists());
}

/// A remote engine's way (forced here with `copy`): inputs copied into the read-only root,
/// outputs out of a volume, as tar through the API; the same results, the same refusals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copied_through_the_api_the_results_and_refusals_are_the_same() {
    let project = Project::with_docker(", copy: true");
    project
        .tool("render", &tool("t.copied", RENDER, REPORT, ""))
        .tool(
            "extra",
            &tool(
                "t.copied_extra",
                "echo a > /work/out/report.html; echo b > /work/out/stray.txt",
                REPORT,
                "",
            ),
        )
        .tool("link", &tool("t.copied_link", "ln -s /etc/passwd /work/out/report.html", REPORT, ""))
        .file("notes/2.4.md", "- faster\n");
    let engine = project.engine().await;
    let args = json!({"notes": "notes/2.4.md", "title": "R"});
    let response = call(&engine, "t.copied", args.clone()).await;
    assert!(response.ok, "{response:?}");
    assert_eq!(project.artifact(&response, "report"), "<h1>R</h1>\n<li>faster\n");
    assert_eq!(code(&call(&engine, "t.copied_extra", args.clone()).await), "E_VALIDATION_FAIL");
    assert_eq!(code(&call(&engine, "t.copied_link", args).await), "E_POLICY");
    assert_eq!(containers("t.copied"), "");
}

/// A remote engine over TCP with mutual TLS: Jig's client certificate opens it; one the
/// engine's CA did not sign, or no TLS at all, does not, and nothing runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_engine_is_reached_over_mutual_tls_and_only_with_the_right_certificate() {
    let front = jig_testkit::tls_front::tls_front(&jig_testkit::engines::podman().docker_host);
    let tls = |cert: &std::path::Path, key: &std::path::Path| {
        format!(
            ", tls: {{ ca: '{}', cert: '{}', key: '{}' }}",
            front.ca.display(),
            cert.display(),
            key.display()
        )
    };
    let args = json!({"notes": "notes/2.4.md", "title": "Over TLS"});

    let project = Project::with_docker_at(&front.host, &tls(&front.cert, &front.key));
    project.tool("render", &tool("t.tls", RENDER, REPORT, "")).file("notes/2.4.md", "- safer\n");
    let response = call(&*project.engine().await, "t.tls", args.clone()).await;
    assert!(response.ok, "{response:?}");
    assert_eq!(project.artifact(&response, "report"), "<h1>Over TLS</h1>\n<li>safer\n");
    assert_eq!(containers("t.tls"), "");

    let rogue = Project::with_docker_at(&front.host, &tls(&front.rogue_cert, &front.rogue_key));
    rogue.tool("render", &tool("t.rogue", RENDER, REPORT, "")).file("notes/2.4.md", "- x\n");
    let refused = call(&*rogue.engine().await, "t.rogue", args.clone()).await;
    assert!(!refused.ok, "a certificate the engine's CA did not sign: {refused:?}");
    assert!(refused.errors[0].message.contains("alert"), "the engine refused it: {refused:?}");
    assert_eq!(containers("t.rogue"), "", "nothing ran");

    // Nor is an engine trusted whose certificate another CA signed than the policy names.
    let other_ca = format!(
        ", tls: {{ ca: '{}', cert: '{}', key: '{}' }}",
        front.rogue_cert.display(),
        front.cert.display(),
        front.key.display()
    );
    let wary = Project::with_docker_at(&front.host, &other_ca);
    wary.tool("render", &tool("t.wary", RENDER, REPORT, "")).file("notes/2.4.md", "- x\n");
    let refused = call(&*wary.engine().await, "t.wary", args.clone()).await;
    assert!(!refused.ok, "an engine the policy's CA did not certify: {refused:?}");
    let message = &refused.errors[0].message;
    assert!(message.contains("certificate"), "{message}");
    assert_eq!(containers("t.wary"), "", "nothing ran");

    // Without TLS the project does not even load: plans are not sent in the clear.
    let plain = Project::with_docker_at(&front.host, "");
    let refused =
        Engine::open(EngineOptions { project: plain.root.clone(), ..EngineOptions::default() })
            .await
            .map(|_| ())
            .expect_err("TCP without TLS");
    assert!(refused.to_string().contains("needs `tls`"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_container_fails_the_call_with_its_exit_code_and_log() {
    let project = Project::new();
    project
        .tool("fail", &tool("t.fail", "echo broken >&2; exit 3", REPORT, ""))
        .file("n.md", "x\n");
    let engine = project.engine().await;
    let response = call(&engine, "t.fail", json!({"notes": "n.md", "title": "x"})).await;
    assert!(!response.ok);
    assert_eq!(code(&response), "E_SHELL");
    let details = response.errors[0].details.as_ref().expect("details");
    assert_eq!(details["exit_code"], 3, "{details}");
    assert!(details["log_tail"].as_str().is_some_and(|l| l.contains("broken")), "{details}");
    assert_eq!(containers("t.fail"), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outputs_missing_or_undeclared_are_refused() {
    let project = Project::new();
    project
        .tool("missing", &tool("t.missing", "true", REPORT, ""))
        .tool(
            "extra",
            &tool(
                "t.extra",
                "echo a > /work/out/report.html; echo b > /work/out/stray.txt",
                REPORT,
                "",
            ),
        )
        .tool("link", &tool("t.link", "ln -s /etc/passwd /work/out/report.html", REPORT, ""))
        .file("n.md", "x\n");
    let engine = project.engine().await;
    let missing = call(&engine, "t.missing", json!({"notes": "n.md", "title": "x"})).await;
    assert_eq!(code(&missing), "E_VALIDATION_FAIL", "{missing:?}");
    assert!(missing.errors[0].message.contains("missing [\"report\"]"), "{missing:?}");
    let extra = call(&engine, "t.extra", json!({"notes": "n.md", "title": "x"})).await;
    assert_eq!(code(&extra), "E_VALIDATION_FAIL", "{extra:?}");
    assert!(extra.errors[0].message.contains("stray.txt"), "{extra:?}");
    let link = call(&engine, "t.link", json!({"notes": "n.md", "title": "x"})).await;
    assert_eq!(code(&link), "E_POLICY", "{link:?}");
    assert!(link.errors[0].message.contains("report.html"), "{link:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_past_its_time_limit_is_stopped_and_removed() {
    let project = Project::new();
    project
        .tool("slow", &tool("t.slow", "sleep 60", REPORT, ", timeLimit: 2s"))
        .file("n.md", "x\n");
    let engine = project.engine().await;
    let started = std::time::Instant::now();
    let response = call(&engine, "t.slow", json!({"notes": "n.md", "title": "x"})).await;
    assert_eq!(code(&response), "E_TIMEOUT", "{response:?}");
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
    assert_eq!(containers("t.slow"), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_stops_the_container_and_records_the_run_cancelled() {
    let project = Project::new();
    project
        .tool("slow", &tool("t.sleeper", "echo started; sleep 60", REPORT, ""))
        .file("n.md", "x\n");
    let engine = project.engine().await;
    let context = caller();
    let cancel = context.cancel.clone();
    let call = tokio::spawn({
        let engine = Arc::clone(&engine);
        async move {
            engine
                .dispatch(request("t.sleeper", json!({"notes": "n.md", "title": "x"})), context)
                .await
        }
    });
    // Cancel once the container runs.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while containers("t.sleeper").is_empty() {
        assert!(std::time::Instant::now() < deadline, "the container never started");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    cancel.cancel();
    let response = call.await.expect("join");
    assert!(!response.ok);
    let run = engine.store().run_of_request(&response.request_id).await.expect("run").expect("run");
    assert_eq!(run.state, RunState::Cancelled);
    assert_eq!(containers("t.sleeper"), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docker_replays_only_a_succeeded_run_and_a_changed_input_is_a_new_run() {
    let project = Project::new();
    let flaky = "if [ -e /work/in/notes.md ] && grep -q fail /work/in/notes.md; then exit 1; fi; echo ok > /work/out/report.html";
    project.tool("flaky", &tool("t.flaky", flaky, REPORT, "")).file("n.md", "fail\n");
    let engine = project.engine().await;
    let args = json!({"notes": "n.md", "title": "x"});
    let failed = call(&engine, "t.flaky", args.clone()).await;
    assert!(!failed.ok);
    // A failed run is not replayed: the same call runs again.
    let again = call(&engine, "t.flaky", args.clone()).await;
    assert!(!again.ok && !again.replayed, "{again:?}");
    // The input changed: a new run id, run for real; then replayed.
    project.file("n.md", "pass\n");
    let first = call(&engine, "t.flaky", args.clone()).await;
    assert!(first.ok && !first.replayed, "{first:?}");
    assert_ne!(first.run_id, failed.run_id, "the run id hashes the input's contents");
    let second = call(&engine, "t.flaky", args).await;
    assert!(second.ok && second.replayed, "{second:?}");
    assert_eq!(second.data, first.data);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_concurrent_docker_calls_all_succeed_with_their_own_outputs() {
    let project = Project::new();
    project.tool("render", &tool("t.many", RENDER, REPORT, ""));
    for i in 0..20 {
        project.file(&format!("n{i}.md"), &format!("- item {i}\n"));
    }
    let engine = project.engine().await;
    let calls: Vec<_> = (0..20)
        .map(|i| {
            let engine = Arc::clone(&engine);
            tokio::spawn(async move {
                call(
                    &engine,
                    "t.many",
                    json!({"notes": format!("n{i}.md"), "title": format!("T{i}")}),
                )
                .await
            })
        })
        .collect();
    for (i, handle) in calls.into_iter().enumerate() {
        let response = handle.await.expect("join");
        assert!(response.ok, "{response:?}");
        assert_eq!(project.artifact(&response, "report"), format!("<h1>T{i}</h1>\n<li>item {i}\n"));
    }
    assert_eq!(containers("t.many"), "");
}

/// The ids of the test engine's containers of `tool`, if any is left (tests run at once: each
/// uses its own tool ids).
pub fn containers(tool: &str) -> String {
    let output = std::process::Command::new(&jig_testkit::engines::podman().podman)
        .args(["ps", "-aq", "--filter", &format!("label=dev.jig.tool={tool}")])
        .output()
        .expect("podman ps");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}
