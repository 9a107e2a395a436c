import { useState } from "react";
import type { Schemas } from "../../api/client";
import { formatDuration } from "../../lib/format";
import { errorRate, formatRate } from "./errorRate";

type ToolLine = Schemas["ToolLine"];

/** The columns a person can sort by, and how each reads a tool's line. */
const COLUMNS = {
  calls: { label: "Calls", value: (t: ToolLine) => t.calls },
  failed: { label: "Failed", value: (t: ToolLine) => t.failed },
  rate: { label: "Error rate", value: (t: ToolLine) => errorRate(t.calls, t.failed, t.denied) },
  p50: { label: "p50", value: (t: ToolLine) => t.p50 ?? null },
  p95: { label: "p95", value: (t: ToolLine) => t.p95 ?? null },
  p99: { label: "p99", value: (t: ToolLine) => t.p99 ?? null },
} as const;
type Column = keyof typeof COLUMNS;

/**
 * Every tool of the window with its calls, failures, error rate and latency percentiles (of
 * the whole window), sorted by any column (largest first, as one looks for the worst); a
 * tool's name charts it alone.
 */
export function ToolTable({
  tools,
  selected,
  onSelect,
}: {
  tools: ToolLine[];
  selected: string;
  onSelect: (tool: string) => void;
}) {
  const [by, setBy] = useState<Column>("calls");
  const value = COLUMNS[by].value;
  // Empty values last, whatever the order.
  const sorted = [...tools].sort(
    (a, b) => (value(b) ?? -1) - (value(a) ?? -1) || a.tool.localeCompare(b.tool),
  );
  return (
    <section className="card tool-table" aria-labelledby="tool-table-title">
      <h2 id="tool-table-title">Tools</h2>
      <table className="grid">
        <thead>
          <tr>
            <th scope="col">Tool</th>
            {(Object.keys(COLUMNS) as Column[]).map((key) => (
              <th
                key={key}
                scope="col"
                className="num"
                aria-sort={by === key ? "descending" : undefined}
              >
                <button
                  type="button"
                  className="link"
                  onClick={() => {
                    setBy(key);
                  }}
                >
                  {COLUMNS[key].label}
                  {by === key && <span aria-hidden="true"> ↓</span>}
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {sorted.slice(0, 50).map((t) => {
            const rate = errorRate(t.calls, t.failed, t.denied);
            return (
              <tr key={t.tool} aria-selected={t.tool === selected}>
                <td>
                  <button
                    type="button"
                    className="link mono"
                    onClick={() => {
                      onSelect(t.tool === selected ? "" : t.tool);
                    }}
                    aria-pressed={t.tool === selected}
                    aria-label={`Chart ${t.tool}`}
                  >
                    {t.tool}
                  </button>
                </td>
                <td className="num">{t.calls}</td>
                <td className="num">{t.failed}</td>
                <td className="num">{formatRate(rate)}</td>
                <td className="num">{ms(t.p50)}</td>
                <td className="num">{ms(t.p95)}</td>
                <td className="num">{ms(t.p99)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {tools.length > 50 && (
        <p className="muted">The 50 first of {tools.length} tools by this column.</p>
      )}
    </section>
  );
}

function ms(value: number | null | undefined): string {
  return value == null ? "–" : formatDuration(value);
}
