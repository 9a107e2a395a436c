import { describe, expect, it } from "vitest";
import type { Packet } from "../../api/client";
import { latestKeyOf, stepDurationMs, stepsOf } from "./steps";

let seq = 0;
function packet(thread: string | null, ts: number, data: unknown, principal = "kernel"): Packet {
  seq += 1;
  return {
    seq,
    kind: "runbook.step",
    ts_us: ts,
    thread_id: thread,
    principal,
    data,
    prev_hash: "",
    hash: String(seq),
  };
}

describe("stepsOf", () => {
  const trace = [
    packet(null, 1_000, { event: "run_start" }),
    packet("look", 2_000, {
      event: "step_start",
      actor: { kind: "system", id: "kernel" },
      data: { step_id: "look", type: "tool", tool: "fs_read", inputs: { path: "a.txt" } },
    }),
    packet("look", 1_502_000, {
      event: "step_complete",
      actor: { kind: "system", id: "kernel" },
      data: { step_id: "look", status: "success", outputs: { text: "hi" }, failure: null },
    }),
    packet("hosts/note[a]", 1_600_000, { event: "person", action: { action: "evidence" } }, "bob"),
    packet("hosts/note[a]", 1_700_000, {
      event: "step_complete",
      actor: { kind: "human", id: "bob" },
      data: { step_id: "note", status: "failed", failure: { kind: "assertion", message: "no" } },
    }),
    packet("hosts/note[b]", 1_800_000, { event: "person", action: { action: "skip" } }, "carol"),
    packet("severity", 1_900_000, { event: "branch_enter", data: { step_id: "severity" } }),
  ];

  it("reads each step's timing, inputs, outputs and people in first-seen order", () => {
    const steps = stepsOf(trace);
    expect(steps.map((s) => s.key)).toEqual(["look", "hosts/note[a]", "hosts/note[b]", "severity"]);
    expect(steps[3]?.status).toBe("entered");
    const [look, first, second] = steps;
    expect(look?.tool).toBe("fs_read");
    expect(look?.inputs).toEqual({ path: "a.txt" });
    expect(look?.outputs).toEqual({ text: "hi" });
    expect(look && stepDurationMs(look)).toBe(1500);
    expect(first?.stepId).toBe("note");
    expect(first?.status).toBe("failed");
    expect(first?.failure?.kind).toBe("assertion");
    expect(first?.completedBy).toBe("bob");
    expect(first?.acts).toEqual([{ by: "bob", what: "evidence", us: 1_600_000 }]);
    expect(first && stepDurationMs(first)).toBeUndefined();
    expect(second?.status).toBeUndefined();
    expect(look?.packets.map((p) => p.seq)).toEqual([trace[1]?.seq, trace[2]?.seq]);
  });

  it("opens the latest instance of a step picked on the graph", () => {
    const steps = stepsOf(trace);
    expect(latestKeyOf(steps, "note")).toBe("hosts/note[b]");
    expect(latestKeyOf(steps, "look")).toBe("look");
    expect(latestKeyOf(steps, "never")).toBeUndefined();
  });
});
