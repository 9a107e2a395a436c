import type { StepGraph } from "../../api/client";

/** Every step is drawn this size; dagre places them, xyflow draws them. */
export const NODE_WIDTH = 232;
export const NODE_HEIGHT = 62;

/** Where each node goes (top-left corner), by node id. */
export type Placement = Map<string, { x: number; y: number }>;

/**
 * Lay a runbook's steps out top to bottom with dagre's layered layout: arms side by side,
 * loops and jumps routed back up. dagre is loaded on first use, so only the Runbooks view
 * pays for it (it replaced ELK, whose bundle alone was 450 KiB gzipped).
 */
export async function layout(graph: StepGraph): Promise<Placement> {
  const { default: dagre } = await import("@dagrejs/dagre");
  // Node labels: the size in, dagre's position (a centre) out.
  const g = new dagre.graphlib.Graph<
    object,
    { width: number; height: number; x: number; y: number },
    object
  >({ multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: 28, ranksep: 44, marginx: 0, marginy: 0 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const node of graph.nodes)
    g.setNode(node.id, { width: NODE_WIDTH, height: NODE_HEIGHT, x: 0, y: 0 });
  for (const edge of graph.edges) g.setEdge(edge.source, edge.target, {}, edge.id);
  dagre.layout(g);
  const placement: Placement = new Map();
  for (const id of g.nodes()) {
    const node = g.node(id);
    // dagre gives centres; xyflow places by the top-left corner.
    placement.set(id, { x: node.x - NODE_WIDTH / 2, y: node.y - NODE_HEIGHT / 2 });
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
