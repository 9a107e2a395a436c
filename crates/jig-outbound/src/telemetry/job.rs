//! The span of a scheduler's job (seed 001's batch plans). A job outlives the call that
//! submitted it and is often collected by another process, after a restart, so its span
//! cannot be held open: its identity is made before the job is submitted (the job gets it as
//! `TRACEPARENT`, so what the job traces is inside it), recorded with the call's `submitted`
//! packet, and the span is sent, from submission to collection, by whichever process
//! collects the job.

use std::cell::Cell;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceContextExt as _, TraceFlags, TraceId, TraceState,
    Tracer as _,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};
use serde::{Deserialize, Serialize};

/// A job's span, named before it exists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobTrace {
    /// The job's own span, as the W3C `traceparent` the job is given.
    pub traceparent: String,
    /// The span of the call that submitted it (hex), the job span's parent.
    pub parent: String,
}

impl JobTrace {
    /// A new job span inside the call span `call`.
    pub(super) fn inside(call: &SpanContext) -> Self {
        let span_id = RandomIdGenerator::default().new_span_id();
        Self {
            traceparent: format!("00-{}-{span_id}-01", call.trace_id()),
            parent: call.span_id().to_string(),
        }
    }

    /// Send the span: the job, submitted at `since_us` (µs since the epoch), ended now in
    /// `state`, with `error` (its code and message) when it did not succeed. Nothing when
    /// export is off or the recorded identity does not parse.
    pub fn end(
        &self,
        tool: &str,
        job: (&str, &str),
        since_us: i64,
        state: &str,
        error: Option<(&str, &str)>,
    ) {
        let Some(tracer) = super::tracer() else { return };
        let Some((trace_id, span_id, parent)) = self.ids() else { return };
        let parent =
            SpanContext::new(trace_id, parent, TraceFlags::SAMPLED, true, TraceState::default());
        let since = UNIX_EPOCH + Duration::from_micros(u64::try_from(since_us).unwrap_or(0));
        NEXT_SPAN_ID.set(Some(span_id));
        let span = tracer
            .span_builder(format!("job {tool}"))
            .with_kind(SpanKind::Internal)
            .with_start_time(since)
            .with_attributes([
                KeyValue::new("gen_ai.tool.name", tool.to_owned()),
                KeyValue::new("jig.job.engine", job.0.to_owned()),
                KeyValue::new("jig.job.id", job.1.to_owned()),
                KeyValue::new("jig.state", state.to_owned()),
            ])
            .start_with_context(tracer, &Context::new().with_remote_span_context(parent));
        NEXT_SPAN_ID.set(None);
        let cx = Context::new().with_span(span);
        let span = cx.span();
        match error {
            Some((code, message)) => super::span::failed(&span, code, message),
            None => span.set_status(Status::Ok),
        }
        span.end_with_timestamp(SystemTime::now());
    }

    fn ids(&self) -> Option<(TraceId, SpanId, SpanId)> {
        let mut parts = self.traceparent.split('-');
        let (_, trace, span) = (parts.next()?, parts.next()?, parts.next()?);
        let trace = TraceId::from_hex(trace).ok().filter(|t| *t != TraceId::INVALID)?;
        let span = SpanId::from_hex(span).ok().filter(|s| *s != SpanId::INVALID)?;
        let parent = SpanId::from_hex(&self.parent).ok()?;
        Some((trace, span, parent))
    }
}

thread_local! {
    /// The id the next span started on this thread takes: a job's, named before the job was
    /// submitted (the SDK's builder has no other way to give a span its id).
    static NEXT_SPAN_ID: Cell<Option<SpanId>> = const { Cell::new(None) };
}

/// Span and trace ids: random, except a job span's, set just before it starts.
#[derive(Debug, Default)]
pub(super) struct Ids(RandomIdGenerator);

impl IdGenerator for Ids {
    fn new_trace_id(&self) -> TraceId {
        self.0.new_trace_id()
    }

    fn new_span_id(&self) -> SpanId {
        NEXT_SPAN_ID.take().unwrap_or_else(|| self.0.new_span_id())
    }
}
