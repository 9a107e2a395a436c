//! Seed 001's rules for plans, each broken once: the tool does not load, and the diagnostic
//! names the rule, the field and the line.

use jig_model::diagnostic::codes;

use crate::support::Project;

const DIGEST: &str = "sha256:74064a117e42c1fefbe78b441ff430468aef17ad55fae243872e59c7073c9095";

/// A docker plan tool with `execution` and `outputs` as given.
fn docker(execution: &str, outputs: &str) -> String {
    format!(
        "abiVersion: v1\nid: acme.render\nversion: 1.0.0\ndeterministic: true\nsideEffects: [exec]\ntimeoutMs: 60000\n\
         limits: {{maxInputBytes: 4096, maxOutputBytes: 65536}}\n\
         inputSchema: {{type: object, properties: {{notes: {{type: string, format: workspace-path}}, title: {{type: string}}}}}}\n\
         outputSchema: {{type: object}}\ntemplating: {{engine: jinja2}}\n{execution}\n{outputs}\n"
    )
}

fn docker_execution(image: &str, inputs: &str) -> String {
    format!(
        "execution:\n  kind: docker\n  image: {image}\n  command: [/bin/sh, -c, 'cat \"$1\"', x]\n  args: [\"{{{{ notes }}}}\"]\n  inputs: {inputs}"
    )
}

const OUTPUTS: &str =
    "outputs:\n  - {role: report, type: text/html, label: Report, path: report.html}";

fn slurm(io_outputs: &str, outputs: &str, inputs: &str) -> String {
    format!(
        "abiVersion: v1\nid: acme.batch\nversion: 1.0.0\ndeterministic: true\nsideEffects: [exec]\ntimeoutMs: 60000\n\
         limits: {{maxInputBytes: 4096, maxOutputBytes: 65536}}\n\
         inputSchema: {{type: object, properties: {{data: {{type: string, format: workspace-path}}}}}}\n\
         outputSchema: {{type: object}}\n\
         execution:\n  kind: slurm\n  script: |\n    wc -l < in/data.csv > out/summary.csv\n  io:\n    inputs: {inputs}\n    outputs: {io_outputs}\n\
         {outputs}\n"
    )
}

const SUMMARY: &str =
    "[{role: summary, type: text/csv, label: Summary, srcRelpath: out/summary.csv}]";

fn loads(text: &str) {
    let project = Project::with_manifest("name: acme\n");
    project.file("tools/t.tool.yaml", text);
    assert!(
        project
            .snapshot()
            .get(if text.contains("kind: slurm") { "acme.batch" } else { "acme.render" })
            .is_some()
    );
}

fn refused(text: &str, message: &str, pointer: &str) {
    let project = Project::with_manifest("name: acme\n");
    project.file("tools/t.tool.yaml", text);
    let error = project.error(codes::TOOL_PLAN);
    assert!(error.message.contains(message), "{message:?} not in {:?}", error.message);
    assert_eq!(error.pointer.as_deref(), Some(pointer), "{error:?}");
    assert!(
        error.line.is_some() && error.file.as_deref() == Some("tools/t.tool.yaml"),
        "{error:?}"
    );
}

#[test]
fn a_well_formed_plan_of_each_kind_loads() {
    let inputs = "[{role: notes, destName: notes.md}]";
    loads(&docker(&docker_execution(&format!("localhost/busybox@{DIGEST}"), inputs), OUTPUTS));
    let slurm_inputs = "[{role: data, dest_relpath: in/data.csv}]";
    loads(&slurm(SUMMARY, &format!("outputs: {SUMMARY}"), slurm_inputs));
}

#[test]
fn an_image_must_be_pinned_by_digest() {
    let inputs = "[{role: notes, destName: notes.md}]";
    for image in ["localhost/busybox:1.36", "localhost/busybox", "localhost/busybox@sha256:abc"] {
        refused(
            &docker(&docker_execution(image, inputs), OUTPUTS),
            "is not pinned by digest",
            "/execution/image",
        );
    }
}

#[test]
fn the_abi_version_is_required() {
    let inputs = "[{role: notes, destName: notes.md}]";
    let text = docker(&docker_execution(&format!("localhost/busybox@{DIGEST}"), inputs), OUTPUTS)
        .replace("abiVersion: v1\n", "");
    let project = Project::with_manifest("name: acme\n");
    project.file("tools/t.tool.yaml", &text);
    assert!(project.error(codes::TOOL_PLAN).message.contains("abiVersion: v1"));
    let unknown = text.replacen("id:", "abiVersion: v2\nid:", 1);
    let project = Project::with_manifest("name: acme\n");
    project.file("tools/t.tool.yaml", &unknown);
    assert_eq!(project.error(codes::FIELD_ENUM).pointer.as_deref(), Some("/abiVersion"));
}

