import type { Chunk } from "../../components/OutputLog";
import { useCallback, useEffect, useRef, useState } from "react";
import { unwrap, type Schemas, type ToolResponse } from "../../api/client";
import { useApi, useEvents } from "../../api/context";
import type { StreamEvent } from "../../api/events";

/** A call as the store has it (`GET /api/calls/{id}`). */
type CallRecord = Schemas["CallState"];

/** How long an approved call may wait for the process holding it to start it, before the
 * store is asked whether anyone did. */
const HOLDER_GRACE_MS = 3000;

/** Where a call started from the UI is. */
export interface CallView {
  /** The request being followed (a new one after an approval resumes the call). */
  requestId: string | null;
  /** The request as first started: its record follows whichever request ran the call. */
  firstId: string | null;
  /** `queued`: the call's work was handed to a scheduler (a Slurm job) and is followed. */
  phase: "idle" | "starting" | "running" | "waiting" | "queued" | "done";
  /** Percent, when the tool reports it. */
  percent: number | null;
  /** The tool's latest progress message. */
  message: string | null;
  /** Output chunks, in order. */
  /** What the tool wrote so far, in order. */
  output: Chunk[];
  response: ToolResponse | null;
  /** The approval this call waits for, when it needs one. */
  approvalId: string | null;
  /** How a wait for approval ended when the call did not run: denied, expired, withdrawn;
   * or `stopped`: the process running it stopped before it finished. */
  ended: { verdict: string; by: string | null; reason: string | null } | null;
  /** Approved, and nothing runs it: the process that held it stopped. Running the identical
   * call again uses the approval. */
  orphaned: boolean;
  /** When to read the call's record (ms from now): the stream cannot say what happened. */
  recheck: number | null;
  error: unknown;
}

const idle: CallView = {
  requestId: null,
  firstId: null,
  phase: "idle",
  percent: null,
  message: null,
  output: [],
  response: null,
  approvalId: null,
  ended: null,
  orphaned: false,
  recheck: null,
  error: null,
};

/** An approval's decision, as the stream says it. */
type Decided = Extract<StreamEvent, { event: "ApprovalDecided" }>;
/** Progress, output or a state change of a request. */
type Moved = Extract<StreamEvent, { event: "TaskProgress" | "OutputChunk" | "RunStateChanged" }>;

/** Start a call and follow it on the event stream to its response (through an approval). */
export function useCall() {
  const api = useApi();
  const [view, setView] = useState<CallView>(idle);
  // Events that arrive while the start request is in flight: a quick call can answer on the
  // stream before its request id does over HTTP.
  const early = useRef<StreamEvent[] | null>(null);

  useEvents((event) => {
    early.current?.push(event);
    setView((current) => follow(current, event));
  });

  const start = useCallback(
    async (tool: string, args: Record<string, unknown>) => {
      setView({ ...idle, phase: "starting" });
      early.current = [];
      try {
        const started = unwrap(await api.POST("/api/calls", { body: { tool, args } }));
        const missed = early.current;
        setView((current) =>
          current.phase === "starting"
            ? missed.reduce(follow, {
                ...current,
                phase: "running",
                requestId: started.request_id,
                firstId: started.request_id,
              })
            : current,
        );
      } catch (error) {
        setView({ ...idle, phase: "done", error });
      } finally {
        early.current = null;
      }
    },
    [api],
  );

  // What the stream could not say (it was down, or another process ran the call) is read from
  // the store when the view asks for it (`recheck`).
  const { recheck, firstId } = view;
  useEffect(() => {
    if (recheck === null || !firstId) return;
    const reread = async () => {
      const read = await api.GET("/api/calls/{request_id}", {
        params: { path: { request_id: firstId } },
      });
      // Anything but an answer (the server restarting again): the next reconnect asks again.
      const answered = read.response.status === 200 || read.response.status === 404;
      const record = read.data ?? null;
      setView((current) =>
        current.firstId !== firstId || !following(current.phase)
          ? current
          : answered
            ? caughtUp(current, record)
            : { ...current, recheck: null },
      );
    };
    const timer = setTimeout(() => void reread(), recheck);
    return () => {
      clearTimeout(timer);
    };
  }, [recheck, firstId, api]);

  const cancel = useCallback(async () => {
    if (!view.requestId) return;
    await api.POST("/api/calls/{request_id}/cancel", {
      params: { path: { request_id: view.requestId } },
    });
  }, [api, view.requestId]);

  const reset = useCallback(() => {
    setView(idle);
  }, []);

  return { view, start, cancel, reset };
}

/** The next view of a call after one event. */
export function follow(current: CallView, event: StreamEvent): CallView {
  switch (event.event) {
    // The stream was down: whatever ended or moved the call meanwhile is in the store.
    case "StreamResumed":
      return following(current.phase) ? { ...current, recheck: 0 } : current;
    case "ApprovalDecided":
      return current.phase === "waiting" && event.approval_id === current.approvalId
        ? decided(current, event)
        : current;
    case "TaskProgress":
    case "OutputChunk":
    case "RunStateChanged":
      return current.requestId && event.request_id === current.requestId
        ? moved(current, event)
        : current;
    case "ToolResponse":
      return current.requestId && event.request_id === current.requestId
        ? answered(current, event)
        : current;
    default:
      return current;
  }
}

