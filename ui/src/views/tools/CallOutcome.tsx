import { useEffect, useMemo, useRef } from "react";
import { Artifacts, artifactsOf } from "../../components/Artifacts";
import { ResultBody } from "../../components/ResultBody";
import { OutputLog } from "../../components/OutputLog";
import { JobLogTail } from "../jobs/JobLogTail";
import { Failure } from "../../components/Failure";
import { formatDuration, pretty } from "../../lib/format";
import { href } from "../../lib/route";
import { check } from "../../lib/schema";
import type { CallView } from "./useCall";
import { Inline } from "../../components/Inline";

/** A call's progress, streamed output and result (checked against the output schema). */
export function CallOutcome({ view, outputSchema }: { view: CallView; outputSchema: unknown }) {
  const response = view.response;
  const schemaProblems = useMemo(
    () =>
      response?.ok && outputSchema && typeof outputSchema === "object"
        ? check(outputSchema, response.data)
        : [],
    [response, outputSchema],
  );
  // The panel comes into view when the call starts and when it settles: after Run, the result
  // is often below the form.
  const panel = useRef<HTMLElement>(null);
  const settled = view.phase === "done" || view.phase === "waiting" || view.phase === "queued";
  useEffect(() => {
    if (view.phase === "starting" || settled)
      panel.current?.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }, [view.phase, settled]);
  if (view.phase === "idle") return null;
  if (view.error) return <Failure error={view.error} />;
  const queued = view.phase === "queued";
  const running = view.phase === "starting" || view.phase === "running" || queued;
  return (
    <section ref={panel} className="card outcome" aria-label="Call" aria-live="polite">
      <div className="row">
        <h2>
          {queued
            ? `On ${response?.job?.engine === "slurm" ? "Slurm" : (response?.job?.engine ?? "a scheduler")}`
            : running
              ? "Running"
              : view.phase === "waiting"
                ? view.orphaned
                  ? "Approved, not run"
                  : "Waiting for approval"
                : view.ended
                  ? endedTitle(view.ended.verdict)
                  : response?.ok
                    ? "Succeeded"
                    : "Failed"}
        </h2>
        {/* A waiting call's answer took no time worth showing: it has not run. */}
        {response && view.phase !== "waiting" && (
          <span className="muted">{formatDuration(response.duration_ms)}</span>
        )}
        {response?.replayed && <span className="badge">replayed from the audit record</span>}
        <span className="grow" />
        {view.requestId && (
          <a href={href("audit", view.requestId)} className="mono">
            {view.requestId.slice(0, 8)} in Audit
          </a>
        )}
      </div>
      {running && (
        <div
          className={`progress${view.percent === null ? " indeterminate" : ""}`}
          role="progressbar"
          aria-label="Progress"
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={view.percent ?? undefined}
        >
          <div style={view.percent === null ? undefined : { width: `${view.percent}%` }} />
        </div>
      )}
      {view.message && <div className="muted">{view.message}</div>}
      {queued && (
        <div className="callout" role="status">
          The job runs on its scheduler; this panel follows it to its result. It goes on if you
          leave: find it in <a href={href("audit", view.requestId ?? "")}>Audit</a>, or with{" "}
          <code>jig runs show {view.requestId}</code>.
        </div>
      )}
      {queued && view.requestId && <JobLogTail requestId={view.requestId} />}
      {view.output.length > 0 && <OutputLog chunks={view.output} live={running} />}
      {view.phase === "waiting" && view.orphaned && (
        <div className="callout warn" role="status">
          Approved, but the Jig process that held this call stopped before running it. Run it again
          with the same arguments to use the approval; nobody is asked twice.
        </div>
      )}
      {view.phase === "waiting" && !view.orphaned && (
        <div className="callout warn" role="status">
          This call needs approval (<code>{view.approvalId}</code>). It runs as soon as an approver
          approves it in <a href={href("approvals")}>Approvals</a>; this panel follows it.
        </div>
      )}
      {view.ended && <Ended ended={view.ended} />}
      {response && !response.ok && view.phase !== "waiting" && !view.ended && (
        <div className="callout bad" role="alert">
          {(response.errors ?? []).map((error) => {
            const rule = (error.details as { rule?: unknown } | null | undefined)?.rule;
            return (
              <div key={error.code + error.message}>
                <strong className="mono">{error.code}</strong> <Inline text={error.message} />
                {typeof rule === "string" && (
                  <div>
                    rule <code>{rule}</code>
                  </div>
                )}
              </div>
            );
          })}
        </div>
      )}
      {response?.ok && !queued && (
        <>
          <div className="row">
            <h3>Result</h3>
            {schemaProblems.length === 0 ? (
              <span className="badge ok">matches the output schema</span>
            ) : (
              <span className="badge bad" title={schemaProblems.join("\n")}>
                {schemaProblems.length} output schema problems
              </span>
            )}
            <span className="grow" />
            <button
              type="button"
              className="ghost"
              onClick={() => void navigator.clipboard.writeText(pretty(response.data))}
            >
              Copy JSON
            </button>
          </div>
          <ResultBody data={response.data} />
          <Artifacts artifacts={artifactsOf(response.data)} />
        </>
      )}
    </section>
  );
}

function endedTitle(verdict: string): string {
  switch (verdict) {
    case "denied":
      return "Denied";
    case "expired":
      return "Expired";
    case "withdrawn":
      return "Withdrawn";
    case "stopped":
      return "Stopped";
    default:
      return "Finished";
  }
}

/** What ended a wait for approval, in the words of who decided it. */
function Ended({ ended }: { ended: NonNullable<CallView["ended"]> }) {
  const by = ended.by ?? "a reviewer";
  if (ended.verdict === "denied")
    return (
      <div className="callout bad" role="alert">
        <strong>{by}</strong> denied it{ended.reason ? ":" : "."}
        {ended.reason && <blockquote className="note">{ended.reason}</blockquote>}
        <div className="muted">Nothing ran. Change the request, or ask {by} about it.</div>
      </div>
    );
  if (ended.verdict === "expired")
    return (
      <div className="callout warn" role="status">
        Nobody decided in time, so nothing ran. Run it again to ask again.
      </div>
    );
  if (ended.verdict === "stopped")
    return (
      <div className="callout bad" role="alert">
        It did not finish: {ended.reason ?? "the process running it stopped"}. Run it again if it
        should still happen; <a href={href("audit")}>Audit</a> has what was recorded.
      </div>
    );
  return (
    <div className="callout" role="status">
      The request was withdrawn; nothing ran.
    </div>
  );
}
