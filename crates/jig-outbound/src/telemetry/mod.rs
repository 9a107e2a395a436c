//! OpenTelemetry: each call is a span (seed 003's events, as a team's tracing backend reads
//! them), continuing the caller's trace — `TRACEPARENT` in `jig`'s environment, the
//! `traceparent` header on the HTTP API, `params._meta.traceparent` on MCP — and handing it on
//! to the tool's process (`TRACEPARENT` in its environment, the parent being a span of its own);
//! and each call is counted and timed in metrics (`metrics`).
//!
//! Off unless `OTEL_EXPORTER_OTLP_ENDPOINT` (or a signal's own `…_TRACES_ENDPOINT`,
//! `…_METRICS_ENDPOINT`) is set, and then configured by the standard `OTEL_*` variables: the
//! protocol (`grpc` or `http/protobuf`, the default), headers, timeout, `OTEL_SERVICE_NAME`,
//! `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_METRIC_EXPORT_INTERVAL`; `OTEL_SDK_DISABLED=true`, or
//! `OTEL_TRACES_EXPORTER=none` / `OTEL_METRICS_EXPORTER=none`, turn them off. Only the person's
//! environment configures it, never the project: a project's manifest comes from whoever wrote
//! the repository, and spans name every tool and call.
//!
//! Export never holds a call up: a finished span goes into a bounded queue (spans that do not
//! fit are dropped and counted, [`dropped_spans`]) that one task sends in batches; metrics are
//! aggregated in place and sent by the reader's task.

mod job;
mod metrics;
mod queue;
mod span;

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};

pub use job::JobTrace;
pub use queue::dropped_spans;
pub use span::Span;
pub use span::{CallSpan, ProcessSpan};

/// Whether spans and metrics are made at all: when export is off, a call costs one load of
/// this flag.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// How long a command that ends waits for its spans and metrics to be sent, at most.
pub const FLUSH_WITHIN: Duration = Duration::from_secs(5);

/// What runs once started.
struct Started {
    /// The span queue and Jig's tracer (its own, not looked up in the global provider on
    /// every call).
    traces: Option<(queue::Handle, opentelemetry_sdk::trace::SdkTracer)>,
    metrics: Option<metrics::Metrics>,
}

static STARTED: OnceLock<Started> = OnceLock::new();

/// Where a call's trace continues from, as its surface received it (DESIGN.md §7).
#[derive(Debug, Clone, Default)]
pub struct TraceOrigin {
    /// The W3C `traceparent` the caller sent (`TRACEPARENT`, a header, MCP `_meta`).
    pub traceparent: Option<String>,
    /// The W3C `tracestate` sent with it.
    pub tracestate: Option<String>,
    /// The MCP session the call came through, if it did (`mcp.session.id`).
    pub mcp_session: Option<String>,
}

impl TraceOrigin {
    /// The origin given by `TRACEPARENT` and `TRACESTATE` in this process's environment (the
    /// CLI, started by a traced program).
    pub fn from_env() -> Self {
        Self {
            traceparent: std::env::var("TRACEPARENT").ok(),
            tracestate: std::env::var("TRACESTATE").ok(),
            mcp_session: None,
        }
    }
}

/// Start exporting spans and metrics if the environment asks for it (see the module's
/// documentation); once per process, inside the Tokio runtime that will send them. A
/// configuration that cannot work is said on stderr, and the command runs without it.
pub fn start_from_env() {
    start_from(&env);
}

/// [`start_from_env`] with the variables `lookup` gives instead of the environment's (the
/// exporters still read their headers and timeouts from the environment).
pub fn start_from(lookup: &dyn Fn(&str) -> Option<String>) {
    STARTED.get_or_init(|| {
        let traces = match target(lookup, Signal::Traces).and_then(|t| span_exporter(&t)) {
            Ok(Some(exporter)) => Some(queue::start(exporter, resource())),
            Ok(None) => None,
            Err(error) => {
                tracing::warn!(%error, "OpenTelemetry traces are off");
                None
            }
        };
        let metrics = match target(lookup, Signal::Metrics).and_then(|t| metric_exporter(&t)) {
            Ok(Some(exporter)) => Some(metrics::Metrics::start(exporter, resource())),
            Ok(None) => None,
            Err(error) => {
                tracing::warn!(%error, "OpenTelemetry metrics are off");
                None
            }
        };
        ENABLED.store(traces.is_some() || metrics.is_some(), Ordering::Release);
        Started { traces, metrics }
    });
}

/// Send the spans and metrics still waiting, waiting at most `within` (a short-lived command,
/// before it exits).
pub async fn flush(within: Duration) {
    let Some(started) = STARTED.get() else { return };
    let spans = async {
        if let Some((handle, _)) = &started.traces {
            handle.flush(within).await;
        }
    };
    let metrics = async {
        if let Some(metrics) = &started.metrics {
            let _ = tokio::time::timeout(within, metrics.flush()).await;
        }
    };
    tokio::join!(spans, metrics);
}

