import type { Chunk } from "../../components/OutputLog";
import { useCallback, useRef, useState } from "react";
import { unwrap, type ToolResponse } from "../../api/client";
import { useApi, useEvents } from "../../api/context";

/** Where a call started from the UI is. */
export interface CallView {
  /** The request being followed (a new one after an approval resumes the call). */
  requestId: string | null;
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
  /** How a wait for approval ended when the call did not run: denied, expired, withdrawn. */
  ended: { verdict: string; by: string | null; reason: string | null } | null;
  error: unknown;
}

const idle: CallView = {
  requestId: null,
  phase: "idle",
  percent: null,
  message: null,
  output: [],
  response: null,
  approvalId: null,
  ended: null,
  error: null,
};

interface Message {
  type?: string;
  event?: string;
  request_id?: string;
  progress?: { pct?: number; message?: string };
  data?: unknown;
  approval_id?: string;
  verdict?: string;
  by?: string;
  reason?: string | null;
  resumed_as?: string | null;
  ok?: boolean;
  errors?: { code: string; details?: { approval_id?: string } }[];
}

/** Start a call and follow it on the event stream to its response (through an approval). */
export function useCall() {
  const api = useApi();
  const [view, setView] = useState<CallView>(idle);
  // Events that arrive while the start request is in flight: a quick call can answer on the
  // stream before its request id does over HTTP.
  const early = useRef<Message[] | null>(null);

  useEvents((raw) => {
    const event = raw as Message;
    early.current?.push(event);
    setView((current) => follow(current, event));
  });

  const start = useCallback(
    async (tool: string, args: unknown) => {
      setView({ ...idle, phase: "starting" });
      early.current = [];
      try {
        const started = unwrap(
          await api.POST("/api/calls", { body: { tool, args: args as Record<string, never> } }),
        );
        const missed = early.current;
        setView((current) =>
          current.phase === "starting"
            ? missed.reduce(follow, { ...current, phase: "running", requestId: started.request_id })
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
export function follow(current: CallView, event: Message): CallView {
  if (current.phase === "waiting" && event.event === "ApprovalDecided") {
    if (event.approval_id !== current.approvalId) return current;
    if (event.verdict === "approved" && event.resumed_as)
      return {
        ...current,
        phase: "running",
        requestId: event.resumed_as,
        message: `approved by ${event.by ?? "a reviewer"}`,
      };
    // Approved (or one approval of several) without the request that runs it yet: the
    // process holding the call (this one, or another instance) starts it and says so.
    if (event.verdict === "approved" || event.verdict === "seconded")
      return { ...current, message: `${event.verdict} by ${event.by ?? "a reviewer"}` };
    return {
      ...current,
      phase: "done",
      message: null,
      ended: {
        verdict: event.verdict ?? "decided",
        by: event.by ?? null,
        reason: event.reason ?? null,
      },
    };
  }
  if (!current.requestId || event.request_id !== current.requestId) return current;
  if (event.type === "EventMessage") {
    if (event.event === "RunStateChanged" && current.phase === "queued") {
      const state = (event.data as { state?: string } | undefined)?.state;
      const job = current.response?.job;
      return state === "running" && job
        ? { ...current, message: `running as ${job.engine} job ${job.id}` }
        : current;
    }
    if (event.event === "TaskProgress")
      return {
        ...current,
        percent: event.progress?.pct ?? current.percent,
        message: event.progress?.message ?? current.message,
      };
    if (event.event === "OutputChunk") {
      return { ...current, output: [...current.output, chunkOf(event.data)] };
    }
    return current;
  }
  if (event.type === "ToolResponse") {
    const response = event as unknown as ToolResponse;
    const approvalId = event.errors?.[0]?.details?.approval_id ?? null;
    if (!response.ok && approvalId) return { ...current, phase: "waiting", response, approvalId };
    // Accepted by a scheduler: the job's final response comes later, under the same request
    // (or, for a replay of a queued call, under the call that submitted it).
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
  return current;
}

/** An `OutputChunk`'s data: `{stream, text}` from every executor; anything else as stdout text. */
function chunkOf(data: unknown): Chunk {
  const chunk = data as { stream?: unknown; text?: unknown } | null;
  if (chunk && typeof chunk.text === "string") {
    return { stream: typeof chunk.stream === "string" ? chunk.stream : "stdout", text: chunk.text };
  }
  return { stream: "stdout", text: typeof data === "string" ? data : JSON.stringify(data) };
}
