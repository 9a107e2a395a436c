//! OpenTelemetry traces: each call is a span (seed 003's events, as a team's tracing backend
//! reads them), continuing the caller's trace — `TRACEPARENT` in `jig`'s environment, the
//! `traceparent` header on the HTTP API, `params._meta.traceparent` on MCP — and handing it on
//! to the tool's process (`TRACEPARENT` in its environment, the parent being a span of its own).
//!
//! Off unless `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set,
//! and then configured by the standard `OTEL_*` variables: the protocol (`grpc` or
//! `http/protobuf`, the default), headers, timeout, `OTEL_SERVICE_NAME` and
//! `OTEL_RESOURCE_ATTRIBUTES`; `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turn it
//! off. Only the person's environment configures it, never the project: a project's manifest
//! comes from whoever wrote the repository, and spans name every tool and call.
//!
//! Export never holds a call up: a finished span goes into a bounded queue (spans that do not
//! fit are dropped and counted, [`dropped_spans`]) that one task sends in batches.

mod queue;
mod span;

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};

pub use queue::dropped_spans;
pub use span::Span;
pub(crate) use span::{CallSpan, ProcessSpan};

/// Whether spans are made at all: when export is off, a call costs one load of this flag.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// How long a command that ends waits for its spans to be sent, at most.
pub const FLUSH_WITHIN: Duration = Duration::from_secs(5);

/// The running export and its tracer, once started (a tracer of its own, not looked up in
/// the global provider on every call).
static STARTED: OnceLock<Option<(queue::Handle, opentelemetry_sdk::trace::SdkTracer)>> =
    OnceLock::new();

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

/// Start exporting spans if the environment asks for it (see the module's documentation);
/// once per process, inside the Tokio runtime that will send them. A configuration that
/// cannot work is said on stderr, and the command runs without traces.
pub fn start_from_env() {
    start_from(&env);
}

/// [`start_from_env`] with the variables `lookup` gives instead of the environment's (the
/// exporter still reads its headers and timeout from the environment).
pub fn start_from(lookup: &dyn Fn(&str) -> Option<String>) {
    STARTED.get_or_init(|| match exporter_from(lookup) {
        Ok(Some(exporter)) => {
            let started = queue::start(exporter, resource());
            ENABLED.store(true, Ordering::Release);
            Some(started)
        }
        Ok(None) => None,
        Err(error) => {
            tracing::warn!(%error, "OpenTelemetry export is off");
            None
        }
    });
}

/// Send the spans still queued, waiting at most `within` (a short-lived command, before it
/// exits).
pub async fn flush(within: Duration) {
    if let Some(Some((handle, _))) = STARTED.get() {
        handle.flush(within).await;
    }
}

/// Stop making spans (`true`) or make them again, once export is on: for a benchmark that
/// compares the same process with and without them.
pub fn pause(paused: bool) {
    let started = matches!(STARTED.get(), Some(Some(_)));
    ENABLED.store(started && !paused, Ordering::Release);
}

/// The tracer, when spans are being made.
pub(crate) fn tracer() -> Option<&'static opentelemetry_sdk::trace::SdkTracer> {
    if !ENABLED.load(Ordering::Acquire) {
        return None;
    }
    STARTED.get()?.as_ref().map(|(_, tracer)| tracer)
}

/// A variable of this process's environment, when set and not blank.
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

/// The exporter the `OTEL_*` variables (as `var` gives them) describe, or `None` when they do
/// not turn export on.
fn exporter_from(
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<opentelemetry_otlp::SpanExporter>, String> {
    let off = var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
        || var("OTEL_TRACES_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none"));
    // The traces' own endpoint is used as it is; the general one is a base (OTLP's rules).
    let traces = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    let base = var("OTEL_EXPORTER_OTLP_ENDPOINT");
    if off || (traces.is_none() && base.is_none()) {
        return Ok(None);
    }
    let protocol = var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"))
        .unwrap_or_else(|| "http/protobuf".to_owned());
    let built = match protocol.as_str() {
        // Headers and timeout are read from the same variables by the exporter.
        "grpc" => opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(traces.or(base).unwrap_or_default())
            .build(),
        "http/protobuf" => {
            let endpoint = traces.unwrap_or_else(|| {
                format!("{}/v1/traces", base.unwrap_or_default().trim_end_matches('/'))
            });
            let client = crate::outgoing::http_client(Duration::from_secs(10))?;
            opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                .with_endpoint(endpoint)
                .with_http_client(client)
                .build()
        }
        other => {
            return Err(format!(
                "OTEL_EXPORTER_OTLP_PROTOCOL `{other}` is not supported; use `grpc` or `http/protobuf`"
            ));
        }
    };
    built.map(Some).map_err(|e| format!("OTLP exporter: {e}"))
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
