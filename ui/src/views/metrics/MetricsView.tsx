import { useMetrics } from "../../api/queries";
import { Failure } from "../../components/Failure";
import { formatDuration } from "../../lib/format";

/** The engine's counters and latency since it started. */
export default function MetricsView() {
  const metrics = useMetrics();
  if (metrics.error)
    return (
      <div className="page">
        <Failure error={metrics.error} />
      </div>
    );
  const m = metrics.data;
  if (!m) return <div className="page" aria-busy="true" />;
  const latency = m["tools.dispatch.latency_ms"];
  const cards: [string, string][] = [
    ["Calls", String(m["tools.dispatch.count"])],
    ["Errors", String(m["tools.dispatch.errors"])],
    ["Error rate", `${(m["tools.dispatch.error_rate"] * 100).toFixed(1)} %`],
    ["Denied", String(m["tools.dispatch.denied"])],
    ["Waiting for approval", String(m["tools.dispatch.pending_approval"])],
    ["Replayed", String(m["tools.dispatch.replayed"])],
    ["p50 latency", formatDuration(latency.p50)],
    ["p99 latency", formatDuration(latency.p99)],
    ["Tools", String(m["tools.registry.size"])],
  ];
  return (
    <div className="page">
      <header className="page-head">
        <h1>Metrics</h1>
        <span className="sub">Since this engine started; refreshed every 5 s.</span>
      </header>
      <div className="stat-grid">
        {cards.map(([label, value]) => (
          <div key={label} className="card stat">
            <div className="muted">{label}</div>
            <div className="stat-value">{value}</div>
          </div>
        ))}
      </div>
    </div>
  );
}
