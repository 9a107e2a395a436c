//! Throughput and latency percentiles of one measured run.

use std::time::Duration;

/// What one run measured.
#[derive(Debug, Clone, Copy)]
pub struct Figures {
    pub calls_per_second: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
}

impl Figures {
    /// From every call's latency and the wall time of the whole run.
    pub fn of(mut latencies: Vec<Duration>, wall: Duration) -> Self {
        latencies.sort();
        let at = |q: f64| {
            let index = ((latencies.len() as f64 * q).ceil() as usize).saturating_sub(1);
            latencies.get(index).map_or(0.0, |d| d.as_secs_f64() * 1e3)
        };
        Self {
            calls_per_second: latencies.len() as f64 / wall.as_secs_f64(),
            p50_ms: at(0.5),
            p99_ms: at(0.99),
        }
    }
}
