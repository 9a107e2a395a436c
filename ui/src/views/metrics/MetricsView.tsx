import { useId, useMemo, useState } from "react";
import { useMetrics, useSeries, WINDOWS, type WindowKey } from "../../api/queries";
import type { Schemas } from "../../api/client";
import { Chart, type ChartSeries } from "../../components/Chart";
import { EmptyState } from "../../components/EmptyState";
import { Failure } from "../../components/Failure";
import { bucketName, formatDuration, zoneName } from "../../lib/format";
import { ByTool } from "./ByTool";
import { errorRate, formatRate } from "./errorRate";
import { ToolTable } from "./ToolTable";

type Line = Schemas["Line"];

/** Calls, latency and errors per tool over time, denials by rule and the busiest sessions. */
export default function MetricsView() {
  const [window, setWindow] = useState<WindowKey>("1h");
  const [tool, setTool] = useState("");
  const series = useSeries(window);
  const data = series.data;
  const line: Line | undefined = tool
    ? data?.tools.find((t) => t.tool === tool)?.line
    : data?.overall;
  const times = useMemo(
    () =>
      data ? data.overall.calls.map((_, i) => (data.start_us + i * data.bucket_us) / 1e6) : [],
    [data],
  );
  const bucket = data ? bucketName(data.bucket_us) : "";

  return (
    <div className="page">
      <header className="page-head">
        <h1>Metrics</h1>
        <span className="sub">
          From the audit store: every call any process recorded. Times in {zoneName()}; drag across
          a chart to zoom in, double-click to zoom out.
        </span>
        <span className="spacer" />
        <label className="row">
          Tool
          <select
            value={tool}
            onChange={(e) => {
              setTool(e.target.value);
            }}
          >
            <option value="">All tools</option>
            {data?.tools.map((t) => (
              <option key={t.tool} value={t.tool}>
                {t.tool}
              </option>
            ))}
          </select>
        </label>
        <label className="row">
          Window
          <select
            value={window}
            onChange={(e) => {
              setWindow(e.target.value as WindowKey);
            }}
          >
            {Object.entries(WINDOWS).map(([key, w]) => (
              <option key={key} value={key}>
                {w.label}
              </option>
            ))}
          </select>
        </label>
      </header>
      {series.error ? (
        <Failure error={series.error} />
      ) : !data || !line ? (
        <div aria-busy="true" style={{ minHeight: 600 }} />
      ) : data.tools.length === 0 ? (
        <EmptyState title="No calls in this window">
          <p>
            Charts fill in as tools run: from the Tools view, <code>jig call</code>, or any process
            sharing this project's audit store. Pick a longer window to see older calls.
          </p>
        </EmptyState>
      ) : (
        <>
          <Charts line={line} times={times} bucket={bucket} />
          {!tool && <ByTool tools={data.tools} times={times} bucket={bucket} />}
        </>
      )}
      {data && data.tools.length > 0 && (
        <div className="metrics-tables">
          <ToolTable tools={data.tools} selected={tool} onSelect={setTool} />
          <CountTable
            title="Approvals by outcome"
            what="Outcome"
            counts={data.approvals ?? []}
            empty="No call asked for approval in this window."
          />
          <CountTable
            title="Denials by rule"
            what="Rule"
            counts={data.denials}
            empty="No call was denied in this window."
          />
          <CountTable
            title="Busiest sessions"
            what="Session"
            counts={data.sessions}
            empty="No session made calls in this window."
          />
        </div>
      )}
      <EngineCounters />
    </div>
  );
}

function Charts({ line, times, bucket }: { line: Line; times: number[]; bucket: string }) {
  const calls = sum(line.calls);
  const failed = sum(line.failed);
  const denied = sum(line.denied);
  const volume = useMemo<ChartSeries[]>(
    () => [
      { label: "calls", values: line.calls, color: "--accent" },
      { label: "failed", values: line.failed, color: "--bad" },
      { label: "denied", values: line.denied, color: "--warn", dash: [4, 3] },
    ],
    [line],
  );
  const latency = useMemo<ChartSeries[]>(
    () => [
      { label: "p50", values: line.p50, color: "--ok" },
      { label: "p95", values: line.p95, color: "--warn" },
      { label: "p99", values: line.p99, color: "--bad" },
    ],
    [line],
  );
  const errors = useMemo<ChartSeries[]>(
    () => [
      {
        label: "error rate",
        color: "--bad",
        values: line.calls.map((n, i) => errorRate(n, line.failed[i] ?? 0, line.denied[i] ?? 0)),
      },
    ],
    [line],
  );
  const worstP95 = Math.max(0, ...line.p95.map((v) => v ?? 0));
  return (
    <>
      <div className="stat-grid">
        <Stat label="Calls" value={String(calls)} />
        <Stat label="Failed" value={String(failed)} />
        <Stat label="Error rate" value={formatRate(errorRate(calls, failed, denied))} />
        <Stat label="Denied" value={String(denied)} />
        <Stat label="Worst p95" value={formatDuration(worstP95)} />
      </div>
      <div className="chart-grid">
        <Chart
          title={`Calls per ${bucket}`}
          summary={`${calls} calls, ${failed} failed, ${denied} denied; at most ${Math.max(...line.calls)} in one ${bucket}`}
          times={times}
          series={volume}
        />
        <Chart
          title="Latency (ms)"
          summary={`p95 at most ${formatDuration(worstP95)} in one ${bucket}`}
          times={times}
          series={latency}
        />
        <Chart
          title="Error rate (%)"
          summary={`${failed} of ${calls - denied} runs failed`}
          times={times}
          series={errors}
        />
      </div>
    </>
  );
}

function CountTable({
  title,
  what,
  counts,
  empty,
}: {
  title: string;
  what: string;
  counts: Schemas["Count"][];
  empty: string;
}) {
  const heading = useId();
  return (
    <section className="card" aria-labelledby={heading}>
      <h2 id={heading}>{title}</h2>
      {counts.length === 0 ? (
        <p className="muted">{empty}</p>
      ) : (
        <table className="grid">
          <thead>
            <tr>
              <th scope="col">{what}</th>
              <th scope="col" className="num">
                Count
              </th>
            </tr>
          </thead>
          <tbody>
            {counts.map((c) => (
              <tr key={c.name}>
                <td className="mono">{c.name}</td>
                <td className="num">{c.count}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** This engine's own counters since it started (what `/metrics` exports). */
function EngineCounters() {
  const metrics = useMetrics();
  const m = metrics.data;
  if (!m) return null;
  const latency = m["tools.dispatch.latency_ms"];
  return (
    <details className="card engine-counters">
      <summary>This engine since it started</summary>
      <div className="stat-grid">
        <Stat label="Calls" value={String(m["tools.dispatch.count"])} />
        <Stat label="Errors" value={String(m["tools.dispatch.errors"])} />
        <Stat label="Denied" value={String(m["tools.dispatch.denied"])} />
        <Stat label="Waiting for approval" value={String(m["tools.dispatch.pending_approval"])} />
        <Stat label="Replayed" value={String(m["tools.dispatch.replayed"])} />
        <Stat label="p50 latency" value={formatDuration(latency.p50)} />
        <Stat label="p99 latency" value={formatDuration(latency.p99)} />
        <Stat label="Tools" value={String(m["tools.registry.size"])} />
      </div>
    </details>
  );
}

function Stat({ label, value }: { label: string; value: string }) {
  return (
    <div className="card stat">
      <div className="muted">{label}</div>
      <div className="stat-value">{value}</div>
    </div>
  );
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
