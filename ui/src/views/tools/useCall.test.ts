import { describe, expect, it } from "vitest";
import { caughtUp, follow, type CallView } from "./useCall";

const started: CallView = {
  requestId: "r1",
  firstId: "r1",
  phase: "running",
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

const queued = {
  event: "ToolResponse" as const,
  type: "ToolResponse" as const,
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
    });
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
    });
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

describe("catching up with a call the stream could not follow", () => {
  const waiting: CallView = { ...started, phase: "waiting", approvalId: "a1" };
  const answer = { ...queued, job: undefined, data: { ok: 1 } };

  it("asks the store when an approval names no request that runs it, and offers to run it", () => {
    const heard = follow(waiting, {
      event: "ApprovalDecided",
      approval_id: "a1",
      verdict: "approved",
      by: "bob",
    });
    expect(heard.recheck).toBeGreaterThan(0);
    expect(heard.phase).toBe("waiting");
    // Nobody took it: the holder is gone.
    const orphaned = caughtUp(heard, { request_id: "r1", state: "approved" });
    expect(orphaned.orphaned).toBe(true);
    expect(orphaned.recheck).toBeNull();
    // The holder was only slow: its news clears the offer.
    const resumed = follow(orphaned, {
      event: "ApprovalDecided",
      approval_id: "a1",
      verdict: "approved",
      by: "bob",
      resumed_as: "r2",
    });
    expect(resumed).toMatchObject({ phase: "running", requestId: "r2", orphaned: false });
  });

  it("follows the request another process resumed it as, to the answer in the store", () => {
    const running = caughtUp(waiting, { request_id: "r1", state: "running", resumed_as: "r2" });
    expect(running).toMatchObject({ phase: "running", requestId: "r2" });
    // That process ends it: only its state reaches this one, so the record is read.
    const ended = follow(running, {
      type: "EventMessage",
      event: "RunStateChanged",
      request_id: "r2",
      data: { state: "succeeded" },
    });
    expect(ended.recheck).toBe(0);
    const done = caughtUp(ended, {
      request_id: "r1",
      state: "succeeded",
      resumed_as: "r2",
      response: answer,
    });
    expect(done).toMatchObject({ phase: "done", recheck: null });
    expect(done.response?.data).toEqual({ ok: 1 });
  });

  it("reads the store when the stream comes back, only for a call it still follows", () => {
    expect(follow(started, { event: "StreamResumed" }).recheck).toBe(0);
    const done: CallView = { ...started, phase: "done" };
    expect(follow(done, { event: "StreamResumed" })).toBe(done);
  });

  it("ends a wait the stream missed with what decided it", () => {
    const denied = caughtUp(waiting, {
      request_id: "r1",
      state: "denied",
      error: "denied by bob: frozen",
    });
    expect(denied.phase).toBe("done");
    expect(denied.ended).toEqual({ verdict: "denied", by: null, reason: "denied by bob: frozen" });
  });

  it("says a call stopped when the process running it died, recorded or not", () => {
    const never = caughtUp(started, null);
    expect(never.phase).toBe("done");
    expect(never.ended?.verdict).toBe("stopped");
    const abandoned = caughtUp(started, {
      request_id: "r1",
      state: "failed",
      error: "incomplete: the process stopped before the call finished",
    });
    expect(abandoned.ended).toMatchObject({ verdict: "stopped" });
    expect(abandoned.ended?.reason).toMatch(/incomplete/);
    // A call still waiting is not lost by a missing record read mid-restart.
    expect(caughtUp(waiting, null).phase).toBe("waiting");
  });
});
