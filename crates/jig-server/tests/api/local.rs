//! The desktop app's transport: the same router in process, no TCP port, events from the bus.

use jig_server::auth::{Person, Role};
use jig_server::local::{Local, Outgoing, next};
use serde_json::{Value, json};

use crate::support::Served;

fn parse(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

#[tokio::test]
async fn in_process_requests_reach_the_same_api_as_the_person_it_names() {
    let served = Served::start().await;
    let me = Person { name: "desk".to_owned(), role: Role::Admin };
    let local = Local::new(served.engine.clone(), me, "examples".to_owned());

    let session = local.handle("GET", "/api/session", None).await.expect("session");
    assert_eq!(session.status, 200);
    assert_eq!(parse(&session.body)["person"]["name"], "desk", "{}", session.body);

    let tools = local.handle("GET", "/api/tools", None).await.expect("tools");
    let tools = parse(&tools.body);
    assert!(tools.as_array().is_some_and(|t| t.iter().any(|t| t["id"] == "file_read")), "{tools}");

    let mut events = local.events();
    let viewer = local.viewer();
    let call = json!({ "tool": "file_read", "args": { "path": "jig.yaml" } }).to_string();
    let started = local.handle("POST", "/api/calls", Some(call)).await.expect("call");
    assert_eq!(started.status, 202, "{}", started.body);
    let request_id = parse(&started.body)["request_id"].as_str().expect("id").to_owned();
    let response = loop {
        let Some(Outgoing::Event(event)) = next(&mut events, &viewer).await else { continue };
        let event = serde_json::to_value(&event).expect("json");
        if event["type"] == "ToolResponse" && event["request_id"] == request_id.as_str() {
            break event;
        }
    };
    assert_eq!(response["ok"], true, "{response}");
    let detail =
        local.handle("GET", &format!("/api/audit/runs/{request_id}"), None).await.expect("detail");
    assert_eq!(parse(&detail.body)["run"]["principal"], "desk", "recorded as the app's person");

    // Errors keep the API's shape: status and ErrorMessage.
    let missing = local.handle("GET", "/api/tools/no_such_tool", None).await.expect("404");
    assert_eq!(missing.status, 404);
    assert_eq!(parse(&missing.body)["type"], "ErrorMessage", "{}", missing.body);
}

#[tokio::test]
async fn only_api_paths_and_methods_go_through() {
    let served = Served::start().await;
    let me = Person { name: "desk".to_owned(), role: Role::Admin };
    let local = Local::new(served.engine.clone(), me, "examples".to_owned());
    for (method, path) in [
        ("GET", "/"),
        ("GET", "/index.html"),
        ("GET", "/api/events"),
        ("GET", "http://evil.example/api/tools"),
        ("PATCH", "/api/tools"),
        ("CONNECT", "/api/tools"),
    ] {
        let refused = local.handle(method, path, None).await;
        assert!(refused.is_err(), "{method} {path} should be refused");
    }
}
