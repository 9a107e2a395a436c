//! A runbook's walk and its steps as spans.

use opentelemetry_proto::tonic::trace::v1::Span;

use super::{PARENT, Receiver, TRACE, attributes, hex};
use crate::{jig_env, stderr, stdout_json};

/// A runbook's walk is a span of the trace of whoever started it; each step it runs is a span
/// inside it (the calls of a tool step inside that); a step skipped by its `when` is a span of
/// no length. A second walk, in another process, spans only the steps it ran.
#[test]
fn a_runbook_walk_is_a_span_with_a_span_per_step_and_the_calls_inside() {
    let receiver = Receiver::http();
    let dir = tempfile::tempdir().expect("tmp");
    let state = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("jig.yaml"), "name: traced-runbook\n").expect("manifest");
    std::fs::create_dir_all(dir.path().join("runbooks")).expect("dir");
    std::fs::write(dir.path().join("notes.txt"), "line one\n").expect("notes");
    std::fs::write(dir.path().join("keep.txt"), "keep it\n").expect("evidence");
    std::fs::write(
        dir.path().join("runbooks/read.runbook.yaml"),
        r#"apiVersion: kernel/v0
meta:
  name: read
tools: [std/file_read]
steps:
  - id: read
    type: tool
    tool: std/file_read
    inputs: { path: notes.txt }
  - id: never
    type: manual
    when: "false"
    instructions: never asked
    contract: { side_effects: false }
  - id: look
    type: manual
    instructions: say what to keep
    contract: { side_effects: false }
    required_evidence: [{ kind: text, name: keep }]
  - id: done
    type: end
    outcome: { category: resolved, code: read }
"#,
    )
    .expect("runbook");
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint.as_str()),
        ("TRACEPARENT", &format!("00-{TRACE}-{PARENT}-01")),
        ("XDG_STATE_HOME", state.path().to_str().expect("utf-8")),
    ];
    let out = jig_env(dir.path(), &["runbook", "run", "read", "--json"], &env);
    assert_eq!(out.status.code(), Some(6), "waits for evidence: {}", stderr(&out));
    let id = stdout_json(&out)["id"].as_str().expect("id").to_owned();
    // The first walk: itself, `read` and its call, `never`, and `look` (which waits).
    let spans = receiver.wait_for(5);
    let named = |name: &str| {
        let found: Vec<_> = spans.iter().filter(|(_, s)| s.name == name).collect();
        assert_eq!(found.len(), 1, "one span {name}: {:?}", names(&spans));
        found[0].1.clone()
    };
    let walk = named("runbook read");
    let (read, call, never, look) = (
        named("step read"),
        named("execute_tool file_read"),
        named("step never"),
        named("step look"),
    );
    assert_eq!(hex(&walk.trace_id), TRACE);
    assert_eq!(hex(&walk.parent_span_id), PARENT);
    assert_eq!(attributes(&walk)["jig.runbook.state"], "waiting");
    assert_eq!(attributes(&walk)["jig.runbook.run_id"], id);
    for step in [&read, &never, &look] {
        assert_eq!(step.trace_id, walk.trace_id);
        assert_eq!(step.parent_span_id, walk.span_id, "{} is inside the walk", step.name);
    }
    assert_eq!(call.parent_span_id, read.span_id, "the step's call is inside its span");
    let read_attributes = attributes(&read);
    assert_eq!(read_attributes["jig.runbook.step"], "read");
    assert_eq!(read_attributes["jig.runbook.step.type"], "tool");
    assert_eq!(read_attributes["jig.runbook.step.status"], "success");
    assert!(read.end_time_unix_nano >= call.end_time_unix_nano, "the step outlasts its call");
    assert_eq!(attributes(&never)["jig.runbook.step.status"], "skipped");
    assert_eq!(attributes(&look)["jig.runbook.step.status"], "waiting");

    // Another process resumes the run (`resume` walks it, then walks it again with the
    // evidence): the steps the first walk finished are not spanned again.
    let out = jig_env(
        dir.path(),
        &["runbook", "resume", &id, "--evidence", "look=keep.txt", "--json"],
        &env,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let spans = receiver.wait_for(9);
    let count = |name: &str| spans.iter().filter(|(_, s)| s.name == name).count();
    assert_eq!(count("runbook read"), 3, "{:?}", names(&spans));
    assert_eq!(count("step read"), 1, "{:?}", names(&spans));
    assert_eq!(count("step never"), 1, "{:?}", names(&spans));
    let status = |s: &Span| attributes(s)["jig.runbook.step.status"].clone();
    let looks: Vec<_> = spans.iter().filter(|(_, s)| s.name == "step look").collect();
    assert_eq!(looks.iter().filter(|(_, s)| status(s) == "success").count(), 1);
    assert!(looks.iter().all(|(_, s)| ["success", "waiting"].contains(&status(s).as_str())));
    let done = looks.iter().find(|(_, s)| status(s) == "success").expect("look, done");
    let finished: Vec<_> = spans
        .iter()
        .filter(|(_, s)| {
            s.name == "runbook read" && attributes(s)["jig.runbook.state"] == "finished"
        })
        .collect();
    assert_eq!(finished.len(), 1, "{:?}", names(&spans));
    assert_eq!(done.1.parent_span_id, finished[0].1.span_id, "done in the walk that finished");
}

/// The names of the spans received, for a failing assertion's message.
fn names(spans: &[(String, Span)]) -> Vec<&str> {
    spans.iter().map(|(_, s)| s.name.as_str()).collect()
}
