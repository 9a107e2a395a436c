import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useApi } from "../../api/context";
import { runQuery, useRuns } from "../../api/queries";
import { StateBadge } from "../../components/Verdict";
import { formatDuration, formatShortTime } from "../../lib/format";
import { href } from "../../lib/route";
import { runParts } from "../audit/runParts";

/** How many of a tool's latest calls the history lists. */
const SHOWN = 10;

/**
 * The tool's latest calls (anyone's), newest first: each can refill the form with its arguments
 * or run them again, and opens in the audit. Arguments are read from the call's request packet
 * when asked for (the list itself is one request).
 */
export function History({
  tool,
  canRun,
  onUse,
  onRerun,
}: {
  tool: string;
  canRun: boolean;
  onUse: (args: Record<string, unknown>) => void;
  onRerun: (args: Record<string, unknown>) => void;
}) {
  const runs = useRuns({ tool }, SHOWN);
  const api = useApi();
  const queries = useQueryClient();
  const [error, setError] = useState<string | null>(null);
  const rows = (runs.data?.pages[0]?.runs ?? []).slice(0, SHOWN);
  const argsOf = async (id: string): Promise<Record<string, unknown>> => {
    const detail = await queries.query(runQuery(api, id));
    const args = runParts(detail).args;
    return args !== null && typeof args === "object" ? (args as Record<string, unknown>) : {};
  };
  const take = (id: string, then: (args: Record<string, unknown>) => void) => {
    setError(null);
    argsOf(id).then(then, (e: unknown) => {
      setError(e instanceof Error ? e.message : String(e));
    });
  };
  return (
    <details className="card history">
      <summary>
        History{" "}
        <span className="muted">({rows.length === SHOWN ? `last ${SHOWN}` : rows.length})</span>
      </summary>
      {rows.length === 0 ? (
        <p className="muted">
          No calls of this tool yet. Each call made here, from a terminal or by an agent is listed
          with its outcome, to refill the form or run again.
        </p>
      ) : (
        <table className="history-table">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">State</th>
              <th scope="col">Who</th>
              <th scope="col">Took</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((run) => {
              const when = formatShortTime(run.created_us);
              return (
                <tr key={run.request_id}>
                  <td>
                    <a href={href("audit", run.request_id)} className="mono">
                      {when}
                    </a>
                  </td>
                  <td>
                    <StateBadge state={run.state} />
                  </td>
                  <td>{run.principal ?? "–"}</td>
                  <td className="mono">{formatDuration(run.duration_ms)}</td>
                  <td className="row">
                    <button
                      type="button"
                      className="ghost"
                      aria-label={`Use the arguments of the call at ${when}`}
                      onClick={() => {
                        take(run.request_id, onUse);
                      }}
                    >
                      Use
                    </button>
                    <button
                      type="button"
                      className="ghost"
                      disabled={!canRun}
                      aria-label={`Run the call at ${when} again`}
                      onClick={() => {
                        take(run.request_id, onRerun);
                      }}
                    >
                      Run again
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {error && (
        <div className="field-error" role="alert">
          {error}
        </div>
      )}
    </details>
  );
}
