import { lazy, Suspense, useMemo, useState } from "react";
import type { RunView } from "../../api/client";
import {
  usePauseRun,
  useResumeRun,
  useRunbook,
  useRunbookRun,
  useRunbooks,
  useRunbookTrace,
  useRuns,
  useSession,
} from "../../api/queries";
import { useBackend } from "../../api/context";
import { Failure } from "../../components/Failure";
import { Icon } from "../../components/Icon";
import { JsonTree } from "../../components/JsonTree";
import { count, formatTime } from "../../lib/format";
import { isMe } from "../../lib/people";
import { href, navigate } from "../../lib/route";
import { stepIdOfKey, type RunMarks } from "./layout";
import { RunStatusBadge } from "./RunStatusBadge";
import { RunTrace } from "./RunTrace";
import { StartForm } from "./StartForm";
import { StepDetail } from "./StepDetail";
import { StepList } from "./StepList";
import { latestKeyOf, stepDurationMs, stepsOf, type StepRecord } from "./steps";
import { WaitingCard } from "./WaitingCard";

const StepGraph = lazy(() => import("./StepGraph"));

/** Where a run stands, for the graph: visited, waiting, failed and ending steps by step id. */
function marksOf(run: RunView): RunMarks {
  const progress = run.progress;
  return {
    visited: progress.visited,
    waiting: (progress.waiting ?? []).map((w) => w.step_id),
    failed: progress.failure?.key ? stepIdOfKey(progress.failure.key) : undefined,
    ended: progress.outcome ? stepIdOfKey(progress.outcome.step) : undefined,
  };
}

/**
 * One run stepped through: the graph with the path taken and the steps waiting, what each
 * waiting step needs (acted on here, in one's own name), the outcome or the failure, the
 * variables, and the trace. Moves made elsewhere (the terminal, another reviewer) arrive on
 * the event stream.
 */
export default function RunPage({ id, step }: { id: string; step?: string }) {
  const run = useRunbookRun(id);
  const trace = useRunbookTrace(id);
  const steps = useMemo(() => stepsOf(trace.data ?? []), [trace.data]);
  // The tool calls the steps made, by their thread (`runbook:<run>:<step instance>`).
  const calls = useRuns({ session: id });
  const callOf = useMemo(() => {
    const byThread = new Map(
      (calls.data?.pages ?? []).flatMap((page) => page.runs).map((r) => [r.thread_id, r]),
    );
    return (key: string) => byThread.get(`runbook:${id}:${key}`);
  }, [calls.data, id]);
  const opened = steps.find((s) => s.key === step);
  // A tool step took as long as its call; any other, from its start to its completion.
  const tookMs = (s: StepRecord) => callOf(s.key)?.duration_ms ?? stepDurationMs(s);
  const runbook = useRunbook(run.data?.runbook);
  const session = useSession();
  const resume = useResumeRun(id);
  const pause = usePauseRun(id);
  const marks = useMemo(() => (run.data ? marksOf(run.data) : undefined), [run.data]);
  const viewer = { name: session.data?.person.name, role: session.data?.person.role };
  const data = run.data;
  const waiting = data?.progress.waiting ?? [];
  // A run that has not ended can be held; one already held waits for a go-ahead instead.
  const held = waiting.some((w) => w.need.need === "paused");
  const pausable = data !== undefined && waiting.length > 0 && !held;
  return (
    <div className="page run-page">
      <header className="page-head">
        <a href={href("runbooks")}>Runbooks</a>
        <span className="muted">/</span>
        {data && (
          <a href={href("runbooks", "book", data.runbook)} className="mono">
            {data.runbook}
          </a>
        )}
        <span className="muted">/</span>
        <h1>
          Run <span className="mono">{id.slice(0, 8)}</span>
        </h1>
        {data && <RunStatusBadge status={data.progress.status} held={held} />}
        {data && (
          <span className="sub">
            started by <strong>{data.started_by ?? "unknown"}</strong> ·{" "}
            {formatTime(data.created_us)}
          </span>
        )}
        <span className="grow" />
        {pausable && (
          <button
            type="button"
            disabled={pause.isPending}
            title="Hold the run before its next step that would do something; a go-ahead at that step resumes it"
            onClick={() => {
              pause.mutate();
            }}
          >
            Pause
          </button>
        )}
        {data?.progress.status === "paused" && (
          <button
            type="button"
            disabled={resume.isPending}
            title="Walk the run again: picks up approvals and evidence given elsewhere"
            onClick={() => {
              resume.mutate();
            }}
          >
            Walk again
          </button>
        )}
      </header>
      {run.error && <Failure error={run.error} />}
      {resume.error && <Failure error={resume.error} />}
      {pause.error && <Failure error={pause.error} />}
      {data && (
        <div className="runbook-body">
          <section aria-label="Step graph" className="graph-pane">
            {runbook.data ? (
              <Suspense fallback={<div className="step-graph" aria-busy />}>
                <StepGraph
                  graph={runbook.data.graph}
                  marks={marks}
                  onPick={(stepId) => {
                    const key = latestKeyOf(steps, stepId);
                    if (key) navigate("runbooks", "run", id, key);
                  }}
                />
              </Suspense>
            ) : (
              <div className="step-graph" aria-busy />
            )}
          </section>
          <aside className="side-pane" aria-label="Run">
            {opened && (
              <StepDetail
                runId={id}
                step={opened}
                call={callOf(opened.key)}
                took={tookMs(opened)}
                me={session.data?.person.name}
              />
            )}
            {step !== undefined && !opened && trace.data && (
              <p className="callout warn" role="status">
                This run has no step <code>{step}</code> (yet).
              </p>
            )}
            <Standing run={data} me={session.data?.person.name} />
            {(data.progress.waiting ?? []).map((waiting) => (
              <WaitingCard
                key={waiting.key}
                runId={id}
                waiting={waiting}
                verdict={data.verdicts[waiting.key]}
                viewer={viewer}
                startedBy={data.started_by}
                pausedBy={data.paused_by}
              />
            ))}
            <StepList runId={id} steps={steps} open={opened?.key} tookMs={tookMs} />
            <RunAgain run={data} />
            <Attachments run={data} />
            <details className="card">
              <summary>Variables</summary>
              <JsonTree value={data.progress.variables} label="Variables" />
            </details>
            <RunTrace id={id} />
          </aside>
        </div>
      )}
    </div>
  );
}

