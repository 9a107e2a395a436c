//! `kind: slurm` and `kind: hybrid` against a single-node Slurm cluster.

use std::time::Duration;

use jig_audit::RunState;
use serde_json::json;

use super::*;

/// A slurm plan: `script` runs in the run directory with `$1` = the data file (`in/data.csv`)
/// and `$2` = the label.
fn tool(id: &str, script: &str, extra_resources: &str) -> String {
    let script: String = script.lines().map(|l| format!("    {l}\n")).collect();
    format!(
        "abiVersion: v1\nid: {id}\nversion: 1.0.0\ndeterministic: true\nsideEffects: [exec]\ntimeoutMs: 120000\n{LIMITS}\n\
         inputSchema:\n  type: object\n  required: [data]\n  properties:\n    data: {{type: string, format: workspace-path}}\n    label: {{type: string, default: none}}\n\
         outputSchema: {{type: object, required: [exit_code, artifacts]}}\n\
         templating: {{engine: jinja2}}\n\
         execution:\n  kind: slurm\n  script: |\n{script}  args: [\"{{{{ data }}}}\", \"{{{{ label | default('') }}}}\"]\n\
         \x20 io:\n    inputs: [{{role: data, dest_relpath: in/data.csv}}]\n    outputs: [{{role: summary, type: text/csv, label: Summary, srcRelpath: out/summary.csv}}]\n\
         \x20 resources: {{cpus: 1, memoryMb: 100{extra_resources}}}\n\
         outputs:\n  - {{role: summary, type: text/csv, label: Summary, srcRelpath: out/summary.csv}}\n"
    )
}

const SUMMARY: &str = "echo \"summing $1\"\nawk -F, 'NR > 1 { n++; s += $2 } END { printf \"count,sum\\n%d,%d\\n\", n, s }' \"$1\" > out/summary.csv";

const DATA: &str = "id,ms\na,10\nb,32\n";