/// Stop making spans and metrics (`true`) or make them again, once export is on: for a
/// benchmark that compares the same process with and without them.
pub fn pause(paused: bool) {
    let started = STARTED.get().is_some_and(|s| s.traces.is_some() || s.metrics.is_some());
    ENABLED.store(started && !paused, Ordering::Release);
}

/// Whether spans are being made (and sent).
pub fn exporting() -> bool {
    tracer().is_some()
}

/// The tracer, when spans are being made.
pub fn tracer() -> Option<&'static opentelemetry_sdk::trace::SdkTracer> {
    if !ENABLED.load(Ordering::Acquire) {
        return None;
    }
    STARTED.get()?.traces.as_ref().map(|(_, tracer)| tracer)
}

/// Count and time a call that ended in `state` (with `error`, its code), when metrics are on.
pub fn record_call(tool: &str, state: &str, error: Option<&str>, elapsed: Duration) {
    if !ENABLED.load(Ordering::Acquire) {
        return;
    }
    if let Some(metrics) = STARTED.get().and_then(|s| s.metrics.as_ref()) {
        metrics.record(tool, state, error, elapsed);
    }
}

/// A variable of this process's environment, when set and not blank.
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

#[derive(Clone, Copy)]
enum Signal {
    Traces,
    Metrics,
}

/// Where and how a signal goes.
struct Target {
    protocol: String,
    endpoint: String,
}

/// Where the `OTEL_*` variables (as `var` gives them) send `signal`, or `None` when they do not
/// turn its export on.
fn target(var: &dyn Fn(&str) -> Option<String>, signal: Signal) -> Result<Option<Target>, String> {
    let (name, path) = match signal {
        Signal::Traces => ("TRACES", "v1/traces"),
        Signal::Metrics => ("METRICS", "v1/metrics"),
    };
    let off = var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
        || var(&format!("OTEL_{name}_EXPORTER")).is_some_and(|v| v.eq_ignore_ascii_case("none"));
    // The signal's own endpoint is used as it is; the general one is a base (OTLP's rules).
    let own = var(&format!("OTEL_EXPORTER_OTLP_{name}_ENDPOINT"));
    let base = var("OTEL_EXPORTER_OTLP_ENDPOINT");
    if off || (own.is_none() && base.is_none()) {
        return Ok(None);
    }
    let protocol = var(&format!("OTEL_EXPORTER_OTLP_{name}_PROTOCOL"))
        .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"))
        .unwrap_or_else(|| "http/protobuf".to_owned());
    let endpoint = match (own, base, protocol.as_str()) {
        (Some(own), _, _) => own,
        (None, Some(base), "grpc") => base,
        (None, Some(base), _) => format!("{}/{path}", base.trim_end_matches('/')),
        (None, None, _) => return Ok(None),
    };
    if protocol != "grpc" && protocol != "http/protobuf" {
        return Err(format!(
            "OTEL_EXPORTER_OTLP_PROTOCOL `{protocol}` is not supported; use `grpc` or `http/protobuf`"
        ));
    }
    Ok(Some(Target { protocol, endpoint }))
}

/// An HTTP client for OTLP/HTTP: Jig's own (rustls, no redirects), bounded in time.
fn otlp_client() -> Result<reqwest::Client, String> {
    crate::client::http_client(Duration::from_secs(10))
}

/// The OTLP exporter of type `$exporter` (`SpanExporter`, `MetricExporter`) that a [`Target`]
/// describes: gRPC (tonic) or HTTP/protobuf through [`otlp_client`]. (A macro: the two
/// builders share their methods by traits, not by a type.)
macro_rules! exporter_for {
    ($exporter:ty, $target:expr) => {{
        let target: &Option<Target> = $target;
        match target {
            None => Ok(None),
            Some(target) => {
                let builder = <$exporter>::builder();
                let built = if target.protocol == "grpc" {
                    builder.with_tonic().with_endpoint(target.endpoint.clone()).build()
                } else {
                    builder
                        .with_http()
                        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                        .with_endpoint(target.endpoint.clone())
                        .with_http_client(otlp_client()?)
                        .build()
                };
                built.map(Some).map_err(|e| format!("OTLP exporter: {e}"))
            }
        }
    }};
}

fn span_exporter(
    target: &Option<Target>,
) -> Result<Option<opentelemetry_otlp::SpanExporter>, String> {
    exporter_for!(opentelemetry_otlp::SpanExporter, target)
}

fn metric_exporter(
    target: &Option<Target>,
) -> Result<Option<opentelemetry_otlp::MetricExporter>, String> {
    exporter_for!(opentelemetry_otlp::MetricExporter, target)
}

/// Who sends the spans: `jig` unless `OTEL_SERVICE_NAME` says otherwise, with
/// `OTEL_RESOURCE_ATTRIBUTES` and Jig's version.
fn resource() -> opentelemetry_sdk::Resource {
    let builder = opentelemetry_sdk::Resource::builder()
        .with_attribute(opentelemetry::KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
    let builder =
        if env("OTEL_SERVICE_NAME").is_some() { builder } else { builder.with_service_name("jig") };
    builder.build()
}