#[test]
fn inputs_must_be_exactly_the_linked_arguments() {
    let image = format!("localhost/busybox@{DIGEST}");
    refused(
        &docker(&docker_execution(&image, "[]"), OUTPUTS),
        "argument `notes` is a workspace file",
        "/execution/inputs",
    );
    refused(
        &docker(
            &docker_execution(&image, "[{role: notes, destName: a}, {role: title, destName: b}]"),
            OUTPUTS,
        ),
        "plan input `title` is not an input argument",
        "/execution/inputs/1/role",
    );
    refused(
        &docker(
            &docker_execution(&image, "[{role: notes, destName: a}, {role: notes, destName: b}]"),
            OUTPUTS,
        ),
        "plan input `notes` is listed twice",
        "/execution/inputs/1/role",
    );
}

#[test]
fn destinations_are_safe_unique_and_whitespace_strict() {
    let image = format!("localhost/busybox@{DIGEST}");
    for (dest, message) in [
        ("'../etc/passwd'", "has `.` or `..` segments"),
        ("/abs", "is absolute"),
        ("' notes.md'", "surrounding whitespace"),
        ("'notes.md '", "surrounding whitespace"),
    ] {
        refused(
            &docker(
                &docker_execution(&image, &format!("[{{role: notes, destName: {dest}}}]")),
                OUTPUTS,
            ),
            message,
            "/execution/inputs/0/destName",
        );
    }
    let text =
        slurm(SUMMARY, &format!("outputs: {SUMMARY}"), "[{role: data, dest_relpath: data.csv}]");
    refused(&text, "does not start with `in/`", "/execution/io/inputs/0/dest_relpath");
}

#[test]
fn slurm_outputs_must_match_the_declared_ones_exactly() {
    let inputs = "[{role: data, dest_relpath: in/data.csv}]";
    let other_label =
        "[{role: summary, type: text/csv, label: Other, srcRelpath: out/summary.csv}]";
    refused(
        &slurm(other_label, &format!("outputs: {SUMMARY}"), inputs),
        "must match the declared `outputs` exactly",
        "/execution/io/outputs",
    );
    let extra = "[{role: summary, type: text/csv, label: Summary, srcRelpath: out/summary.csv}, {role: plot, type: image/png, srcRelpath: out/p.png}]";
    refused(
        &slurm(extra, &format!("outputs: {SUMMARY}"), inputs),
        "in the plan but not declared or different: `plot`",
        "/execution/io/outputs",
    );
    let outside = "[{role: summary, type: text/csv, label: Summary, srcRelpath: summary.csv}]";
    refused(
        &slurm(outside, &format!("outputs: {outside}"), inputs),
        "does not start with `out/`",
        "/outputs/0/srcRelpath",
    );
}

#[test]
fn a_network_needs_the_network_side_effect() {
    let image = format!("localhost/busybox@{DIGEST}");
    let execution = format!(
        "{}\n  network: bridge",
        docker_execution(&image, "[{role: notes, destName: n.md}]")
    );
    refused(
        &docker(&execution, OUTPUTS),
        "does not declare the `network` side effect",
        "/execution/network",
    );
}

#[test]
fn the_plans_engines_must_be_reachable_as_written() {
    for (plans, message, pointer) in [
        (
            "docker: { host: 'http://build:2375' }",
            "no Docker engine address",
            "/policy/plans/docker/host",
        ),
        ("docker: { host: 'tcp://build:2376' }", "needs `tls`", "/policy/plans/docker/host"),
        ("slurm: { poll: soon }", "no poll interval", "/policy/plans/slurm/poll"),
        (
            "hybrid: { runtime: [''] }",
            "must start with a program",
            "/policy/plans/hybrid/runtime/0",
        ),
    ] {
        let project =
            Project::with_manifest(&format!("name: acme\npolicy:\n  plans:\n    {plans}\n"));
        let error = project.error(codes::POLICY);
        assert!(error.message.contains(message), "{message:?} not in {:?}", error.message);
        assert_eq!(error.pointer.as_deref(), Some(pointer));
    }
}