fn hybrid(id: &str, command: &str) -> String {
    format!(
        "abiVersion: v1\nid: {id}\nversion: 1.0.0\ndeterministic: true\nsideEffects: [exec]\ntimeoutMs: 120000\n{LIMITS}\n\
         inputSchema:\n  type: object\n  required: [data]\n  properties:\n    data: {{type: string, format: workspace-path}}\n\
         outputSchema: {{type: object}}\ntemplating: {{engine: jinja2}}\n\
         execution:\n  kind: hybrid\n  image: '{{image}}'\n  command: [/bin/sh, -c, {command:?}, plan]\n  args: [\"{{{{ data }}}}\"]\n\
         \x20 io:\n    inputs: [{{role: data, dest_relpath: in/data.csv}}]\n    outputs: [{{role: summary, type: text/csv, srcRelpath: out/summary.csv}}]\n\
         \x20 resources: {{cpus: 1, memoryMb: 64}}\n\
         outputs:\n  - {{role: summary, type: text/csv, srcRelpath: out/summary.csv}}\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slurm_plan_is_queued_at_once_then_collected_exactly() {
    let project = Project::new();
    project.tool("sum", &tool("s.sum", SUMMARY, "")).file("data/latency.csv", DATA);
    let engine = project.engine().await;
    let queued = call(&engine, "s.sum", json!({"data": "data/latency.csv", "label": "nov"})).await;
    assert!(queued.ok, "{queued:?}");
    let job = queued.job.clone().expect("a queued job");
    assert_eq!((job.engine.as_str(), job.state.as_str()), ("slurm", "queued"));
    assert_eq!(queued.data, serde_json::Value::Null);
    let done = final_response(&engine, &queued.request_id).await;
    assert!(done.ok, "{done:?}");
    assert_eq!(project.artifact(&done, "summary"), "count,sum\n2,42\n");
    assert_eq!(project.artifact(&done, "log"), "summing in/data.csv\n");
    let kinds = kinds(&engine, &queued.request_id).await;
    assert_eq!(kinds[..3], ["tool.call.request", "tool.call.decision", "tool.call.submitted"]);
    assert_eq!(kinds.last().map(String::as_str), Some("tool.call.result"));
    assert!(!project.root.join(".jig/runs").join(&queued.request_id).exists());
    assert_eq!(engine.store().verify().await.expect("verify").first_broken, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hybrid_plan_runs_its_pinned_container_on_the_node() {
    let project = Project::new();
    let command = "wc -l < \"$1\" | tr -d ' ' > /work/out/summary.csv; touch /x 2>/dev/null || echo read-only root";
    project.tool("count", &hybrid("h.count", command)).file("data.csv", DATA);
    let engine = project.engine().await;
    let queued = call(&engine, "h.count", json!({"data": "data.csv"})).await;
    assert!(queued.job.is_some(), "{queued:?}");
    let done = final_response(&engine, &queued.request_id).await;
    assert!(done.ok, "{done:?}");
    assert_eq!(project.artifact(&done, "summary"), "3\n");
    assert_eq!(project.artifact(&done, "log"), "read-only root\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_job_and_wrong_outputs_fail_the_run() {
    let project = Project::new();
    project
        .tool("fails", &tool("s.fails", "echo bad input >&2\nexit 4", ""))
        .tool("missing", &tool("s.missing", "true", ""))
        .tool("extra", &tool("s.extra", "echo x > out/summary.csv\necho y > out/stray.csv", ""))
        .file("d.csv", DATA);
    let engine = project.engine().await;
    let mut requests = Vec::new();
    for tool in ["s.fails", "s.missing", "s.extra"] {
        requests.push(call(&engine, tool, json!({"data": "d.csv"})).await.request_id);
    }
    let fails = final_response(&engine, &requests[0]).await;
    assert_eq!(code(&fails), "E_SHELL", "{fails:?}");
    assert_eq!(fails.errors[0].details.as_ref().expect("details")["exit_code"], 4);
    assert!(
        fails.errors[0].details.as_ref().expect("details")["log_tail"]
            .as_str()
            .is_some_and(|l| l.contains("bad input"))
    );
    let missing = final_response(&engine, &requests[1]).await;
    assert_eq!(code(&missing), "E_VALIDATION_FAIL", "{missing:?}");
    let extra = final_response(&engine, &requests[2]).await;
    assert_eq!(code(&extra), "E_VALIDATION_FAIL", "{extra:?}");
    assert!(extra.errors[0].message.contains("stray.csv"), "{extra:?}");
    for request in &requests {
        let run = engine.store().run_of_request(request).await.expect("run").expect("run");
        assert_eq!(run.state, RunState::Failed);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_past_its_time_limit_is_cancelled_by_jig() {
    let project = Project::new();
    project.tool("slow", &tool("s.slow", "sleep 120", ", timeLimit: 3s")).file("d.csv", DATA);
    let engine = project.engine().await;
    let queued = call(&engine, "s.slow", json!({"data": "d.csv"})).await;
    let done = final_response(&engine, &queued.request_id).await;
    assert_eq!(code(&done), "E_TIMEOUT", "{done:?}");
    assert!(done.errors[0].message.contains("Jig cancelled it"), "{done:?}");
    // Slurm alone would stop it only after a whole minute (and say TIMEOUT); the job ran a few
    // seconds (the time it waited in the queue behind other tests' jobs does not count).
    let id = queued.job.expect("job").id;
    assert_eq!(final_state(&id).await, "CANCELLED");
    let used = queue_field(&id, "%M");
    assert!(used.starts_with("0:0") || used.starts_with("0:1"), "ran for {used}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_job_cancels_it_on_the_scheduler() {
    let project = Project::new();
    project
        .tool("slow", &tool("s.cancel", "echo started; echo password=hunter2; sleep 120", ""))
        .file("d.csv", DATA);
    let engine = project.engine().await;
    let queued = call(&engine, "s.cancel", json!({"data": "d.csv"})).await;
    let id = queued.job.clone().expect("job").id;
    // What it printed so far is readable while it runs, secrets redacted.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let log = loop {
        let log = engine.job_log(&queued.request_id).await.expect("log").expect("an open job");
        if log.text.contains("started") || std::time::Instant::now() > deadline {
            break log;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(log.text.contains("started\n"), "{log:?}");
    assert!(!log.text.contains("hunter2"), "{log:?}");
    // Someone else may not.
    assert!(engine.cancel_job(&queued.request_id, Some("mallory")).await.is_err());
    assert!(engine.cancel_job(&queued.request_id, Some("alice")).await.expect("cancel"));
    let run = engine.store().run_of_request(&queued.request_id).await.expect("run").expect("run");
    assert_eq!(run.state, RunState::Cancelled);
    assert_eq!(final_state(&id).await, "CANCELLED");
    assert_eq!(engine.job_log(&queued.request_id).await.expect("log"), None, "collected");
    // A closed job is not cancelled twice.
    assert!(!engine.cancel_job(&queued.request_id, Some("alice")).await.expect("cancel"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_job_is_never_submitted_twice_and_its_result_replays() {
    let project = Project::new();
    project.tool("sum", &tool("s.once", SUMMARY, "")).file("d.csv", DATA);
    let engine = project.engine().await;
    let args = json!({"data": "d.csv", "label": "x"});
    let first = call(&engine, "s.once", args.clone()).await;
    let second = call(&engine, "s.once", args.clone()).await;
    assert!(second.replayed, "{second:?}");
    let (one, two) = (first.job.clone().expect("job"), second.job.clone().expect("job"));
    assert_eq!(
        (two.id.as_str(), two.request_id.as_str()),
        (one.id.as_str(), first.request_id.as_str())
    );
    assert_eq!(jobs_named(&first.request_id), 1);
    let done = final_response(&engine, &first.request_id).await;
    assert!(done.ok);
    let third = call(&engine, "s.once", args).await;
    assert!(third.replayed && third.job.is_none(), "{third:?}");
    assert_eq!(third.data, done.data);
}

/// `who` in session and thread `place`.
fn as_person(who: &str, place: &str) -> CallContext {
    CallContext {
        session_id: place.to_owned(),
        thread_id: Some(place.to_owned()),
        principal: who.to_owned(),
        ..CallContext::default()
    }
}

/// Issue #26: after the data file was edited, the identical call (same arguments, same thread)
/// answered `replayed: true` with the old job's summary although its run id was new; and bob's
/// identical call, in his own session and thread, was answered with alice's running job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_never_serves_another_run_or_another_persons_job() {
    let project = Project::new();
    project.tool("sum", &tool("s.mine", &format!("sleep 1\n{SUMMARY}"), "")).file("d.csv", DATA);
    let engine = project.engine().await;
    let args = json!({"data": "d.csv"});
    let alice = engine.dispatch(request("s.mine", args.clone()), as_person("alice", "a-1")).await;
    let alices_job = alice.job.clone().expect("alice's job");
    // bob asks the same while alice's job runs: he gets a job of his own.
    let bob = engine.dispatch(request("s.mine", args.clone()), as_person("bob", "b-1")).await;
    assert!(!bob.replayed, "{bob:?}");
    let bobs_job = bob.job.clone().expect("bob's job");
    assert_ne!(bobs_job.id, alices_job.id);
    // alice's own repeat is answered with her job.
    let again = engine.dispatch(request("s.mine", args.clone()), as_person("alice", "a-1")).await;
    assert!(again.replayed && again.job.as_ref().is_some_and(|j| j.id == alices_job.id));
    let first = final_response(&engine, &alice.request_id).await;
    assert_eq!(project.artifact(&first, "summary"), "count,sum\n2,42\n");
    assert!(final_response(&engine, &bob.request_id).await.ok);

    // The input is edited: the same call, same thread, is a new run that reads the new data.
    project.file("d.csv", "id,ms\na,7\n");
    let edited = engine.dispatch(request("s.mine", args.clone()), as_person("alice", "a-1")).await;
    assert!(!edited.replayed, "{edited:?}");
    assert_ne!(edited.run_id, alice.run_id);
    let done = final_response(&engine, &edited.request_id).await;
    assert_eq!(project.artifact(&done, "summary"), "count,sum\n1,7\n");
}

/// Sharing is the policy's opt-in: `replay.shared` lets bob's identical call be answered with
/// alice's job instead of submitting another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_tools_job_answers_everyones_identical_call() {
    let project = Project::new();
    project.policy("replay: { shared: ['s.*'] }");
    project.tool("sum", &tool("s.shared", SUMMARY, "")).file("d.csv", DATA);
    let engine = project.engine().await;
    let args = json!({"data": "d.csv"});
    let alice = engine.dispatch(request("s.shared", args.clone()), as_person("alice", "a-1")).await;
    let bob = engine.dispatch(request("s.shared", args), as_person("bob", "b-1")).await;
    assert!(bob.replayed, "{bob:?}");
    assert_eq!(bob.job.map(|j| j.id), alice.job.map(|j| j.id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submitted_job_outlives_the_engine_that_submitted_it() {
    let project = Project::new();
    project.tool("sum", &tool("s.restart", &format!("sleep 2\n{SUMMARY}"), "")).file("d.csv", DATA);
    let request_id = {
        let engine = project.engine().await;
        let queued = call(&engine, "s.restart", json!({"data": "d.csv"})).await;
        assert!(queued.job.is_some());
        queued.request_id
    };
    // Another process opens the store: start-up recovery leaves the job alone, and it collects.
    let engine = project.engine().await;
    let run = engine.store().run_of_request(&request_id).await.expect("run").expect("run");
    assert!(matches!(run.state, RunState::Queued | RunState::Running), "{:?}", run.state);
    let done = final_response(&engine, &request_id).await;
    assert!(done.ok, "{done:?}");
    assert_eq!(project.artifact(&done, "summary"), "count,sum\n2,42\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_concurrent_slurm_calls_are_all_collected() {
    let project = Project::new();
    project.tool("sum", &tool("s.many", SUMMARY, ""));
    for i in 0..20 {
        project.file(&format!("d{i}.csv"), &format!("id,ms\na,{i}\n"));
    }
    let engine = project.engine().await;
    let calls: Vec<_> = (0..20)
        .map(|i| {
            let engine = Arc::clone(&engine);
            tokio::spawn(async move {
                call(&engine, "s.many", json!({"data": format!("d{i}.csv")})).await
            })
        })
        .collect();
    let mut requests = Vec::new();
    for handle in calls {
        let queued = handle.await.expect("join");
        assert!(queued.job.is_some(), "{queued:?}");
        requests.push(queued.request_id);
    }
    for (i, request) in requests.iter().enumerate() {
        let done = final_response(&engine, request).await;
        assert!(done.ok, "{done:?}");
        assert_eq!(project.artifact(&done, "summary"), format!("count,sum\n1,{i}\n"));
    }
}

/// The scheduler's state of job `id` once it has left `COMPLETING` (its processes reaped).
async fn final_state(id: &str) -> String {
    for _ in 0..100 {
        let state = queue_field(id, "%T");
        if state != "COMPLETING" {
            return state;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    "COMPLETING".to_owned()
}

/// One `squeue` field of job `id`.
fn queue_field(id: &str, format: &str) -> String {
    let output = std::process::Command::new("squeue")
        .args(["--noheader", "--states=all", &format!("--format={format}"), "--jobs", id])
        .env("SLURM_CONF", &jig_testkit::engines::slurm().conf)
        .output()
        .expect("squeue");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// How many jobs the scheduler knows for `request_id`.
fn jobs_named(request_id: &str) -> usize {
    let output = std::process::Command::new("squeue")
        .args(["--noheader", "--states=all", "--format=%j", "--name", &format!("jig-{request_id}")])
        .env("SLURM_CONF", &jig_testkit::engines::slurm().conf)
        .output()
        .expect("squeue");
    String::from_utf8_lossy(&output.stdout).lines().count()
}
