//! The selector: deterministic, evidence-based, honest about ties.

use jig_engine::{EngineError, Intent};
use jig_model::SideEffect;
use serde_json::json;

use crate::{Project, caller};

#[tokio::test(flavor = "multi_thread")]
async fn the_same_intent_always_selects_the_same_tool() {
    let project = Project::new("");
    let engine = project.engine().await;
    let intent = Intent {
        summary: "read a file".into(),
        keywords: vec!["read".into()],
        args: Some(json!({ "path": "README.md" })),
        ..Intent::default()
    };
    let first = engine.select(&intent, &caller("s", "a"), None).await.expect("select");
    for _ in 0..5 {
        let again = engine.select(&intent, &caller("s", "a"), None).await.expect("select");
        assert_eq!(again.selected_tool, first.selected_tool);
        assert_eq!(again.candidate_tools, first.candidate_tools);
        assert!((again.confidence - first.confidence).abs() < f64::EPSILON);
        assert_ne!(again.selection_id, first.selection_id);
    }
    assert_eq!(first.selected_tool, "file_read");
    assert_eq!(first.expected_side_effects, [SideEffect::Read]);
    assert!(first.rollback_plan.contains("only reads"), "{}", first.rollback_plan);
    assert!(first.why_selected.contains("read"), "{}", first.why_selected);
    assert!(first.confidence > 0.0 && first.confidence <= 1.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn arguments_that_do_not_fit_pass_to_the_next_candidate() {
    let project = Project::new("");
    let engine = project.engine().await;
    // Both t.echo and t.leak are demo tools without side effects; only t.leak accepts `password`.
    let intent = Intent {
        summary: "demo".into(),
        tags: vec!["demo".into()],
        args: Some(json!({ "password": "x" })),
        ..Intent::default()
    };
    let selection = engine.select(&intent, &caller("s", "a"), None).await.expect("select");
    assert_eq!(selection.selected_tool, "t.leak");
    let echo =
        selection.candidate_tools.iter().find(|c| c.tool == "t.echo").expect("t.echo considered");
    assert!(echo.rejected.as_deref().unwrap_or_default().contains("input schema"), "{echo:?}");
    // The recorded selection does not keep the password.
    let packets = engine.store().packets_of(&selection.selection_id).await.expect("packets");
    assert!(!serde_json::to_string(&packets).expect("json").contains(r#""password":"x""#));
}

#[tokio::test(flavor = "multi_thread")]
async fn side_effects_the_intent_does_not_allow_rule_a_tool_out() {
    let project = Project::new("");
    let engine = project.engine().await;
    let writes = Intent {
        summary: "write a file".into(),
        keywords: vec!["write".into()],
        args: Some(json!({ "path": "a", "content": "b" })),
        ..Intent::default()
    };
    let selection = engine.select(&writes, &caller("s", "a"), None).await.expect("select");
    assert_eq!(selection.selected_tool, "file_write");
    assert!(selection.rollback_plan.contains("version control"), "{}", selection.rollback_plan);

    let read_only = Intent { allowed_side_effects: Some(vec![SideEffect::Read]), ..writes };
    let error = engine.select(&read_only, &caller("s", "a"), None).await.unwrap_err();
    let EngineError::NoSelection(reason) = error else { panic!("{error}") };
    assert!(reason.contains("file_write") && reason.contains("write"), "{reason}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_intent_without_evidence_is_refused() {
    let project = Project::new("");
    let engine = project.engine().await;
    let empty = Intent { summary: "the of and".into(), ..Intent::default() };
    assert!(matches!(
        engine.select(&empty, &caller("s", "a"), None).await,
        Err(EngineError::NoSelection(_))
    ));
    let nothing = Intent { summary: "zebra quantum".into(), ..Intent::default() };
    let error = engine.select(&nothing, &caller("s", "a"), None).await.unwrap_err();
    assert!(error.to_string().contains("zebra"), "{error}");
}
