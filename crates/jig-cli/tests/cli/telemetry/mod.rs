//! OpenTelemetry: a call's spans reach a real OTLP receiver — decoded here with the protocol's
//! own definitions (`opentelemetry-proto`) — over HTTP/protobuf and over gRPC, continuing the
//! trace of whoever ran `jig` (`TRACEPARENT`) and handed on to the tool's process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::metrics::v1::{Metric, metric::Data, number_data_point};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;

use crate::{jig_env, stderr, stdout_json};

mod jobs;
mod runbooks;

/// What the receiver got: each span with the service that sent it.
#[derive(Clone, Default)]
pub(super) struct Received(Arc<Mutex<Vec<(String, Span)>>>);

impl Received {
    fn take(&self, request: ExportTraceServiceRequest) {
        let mut spans = self.0.lock().expect("lock");
        for resource in request.resource_spans {
            let service = resource
                .resource
                .iter()
                .flat_map(|r| r.attributes.iter())
                .find(|kv| kv.key == "service.name")
                .and_then(|kv| text(kv.value.as_ref()?.value.as_ref()?))
                .unwrap_or_default();
            for scope in resource.scope_spans {
                spans.extend(scope.spans.into_iter().map(|span| (service.clone(), span)));
            }
        }
    }
}

fn text(value: &Any) -> Option<String> {
    match value {
        Any::StringValue(text) => Some(text.clone()),
        _ => None,
    }
}

pub(super) fn attributes(span: &Span) -> HashMap<String, String> {
    span.attributes
        .iter()
        .filter_map(|kv| {
            let value = match kv.value.as_ref()?.value.as_ref()? {
                Any::StringValue(text) => text.clone(),
                Any::BoolValue(b) => b.to_string(),
                Any::IntValue(i) => i.to_string(),
                other => format!("{other:?}"),
            };
            Some((kv.key.clone(), value))
        })
        .collect()
}

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[tonic::async_trait]
impl TraceService for Received {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        self.take(request.into_inner());
        Ok(tonic::Response::new(ExportTraceServiceResponse { partial_success: None }))
    }
}

/// An OTLP receiver on 127.0.0.1: gRPC (tonic, on a runtime of its own), or HTTP/protobuf at
/// `/v1/traces` (the test kit's HTTP server, its requests decoded as they are read).
pub(super) struct Receiver {
    pub(super) endpoint: String,
    received: Received,
    http: Option<jig_testkit::http::Server>,
    _runtime: Option<tokio::runtime::Runtime>,
}

impl Receiver {
    pub(super) fn http() -> Self {
        let answer = ExportTraceServiceResponse { partial_success: None }.encode_to_vec();
        let server = jig_testkit::http::Server::start(move |request| {
            let known = ["/v1/traces", "/v1/metrics"].contains(&request.target.as_str());
            let status = if known { 200 } else { 404 };
            jig_testkit::http::Response {
                status,
                headers: vec![("content-type".to_owned(), "application/x-protobuf".to_owned())],
                body: answer.clone(),
            }
        });
        Self {
            endpoint: server.url(""),
            received: Received::default(),
            http: Some(server),
            _runtime: None,
        }
    }

