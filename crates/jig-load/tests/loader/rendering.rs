//! What a person reads: rendered diagnostics, as snapshots.

use crate::support::{Project, render, toolpack};

fn broken_project() -> Project {
    let project = Project::with_manifest("name: acme\nrequire: { netkit: vendor/netkit }\n");
    project
        .file(
            "tools/deploy.tool.yaml",
            "id: Acme.Deploy\nversion: \"1.0\"\ndeterministic: true\ntimeout_ms: 3000\n\
             limits: { maxInputBytes: 1024, maxOutputBytes: 0 }\ninputSchema: { $ref: ../schemas/deploy.json }\n\
             outputSchema: { type: objcet }\nexecution:\n  kind: cli\n  cmd: [deploy, \"{{ envirnment }}\"]\n",
        )
        .file("schemas/deploy.json", r#"{"type": "object", "properties": {"environment": {"enum": ["staging", "production"]}}}"#)
        .file("tools/ok.tool.yaml", &toolpack("acme.ok"))
        .file("tools/dup.tool.yaml", &toolpack("acme.ok"))
        .file("vendor/netkit/jig.yaml", "name: netkit\n")
        .file("vendor/netkit/tools/probe.tool.yaml", "apiVersion: tool/v0\nmeta: { name: probe, binary: curl }\nactions:\n  get: { argv: [curl] }\n")
        .file(
            "runbooks/release.runbook.yaml",
            "apiVersion: runbook/v1\ntools: [netkit/prob]\nmeta: { name: release }\nsteps:\n  - { id: a, type: manual }\n  - { id: a, type: invoke, invoke: rollback }\n",
        );
    project
}

#[test]
fn diagnostics_render_for_a_terminal() {
    let project = broken_project();
    let failure = project.load().expect_err("broken");
    insta::assert_snapshot!(render(&failure));
}

#[test]
fn diagnostics_serialize_as_json() {
    let project = broken_project();
    let failure = project.load().expect_err("broken");
    insta::assert_json_snapshot!(failure.diagnostics);
}
