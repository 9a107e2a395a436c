//! Seed 004: manifests, packages and every branch of the resolution algorithm.

use jig_model::diagnostic::codes;

use crate::support::{Project, toolpack};

/// A tool/v0 tool with one action `run`.
fn gert_tool(name: &str) -> String {
    format!(
        "apiVersion: tool/v0\nmeta: {{ name: {name}, binary: {name} }}\nactions:\n  run: {{ argv: [{name}] }}\n"
    )
}

/// A runbook/v1 that lists `tools` and calls each tool's `run` action.
fn runbook_using(tools: &[&str]) -> String {
    let mut text = format!(
        "apiVersion: runbook/v1\ntools: [{}]\nmeta: {{ name: r }}\nsteps:\n",
        tools.join(", ")
    );
    for (i, tool) in tools.iter().enumerate() {
        text.push_str(&format!(
            "  - {{ id: s{i}, type: tool, tool: {{ name: '{tool}', action: run }} }}\n"
        ));
    }
    text
}

/// A kernel/v0 runbook that invokes `target`.
fn runbook_invoking(target: &str) -> String {
    format!(
        "apiVersion: kernel/v0\nmeta: {{ name: caller }}\nsteps:\n  - {{ id: call, type: invoke, invoke: '{target}' }}\n  - {{ id: done, type: end, outcome: {{ category: resolved }} }}\n"
    )
}

const KERNEL_LEAF: &str = "apiVersion: kernel/v0\nmeta: { name: leaf }\nsteps:\n  - { type: end, outcome: { category: no_action } }\n";

#[test]
fn the_manifest_is_found_by_walking_up() {
    let project = Project::with_manifest("name: acme\n");
    project.file("tools/a.tool.yaml", &toolpack("acme.a")).file("deep/er/still/notes.txt", "");
    let snapshot = project.load_from("deep/er/still").expect("valid");
    assert_eq!(snapshot.root(), project.root().canonicalize().expect("root"));
    assert!(snapshot.get("acme.a").is_some());
    assert_eq!(snapshot.packages()[0].name, "acme");
}

#[test]
fn without_a_manifest_the_directory_is_a_local_only_package() {
    let project = Project::new();
    project
        .file("tools/a.tool.yaml", &toolpack("acme.a"))
        .file("tools/lookup.tool.yaml", &gert_tool("lookup"))
        .file("runbooks/r.runbook.yaml", &runbook_using(&["lookup", "other/thing"]));
    let error = project.error(codes::RESOLVE_PACKAGE);
    assert_eq!(error.message, "unknown package 'other'");
    assert_eq!(error.pointer.as_deref(), Some("/tools/1"));

    project.file("runbooks/r.runbook.yaml", &runbook_using(&["lookup"]));
    let snapshot = project.snapshot();
    assert_eq!(snapshot.packages().len(), 1);
    assert!(snapshot.packages()[0].manifest.is_none());
    assert!(snapshot.runbook("r").is_some());
}

#[test]
fn gert_yaml_is_read_like_jig_yaml() {
    let project = Project::new();
    project
        .file("gert.yaml", "name: tsg\npaths: { runbooks: TSG }\nconfig: { providers: { kusto: { binary: kusto } } }\n")
        .file("tools/lookup.tool.yaml", &gert_tool("lookup"))
        .file("TSG/connection/login.runbook.yaml", &runbook_using(&["lookup"]));
    let snapshot = project.snapshot();
    assert_eq!(snapshot.packages()[0].name, "tsg");
    assert_eq!(snapshot.packages()[0].manifest.as_deref(), Some("gert.yaml"));
    assert!(snapshot.runbook("connection/login").is_some());
}

#[test]
fn jig_yaml_wins_over_gert_yaml_with_a_warning() {
    let project = Project::with_manifest("name: jigname\n");
    project.file("gert.yaml", "name: gertname\n");
    let snapshot = project.snapshot();
    assert_eq!(snapshot.packages()[0].name, "jigname");
    assert_eq!(snapshot.warnings()[0].code, codes::MANIFEST_CONFLICT);
}

#[test]
fn paths_override_the_convention_directories() {
    let project =
        Project::with_manifest("name: acme\npaths: { tools: defs/tools, runbooks: playbooks }\n");
    project
        .file("defs/tools/lookup.tool.yaml", &gert_tool("lookup"))
        .file("tools/ignored.tool.yaml", "this is not read")
        .file("playbooks/net/dns.runbook.yaml", &runbook_using(&["lookup"]))
        .file("runbooks/ignored.runbook.yaml", "neither is this");
    let snapshot = project.snapshot();
    assert!(snapshot.get("lookup.run").is_some());
    assert_eq!(snapshot.runbooks().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["net/dns"]);

    let project = Project::with_manifest("name: acme\npaths: { tools: ../elsewhere }\n");
    assert_eq!(project.error(codes::PACKAGE_PATH).pointer.as_deref(), Some("/paths/tools"));
}

