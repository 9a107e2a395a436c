//! Plans on engines: a Slurm job is a span from its submission to its collection, sent by
//! the process that collects it (another than the one that submitted it), with the job's
//! own process inside it (`TRACEPARENT` in the job's environment); a container on a Docker
//! API engine gets the span of the tool's process.

use std::path::Path;

use opentelemetry_proto::tonic::trace::v1::Span;

use super::{PARENT, Receiver, TRACE, attributes, hex};
use crate::{jig_env, stderr, stdout_json};

/// A project with a Slurm plan and a Docker plan that each write the `TRACEPARENT` they got.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    std::fs::create_dir_all(root.join("tools")).expect("mkdir");
    std::fs::write(root.join("jig.yaml"), "name: traced-jobs\n").expect("manifest");
    let common = "version: 1.0.0\ndescription: Says its trace context.\nsideEffects: [none]\n\
                  risk: low\ndeterministic: false\ntimeoutMs: 120000\n\
                  limits: {maxInputBytes: 1024, maxOutputBytes: 65536}\n\
                  inputSchema: {type: object}\noutputSchema: {type: object}\n";
    std::fs::write(
        root.join("tools/job.tool.yaml"),
        format!(
            "abiVersion: v1\nid: probe.job\n{common}\
             execution:\n  kind: slurm\n  script: |\n    printf '%s' \"$TRACEPARENT\" > out/traceparent.txt\n\
             \x20 io:\n    outputs:\n      - {{ role: traceparent, type: text/plain, label: Its trace context, srcRelpath: out/traceparent.txt }}\n\
             \x20 resources: {{ cpus: 1, memoryMb: 64, timeLimit: 5m }}\n\
             outputs:\n  - {{ role: traceparent, type: text/plain, label: Its trace context, srcRelpath: out/traceparent.txt }}\n"
        ),
    )
    .expect("slurm tool");
    std::fs::write(
        root.join("tools/container.tool.yaml"),
        format!(
            "abiVersion: v1\nid: probe.container\n{common}\
             execution:\n  kind: docker\n  image: {}\n  command: [/bin/sh, -c, 'printf %s \"$TRACEPARENT\" > /work/out/traceparent.txt']\n\
             outputs:\n  - {{ role: traceparent, type: text/plain, label: Its trace context, path: traceparent.txt }}\n",
            jig_testkit::engines::podman().image
        ),
    )
    .expect("docker tool");
    dir
}

fn run(root: &Path, args: &[&str], extra: &[(&str, &str)]) -> std::process::Output {
    let podman = jig_testkit::engines::podman();
    let slurm = jig_testkit::engines::slurm();
    let conf = slurm.conf.display().to_string();
    let mut env = vec![("DOCKER_HOST", podman.docker_host.as_str()), ("SLURM_CONF", conf.as_str())];
    env.extend_from_slice(extra);
    jig_env(root, args, &env)
}

fn named<'a>(spans: &'a [(String, Span)], name: &str) -> &'a Span {
    let found: Vec<_> = spans.iter().filter(|(_, s)| s.name == name).collect();
    let names: Vec<_> = spans.iter().map(|(_, s)| s.name.as_str()).collect();
    assert_eq!(found.len(), 1, "one span {name} in {names:?}");
    &found[0].1
}

#[test]
fn a_slurm_job_is_a_span_from_submission_to_collection_with_the_job_inside() {
    let receiver = Receiver::http();
    let project = project();
    let root = project.path();
    let state = tempfile::tempdir().expect("tmp");
    let state = state.path().to_str().expect("utf-8");
    let traceparent = format!("00-{TRACE}-{PARENT}-01");
    let otel = ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint.as_str());
    let queued = run(
        root,
        &["call", "probe.job", "--args", "{}"],
        &[otel, ("TRACEPARENT", traceparent.as_str()), ("XDG_STATE_HOME", state)],
    );
    assert_eq!(queued.status.code(), Some(0), "{}", stderr(&queued));
    let queued = stdout_json(&queued);
    assert_eq!(queued["job"]["state"], "queued", "{queued}");
    let request = queued["request_id"].as_str().expect("request id").to_owned();
    let call = receiver.wait_for(1);
    let call = named(&call, "execute_tool probe.job").clone();
    assert_eq!(attributes(&call)["jig.state"], "queued");

    // Another process, with no trace of its own, collects the job and sends its span.
    let collected =
        run(root, &["runs", "collect", &request, "--wait"], &[otel, ("XDG_STATE_HOME", state)]);
    assert_eq!(collected.status.code(), Some(0), "{}", stderr(&collected));
    let done = stdout_json(&collected);
    assert_eq!(done["ok"], true, "{done}");
    let spans = receiver.wait_for(2);
    let job = named(&spans, "job probe.job");
    assert_eq!(hex(&job.trace_id), TRACE, "the caller's trace");
    assert_eq!(job.parent_span_id, call.span_id, "inside the call that submitted it");
    assert!(job.start_time_unix_nano <= call.end_time_unix_nano, "from the submission");
    let job_attributes = attributes(job);
    assert_eq!(job_attributes["jig.state"], "succeeded");
    assert_eq!(job_attributes["jig.job.engine"], "slurm");
    assert_eq!(job_attributes["jig.job.id"], queued["job"]["id"].as_str().expect("job id"));
    // The job ran inside its span.
    let given = traceparent_written(root, &done);
    assert_eq!(given, format!("00-{TRACE}-{}-01", hex(&job.span_id)));
}

#[test]
fn a_container_gets_the_span_of_the_tools_process() {
    let receiver = Receiver::http();
    let project = project();
    let state = tempfile::tempdir().expect("tmp");
    let traceparent = format!("00-{TRACE}-{PARENT}-01");
    let out = run(
        project.path(),
        &["call", "probe.container", "--args", "{}"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint.as_str()),
            ("TRACEPARENT", traceparent.as_str()),
            ("XDG_STATE_HOME", state.path().to_str().expect("utf-8")),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let response = stdout_json(&out);
    let spans = receiver.wait_for(2);
    let call = named(&spans, "execute_tool probe.container");
    let process = named(&spans, "run probe.container");
    assert_eq!(process.parent_span_id, call.span_id);
    assert_eq!(hex(&process.trace_id), TRACE);
    let given = traceparent_written(project.path(), &response);
    assert_eq!(given, format!("00-{TRACE}-{}-01", hex(&process.span_id)));
}

/// What the tool wrote as its `traceparent` artifact.
fn traceparent_written(root: &Path, response: &serde_json::Value) -> String {
    let artifact = response["data"]["artifacts"]
        .as_array()
        .and_then(|a| a.iter().find(|e| e["role"] == "traceparent"))
        .unwrap_or_else(|| panic!("no traceparent artifact in {response}"));
    std::fs::read_to_string(root.join(artifact["path"].as_str().expect("path"))).expect("artifact")
}
