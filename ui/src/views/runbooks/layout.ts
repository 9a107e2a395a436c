import type { StepGraph } from "../../api/client";

/** Every step is drawn this size; ELK places them, xyflow draws them. */
export const NODE_WIDTH = 232;
export const NODE_HEIGHT = 62;

/** Where each node goes (top-left corner), by node id. */
export type Placement = Map<string, { x: number; y: number }>;

/**
 * Lay a runbook's steps out top to bottom with ELK's layered algorithm: arms side by side,
 * loops and jumps routed back up. ELK is loaded on first use (it is large), so only the
 * Runbooks view pays for it.
 */
export async function layout(graph: StepGraph): Promise<Placement> {
  const { default: ELK } = await import("elkjs/lib/elk.bundled.js");
  const elk = new ELK();
  const laid = await elk.layout({
    id: "runbook",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "DOWN",
      "elk.spacing.nodeNode": "28",
      "elk.layered.spacing.nodeNodeBetweenLayers": "44",
      "elk.layered.nodePlacement.strategy": "BRANDES_KOEPF",
      "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
    },
    children: graph.nodes.map((node) => ({ id: node.id, width: NODE_WIDTH, height: NODE_HEIGHT })),
    edges: graph.edges.map((edge) => ({
      id: edge.id,
      sources: [edge.source],
      targets: [edge.target],
    })),
  });
  const placement: Placement = new Map();
  for (const child of laid.children ?? []) {
    placement.set(child.id, { x: child.x ?? 0, y: child.y ?? 0 });
  }
  return placement;
}

/** A step instance key's step id: `by_severity/sev2/file@2[3]` → `file`. */
export function stepIdOfKey(key: string): string {
  const last = key.split("/").pop() ?? key;
  return last.replace(/\[[^\]]*\]$/, "").replace(/@\d+$/, "");
}

/** How a run stands at each step, for drawing: by step id. */
export interface RunMarks {
  visited: string[];
  waiting: string[];
  failed?: string;
  ended?: string;
}

/** The edges of the path a run took: consecutive visited steps joined by an edge. */
export function takenEdges(graph: StepGraph, visited: string[]): Set<string> {
  const nodeOf = new Map<string, string>();
  for (const node of graph.nodes) if (!nodeOf.has(node.step_id)) nodeOf.set(node.step_id, node.id);
  const taken = new Set<string>();
  for (let i = 1; i < visited.length; i++) {
    const source = nodeOf.get(visited[i - 1] ?? "");
    const target = nodeOf.get(visited[i] ?? "");
    const edge = graph.edges.find((e) => e.source === source && e.target === target);
    if (edge) taken.add(edge.id);
  }
  return taken;
}
