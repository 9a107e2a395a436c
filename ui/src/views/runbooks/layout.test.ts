import { describe, expect, it } from "vitest";
import type { StepGraph } from "../../api/client";
import { NODE_HEIGHT, NODE_WIDTH, layout, stepIdOfKey, takenEdges } from "./layout";

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
    {
      id: "e1",
      source: "/steps/1",
      target: "/steps/1/branches/0/steps/0",
      kind: "arm",
      label: "healthy",
    },
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
    const placed = await layout(graph);
    const at = placed.nodes;
    const y = (id: string) => at.get(id)?.y ?? Number.NaN;
    const x = (id: string) => at.get(id)?.x ?? Number.NaN;
    expect(at.size).toBe(5);
    // The graph's size holds every node, and each edge runs from its source down to its target.
    for (const { x: left, y: top } of at.values()) {
      expect(left).toBeGreaterThanOrEqual(0);
      expect(left + NODE_WIDTH).toBeLessThanOrEqual(placed.width + 0.5);
      expect(top + NODE_HEIGHT).toBeLessThanOrEqual(placed.height + 0.5);
    }
    const route = placed.edges.get("e0")?.points ?? [];
    expect(route.length).toBeGreaterThanOrEqual(2);
    expect(route[0]?.y).toBeCloseTo(y("/steps/0") + NODE_HEIGHT, 0);
    expect(route.at(-1)?.y).toBeCloseTo(y("/steps/1"), 0);
    expect(y("/steps/1")).toBeGreaterThanOrEqual(y("/steps/0") + NODE_HEIGHT);
    expect(y("/steps/1/branches/0/steps/0")).toBeGreaterThan(y("/steps/1"));
    expect(x("/steps/1/branches/0/steps/0")).not.toBe(x("/steps/1/branches/1/steps/0"));
    expect(y("/steps/1/branches/1/steps/1")).toBeGreaterThan(y("/steps/1/branches/1/steps/0"));
    // A labelled edge gets a place for its label between its two ends; an unlabelled one none.
    const label = placed.edges.get("e1")?.label;
    expect(label?.y).toBeGreaterThan(y("/steps/1") + NODE_HEIGHT);
    expect(label?.y).toBeLessThan(y("/steps/1/branches/0/steps/0"));
    expect(placed.edges.get("e0")?.label).toBeUndefined();
  });

  it("marks the path taken and names a step instance's step", () => {
    expect([...takenEdges(graph, ["probe", "triage", "fix"])]).toEqual(["e0", "e2"]);
    expect(stepIdOfKey("by_severity/sev1 or sev2/file")).toBe("file");
    expect(stepIdOfKey("hosts[2]/probe@3")).toBe("probe");
    expect(stepIdOfKey("check[web]")).toBe("check");
  });
});
