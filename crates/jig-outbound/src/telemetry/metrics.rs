//! Metrics over OTLP: `jig.calls` (a counter) and `jig.call.duration` (a histogram, seconds),
//! by tool and what happened to the call (`gen_ai.tool.name`, `jig.state`, `error.type`),
//! aggregated in place and sent every `OTEL_METRIC_EXPORT_INTERVAL` (60 s by default) by the
//! reader's task on Jig's runtime, and when a command ends.

use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _};
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::metrics::periodic_reader_with_async_runtime::PeriodicReader;

/// Bucket boundaries of `jig.call.duration`, in seconds: a built-in's millisecond to a plan's
/// minutes.
const BOUNDARIES: [f64; 17] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0, 300.0,
];

pub(super) struct Metrics {
    provider: SdkMeterProvider,
    calls: Counter<u64>,
    duration: Histogram<f64>,
}

impl Metrics {
    /// Instruments whose readings `exporter` sends, from a task on the current runtime.
    pub(super) fn start(
        exporter: opentelemetry_otlp::MetricExporter,
        resource: opentelemetry_sdk::Resource,
    ) -> Self {
        let reader = PeriodicReader::builder(exporter, opentelemetry_sdk::runtime::Tokio).build();
        let provider =
            SdkMeterProvider::builder().with_reader(reader).with_resource(resource).build();
        let meter = provider.meter("jig");
        let calls = meter
            .u64_counter("jig.calls")
            .with_description("Calls, by tool and by what happened to them")
            .with_unit("{call}")
            .build();
        let duration = meter
            .f64_histogram("jig.call.duration")
            .with_description("How long calls took, from request to answer")
            .with_unit("s")
            .with_boundaries(BOUNDARIES.to_vec())
            .build();
        Self { provider, calls, duration }
    }

    pub(super) fn record(&self, tool: &str, state: &str, error: Option<&str>, elapsed: Duration) {
        let mut attributes = vec![
            KeyValue::new("gen_ai.tool.name", tool.to_owned()),
            KeyValue::new("jig.state", state.to_owned()),
        ];
        if let Some(code) = error {
            attributes.push(KeyValue::new("error.type", code.to_owned()));
        }
        self.calls.add(1, &attributes);
        self.duration.record(elapsed.as_secs_f64(), &attributes);
    }

    /// Send the readings now (the provider's flush waits for its task, so not on a worker).
    pub(super) async fn flush(&self) {
        let provider = self.provider.clone();
        let _ = tokio::task::spawn_blocking(move || provider.force_flush()).await;
    }
}