/** A call waiting for approval after the decision on it. */
function decided(current: CallView, event: Decided): CallView {
  const by = event.by || "a reviewer";
  if (event.verdict === "approved" && event.resumed_as)
    return {
      ...current,
      phase: "running",
      requestId: event.resumed_as,
      message: `approved by ${by}`,
      orphaned: false,
      recheck: null,
    };
  // Approved without the request that runs it yet: the process holding the call (this one, or
  // another instance) starts it and says so; if it does not soon, the store says why.
  if (event.verdict === "approved")
    return { ...current, message: `approved by ${by}`, recheck: HOLDER_GRACE_MS };
  if (event.verdict === "seconded") return { ...current, message: `seconded by ${by}` };
  return {
    ...current,
    phase: "done",
    message: null,
    ended: { verdict: event.verdict, by: event.by, reason: event.reason ?? null },
  };
}

/** A call after its progress, output or a change of its state. */
function moved(current: CallView, event: Moved): CallView {
  const state = (event.data as { state?: string } | null | undefined)?.state;
  switch (event.event) {
    case "RunStateChanged": {
      // Another process ran it (the call resumed there) and ended it: its answer is in the store.
      if (current.phase === "running" && ended(state)) return { ...current, recheck: 0 };
      const job = current.phase === "queued" ? current.response?.job : undefined;
      return state === "running" && job
        ? { ...current, message: `running as ${job.engine} job ${job.id}` }
        : current;
    }
    case "TaskProgress":
      return {
        ...current,
        percent: event.progress?.pct ?? current.percent,
        message: event.progress?.message ?? current.message,
      };
    case "OutputChunk":
      return { ...current, output: [...current.output, chunkOf(event.data)] };
  }
}

/** A call after its response. */
function answered(current: CallView, response: ToolResponse): CallView {
  const approvalId = waitsFor(response);
  if (!response.ok && approvalId) return { ...current, phase: "waiting", response, approvalId };
  // Accepted by a scheduler: the job's final response comes later, under the same request (or,
  // for a replay of a queued call, under the call that submitted it).
  if (response.ok && response.job)
    return {
      ...current,
      phase: "queued",
      requestId: response.job.request_id,
      response,
      percent: null,
      message: `queued as ${response.job.engine} job ${response.job.id}`,
    };
  // A job's result: say where it came from instead of the queued line.
  const job = current.phase === "queued" ? current.response?.job : undefined;
  const message = job ? `collected from ${job.engine} job ${job.id}` : current.message;
  return { ...current, phase: "done", response, percent: 100, message };
}

/** The approval a refused call waits for (`details.approval_id`, where the engine writes it). */
function waitsFor(response: ToolResponse): string | null {
  for (const error of response.errors ?? []) {
    const id = (error.details as { approval_id?: unknown } | null | undefined)?.approval_id;
    if (typeof id === "string") return id;
  }
  return null;
}

/** Whether the view still follows a call (it has not ended). */
function following(phase: CallView["phase"]): boolean {
  return phase === "running" || phase === "waiting" || phase === "queued";
}

/** Whether a run in `state` has ended. */
function ended(state: string | undefined): boolean {
  return state === "succeeded" || state === "failed" || state === "cancelled";
}

/** The view of a call after reading its record (`null`: the store has none), when the stream
 * could not tell: after a reconnect, or when another process ran it. */
export function caughtUp(current: CallView, record: CallRecord | null): CallView {
  const now = { ...current, recheck: null };
  if (!record) {
    // Never recorded, and nothing runs it: the process it ran in stopped.
    if (current.phase === "waiting") return now;
    const reason = "the process running it stopped before recording it";
    return { ...now, phase: "done", ended: { verdict: "stopped", by: null, reason } };
  }
  const response = record.response ?? null;
  switch (record.state) {
    case "pending_approval":
      return { ...now, phase: "waiting", response: response ?? current.response };
    case "approved":
      // Granted, and no process took it: the one holding it is gone.
      return { ...now, phase: "waiting", orphaned: true };
    case "denied":
    case "expired":
    case "withdrawn":
      if (current.phase === "waiting")
        return {
          ...now,
          phase: "done",
          ended: { verdict: record.state, by: null, reason: record.error ?? null },
        };
      return { ...now, phase: "done", response };
    case "succeeded":
    case "failed":
    case "cancelled":
      if (response) return { ...now, phase: "done", response, percent: 100, orphaned: false };
      return {
        ...now,
        phase: "done",
        orphaned: false,
        ended: { verdict: "stopped", by: null, reason: record.error ?? null },
      };
    default:
      // Still running: under the request that resumed it, when another one does.
      if (record.resumed_as && record.resumed_as !== current.requestId)
        return { ...now, phase: "running", requestId: record.resumed_as, orphaned: false };
      return now;
  }
}

/** An `OutputChunk`'s data: `{stream, text}` from every executor; anything else as stdout text. */
function chunkOf(data: unknown): Chunk {
  const chunk = data as { stream?: unknown; text?: unknown } | null;
  if (chunk && typeof chunk.text === "string") {
    return { stream: typeof chunk.stream === "string" ? chunk.stream : "stdout", text: chunk.text };
  }
  return { stream: "stdout", text: typeof data === "string" ? data : JSON.stringify(data) };
}
