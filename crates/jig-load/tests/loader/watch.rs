//! Live reload: `Loader::reload` on its own, and the watcher with real file-system events.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use jig_load::watch::{WatchUpdate, watch};
use jig_load::{LoadOptions, Loader};
use jig_model::diagnostic::codes;

use crate::support::{Project, toolpack};

fn loader(project: &Project) -> Loader {
    Loader::with_options(project.root(), LoadOptions { with_std: false, ..LoadOptions::default() })
}

fn ids(snapshot: &jig_load::Snapshot) -> Vec<String> {
    snapshot.list().map(|t| t.id.clone()).collect()
}

#[test]
fn reload_sees_changes_new_files_deletions_and_ref_targets() {
    let project = Project::with_manifest("name: app\n");
    project
        .file("tools/a.tool.yaml", &toolpack("app.a"))
        .file(
            "tools/b.tool.yaml",
            &toolpack("app.b").replace(
                "outputSchema: { type: object }",
                "outputSchema: { $ref: ../schemas/out.json }",
            ),
        )
        .file("schemas/out.json", r#"{"type": "object", "title": "v1"}"#);
    let mut loader = loader(&project);
    let first = loader.load().expect("valid");
    assert_eq!(ids(&first), ["app.a", "app.b"]);

    // A change to one file.
    project
        .file("tools/a.tool.yaml", &toolpack("app.a").replace("timeoutMs: 1000", "timeoutMs: 7"));
    let second = loader.reload(&[project.path("tools/a.tool.yaml")]).expect("valid");
    assert_eq!(second.get("app.a").map(|t| t.timeout_ms), Some(7));
    // The untouched tool is the very same entry (not re-parsed).
    assert!(std::sync::Arc::ptr_eq(
        first.get("app.b").expect("b"),
        second.get("app.b").expect("b")
    ));

    // A `$ref` target changes: the tools using it are rebuilt.
    project.file("schemas/out.json", r#"{"type": "object", "title": "v2"}"#);
    let third = loader.reload(&[project.path("schemas/out.json")]).expect("valid");
    assert_eq!(third.get("app.b").map(|t| t.output_schema["title"].clone()), Some("v2".into()));

    // A new file, then a deletion.
    project.file("tools/c.tool.yaml", &toolpack("app.c"));
    assert_eq!(
        ids(&loader.reload(&[project.path("tools/c.tool.yaml")]).expect("valid")),
        ["app.a", "app.b", "app.c"]
    );
    std::fs::remove_file(project.path("tools/a.tool.yaml")).expect("rm");
    assert_eq!(
        ids(&loader.reload(&[project.path("tools/a.tool.yaml")]).expect("valid")),
        ["app.b", "app.c"]
    );

    // A broken edit gives diagnostics; fixing it gives a snapshot again.
    project.file("tools/c.tool.yaml", "id: app.c\n");
    let failure = loader.reload(&[project.path("tools/c.tool.yaml")]).expect_err("broken");
    assert!(failure.errors().all(|d| d.file.as_deref() == Some("tools/c.tool.yaml")));
    project.file("tools/c.tool.yaml", &toolpack("app.c"));
    loader.reload(&[project.path("tools/c.tool.yaml")]).expect("valid again");

    // A whole directory removed at once (the watcher reports only the directory).
    project.file("tools/sub/x.tool.yaml", &toolpack("app.x"));
    assert!(
        loader
            .reload(&[project.path("tools/sub/x.tool.yaml")])
            .expect("valid")
            .get("app.x")
            .is_some()
    );
    std::fs::remove_dir_all(project.path("tools/sub")).expect("rm -r");
    assert!(loader.reload(&[project.path("tools/sub")]).expect("valid").get("app.x").is_none());

    // An editor's temporary file next to the tools changes nothing.
    project.file("tools/.c.tool.yaml.swp", "junk");
    assert_eq!(
        ids(&loader.reload(&[project.path("tools/.c.tool.yaml.swp")]).expect("valid")),
        ["app.b", "app.c"]
    );

    // A manifest change re-reads the layout.
    project
        .file("jig.yaml", "name: app\npaths: { tools: other }\n")
        .file("other/d.tool.yaml", &toolpack("app.d"));
    assert_eq!(ids(&loader.reload(&[project.path("jig.yaml")]).expect("valid")), ["app.d"]);
}

#[test]
fn creating_a_missing_ref_target_fixes_the_tool_on_reload() {
    let project = Project::with_manifest("name: app\n");
    project.file(
        "tools/a.tool.yaml",
        &toolpack("app.a")
            .replace("inputSchema: { type: object }", "inputSchema: { $ref: ../schemas/in.json }"),
    );
    let mut loader = loader(&project);
    let failure = loader.load().expect_err("missing schema");
    assert_eq!(failure.errors().next().map(|d| d.code.as_str()), Some(codes::REF_NOT_FOUND));
    project.file("schemas/in.json", r#"{"type": "object"}"#);
    loader.reload(&[project.path("schemas/in.json")]).expect("the new file is picked up");
    std::fs::remove_file(project.path("schemas/in.json")).expect("rm");
    let failure = loader.reload(&[project.path("schemas/in.json")]).expect_err("gone again");
    assert_eq!(failure.errors().next().map(|d| d.code.as_str()), Some(codes::REF_NOT_FOUND));
}

/// Wait for the first update whose result satisfies `done`.
fn wait_for(
    updates: &mpsc::Receiver<WatchUpdate>,
    what: &str,
    done: impl Fn(&WatchUpdate) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match updates.recv_timeout(left) {
            Ok(update) if done(&update) => return,
            Ok(_) => continue,
            Err(_) => break,
        }
    }
    panic!("no update for: {what}");
}

fn has(update: &WatchUpdate, id: &str) -> bool {
    update.result.as_ref().is_ok_and(|s| s.get(id).is_some())
}

#[test]
fn the_watcher_follows_edits_saves_deletions_and_new_files() {
    let project = Project::with_manifest("name: app\n");
    project
        .file("tools/a.tool.yaml", &toolpack("app.a"))
        .file("tools/b.tool.yaml", &toolpack("app.b"));
    let mut loader = loader(&project);
    loader.load().expect("valid");
    let (sender, updates) = mpsc::channel();
    let _handle = watch(loader, Duration::from_millis(50), move |update| {
        let _ = sender.send(update);
    })
    .expect("watch");

    // An in-place edit (truncate + write).
    project
        .file("tools/a.tool.yaml", &toolpack("app.a").replace("timeoutMs: 1000", "timeoutMs: 42"));
    wait_for(&updates, "in-place edit", |u| {
        u.result.as_ref().is_ok_and(|s| s.get("app.a").is_some_and(|t| t.timeout_ms == 42))
    });

    // An editor's atomic save: write a temporary file, rename it over the original.
    project.file(
        "tools/.b.tool.yaml.swp",
        &toolpack("app.b").replace("timeoutMs: 1000", "timeoutMs: 43"),
    );
    std::fs::rename(project.path("tools/.b.tool.yaml.swp"), project.path("tools/b.tool.yaml"))
        .expect("rename");
    wait_for(&updates, "atomic rename", |u| {
        u.result.as_ref().is_ok_and(|s| s.get("app.b").is_some_and(|t| t.timeout_ms == 43))
    });

    // A broken save reports diagnostics, and the next good save recovers.
    project.file("tools/b.tool.yaml", "id: app.b\ntimeoutMs: nope\n");
    wait_for(&updates, "broken save", |u| {
        u.result.as_ref().is_err_and(|f| f.errors().any(|d| d.code == codes::FIELD_TYPE))
    });
    project.file("tools/b.tool.yaml", &toolpack("app.b"));
    wait_for(&updates, "recovered", |u| has(u, "app.b"));

    // A new file.
    project.file("tools/c.tool.yaml", &toolpack("app.c"));
    wait_for(&updates, "new file", |u| has(u, "app.c"));

    // A deletion.
    std::fs::remove_file(project.path("tools/a.tool.yaml")).expect("rm");
    wait_for(&updates, "deletion", |u| {
        u.result.as_ref().is_ok_and(|s| s.get("app.a").is_none() && s.len() == 2)
    });
}

#[test]
fn reading_the_project_triggers_no_reload_and_a_reload_does_not_trigger_the_next() {
    let project = Project::with_manifest("name: app\n");
    project.file("tools/a.tool.yaml", &toolpack("app.a"));
    let mut loader = loader(&project);
    loader.load().expect("valid");
    let (sender, updates) = mpsc::channel();
    let _handle = watch(loader, Duration::from_millis(50), move |update| {
        let _ = sender.send(update);
    })
    .expect("watch");

    // Reading files (as every reload, and many tools, do) changes nothing.
    for _ in 0..5 {
        for file in ["jig.yaml", "tools/a.tool.yaml"] {
            std::fs::read_to_string(project.path(file)).expect("read");
        }
    }
    assert!(
        updates.recv_timeout(Duration::from_millis(600)).is_err(),
        "reading the project reloaded it"
    );

    // One edit gives one reload, which does not set off another by reading the files.
    project
        .file("tools/a.tool.yaml", &toolpack("app.a").replace("timeoutMs: 1000", "timeoutMs: 9"));
    wait_for(&updates, "the edit", |u| {
        u.result.as_ref().is_ok_and(|s| s.get("app.a").is_some_and(|t| t.timeout_ms == 9))
    });
    let echoes = std::iter::from_fn(|| updates.recv_timeout(Duration::from_millis(600)).ok())
        .take(5)
        .count();
    assert_eq!(echoes, 0, "reloads kept coming after one edit");
}
