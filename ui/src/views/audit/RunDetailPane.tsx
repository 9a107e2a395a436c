import type { RunDetail } from "../../api/client";
import { useCancelCall, useRun, useSession } from "../../api/queries";
import { Artifacts, artifactsOf } from "../../components/Artifacts";
import { Failure } from "../../components/Failure";
import { JsonTree } from "../../components/JsonTree";
import { McpContent, contentBlocksOf } from "../../components/McpContent";
import { PacketList } from "../../components/PacketList";
import { StateBadge } from "../../components/Verdict";
import { formatDuration, formatTime } from "../../lib/format";
import { href } from "../../lib/route";
import { JobLogTail } from "../jobs/JobLogTail";
import { runParts } from "./runParts";

/**
 * One run: its record, arguments, decision and result, what it produced, the job it submitted,
 * and every packet with its hash. `closeTo` is the view the close button returns to.
 */
export default function RunDetailPane({ id, closeTo = "audit" }: { id: string; closeTo?: string }) {
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
  const outcomeBlocks = contentBlocksOf((run.response as { data?: unknown } | null)?.data);
  return (
    <aside className="run-detail" aria-label={`Run ${run.request_id}`}>
      <div className="row">
        <h2 className="mono">{run.tool}</h2>
        <StateBadge state={run.state} />
        <span className="grow" />
        <a href={href(closeTo)} aria-label="Close the run">
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
        {detail.data.job && <JobFacts detail={detail.data} />}
      </dl>
      {detail.data.job?.open && <JobLogTail requestId={run.request_id} />}
      <Artifacts artifacts={artifactsOf((run.response as { data?: unknown } | null)?.data)} />
      <h3>Arguments</h3>
      <JsonTree value={parts.args} label="Arguments" />
      <h3>Decision</h3>
      <JsonTree value={parts.decision} label="Decision" />
      <h3>Outcome</h3>
      {outcomeBlocks && <McpContent blocks={outcomeBlocks} />}
      <JsonTree value={parts.outcome} label="Outcome" />
      <h3>Packets ({packets.length})</h3>
      <PacketList
        packets={packets}
        title={(p) => p.kind}
        detail={(p) => (
          <code className="muted" title={`hash ${p.hash}\nprevious ${p.prev_hash}`}>
            {p.hash.slice(0, 12)}
          </code>
        )}
      />
    </aside>
  );
}

/** The batch job a run submitted: where it runs, whether it is collected, and a way to stop it. */
function JobFacts({ detail }: { detail: RunDetail }) {
  const cancel = useCancelCall();
  const session = useSession();
  const job = detail.job;
  if (!job) return null;
  // Viewers cannot stop anything; for the others the server decides (who made the call, or an
  // admin) and says why not.
  const mayRun = session.data?.person && session.data.person.role !== "viewer";
  const open = job.open && (detail.run.state === "queued" || detail.run.state === "running");
  return (
    <>
      <dt>Job</dt>
      <dd>
        <span className="mono">
          {job.engine} {job.handle}
        </span>{" "}
        · {open ? "on its scheduler" : "collected"}
        {open && mayRun && (
          <>
            {" "}
            <button
              type="button"
              className="danger"
              disabled={cancel.isPending}
              onClick={() => {
                cancel.mutate(detail.run.request_id);
              }}
            >
              Cancel job
            </button>
          </>
        )}
        {cancel.error && <Failure error={cancel.error} />}
      </dd>
    </>
  );
}
