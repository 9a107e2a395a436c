import { useRun } from "../../api/queries";
import { Failure } from "../../components/Failure";
import { JsonTree } from "../../components/JsonTree";
import { StateBadge } from "../../components/Verdict";
import { formatDuration, formatTime } from "../../lib/format";
import { href } from "../../lib/route";
import { runParts } from "./runParts";

/** One run: its record, arguments, decision and result, and every packet with its hash. */
export default function RunDetailPane({ id }: { id: string }) {
  const detail = useRun(id);
  if (detail.error)
    return (
      <aside className="run-detail">
        <Failure error={detail.error} />
      </aside>
    );
  if (!detail.data) return <aside className="run-detail" aria-busy="true" />;
  const { run, packets } = detail.data;
  const parts = runParts(detail.data);
  return (
    <aside className="run-detail" aria-label={`Run ${run.request_id}`}>
      <div className="row">
        <h2 className="mono">{run.tool}</h2>
        <StateBadge state={run.state} />
        <span className="grow" />
        <a href={href("audit")} aria-label="Close the run">
          ✕
        </a>
      </div>
      <dl className="facts">
        <dt>Request</dt>
        <dd className="mono">{run.request_id}</dd>
        <dt>Run id</dt>
        <dd className="mono">{run.run_id}</dd>
        <dt>When</dt>
        <dd>
          {formatTime(run.created_us)} · took {formatDuration(run.duration_ms)}
        </dd>
        <dt>Who</dt>
        <dd>
          {run.principal ?? "–"} · session {run.session_id ?? "–"}
          {run.thread_id ? ` · thread ${run.thread_id}` : ""}
        </dd>
        <dt>Decided by</dt>
        <dd className="mono">{run.rule ?? "–"}</dd>
        <dt>Policy</dt>
        <dd className="mono">{run.policy_hash.slice(0, 16)}</dd>
        {run.replayed_from && (
          <>
            <dt>Replayed</dt>
            <dd>
              from{" "}
              <a href={href("audit", run.replayed_from)} className="mono">
                {run.replayed_from.slice(0, 8)}
              </a>
            </dd>
          </>
        )}
        {run.error && (
          <>
            <dt>Error</dt>
            <dd>{run.error}</dd>
          </>
        )}
      </dl>
      <h3>Arguments</h3>
      <JsonTree value={parts.args} label="Arguments" />
      <h3>Decision</h3>
      <JsonTree value={parts.decision} label="Decision" />
      <h3>Outcome</h3>
      <JsonTree value={parts.outcome} label="Outcome" />
      <h3>Packets ({packets.length})</h3>
      <ol className="packets">
        {packets.map((p) => (
          <li key={p.seq}>
            <details>
              <summary>
                <span className="mono">#{p.seq}</span> <strong>{p.kind}</strong>{" "}
                <span className="muted">{formatTime(p.ts_us)}</span>{" "}
                <code className="muted" title={`hash ${p.hash}\nprevious ${p.prev_hash}`}>
                  {p.hash.slice(0, 12)}
                </code>
              </summary>
              <JsonTree value={p.data} label={`Packet ${p.seq}`} />
            </details>
          </li>
        ))}
      </ol>
    </aside>
  );
}
