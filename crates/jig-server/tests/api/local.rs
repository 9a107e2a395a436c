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
async fn a_download_in_process_is_the_exact_bytes_or_the_error() {
    let served = Served::start().await;
    let me = Person { name: "desk".to_owned(), role: Role::Admin };
    let local = Local::new(served.engine.clone(), me, "examples".to_owned());
    // Not UTF-8: the text transport would mangle these; the download must not.
    let bytes = [0xff_u8, 0x00, 0xfe, b'\n', 0x80];
    let hash = jig_model::canonical::Sha256Hash::of_bytes(&bytes).to_hex();
    let dir = served.dir.path().join(".jig/artifacts/sha256").join(&hash[..2]);
    fs_err::create_dir_all(&dir).expect("mkdir");
    fs_err::write(dir.join(&hash), bytes).expect("write");

    let (status, body) = local.download(&format!("/api/artifacts/{hash}")).await.expect("get");
    assert_eq!((status, body.as_slice()), (200, bytes.as_slice()));
    let (status, body) =
        local.download(&format!("/api/artifacts/{}", "1".repeat(64))).await.expect("404");
    assert_eq!(status, 404);
    let body: Value = serde_json::from_slice(&body).expect("an ErrorMessage");
    assert_eq!(body["code"], "E_NOT_FOUND", "{body}");
    assert!(local.download("/index.html").await.is_err(), "only API paths");
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
