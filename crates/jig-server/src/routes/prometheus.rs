//! `/metrics`: the engine's counters and the store's run totals in Prometheus' text exposition
//! format, behind the same token as the API, for a team's existing dashboards.

use std::fmt::Write;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;

use crate::error::ApiError;
use crate::state::AppState;

/// Prometheus' text format (version 0.0.4).
#[utoipa::path(get, path = "/metrics", operation_id = "prometheus", tag = "project",
    responses((status = 200, content_type = "text/plain; version=0.0.4", description = "Prometheus text exposition")))]
pub async fn metrics(State(state): State<AppState>) -> Result<impl IntoResponse, ApiError> {
    let totals = state.engine.history().run_totals().await?;
    let m = state.engine.metrics();
    let mut out = String::new();
    let mut family = |name: &str, kind: &str, help: &str, samples: &[(String, f64)]| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (labels, value) in samples {
            let _ = writeln!(out, "{name}{labels} {value}");
        }
    };
    let one = |value: u64| vec![(String::new(), value as f64)];
    family("jig_calls_total", "counter", "Calls dispatched by this engine.", &one(m.calls));
    family("jig_call_errors_total", "counter", "Calls answered with ok: false.", &one(m.errors));
    family(
        "jig_calls_denied_total",
        "counter",
        "Calls refused: by the policy, or by a person denying their approval.",
        &one(m.denied),
    );
    family(
        "jig_calls_replayed_total",
        "counter",
        "Calls answered from the record.",
        &one(m.replayed),
    );
    family(
        "jig_calls_pending_approval_total",
        "counter",
        "Calls that waited for approval.",
        &one(m.waited_approval),
    );
    family(
        "jig_calls_waiting_approval",
        "gauge",
        "Calls made here that wait for a person's approval now.",
        &one(m.pending_approval),
    );
    family("jig_registry_tools", "gauge", "Tools in the registry.", &one(m.registry_size));
    let latency = m.dispatch_latency_ms;
    let quantiles: Vec<(String, f64)> = [("0.5", latency.p50), ("0.99", latency.p99)]
        .into_iter()
        .filter_map(|(q, v)| v.map(|v| (format!("{{quantile=\"{q}\"}}"), v)))
        .collect();
    family(
        "jig_dispatch_latency_ms",
        "summary",
        "Dispatch latency over the recent window (ms).",
        &quantiles,
    );
    let labelled = |f: &dyn Fn(&jig_engine::history::RunTotal) -> f64| -> Vec<(String, f64)> {
        totals
            .iter()
            .map(|t| {
                (format!("{{tool=\"{}\",state=\"{}\"}}", label(&t.tool), t.state.as_str()), f(t))
            })
            .collect()
    };
    family(
        "jig_runs",
        "gauge",
        "Runs in the audit store, by tool and state.",
        &labelled(&|t| t.count as f64),
    );
    family(
        "jig_runs_duration_ms",
        "gauge",
        "Execution time of the runs in the audit store, summed, by tool and state (ms).",
        &labelled(&|t| t.duration_ms as f64),
    );
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], out))
}

/// A label value escaped as the format requires (`\`, `"` and newlines).
fn label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}
