//! The snapshot: fail-closed, deterministic, sorted.

use jig_model::diagnostic::codes;

use crate::support::{Project, toolpack};

/// The files of a small project, in the order given.
fn files() -> Vec<(&'static str, String)> {
    vec![
        ("jig.yaml", "name: app\nrequire: { lib: vendor/lib }\n".to_owned()),
        ("tools/b.tool.yaml", toolpack("app.b")),
        ("tools/a.tool.yaml", toolpack("app.a")),
        ("tools/sub/c.tool.yaml", toolpack("app.c")),
        ("vendor/lib/jig.yaml", "name: lib\n".to_owned()),
        ("vendor/lib/tools/z.tool.yaml", toolpack("lib.z")),
        (
            "runbooks/r.runbook.yaml",
            "apiVersion: kernel/v0\nmeta: { name: r }\nsteps:\n  - { type: end, outcome: { category: resolved } }\n".to_owned(),
        ),
    ]
}

#[test]
fn the_same_files_give_the_same_hash_whatever_the_order_they_were_written_in() {
    let forward = Project::new();
    for (path, text) in files() {
        forward.file(path, &text);
    }
    let backward = Project::new();
    for (path, text) in files().into_iter().rev() {
        backward.file(path, &text);
    }
    let (a, b) = (forward.snapshot(), backward.snapshot());
    assert_eq!(a.registry_hash(), b.registry_hash());
    assert_eq!(a.registry_hash().len(), 64);
    let ids: Vec<&str> = a.list().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["app.a", "app.b", "app.c", "lib.z"], "list() is sorted by id");
    assert_eq!(a.get("app.c").map(|t| t.source.file.as_str()), Some("tools/sub/c.tool.yaml"));
    assert!(a.get("app.nope").is_none());
    // Loading again gives the same hash too.
    assert_eq!(forward.snapshot().registry_hash(), a.registry_hash());
}

#[test]
fn the_hash_follows_meaning_not_formatting() {
    let project = Project::new();
    for (path, text) in files() {
        project.file(path, &text);
    }
    let before = project.snapshot();
    // A comment and reordered keys: the same tool.
    let reordered = "# the a tool\nversion: 1.0.0\nid: app.a\ndeterministic: true\ntimeoutMs: 1000\n\
                     limits: { maxOutputBytes: 1024, maxInputBytes: 1024 }\ninputSchema: { type: object }\n\
                     outputSchema: { type: object }\nexecution: { cmd: [echo, hi], kind: cli }\n";
    project.file("tools/a.tool.yaml", reordered);
    let after = project.snapshot();
    assert_eq!(before.get("app.a").expect("a").hash, after.get("app.a").expect("a").hash);
    assert_eq!(before.registry_hash(), after.registry_hash());
    // A real change: a different hash.
    project.file(
        "tools/a.tool.yaml",
        &toolpack("app.a").replace("timeoutMs: 1000", "timeoutMs: 2000"),
    );
    assert_ne!(project.snapshot().registry_hash(), before.registry_hash());
}

#[test]
fn one_broken_file_means_no_snapshot_at_all() {
    let project = Project::new();
    for (path, text) in files() {
        project.file(path, &text);
    }
    project.file("vendor/lib/tools/broken.tool.yaml", "id: lib.broken\n");
    let failure = project.load().expect_err("fail-closed");
    assert!(
        failure.errors().all(|d| d.file.as_deref() == Some("vendor/lib/tools/broken.tool.yaml"))
    );
    assert_eq!(failure.errors().next().map(|d| d.code.as_str()), Some(codes::FIELD_MISSING));
}

#[test]
fn tags_filter_the_list() {
    let project = Project::with_manifest("name: app\n");
    project
        .file("tools/a.tool.yaml", &(toolpack("app.a") + "tags: [git, release]\n"))
        .file("tools/b.tool.yaml", &(toolpack("app.b") + "tags: [git]\n"))
        .file("tools/c.tool.yaml", &toolpack("app.c"));
    let snapshot = project.snapshot();
    let tagged: Vec<&str> = snapshot.list_tagged("git").map(|t| t.id.as_str()).collect();
    assert_eq!(tagged, ["app.a", "app.b"]);
    assert_eq!(snapshot.list_tagged("release").count(), 1);
}

#[test]
fn every_project_has_the_built_in_catalog() {
    let project = Project::with_manifest("name: app\n");
    let snapshot = jig_load::load(project.root()).expect("valid");
    let ids: Vec<&str> = snapshot.list().map(|t| t.id.as_str()).collect();
    let mut builtins = jig_model::toolpack::BUILTIN_TOOLS.to_vec();
    builtins.sort_unstable();
    assert_eq!(ids, builtins);
    assert_eq!(snapshot.packages().last().map(|p| p.root.as_str()), Some("<std>"));
}
