import { useMemo } from "react";
import type { Schemas } from "../../api/client";
import { Chart, type ChartSeries } from "../../components/Chart";
import { errorRate } from "./errorRate";

/** How many tools the comparison draws: more lines than this cannot be told apart. */
const DRAWN = 5;
const COLORS = ["--series-1", "--series-2", "--series-3", "--series-4", "--series-5"];

/**
 * The busiest tools side by side over time: each one's p95 latency and error rate per bucket,
 * as Grafana's "by tool" panels show them (a line per tool; its name in the legend hides it).
 */
export function ByTool({
  tools,
  times,
  bucket,
}: {
  tools: Schemas["ToolLine"][];
  times: number[];
  bucket: string;
}) {
  const busiest = tools.slice(0, DRAWN);
  const p95 = useMemo<ChartSeries[]>(
    () =>
      busiest.map((t, i) => ({
        label: t.tool,
        values: t.line.p95,
        color: COLORS[i] ?? "--muted",
      })),
    [busiest],
  );
  const errors = useMemo<ChartSeries[]>(
    () =>
      busiest.map((t, i) => ({
        label: t.tool,
        values: t.line.calls.map((n, b) =>
          errorRate(n, t.line.failed[b] ?? 0, t.line.denied[b] ?? 0),
        ),
        color: COLORS[i] ?? "--muted",
      })),
    [busiest],
  );
  if (busiest.length < 2) return null;
  const names = busiest.map((t) => t.tool).join(", ");
  const slowest = [...busiest].sort((a, b) => (b.p95 ?? -1) - (a.p95 ?? -1))[0];
  return (
    <div className="chart-grid by-tool">
      <Chart
        title={`p95 latency by tool (ms, per ${bucket})`}
        summary={`the ${busiest.length} busiest tools (${names}); slowest at p95 over the window: ${slowest?.tool ?? "–"}`}
        times={times}
        series={p95}
      />
      <Chart
        title={`Error rate by tool (%, per ${bucket})`}
        summary={`the ${busiest.length} busiest tools (${names})`}
        times={times}
        series={errors}
      />
    </div>
  );
}