#[test]
fn require_points_at_a_package_root_or_straight_at_a_tools_folder() {
    let project = Project::with_manifest(
        "name: app\nrequire:\n  netkit: vendor/netkit\n  bare: vendor/bare/tools\n",
    );
    project
        .file("vendor/netkit/jig.yaml", "name: netkit\n")
        .file("vendor/netkit/tools/probe.tool.yaml", &gert_tool("probe"))
        .file("vendor/netkit/tools/tls.tool.yaml", &toolpack("netkit.tls"))
        .file("vendor/bare/tools/dig.tool.yaml", &gert_tool("dig"))
        .file(
            "runbooks/r.runbook.yaml",
            &runbook_using(&["netkit/probe", "bare/dig", "netkit/tls"]),
        );
    let snapshot = project.snapshot();
    // tool/v0 ids from a required package carry the package name; toolpack ids are global.
    for id in ["netkit/probe.run", "bare/dig.run", "netkit.tls"] {
        assert!(snapshot.get(id).is_some(), "{id}");
    }
    let names: Vec<&str> = snapshot.packages().iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["app", "bare", "netkit"], "root first, then requires by name");
}

#[test]
fn a_missing_required_package_is_an_error_at_its_require_entry() {
    let project = Project::with_manifest("name: app\nrequire:\n  gone: ../nowhere\n");
    let error = project.error(codes::PACKAGE_NOT_FOUND);
    assert_eq!(error.message, "required package `gone`: `../nowhere` is not a directory");
    assert_eq!((error.file.as_deref(), error.line), (Some("jig.yaml"), Some(3)));
}

#[test]
fn exports_give_consumers_virtual_names_and_file_names_still_resolve() {
    let project = Project::with_manifest("name: app\nrequire: { kusto: vendor/kusto }\n");
    project
        .file(
            "vendor/kusto/jig.yaml",
            "name: kusto\nexports:\n  tools:\n    query: queries/kusto-query\n",
        )
        .file("vendor/kusto/tools/queries/kusto-query.tool.yaml", &gert_tool("kusto-query"))
        .file("vendor/kusto/tools/ingest.tool.yaml", &gert_tool("ingest"))
        .file("runbooks/r.runbook.yaml", &runbook_using(&["kusto/query", "kusto/ingest"]));
    let snapshot = project.snapshot();
    assert!(snapshot.get("kusto/query.run").is_some(), "the alias names the registry entry");
    assert!(snapshot.get("kusto/ingest.run").is_some());

    project.file(
        "vendor/kusto/jig.yaml",
        "name: kusto\nexports:\n  tools:\n    query: queries/kusto-qeury\n",
    );
    let error = project.error(codes::EXPORT_NOT_FOUND);
    assert_eq!(error.file.as_deref(), Some("vendor/kusto/jig.yaml"));
    assert_eq!(error.hint.as_deref(), Some("did you mean `queries/kusto-query`?"));
}

#[test]
fn tool_resolution_errors_use_seed_004_texts() {
    let project = Project::with_manifest("name: app\nrequire: { netkit: vendor/netkit }\n");
    project
        .file("vendor/netkit/jig.yaml", "name: netkit\n")
        .file("vendor/netkit/tools/probe.tool.yaml", &gert_tool("probe"))
        .file("tools/lookup.tool.yaml", &gert_tool("lookup"))
        .file(
            "runbooks/r.runbook.yaml",
            &runbook_using(&["lookpu", "netkit/prob", "netkti/probe"]),
        );
    let diagnostics = project.diagnostics();
    let found: Vec<(&str, &str, Option<&str>)> = diagnostics
        .iter()
        .map(|d| (d.code.as_str(), d.message.as_str(), d.hint.as_deref()))
        .collect();
    assert!(
        found.contains(&(
            codes::RESOLVE_TOOL,
            "tool 'lookpu' not found in package 'app'",
            Some("did you mean `lookup`?")
        )),
        "{found:?}"
    );
    assert!(
        found.contains(&(
            codes::RESOLVE_TOOL,
            "tool 'prob' not found in package 'netkit'",
            Some("did you mean `probe`?")
        )),
        "{found:?}"
    );
    assert!(
        found.contains(&(
            codes::RESOLVE_PACKAGE,
            "unknown package 'netkti'",
            Some("did you mean `netkit/probe`?")
        )),
        "{found:?}"
    );
}

#[test]
fn runbook_references_resolve_locally_by_group_and_across_packages() {
    let project = Project::with_manifest("name: app\nrequire: { shared: vendor/shared }\n");
    project
        .file("vendor/shared/jig.yaml", "name: shared\n")
        .file("vendor/shared/runbooks/reboot.runbook.yaml", KERNEL_LEAF)
        .file("runbooks/leaf.runbook.yaml", KERNEL_LEAF)
        .file("runbooks/connectivity/dns-check.runbook.yaml", KERNEL_LEAF)
        .file("runbooks/a.runbook.yaml", &runbook_invoking("leaf"))
        .file("runbooks/b.runbook.yaml", &runbook_invoking("connectivity/dns-check"))
        .file("runbooks/c.runbook.yaml", &runbook_invoking("shared/reboot"));
    let snapshot = project.snapshot();
    assert!(snapshot.warnings().is_empty());
    assert!(
        snapshot.runbook("shared/reboot").is_some(),
        "required packages' runbooks are in the snapshot"
    );
}

