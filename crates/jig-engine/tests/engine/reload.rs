//! Live reload through the engine: valid edits are swapped in, invalid ones refused.

use std::time::{Duration, Instant};

use jig_engine::{Event, RegistryEvent};
use serde_json::json;

use crate::{Project, call};

/// The first registry event `wanted` accepts, within 10 s (a save may be seen as several
/// changes, each reloaded).
async fn wait_for(
    events: &mut jig_engine::Subscription,
    wanted: fn(&RegistryEvent) -> bool,
) -> RegistryEvent {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, events.recv()).await {
            Ok(Ok(Event::Registry(event))) if wanted(&event) => return event,
            Ok(Ok(_)) => {}
            other => panic!("no such registry event: {other:?}"),
        }
    }
}

fn reloaded(event: &RegistryEvent) -> bool {
    matches!(event, RegistryEvent::RegistryReloaded { .. })
}

fn reloaded_echo(event: &RegistryEvent) -> bool {
    matches!(event, RegistryEvent::RegistryReloaded { changed, .. } if changed.iter().any(|c| c.ends_with("echo.tool.yaml")))
}

fn rejected(event: &RegistryEvent) -> bool {
    matches!(event, RegistryEvent::RegistryRejected { .. })
}

#[tokio::test(flavor = "multi_thread")]
async fn edits_are_swapped_in_and_broken_ones_refused() {
    let project = Project::new("");
    let engine = project.engine().await;
    let mut events = engine.subscribe();
    let _watch = engine.watch().expect("watch");
    let file = project.path("tools/echo.tool.yaml");
    let text = std::fs::read_to_string(&file).expect("read");

    std::fs::write(&file, text.replace("Print a text back, unchanged.", "Echo, edited."))
        .expect("write");
    // The edit's reload names the file (a save can also arrive as a directory event first).
    wait_for(&mut events, reloaded_echo).await;
    assert_eq!(engine.get("t.echo").expect("t.echo").description, "Echo, edited.");

    // A broken edit: refused with its diagnostics, and the last valid registry keeps serving.
    std::fs::write(&file, text.replace("timeoutMs: 10000", "timeoutMs: 0")).expect("write");
    if let RegistryEvent::RegistryRejected { diagnostics, .. } =
        wait_for(&mut events, rejected).await
    {
        assert!(diagnostics.iter().any(|d| d.code == "field.range"), "{diagnostics:?}");
    }
    assert_eq!(engine.get("t.echo").expect("still there").description, "Echo, edited.");
    assert!(call(&engine, "t.echo", json!({ "text": "still works" })).await.ok);

    // A policy edit changes decisions from the next call on.
    project.set_policy("rules:\n  - { tools: [t.echo], action: deny }");
    std::fs::write(&file, &text).expect("write");
    while engine.policy().config().rules.len() != 1 {
        wait_for(&mut events, reloaded).await;
    }
    let denied = call(&engine, "t.echo", json!({ "text": "x" })).await;
    assert_eq!(crate::code(&denied), "E_POLICY");
}

/// A surface that stays open (`jig serve`, `jig mcp`, the desktop app) opens its engine with
/// `watch`: the watch begins with the one load, before the store opens and the surface starts.
async fn watched(project: &Project) -> std::sync::Arc<jig_engine::Engine> {
    jig_engine::Engine::open(jig_engine::EngineOptions {
        project: project.root.clone(),
        watch: true,
        ..jig_engine::EngineOptions::default()
    })
    .await
    .expect("open")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_watched_engine_loads_the_project_once_and_its_own_writes_reload_nothing() {
    let project = Project::new("");
    let engine = watched(&project).await;
    let opened = engine.snapshot();
    let _watch = engine.watch().expect("watch");
    // The registry is the open's own: `watch` did not load the project again.
    assert!(std::sync::Arc::ptr_eq(&opened, &engine.snapshot()));
    // The store was created after the watch began; a call's writes there reload nothing.
    assert!(call(&engine, "t.echo", json!({ "text": "a write to the store" })).await.ok);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(std::sync::Arc::ptr_eq(&opened, &engine.snapshot()), "reloaded by its own store");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_change_made_while_a_watched_engine_opens_is_heard() {
    let project = Project::new("");
    let engine = watched(&project).await;
    let mut events = engine.subscribe();
    // Between the open and the watch (where the surface starts up), someone saves a file.
    let file = project.path("tools/echo.tool.yaml");
    let text = std::fs::read_to_string(&file).expect("read");
    std::fs::write(&file, text.replace("Print a text back, unchanged.", "Saved meanwhile."))
        .expect("write");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(engine.get("t.echo").expect("t.echo").description, "Print a text back, unchanged.");

    let _watch = engine.watch().expect("watch");
    wait_for(&mut events, reloaded_echo).await;
    assert_eq!(engine.get("t.echo").expect("t.echo").description, "Saved meanwhile.");
}
