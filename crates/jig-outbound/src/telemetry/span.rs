//! A call's span and its tool process's span, named and attributed by OpenTelemetry's
//! semantic conventions for GenAI tool calls and MCP, with Jig's own under `jig.*`. Nothing
//! of the arguments or the result is an attribute; texts that may quote them (a decision's
//! reason, an error message) are redacted as the audit redacts them.

use opentelemetry::trace::{Span as _, SpanKind, Status, TraceContextExt as _, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::propagation::TraceContextPropagator;

use super::TraceOrigin;
use jig_model::envelope::ToolResponse;
use jig_policy::redact::redact_text;

/// A call's span, when export is on.
pub struct CallSpan(Option<Context>);

impl CallSpan {
    /// No span (export off, or this one already ended).
    pub fn off() -> Self {
        Self(None)
    }

    /// Begin the span of a call of `tool`, as a child of the caller's trace when it sent one.
    pub fn start(tool: &str, request_id: &str, principal: &str, origin: &TraceOrigin) -> Self {
        let Some(tracer) = super::tracer() else { return Self(None) };
        let parent = parent_of(origin);
        let mut attributes = vec![
            KeyValue::new("gen_ai.operation.name", "execute_tool"),
            KeyValue::new("gen_ai.tool.name", tool.to_owned()),
            KeyValue::new("gen_ai.tool.call.id", request_id.to_owned()),
            KeyValue::new("jig.principal", principal.to_owned()),
        ];
        if let Some(session) = &origin.mcp_session {
            attributes.push(KeyValue::new("mcp.method.name", "tools/call"));
            attributes.push(KeyValue::new("mcp.session.id", session.clone()));
        }
        let span = tracer
            .span_builder(format!("execute_tool {tool}"))
            .with_kind(if origin.mcp_session.is_some() {
                SpanKind::Server
            } else {
                SpanKind::Internal
            })
            .with_attributes(attributes)
            .start_with_context(tracer, &parent);
        Self(Some(parent.with_span(span)))
    }

    /// Set an attribute (nothing when export is off).
    pub fn set(&self, key: &'static str, value: impl Into<opentelemetry::Value>) {
        if let Some(cx) = &self.0 {
            cx.span().set_attribute(KeyValue::new(key, value));
        }
    }

    /// The policy's decision on the call.
    pub fn decided(&self, action: &str, rule: &str, reason: &str) {
        if self.0.is_some() {
            self.set("jig.decision", action.to_owned());
            self.set("jig.rule", rule.to_owned());
            self.set("jig.reason", redact_text(reason).into_owned());
        }
    }

    /// Begin the span of the process that runs `tool` (a child of the call's), and the
    /// `traceparent` that names it, for the process's environment.
    pub fn process(&self, tool: &str, kind: &str) -> (ProcessSpan, Option<String>) {
        let Some(cx) = &self.0 else { return (ProcessSpan(None), None) };
        let Some(tracer) = super::tracer() else { return (ProcessSpan(None), None) };
        let span = tracer
            .span_builder(format!("run {tool}"))
            .with_kind(SpanKind::Internal)
            .with_attributes([
                KeyValue::new("gen_ai.tool.name", tool.to_owned()),
                KeyValue::new("jig.execution.kind", kind.to_owned()),
            ])
            .start_with_context(tracer, cx);
        let traceparent = traceparent_of(span.span_context());
        (ProcessSpan(Some(cx.with_span(span))), Some(traceparent))
    }

    /// The identity of the job the call is about to submit: a span inside the call's, sent
    /// when the job is collected ([`super::JobTrace::end`]).
    pub fn job(&self) -> Option<super::JobTrace> {
        let cx = self.0.as_ref()?;
        Some(super::JobTrace::inside(cx.span().span_context()))
    }

    /// End the span with what happened to the call.
    pub fn end(self, response: &ToolResponse, state: &str) {
        let Some(cx) = self.0 else { return };
        let span = cx.span();
        span.set_attribute(KeyValue::new("jig.request_id", response.request_id.clone()));
        span.set_attribute(KeyValue::new("jig.state", state.to_owned()));
        span.set_attribute(KeyValue::new("jig.replayed", response.replayed));
        if let Some(run_id) = &response.run_id {
            span.set_attribute(KeyValue::new("jig.run_id", run_id.clone()));
        }
        match response.errors.first() {
            Some(error) => failed(&span, error.code.as_str(), &error.message),
            None => span.set_status(Status::Ok),
        }
        span.end();
    }
}

/// The span of a tool's process, when export is on.
pub struct ProcessSpan(Option<Context>);

impl ProcessSpan {
    /// No span (export off, or no process of the tool's own).
    pub fn off() -> Self {
        Self(None)
    }

    /// End it: the process exited (`ok`) or failed with `error`.
    pub fn end(self, error: Option<(&str, &str)>) {
        let Some(cx) = self.0 else { return };
        let span = cx.span();
        if let Some((code, message)) = error {
            failed(&span, code, message);
        }
        span.end();
    }
}

/// A span around work that is more than one call (a runbook's walk): the calls made in it are
/// its children (their origin is [`Span::origin`]). It ends when dropped.
pub struct Span(Option<Context>);

impl Span {
    /// No span: for work that may have one later.
    pub fn off() -> Self {
        Self(None)
    }

    /// Begin span `name` as a child of `origin`'s trace (a new trace when it has none), when
    /// export is on.
    pub fn start(name: String, origin: &TraceOrigin, attributes: &[(&'static str, &str)]) -> Self {
        Self(super::tracer().map(|tracer| begin(tracer, name, &parent_of(origin), attributes)))
    }

    /// The origin of a call made inside this span.
    pub fn origin(&self) -> TraceOrigin {
        TraceOrigin {
            traceparent: self.0.as_ref().map(|cx| traceparent_of(cx.span().span_context())),
            ..TraceOrigin::default()
        }
    }

    /// Begin span `name` inside this one (none when this one is off). It ends when dropped.
    pub fn child(&self, name: String, attributes: &[(&'static str, &str)]) -> Self {
        let (Some(cx), Some(tracer)) = (&self.0, super::tracer()) else { return Self(None) };
        Self(Some(begin(tracer, name, cx, attributes)))
    }

    /// Set an attribute (nothing when export is off).
    pub fn set(&self, key: &'static str, value: &str) {
        if let Some(cx) = &self.0 {
            cx.span().set_attribute(KeyValue::new(key, value.to_owned()));
        }
    }

    /// Mark it failed: `error.type` is `kind`; the message is redacted as the audit's are.
    pub fn fail(&self, kind: &str, message: &str) {
        if let Some(cx) = &self.0 {
            failed(&cx.span(), kind, message);
        }
    }
}

impl std::fmt::Debug for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Span(…)")
    }
}

/// An internal span `name` inside `parent`, as the context of the work inside it.
fn begin(
    tracer: &opentelemetry_sdk::trace::SdkTracer,
    name: String,
    parent: &Context,
    attributes: &[(&'static str, &str)],
) -> Context {
    let span = tracer
        .span_builder(name)
        .with_kind(SpanKind::Internal)
        .with_attributes(attributes.iter().map(|(k, v)| KeyValue::new(*k, (*v).to_owned())))
        .start_with_context(tracer, parent);
    parent.with_span(span)
}

/// Mark `span` failed: `error.type` is `code`; the status carries `message`, redacted as the
/// audit redacts it.
pub(super) fn failed(span: &opentelemetry::trace::SpanRef<'_>, code: &str, message: &str) {
    span.set_attribute(KeyValue::new("error.type", code.to_owned()));
    span.set_status(Status::error(redact_text(message).into_owned()));
}

/// A span's context as a W3C `traceparent`.
fn traceparent_of(context: &opentelemetry::trace::SpanContext) -> String {
    format!("00-{}-{}-{:02x}", context.trace_id(), context.span_id(), context.trace_flags().to_u8())
}

/// The caller's context, from its `traceparent` (and `tracestate`); an empty context (a new
/// trace) when it sent none or one that does not parse.
fn parent_of(origin: &TraceOrigin) -> Context {
    use opentelemetry::propagation::TextMapPropagator as _;
    let Some(traceparent) = &origin.traceparent else { return Context::new() };
    let mut carrier = std::collections::HashMap::new();
    carrier.insert("traceparent".to_owned(), traceparent.trim().to_owned());
    if let Some(state) = &origin.tracestate {
        carrier.insert("tracestate".to_owned(), state.trim().to_owned());
    }
    TraceContextPropagator::new().extract_with_context(&Context::new(), &carrier)
}
