//! The bounded queue between finished spans and the exporter: a span is set down without
//! waiting and without waking anyone (a wake-up per call costs more than the span itself);
//! one task takes them every second, or as soon as a batch is full, and sends them in batches,
//! each export bounded in time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SpanData, SpanExporter as _};
use tokio::sync::{Notify, mpsc, oneshot};

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

/// The spans set down, and the bell rung when a batch is full.
#[derive(Debug, Default)]
struct Waiting {
    spans: Mutex<Vec<SpanData>>,
    full: Notify,
}

impl Waiting {
    fn take(&self) -> Vec<SpanData> {
        std::mem::take(&mut *self.spans.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The tracer provider's span processor: sets finished spans down for the task.
#[derive(Debug)]
struct Processor(Arc<Waiting>);

impl opentelemetry_sdk::trace::SpanProcessor for Processor {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &opentelemetry::Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        let mut spans = self.0.spans.lock().unwrap_or_else(PoisonError::into_inner);
        if spans.len() >= QUEUE {
            DROPPED.fetch_add(1, Ordering::Relaxed);
            return;
        }
        spans.push(span);
        if spans.len() == BATCH {
            self.0.full.notify_one();
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

/// The running export: asks its task to send what is waiting now.
pub(super) struct Handle(mpsc::Sender<oneshot::Sender<()>>);

impl Handle {
    /// Send what is waiting, waiting at most `within`.
    pub(super) async fn flush(&self, within: Duration) {
        let (done, sent) = oneshot::channel();
        if self.0.send(done).await.is_ok() {
            let _ = tokio::time::timeout(within, sent).await;
        }
    }
}

/// A tracer whose spans `exporter` sends, from a task on the current runtime; the provider
/// is also the process's global one (for libraries that trace through it).
pub(super) fn start(
    mut exporter: opentelemetry_otlp::SpanExporter,
    resource: opentelemetry_sdk::Resource,
) -> (Handle, opentelemetry_sdk::trace::SdkTracer) {
    let waiting = Arc::new(Waiting::default());
    let (flush, mut flushes) = mpsc::channel::<oneshot::Sender<()>>(8);
    exporter.set_resource(&resource);
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_span_processor(Processor(Arc::clone(&waiting)))
        .with_id_generator(super::job::Ids::default())
        .with_resource(resource)
        .build();
    let tracer = {
        use opentelemetry::trace::TracerProvider as _;
        provider.tracer("jig")
    };
    opentelemetry::global::set_tracer_provider(provider);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(EVERY);
        loop {
            let done = tokio::select! {
                () = waiting.full.notified() => None,
                _ = tick.tick() => None,
                asked = flushes.recv() => match asked {
                    Some(done) => Some(done),
                    None => return,
                },
            };
            let mut spans = waiting.take();
            while !spans.is_empty() {
                let rest = spans.split_off(spans.len().min(BATCH));
                send(&exporter, spans).await;
                spans = rest;
            }
            if let Some(done) = done {
                let _ = done.send(());
            }
        }
    });
    (Handle(flush), tracer)
}

async fn send(exporter: &opentelemetry_otlp::SpanExporter, spans: Vec<SpanData>) {
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