interface Attached {
  name: string;
  bytes: number;
  sha256: string;
}

/**
 * Files people attached as evidence, by name, size and SHA-256; each can be saved (the server
 * serves it as a download and never renders it).
 */
function Attachments({ run }: { run: RunView }) {
  const { platform } = useBackend();
  const [error, setError] = useState<string | null>(null);
  const variables = run.progress.variables;
  const attached = Object.entries(variables).filter(
    (entry): entry is [string, Attached] =>
      typeof entry[1] === "object" &&
      entry[1] !== null &&
      "sha256" in entry[1] &&
      "stored" in entry[1],
  );
  if (attached.length === 0) return null;
  const save = async (file: Attached) => {
    setError(null);
    try {
      await platform.download(
        `/api/runbook-runs/${encodeURIComponent(run.id)}/attachments/${file.sha256}`,
        file.name,
      );
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <section className="card" aria-labelledby="attachments-heading">
      <h2 id="attachments-heading">Attachments</h2>
      <ul className="plain-list">
        {attached.map(([piece, file]) => (
          <li key={piece} className="row">
            <strong>{file.name}</strong>
            <span className="muted">
              {piece} · {file.bytes} bytes · <code>{file.sha256.slice(0, 12)}</code>
            </span>
            <span className="grow" />
            <button
              type="button"
              className="ghost"
              aria-label={`Save ${file.name}`}
              onClick={() => void save(file)}
            >
              <Icon name="download" /> Save
            </button>
          </li>
        ))}
      </ul>
      {error && (
        <div className="field-error" role="alert">
          {error}
        </div>
      )}
    </section>
  );
}

/** The outcome, or why the run stopped. */
function Standing({ run, me }: { run: RunView; me: string | undefined }) {
  const { outcome, failure, status } = run.progress;
  const held = (run.progress.waiting ?? []).some((w) => w.need.need === "paused");
  // The next runbook has its own form below; the tree shows the rest.
  const details = Object.fromEntries(
    Object.entries(outcome?.meta ?? {}).filter(([key]) => key !== "next_runbook"),
  );
  if (outcome)
    return (
      <section className="card outcome-card" aria-label="Outcome">
        <h2>
          Outcome: <span className="badge ok">{outcome.category.replace("_", " ")}</span>
        </h2>
        {outcome.code && (
          <p>
            Code <code>{outcome.code}</code> at step <code>{outcome.step}</code>
          </p>
        )}
        {Object.keys(details).length > 0 && <JsonTree value={details} label="Outcome details" />}
        <NextRunbook run={run} />
      </section>
    );
  if (failure && status !== "paused")
    return (
      <section className="callout bad" aria-label="Why the run stopped">
        <strong>Stopped at {failure.key || "the end"}</strong>: [{failure.failure.kind}]{" "}
        {failure.failure.message}
      </section>
    );
  if (held)
    return (
      <p className="muted" role="status">
        Paused by{" "}
        <strong>
          {run.paused_by ? (isMe(run.paused_by, me) ? "you" : run.paused_by) : "someone"}
        </strong>
        : nothing new happens until a person resumes it (Resume here, below, or{" "}
        <code>jig runbook resume {run.id}</code> in a terminal).
      </p>
    );
  if (status === "paused")
    return (
      <p className="muted" role="status">
        Waiting for people at {count((run.progress.waiting ?? []).length, "step")}. The run keeps
        its place: leave and come back, or go on from the terminal with{" "}
        <code>jig runbook resume {run.id}</code>.
      </p>
    );
  return null;
}

interface NextMeta {
  file?: string;
  runbook?: string;
  inputs?: Record<string, unknown>;
}

/** The runbook an outcome names next (v0/v1 `next_runbook`), ready to start from here. */
function NextRunbook({ run }: { run: RunView }) {
  const next = run.progress.outcome?.meta?.next_runbook as NextMeta | undefined;
  const runbooks = useRunbooks();
  if (!next) return null;
  const summary = runbooks.data?.find((r) => r.name === next.runbook);
  if (!summary)
    return (
      <p className="muted">
        The outcome names <code>{next.file}</code> next, which is not a runbook of this project.
      </p>
    );
  return <StartForm runbook={summary} follow={{ runId: run.id, inputs: next.inputs ?? {} }} />;
}

/**
 * An ended run started again with the same inputs (as a CI's re-run): the start form of its
 * runbook, prefilled with the values the run was given, each still editable.
 */
function RunAgain({ run }: { run: RunView }) {
  const runbooks = useRunbooks();
  const { outcome, failure, status } = run.progress;
  const ended = Boolean(outcome) || (Boolean(failure) && status !== "paused");
  const summary = runbooks.data?.find((r) => r.name === run.runbook);
  if (!ended || !summary) return null;
  const declared = Object.keys(summary.inputs);
  const variables = run.progress.variables;
  const given = Object.fromEntries(
    declared.filter((name) => name in variables).map((name) => [name, variables[name]]),
  );
  return (
    <details className="card run-again">
      <summary>Run again with the same inputs</summary>
      <StartForm runbook={summary} prefill={given} label="Run again" />
    </details>
  );
}
