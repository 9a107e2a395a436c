import { describe, expect, it } from "vitest";
import { follow, type CallView } from "./useCall";

const started: CallView = {
  requestId: "r1",
  phase: "running",
  percent: null,
  message: null,
  output: [],
  response: null,
  approvalId: null,
  ended: null,
  error: null,
};

const queued = {
  type: "ToolResponse",
  ok: true,
  tool: "acme.latency_report",
  request_id: "r1",
  duration_ms: 20,
  data: null,
  errors: [],
  replayed: false,
  job: { engine: "slurm", id: "105", state: "queued", request_id: "r1" },
};

describe("following a call whose work is a Slurm job", () => {
  it("waits on the job, says when it runs, and ends with the collected result", () => {
    const onQueue = follow(started, queued);
    expect(onQueue.phase).toBe("queued");
    expect(onQueue.message).toBe("queued as slurm job 105");
    const running = follow(onQueue, {
      type: "EventMessage",
      event: "RunStateChanged",
      request_id: "r1",
      data: { state: "running" },
    });
    expect(running.message).toBe("running as slurm job 105");
    const done = follow(running, {
      ...queued,
      data: { exit_code: 0, artifacts: [] },
      job: undefined,
    } as never);
    expect(done.phase).toBe("done");
    expect(done.message).toBe("collected from slurm job 105");
    expect(done.response?.data).toEqual({ exit_code: 0, artifacts: [] });
  });

  it("follows the submitting call when the answer replays a queued one", () => {
    const replay = {
      ...queued,
      request_id: "r1",
      replayed: true,
      job: { ...queued.job, request_id: "r0" },
    };
    const view = follow(started, replay);
    expect(view.requestId).toBe("r0");
    // The job's own answer, under r0, ends it.
    const done = follow(view, {
      ...queued,
      request_id: "r0",
      data: { exit_code: 0 },
      job: undefined,
    } as never);
    expect(done.phase).toBe("done");
  });

  it("ends a wait for approval in the decider's words when the call is denied", () => {
    const waiting: CallView = { ...started, phase: "waiting", approvalId: "a1" };
    const other = follow(waiting, {
      event: "ApprovalDecided",
      approval_id: "a2",
      verdict: "denied",
      by: "bob",
    });
    expect(other).toBe(waiting);
    const denied = follow(waiting, {
      event: "ApprovalDecided",
      approval_id: "a1",
      verdict: "denied",
      by: "bob",
      reason: "not during the freeze",
    });
    expect(denied.phase).toBe("done");
    expect(denied.ended).toEqual({ verdict: "denied", by: "bob", reason: "not during the freeze" });
  });
});
