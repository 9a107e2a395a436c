//! Seed 002 §2's envelopes round-trip exactly, and the error codes have their wire names.

use jig_model::ErrorCode;
use jig_model::envelope::{Envelope, ToolResponse};
use serde_json::{Value, json};

#[test]
fn the_seed_examples_round_trip() {
    let examples = [
        json!({"type": "ToolRequest", "tool": "file_read", "args": {"path": "src/main.rs"}, "request_id": "uuid", "session_id": "sess-123", "timestamp": 1730822400}),
        json!({"type": "ToolResponse", "ok": true, "tool": "file_read", "request_id": "uuid", "duration_ms": 34, "data": {"content": "fn main() {}", "sha256": "…"}, "errors": [], "replayed": false}),
        json!({"type": "EventMessage", "event": "TaskProgress", "request_id": "uuid", "progress": {"pct": 65.0, "message": "running tests"}}),
        json!({"type": "ErrorMessage", "code": "E_FILE_IO", "message": "File not found: src/lib.rs", "request_id": "uuid"}),
        json!({"type": "Heartbeat", "session_id": "sess-123", "timestamp": 1730822430}),
    ];
    for example in examples {
        let envelope: Envelope = serde_json::from_value(example.clone()).expect("decodes");
        assert_eq!(serde_json::to_value(&envelope).expect("encodes"), example);
    }
}

#[test]
fn responses_carry_run_id_and_replayed() {
    let response: ToolResponse = serde_json::from_value(json!({
        "ok": false, "tool": "t", "request_id": "r", "duration_ms": 1,
        "errors": [{"code": "E_POLICY", "message": "denied", "details": {"rule": "sec.paths.sandbox"}}],
        "run_id": "ab", "replayed": true
    }))
    .expect("decodes");
    assert_eq!(response.errors[0].code, ErrorCode::Policy);
    assert_eq!(response.run_id.as_deref(), Some("ab"));
    assert!(response.replayed);
}

#[test]
fn unknown_fields_and_types_are_refused() {
    let bad = json!({"type": "Heartbeat", "session_id": "s", "timestamp": 1, "extra": true});
    assert!(serde_json::from_value::<Envelope>(bad).is_err());
    let bad = json!({"type": "Telepathy"});
    assert!(serde_json::from_value::<Envelope>(bad).is_err());
}

#[test]
fn error_codes_have_their_design_names() {
    let names: Vec<Value> =
        ErrorCode::ALL.iter().map(|c| serde_json::to_value(c).expect("encodes")).collect();
    assert_eq!(
        names,
        [
            "E_FILE_IO",
            "E_AST_PARSE",
            "E_AST_EDIT",
            "E_VALIDATION_FAIL",
            "E_GIT",
            "E_HTTP",
            "E_SHELL",
            "E_POLICY",
            "E_TIMEOUT",
            "E_INTERNAL",
            "E_NOT_FOUND",
            "E_LIMIT",
            "E_CONFLICT"
        ]
    );
    for code in ErrorCode::ALL {
        assert_eq!(serde_json::to_value(code).expect("encodes"), code.as_str());
    }
}

#[test]
fn every_envelope_writes_its_type_first_when_serialised_on_its_own() {
    use jig_model::envelope::{ErrorMessage, EventMessage, Heartbeat, ToolRequest};
    fn first_key(value: &impl serde::Serialize) -> (String, Value) {
        let value = serde_json::to_value(value).expect("encodes");
        let (key, tag) = value.as_object().and_then(|o| o.iter().next()).expect("a field");
        (key.clone(), tag.clone())
    }
    let request: ToolRequest =
        serde_json::from_value(json!({"tool": "t", "request_id": "r"})).expect("bare request");
    let response: ToolResponse = serde_json::from_value(
        json!({"ok": true, "tool": "t", "request_id": "r", "duration_ms": 1}),
    )
    .expect("decodes");
    let event: EventMessage =
        serde_json::from_value(json!({"event": "OutputChunk", "request_id": "r"})).expect("ok");
    let error: ErrorMessage =
        serde_json::from_value(json!({"code": "E_SHELL", "message": "m"})).expect("ok");
    let beat: Heartbeat =
        serde_json::from_value(json!({"session_id": "s", "timestamp": 1})).expect("ok");
    assert_eq!(first_key(&request), ("type".to_owned(), json!("ToolRequest")));
    assert_eq!(first_key(&response), ("type".to_owned(), json!("ToolResponse")));
    assert_eq!(first_key(&event), ("type".to_owned(), json!("EventMessage")));
    assert_eq!(first_key(&error), ("type".to_owned(), json!("ErrorMessage")));
    assert_eq!(first_key(&beat), ("type".to_owned(), json!("Heartbeat")));
}

#[test]
fn a_request_tagged_as_another_envelope_is_refused() {
    let wrong = json!({"type": "ToolResponse", "tool": "t", "request_id": "r"});
    assert!(serde_json::from_value::<jig_model::envelope::ToolRequest>(wrong).is_err());
}
