import type { RunRecord } from "../../api/client";
import { useRun } from "../../api/queries";
import { JsonTree } from "../../components/JsonTree";
import { PacketList } from "../../components/PacketList";
import { OutputLog, type Chunk } from "../../components/OutputLog";
import { StateBadge } from "../../components/Verdict";
import { formatDuration, formatTime } from "../../lib/format";
import { isMe } from "../../lib/people";
import { href } from "../../lib/route";
import { stepTone } from "./StepList";
import type { StepRecord } from "./steps";

/**
 * One step of a run opened: when it started and how long it took, who acted on it, the inputs
 * it was given as rendered, what came out (or why not), the tool call it made with that call's
 * output, and its packets in the chain.
 */
export function StepDetail({
  runId,
  step,
  call,
  took,
  me,
}: {
  runId: string;
  step: StepRecord;
  call: RunRecord | undefined;
  /** How long it took (its call's duration for a tool step). */
  took: number | undefined;
  me: string | undefined;
}) {
  const { tone, words } = stepTone(step.status);
  const who = (name: string) => (isMe(name, me) ? `${name} (you)` : name);
  return (
    <section className="card step-detail" aria-labelledby="step-detail-heading">
      <div className="row">
        <h2 id="step-detail-heading" className="mono">
          {step.key}
        </h2>
        <span className={`badge ${tone}`}>{words}</span>
        <span className="grow" />
        <a href={href("runbooks", "run", runId)} aria-label="Close the step">
          ✕
        </a>
      </div>
      <dl className="facts">
        <dt>Step</dt>
        <dd>
          <span className="mono">{step.stepId}</span>
          {step.type ? ` · ${step.type}` : ""}
          {step.tool ? (
            <>
              {" · "}
              <a href={href("tools", step.tool)} className="mono">
                {step.tool}
              </a>
            </>
          ) : null}
        </dd>
        <dt>Started</dt>
        <dd>{step.startedUs === undefined ? "not started" : formatTime(step.startedUs)}</dd>
        <dt>Took</dt>
        <dd>{took === undefined ? "–" : formatDuration(took)}</dd>
        {(step.acts.length > 0 || step.completedBy) && (
          <>
            <dt>People</dt>
            <dd>
              <ul className="plain-list">
                {step.acts.map((act) => (
                  <li key={`${act.us}-${act.by}-${act.what}`}>
                    {act.what} by <strong>{who(act.by)}</strong>{" "}
                    <span className="muted">{formatTime(act.us)}</span>
                  </li>
                ))}
                {step.completedBy && step.acts.length === 0 && (
                  <li>
                    completed by <strong>{who(step.completedBy)}</strong>
                  </li>
                )}
              </ul>
            </dd>
          </>
        )}
        {call && (
          <>
            <dt>Call</dt>
            <dd>
              <a href={href("audit", call.request_id)} className="mono">
                {call.request_id.slice(0, 8)}
              </a>{" "}
              <StateBadge state={call.state} /> took {formatDuration(call.duration_ms)}
            </dd>
          </>
        )}
      </dl>
      {step.failure && (
        <div className="callout bad" role="status">
          <strong>{step.failure.kind}</strong>: {step.failure.message}
        </div>
      )}
      {step.inputs !== undefined && (
        <>
          <h3>Inputs, as sent</h3>
          <JsonTree value={step.inputs} label="Inputs" />
        </>
      )}
      {step.outputs !== undefined && step.outputs !== null && (
        <>
          <h3>Outputs</h3>
          <JsonTree value={step.outputs} label="Outputs" />
        </>
      )}
      {call && <CallLog requestId={call.request_id} />}
      <details>
        <summary>Packets ({step.packets.length})</summary>
        <PacketList
          packets={step.packets}
          title={(p) => (p.data as { event?: string }).event ?? p.kind}
          detail={(p) => <span className="muted">{p.principal ?? "–"}</span>}
        />
      </details>
    </section>
  );
}

/** What the step's tool call wrote (its result's `stdout` and `stderr`), as a terminal shows it. */
function CallLog({ requestId }: { requestId: string }) {
  const detail = useRun(requestId);
  const data = (detail.data?.run.response as { data?: Record<string, unknown> } | null)?.data;
  const chunks: Chunk[] = [];
  for (const stream of ["stdout", "stderr"]) {
    const text = data?.[stream];
    if (typeof text === "string" && text.length > 0) chunks.push({ stream, text });
  }
  if (chunks.length === 0) return null;
  return <OutputLog chunks={chunks} live={false} />;
}
