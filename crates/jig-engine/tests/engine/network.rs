//! `curl` against a real HTTP server on 127.0.0.1: redirects checked hop by hop, the SSRF list,
//! header injection, decompression caps and timeouts.

use std::time::{Duration, Instant};

use base64::Engine as _;
use jig_testkit::http::{Request, Response, Server};
use serde_json::{Value, json};

use crate::{Project, call_once, code};

const LOOPBACK: &str = r#"network:
  allowed_domains: ["127.0.0.1", "localhost"]
  allow_private: true
rules:
  - { effects: [network], action: allow }"#;

fn body(response: &jig_engine::ToolResponse) -> Vec<u8> {
    let text = response.data["body_b64"].as_str().expect("body_b64");
    base64::engine::general_purpose::STANDARD.decode(text).expect("base64")
}

/// Routes: `/hop/N` redirects N more times, then answers; `/to?<url>` redirects there.
fn routes(request: &Request) -> Response {
    let target = request.target.as_str();
    if let Some(n) = target.strip_prefix("/hop/") {
        let n: u32 = n.parse().unwrap_or(0);
        return if n == 0 {
            Response::text(200, "arrived")
        } else {
            Response::redirect(302, &format!("/hop/{}", n - 1))
        };
    }
    if let Some(url) = target.strip_prefix("/to?") {
        return Response::redirect(307, url);
    }
    match target {
        "/echo" => Response::text(
            200,
            &format!(
                "{} {} x-trace={} auth={}",
                request.method,
                String::from_utf8_lossy(&request.body),
                request.header("x-trace").unwrap_or("-"),
                request.header("authorization").unwrap_or("-"),
            ),
        )
        .with_header("X-Auth-Token", "s3cr3t-value-123"),
        "/slow" => {
            std::thread::sleep(Duration::from_secs(3));
            Response::text(200, "late")
        }
        _ => Response::text(404, "no such page"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn curl_sends_method_headers_and_body_and_returns_the_answer() {
    let server = Server::start(routes);
    let project = Project::new(LOOPBACK);
    let engine = project.engine().await;
    let response = call_once(
        &engine,
        "curl",
        json!({ "method": "POST", "url": server.url("/echo"), "headers": { "X-Trace": "t1" }, "body": "hello" }),
    )
    .await;
    assert!(response.ok, "{response:?}");
    assert_eq!(response.data["status"], 200);
    assert_eq!(body(&response), b"POST hello x-trace=t1 auth=-");
    assert_eq!(response.data["headers"]["content-type"], "text/plain");
    // A secret in a response header is redacted before anyone sees it.
    assert_eq!(response.data["headers"]["x-auth-token"], "[REDACTED]");
    assert_eq!(response.data["truncated"], false);
    let missing = call_once(&engine, "curl", json!({ "url": server.url("/nope") })).await;
    assert!(missing.ok, "an HTTP error status is an answer: {missing:?}");
    assert_eq!(missing.data["status"], 404);
}

#[tokio::test(flavor = "multi_thread")]
async fn redirects_are_followed_three_times_at_most() {
    let server = Server::start(routes);
    let project = Project::new(LOOPBACK);
    let engine = project.engine().await;
    let three = call_once(&engine, "curl", json!({ "url": server.url("/hop/3") })).await;
    assert!(three.ok, "{three:?}");
    assert_eq!(body(&three), b"arrived");
    assert_eq!(three.data["redirects"], 3);
    let before = server.requests().len();
    let four = call_once(&engine, "curl", json!({ "url": server.url("/hop/4") })).await;
    assert_eq!(code(&four), "E_POLICY", "{four:?}");
    assert!(four.errors[0].message.contains("more than 3 redirects"), "{four:?}");
    // The fifth address was never fetched.
    let fetched: Vec<String> =
        server.requests()[before..].iter().map(|r| r.target.clone()).collect();
    assert_eq!(fetched, ["/hop/4", "/hop/3", "/hop/2", "/hop/1"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_hop_is_checked_against_the_allow_list() {
    let server = Server::start(routes);
    let project = Project::new(LOOPBACK);
    let engine = project.engine().await;
    for target in [
        "http://evil.example/",
        "http://169.254.169.254/latest/meta-data/",
        "http://127.0.0.2/",
        "file:///etc/passwd",
        "gopher://127.0.0.1/",
    ] {
        let response =
            call_once(&engine, "curl", json!({ "url": server.url(&format!("/to?{target}")) }))
                .await;
        assert_eq!(code(&response), "E_POLICY", "{target}: {response:?}");
        assert!(response.errors[0].message.contains("redirect 1"), "{target}: {response:?}");
    }
    // Credentials do not follow a redirect to another origin (here another allowed name).
    let cross = format!("http://localhost:{}/echo", server.port());
    let response = call_once(
        &engine,
        "curl",
        json!({ "url": server.url(&format!("/to?{cross}")), "headers": { "Authorization": "Bearer abcdefgh12345678" } }),
    )
    .await;
    assert!(response.ok, "{response:?}");
    assert_eq!(body(&response), b"GET  x-trace=- auth=-");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_ssrf_list_is_refused_before_any_connection() {
    let server = Server::start(routes);
    let project = Project::new(
        "network:\n  allowed_domains: [\"localhost\", \"api.example\"]\nrules:\n  - { effects: [network], action: allow }",
    );
    let engine = project.engine().await;
    let port = server.port();
    let urls = [
        format!("http://127.0.0.1:{port}/echo"),
        format!("http://localhost:{port}/echo"),
        format!("http://api.example@127.0.0.1:{port}/echo"),
        format!("http://api.example:x@127.0.0.1:{port}/echo"),
        format!("http://2130706433:{port}/echo"),
        format!("http://0x7f.1:{port}/echo"),
        format!("http://017700000001:{port}/echo"),
        format!("http://[::ffff:127.0.0.1]:{port}/echo"),
        format!("http://[::1]:{port}/echo"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://0.0.0.0/".to_owned(),
        "http://evil.example/".to_owned(),
    ];
    for url in &urls {
        let response = call_once(&engine, "curl", json!({ "url": url })).await;
        assert_eq!(code(&response), "E_POLICY", "{url}: {response:?}");
    }
    for url in ["file:///etc/passwd", "ftp://localhost/"] {
        let response = call_once(&engine, "curl", json!({ "url": url })).await;
        assert!(!response.ok, "{url}");
    }
    assert!(server.requests().is_empty(), "a refused URL was fetched: {:?}", server.requests());
}

#[tokio::test(flavor = "multi_thread")]
async fn headers_cannot_be_smuggled() {
    let server = Server::start(routes);
    let project = Project::new(LOOPBACK);
    let engine = project.engine().await;
    for headers in [
        json!({ "X-A": "a\r\nX-Injected: 1" }),
        json!({ "Host": "evil.example" }),
        json!({ "Bad Name": "x" }),
        json!({ "Transfer-Encoding": "chunked" }),
    ] {
        let response =
            call_once(&engine, "curl", json!({ "url": server.url("/echo"), "headers": headers }))
                .await;
        assert_eq!(code(&response), "E_VALIDATION_FAIL", "{headers}: {response:?}");
    }
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_body_is_capped_after_decompression() {
    // 1 MiB of text, gzipped by the real gzip program to about a kilobyte.
    let plain = vec![b'a'; 1024 * 1024];
    let mut gzip = std::process::Command::new("gzip")
        .arg("-c")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("gzip");
    std::io::Write::write_all(gzip.stdin.as_mut().expect("stdin"), &plain).expect("feed gzip");
    drop(gzip.stdin.take());
    let packed = gzip.wait_with_output().expect("gzip output").stdout;
    assert!(packed.len() < 16 * 1024);
    let server = Server::start(move |_| Response {
        status: 200,
        headers: vec![("Content-Encoding".into(), "gzip".into())],
        body: packed.clone(),
    });
    let project = Project::new(LOOPBACK);
    let engine = project.engine().await;
    let response =
        call_once(&engine, "curl", json!({ "url": server.url("/"), "max_bytes": 100_000 })).await;
    assert!(response.ok, "{response:?}");
    assert_eq!(response.data["truncated"], true);
    assert_eq!(body(&response).len(), 100_000);
    assert!(body(&response).iter().all(|b| *b == b'a'));
    let whole = call_once(&engine, "curl", json!({ "url": server.url("/whole") })).await;
    assert_eq!(body(&whole).len(), 1024 * 1024, "{:?}", whole.data.get("truncated"));
    assert_eq!(whole.data["truncated"], Value::Bool(false));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_server_times_out() {
    let server = Server::start(routes);
    let project = Project::new(LOOPBACK);
    let engine = project.engine().await;
    let started = Instant::now();
    let response =
        call_once(&engine, "curl", json!({ "url": server.url("/slow"), "timeout_ms": 300 })).await;
    assert_eq!(code(&response), "E_TIMEOUT", "{response:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
}
