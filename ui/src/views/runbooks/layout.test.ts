import { describe, expect, it } from "vitest";
import type { StepGraph } from "../../api/client";
import { NODE_HEIGHT, layout, stepIdOfKey, takenEdges } from "./layout";

const graph: StepGraph = {
  nodes: [
    { id: "/steps/0", step_id: "probe", kind: "tool", label: "probe" },
    { id: "/steps/1", step_id: "triage", kind: "branch", label: "triage" },
    { id: "/steps/1/branches/0/steps/0", step_id: "ok", kind: "end", label: "ok" },
    { id: "/steps/1/branches/1/steps/0", step_id: "fix", kind: "tool", label: "fix" },
    { id: "/steps/1/branches/1/steps/1", step_id: "fixed", kind: "end", label: "fixed" },
  ],
  edges: [
    { id: "e0", source: "/steps/0", target: "/steps/1", kind: "next" },
    { id: "e1", source: "/steps/1", target: "/steps/1/branches/0/steps/0", kind: "arm" },
    { id: "e2", source: "/steps/1", target: "/steps/1/branches/1/steps/0", kind: "arm" },
    {
      id: "e3",
      source: "/steps/1/branches/1/steps/0",
      target: "/steps/1/branches/1/steps/1",
      kind: "next",
    },
  ],
};

describe("the step graph's layout", () => {
  it("puts each step below the one before it and the arms side by side", async () => {
    const at = await layout(graph);
    const y = (id: string) => at.get(id)?.y ?? Number.NaN;
    const x = (id: string) => at.get(id)?.x ?? Number.NaN;
    expect(at.size).toBe(5);
    expect(y("/steps/1")).toBeGreaterThanOrEqual(y("/steps/0") + NODE_HEIGHT);
    expect(y("/steps/1/branches/0/steps/0")).toBeGreaterThan(y("/steps/1"));
    expect(x("/steps/1/branches/0/steps/0")).not.toBe(x("/steps/1/branches/1/steps/0"));
    expect(y("/steps/1/branches/1/steps/1")).toBeGreaterThan(y("/steps/1/branches/1/steps/0"));
  });

  it("marks the path taken and names a step instance's step", () => {
    expect([...takenEdges(graph, ["probe", "triage", "fix"])]).toEqual(["e0", "e2"]);
    expect(stepIdOfKey("by_severity/sev1 or sev2/file")).toBe("file");
    expect(stepIdOfKey("hosts[2]/probe@3")).toBe("probe");
    expect(stepIdOfKey("check[web]")).toBe("check");
  });
});