    fn grpc() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let received = Received::default();
        let listener =
            runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).expect("bind");
        let endpoint = format!("http://{}", listener.local_addr().expect("addr"));
        let serving = received.clone();
        runtime.spawn(async move {
            let incoming = futures_util::stream::unfold(listener, |listener| async move {
                let accepted = listener.accept().await.map(|(stream, _)| stream);
                Some((accepted, listener))
            });
            tonic::transport::Server::builder()
                .add_service(TraceServiceServer::new(serving))
                .serve_with_incoming(incoming)
                .await
                .expect("gRPC receiver");
        });
        Self { endpoint, received, http: None, _runtime: Some(runtime) }
    }

    /// The spans, once `count` have arrived (at most 20 s).
    pub(super) fn wait_for(&self, count: usize) -> Vec<(String, Span)> {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(server) = &self.http {
                let received = Received::default();
                for request in server.requests().into_iter().filter(|r| r.target == "/v1/traces") {
                    let decoded = ExportTraceServiceRequest::decode(request.body.as_slice());
                    received.take(decoded.expect("an OTLP trace export"));
                }
                let spans = received.0.lock().expect("lock").clone();
                if spans.len() >= count || Instant::now() > until {
                    return spans;
                }
            } else {
                let spans = self.received.0.lock().expect("lock").clone();
                if spans.len() >= count || Instant::now() > until {
                    return spans;
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Receiver {
    /// The metrics received over HTTP, once one named `name` has arrived (at most 20 s).
    fn metrics_with(&self, name: &str) -> Vec<Metric> {
        let server = self.http.as_ref().expect("an HTTP receiver");
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let metrics: Vec<Metric> = server
                .requests()
                .into_iter()
                .filter(|r| r.target == "/v1/metrics")
                .flat_map(|r| {
                    ExportMetricsServiceRequest::decode(r.body.as_slice())
                        .expect("an OTLP metrics export")
                        .resource_metrics
                })
                .flat_map(|r| r.scope_metrics)
                .flat_map(|s| s.metrics)
                .collect();
            if metrics.iter().any(|m| m.name == name) || Instant::now() > until {
                return metrics;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A project whose tool prints the `TRACEPARENT` its process was given.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    std::fs::create_dir_all(root.join("tools/scripts")).expect("mkdir");
    std::fs::write(root.join("jig.yaml"), "name: traced\n").expect("write");
    std::fs::write(
        root.join("tools/trace.tool.yaml"),
        "id: probe.trace\nversion: 1.0.0\ndescription: Says its trace context.\nsideEffects: [none]\n\
         risk: low\ndeterministic: false\ntimeoutMs: 10000\n\
         limits: {maxInputBytes: 1024, maxOutputBytes: 4096}\n\
         inputSchema: {type: object}\noutputSchema: {type: object}\n\
         execution: {kind: python, script: scripts/trace.py}\n",
    )
    .expect("write");
    std::fs::write(
        root.join("tools/scripts/trace.py"),
        "import json, os\nprint(json.dumps({'traceparent': os.environ.get('TRACEPARENT')}))\n",
    )
    .expect("write");
    dir
}

pub(super) const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
pub(super) const PARENT: &str = "00f067aa0ba902b7";

/// `jig call` under the caller's `traceparent`, exporting to `receiver` with `protocol`: the
/// spans the receiver got (the call's and its process's) and what the tool's process was given.
fn traced_call(
    receiver: &Receiver,
    protocol: &str,
    traceparent: &str,
) -> (Vec<(String, Span)>, String) {
    let project = project();
    let state = tempfile::tempdir().expect("tmp");
    let out = jig_env(
        project.path(),
        &["call", "probe.trace", "--args", "{}"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint.as_str()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol),
            ("OTEL_SERVICE_NAME", "jig-under-test"),
            ("TRACEPARENT", traceparent),
            ("XDG_STATE_HOME", state.path().to_str().expect("utf-8")),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let given = stdout_json(&out)["data"]["traceparent"].as_str().unwrap_or_default().to_owned();
    (receiver.wait_for(2), given)
}

fn check(spans: &[(String, Span)], given: &str) {
    let call =
        spans.iter().find(|(_, s)| s.name == "execute_tool probe.trace").unwrap_or_else(|| {
            panic!("no call span in {:?}", spans.iter().map(|(_, s)| &s.name).collect::<Vec<_>>())
        });
    let process = spans.iter().find(|(_, s)| s.name == "run probe.trace").expect("a process span");
    assert_eq!(call.0, "jig-under-test");
    // The caller's trace goes on through Jig's call and into the tool's process.
    assert_eq!(hex(&call.1.trace_id), TRACE);
    assert_eq!(hex(&call.1.parent_span_id), PARENT);
    assert_eq!(hex(&process.1.trace_id), TRACE);
    assert_eq!(process.1.parent_span_id, call.1.span_id);
    assert_eq!(given, format!("00-{TRACE}-{}-01", hex(&process.1.span_id)));
    let attributes = attributes(&call.1);
    assert_eq!(attributes["gen_ai.tool.name"], "probe.trace");
    assert_eq!(attributes["gen_ai.operation.name"], "execute_tool");
    assert_eq!(attributes["jig.decision"], "allow");
    assert_eq!(attributes["jig.state"], "succeeded");
    assert!(attributes.contains_key("jig.run_id"), "{attributes:?}");
    assert!(attributes.contains_key("gen_ai.tool.call.id"), "{attributes:?}");
}

#[test]
fn a_call_is_a_span_of_the_callers_trace_over_otlp_http() {
    let receiver = Receiver::http();
    let (spans, given) =
        traced_call(&receiver, "http/protobuf", &format!("00-{TRACE}-{PARENT}-01"));
    check(&spans, &given);
}

#[test]
fn a_call_is_a_span_of_the_callers_trace_over_otlp_grpc() {
    let receiver = Receiver::grpc();
    let (spans, given) = traced_call(&receiver, "grpc", &format!("00-{TRACE}-{PARENT}-01"));
    check(&spans, &given);
}

/// Export never holds a call up: with a receiver that takes the connection and never answers,
/// the call answers, and `jig` gives up on its spans after its flush limit (5 s).
#[test]
fn a_receiver_that_never_answers_does_not_hold_a_call_up() {
    let project = project();
    let state = tempfile::tempdir().expect("tmp");
    // Listening (the kernel accepts the connection), never read.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let endpoint = format!("http://{}", silent.local_addr().expect("addr"));
    let started = Instant::now();
    let out = jig_env(
        project.path(),
        &["call", "probe.trace", "--args", "{}"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("XDG_STATE_HOME", state.path().to_str().expect("utf-8")),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    assert_eq!(stdout_json(&out)["ok"], true);
    drop(silent);
    // Without OTEL_EXPORTER_OTLP_ENDPOINT, the tool is given no trace context of Jig's.
    let plain = jig_env(
        project.path(),
        &["call", "probe.trace", "--args", "{}"],
        &[("XDG_STATE_HOME", state.path().to_str().expect("utf-8"))],
    );
    assert_eq!(stdout_json(&plain)["data"]["traceparent"], serde_json::Value::Null);
}

/// The HTTP API: a call started with a `traceparent` header is a span of that trace.
#[test]
fn a_call_over_the_http_api_continues_the_traceparent_header() {
    let receiver = Receiver::http();
    let project = project();
    let state = tempfile::tempdir().expect("tmp");
    let serve = jig_testkit::serve::Serve::start_with_env(
        std::path::Path::new(env!("CARGO_BIN_EXE_jig")),
        project.path(),
        &[],
        &[],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint.as_str()),
            ("OTEL_SERVICE_NAME", "jig-under-test"),
            ("XDG_STATE_HOME", state.path().to_str().expect("utf-8")),
        ],
    );
    let body = serde_json::json!({ "tool": "probe.trace", "args": {} }).to_string();
    let traceparent = format!("00-{TRACE}-{PARENT}-01");
    let started = serve.client().request(
        "POST",
        "/api/calls",
        &[("Content-Type", "application/json"), ("traceparent", &traceparent)],
        Some(body.as_bytes()),
    );
    assert_eq!(started.status, 202, "{:?}", started.json());
    let request_id = started.json()["request_id"].as_str().expect("request id").to_owned();
    let spans = receiver.wait_for(2);
    let call =
        spans.iter().find(|(_, s)| s.name == "execute_tool probe.trace").expect("a call span");
    assert_eq!(hex(&call.1.trace_id), TRACE);
    assert_eq!(hex(&call.1.parent_span_id), PARENT);
    assert_eq!(attributes(&call.1)["jig.request_id"], request_id);
}

/// A caller's `traceparent` only chooses the parent: one that does not parse starts a trace of
/// Jig's own, and the call runs as without it.
#[test]
fn a_malformed_traceparent_starts_a_trace_of_its_own() {
    let receiver = Receiver::http();
    let (spans, given) =
        traced_call(&receiver, "http/protobuf", "00-not-a-trace-01\r\nx-injected: 1");
    let call = spans.iter().find(|(_, s)| s.name == "execute_tool probe.trace").expect("call");
    assert!(call.1.parent_span_id.is_empty(), "a root span");
    assert_eq!(call.1.trace_id.len(), 16);
    let process = spans.iter().find(|(_, s)| s.name == "run probe.trace").expect("process");
    assert_eq!(given, format!("00-{}-{}-01", hex(&call.1.trace_id), hex(&process.1.span_id)));
}

/// Metrics: each call counted and timed, by tool and by what happened to it, sent when the
/// command ends.
#[test]
fn a_call_is_counted_and_timed_in_metrics() {
    let receiver = Receiver::http();
    traced_call(&receiver, "http/protobuf", &format!("00-{TRACE}-{PARENT}-01"));
    let metrics = receiver.metrics_with("jig.call.duration");
    let named = |name: &str| metrics.iter().find(|m| m.name == name).cloned();
    let pairs = |attributes: &[KeyValue]| -> HashMap<String, String> {
        attributes
            .iter()
            .filter_map(|kv| Some((kv.key.clone(), text(kv.value.as_ref()?.value.as_ref()?)?)))
            .collect()
    };
    let Some(Data::Sum(calls)) = named("jig.calls").and_then(|m| m.data) else {
        panic!("no jig.calls sum in {:?}", metrics.iter().map(|m| &m.name).collect::<Vec<_>>())
    };
    let point = &calls.data_points[0];
    assert_eq!(point.value, Some(number_data_point::Value::AsInt(1)));
    let attributes = pairs(&point.attributes);
    assert_eq!(attributes["gen_ai.tool.name"], "probe.trace");
    assert_eq!(attributes["jig.state"], "succeeded");
    let Some(Data::Histogram(duration)) = named("jig.call.duration").and_then(|m| m.data) else {
        panic!("no jig.call.duration histogram")
    };
    assert_eq!(duration.data_points[0].count, 1);
    assert!(duration.data_points[0].sum.unwrap_or(0.0) > 0.0);
    assert_eq!(named("jig.call.duration").map(|m| m.unit), Some("s".to_owned()));
}