#[test]
fn runbook_resolution_errors_name_the_package() {
    let project = Project::with_manifest("name: app\nrequire: { shared: vendor/shared }\n");
    project
        .file("vendor/shared/jig.yaml", "name: shared\n")
        .file("runbooks/a.runbook.yaml", &runbook_invoking("missing"))
        .file("runbooks/b.runbook.yaml", &runbook_invoking("group/missing"))
        .file("runbooks/c.runbook.yaml", &runbook_invoking("shared/missing"));
    let mut messages: Vec<String> = project
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == codes::RESOLVE_RUNBOOK)
        .map(|d| d.message)
        .collect();
    messages.sort();
    assert_eq!(
        messages,
        [
            "runbook 'group/missing' not found in package 'app'",
            "runbook 'missing' not found in package 'app'",
            "runbook 'missing' not found in package 'shared'",
        ]
    );
}

#[test]
fn a_local_group_named_like_a_required_package_wins_with_a_warning() {
    let project = Project::with_manifest("name: app\nrequire: { net: vendor/net }\n");
    project
        .file("vendor/net/jig.yaml", "name: net\n")
        .file("vendor/net/runbooks/dns.runbook.yaml", KERNEL_LEAF)
        .file("runbooks/net/dns.runbook.yaml", KERNEL_LEAF)
        .file("runbooks/caller.runbook.yaml", &runbook_invoking("net/dns"));
    let snapshot = project.snapshot();
    let warnings = snapshot.warnings();
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].code, codes::RESOLVE_AMBIGUOUS);
    assert_eq!(warnings[0].file.as_deref(), Some("runbooks/caller.runbook.yaml"));
    assert!(warnings[0].message.contains("the local runbook is used"));

    // Proof that the local one is used: remove it, and the same reference fails locally.
    std::fs::remove_file(project.path("runbooks/net/dns.runbook.yaml")).expect("rm");
    std::fs::write(project.path("runbooks/net/other.runbook.yaml"), KERNEL_LEAF).expect("write");
    assert_eq!(
        project.error(codes::RESOLVE_RUNBOOK).message,
        "runbook 'net/dns' not found in package 'app'"
    );
}

#[test]
fn a_require_key_that_differs_from_the_package_name_is_a_warning() {
    let project = Project::with_manifest("name: app\nrequire: { tools: vendor/netkit }\n");
    project.file("vendor/netkit/jig.yaml", "name: netkit\n");
    let snapshot = project.snapshot();
    assert_eq!(snapshot.warnings()[0].code, codes::PACKAGE_NAME_MISMATCH);
    assert_eq!(snapshot.warnings()[0].file.as_deref(), Some("vendor/netkit/jig.yaml"));
}

#[test]
fn requires_are_followed_through_every_package_once() {
    // app → a → b, and app → b: b is loaded once; a's runbook resolves a's own require.
    let project = Project::with_manifest("name: app\nrequire: { a: pkgs/a, b: pkgs/b }\n");
    project
        .file("pkgs/a/jig.yaml", "name: a\nrequire: { b: ../b }\n")
        .file("pkgs/a/runbooks/use-b.runbook.yaml", &runbook_using(&["b/tool"]))
        .file("pkgs/b/jig.yaml", "name: b\n")
        .file("pkgs/b/tools/tool.tool.yaml", &gert_tool("tool"));
    let snapshot = project.snapshot();
    assert_eq!(snapshot.packages().len(), 3);
    assert!(snapshot.runbook("a/use-b").is_some());
}

#[test]
fn two_packages_may_not_share_a_name() {
    let project = Project::with_manifest("name: app\nrequire: { x: one, y: two }\n");
    project.file("one/jig.yaml", "name: same\n").file("two/jig.yaml", "name: same\n");
    assert_eq!(project.error(codes::PACKAGE_DUPLICATE).file.as_deref(), Some("two/jig.yaml"));
}

#[test]
fn the_manifest_is_checked_strictly() {
    let project = Project::with_manifest("name: app\nrequires: { x: y }\npaths: { tool: t }\n");
    let hints: Vec<Option<String>> = project
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == codes::FIELD_UNKNOWN)
        .map(|d| d.hint)
        .collect();
    assert_eq!(
        hints,
        [Some("did you mean `require`?".to_owned()), Some("did you mean `tools`?".to_owned())]
    );

    let project = Project::with_manifest("name: 9lives\n");
    assert_eq!(project.error(codes::FIELD_PATTERN).pointer.as_deref(), Some("/name"));
}
