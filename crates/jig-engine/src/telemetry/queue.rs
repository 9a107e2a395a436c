//! The bounded queue between finished spans and the exporter: a span is handed over without
//! waiting, and one task sends them in batches, each export bounded in time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SpanData, SpanExporter as _};
use tokio::sync::{mpsc, oneshot};

/// Spans waiting to be sent, at most.
const QUEUE: usize = 4096;
/// Spans in one export, at most.
const BATCH: usize = 512;
/// How long finished spans wait for a batch to fill.
const EVERY: Duration = Duration::from_secs(1);
/// How long one export may take before its spans are given up.
const EXPORT_WITHIN: Duration = Duration::from_secs(10);

static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Spans this process made but did not send: the queue was full, or the receiver refused or
/// did not answer in time.
pub fn dropped_spans() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}

enum Message {
    Span(Box<SpanData>),
    Flush(oneshot::Sender<()>),
}

/// The queue's sending end, as the tracer provider's span processor.
#[derive(Debug)]
struct Processor(mpsc::Sender<Message>);

impl opentelemetry_sdk::trace::SpanProcessor for Processor {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &opentelemetry::Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        if self.0.try_send(Message::Span(Box::new(span))).is_err() {
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        // Flushing waits, which a span's end must never do: `Handle::flush` does it, async.
        Ok(())
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }
}

/// The running export.
pub(super) struct Handle(mpsc::Sender<Message>);

impl Handle {
    /// Send what is queued, waiting at most `within`.
    pub(super) async fn flush(&self, within: Duration) {
        let (done, sent) = oneshot::channel();
        if self.0.send(Message::Flush(done)).await.is_ok() {
            let _ = tokio::time::timeout(within, sent).await;
        }
    }
}

/// Install a tracer provider whose spans `exporter` sends, from a task on the current runtime.
pub(super) fn start(
    mut exporter: opentelemetry_otlp::SpanExporter,
    resource: opentelemetry_sdk::Resource,
) -> Handle {
    let (queue, mut spans) = mpsc::channel(QUEUE);
    exporter.set_resource(&resource);
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_span_processor(Processor(queue.clone()))
        .with_resource(resource)
        .build();
    opentelemetry::global::set_tracer_provider(provider);
    tokio::spawn(async move {
        let mut batch = Vec::with_capacity(BATCH);
        let mut tick = tokio::time::interval(EVERY);
        loop {
            tokio::select! {
                message = spans.recv() => match message {
                    Some(Message::Span(span)) => {
                        batch.push(*span);
                        if batch.len() >= BATCH {
                            send(&exporter, &mut batch).await;
                        }
                    }
                    Some(Message::Flush(done)) => {
                        send(&exporter, &mut batch).await;
                        let _ = done.send(());
                    }
                    None => {
                        send(&exporter, &mut batch).await;
                        break;
                    }
                },
                _ = tick.tick() => send(&exporter, &mut batch).await,
            }
        }
    });
    Handle(queue)
}

async fn send(exporter: &opentelemetry_otlp::SpanExporter, batch: &mut Vec<SpanData>) {
    if batch.is_empty() {
        return;
    }
    let spans = std::mem::take(batch);
    let count = spans.len() as u64;
    match tokio::time::timeout(EXPORT_WITHIN, exporter.export(spans)).await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => {
            DROPPED.fetch_add(count, Ordering::Relaxed);
            tracing::debug!(%error, count, "spans not exported");
        }
        Err(_) => {
            DROPPED.fetch_add(count, Ordering::Relaxed);
            tracing::debug!(count, "spans not exported in time");
        }
    }
}
