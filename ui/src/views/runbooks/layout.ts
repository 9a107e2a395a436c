import type { StepGraph } from "../../api/client";

/** Every step is drawn this size; dagre places them, StepGraph draws them. */
export const NODE_WIDTH = 232;
export const NODE_HEIGHT = 62;

export interface Point {
  x: number;
  y: number;
}

/** Where everything goes, in the graph's own pixels (0,0 is its top-left corner). */
export interface Layout {
  /** Each node's top-left corner, by node id. */
  nodes: Map<string, Point>;
  /** Each edge's route (from the source's border to the target's) and its label's centre. */
  edges: Map<string, { points: Point[]; label?: Point }>;
  width: number;
  height: number;
}

/** About how wide an edge label's 11 px text is, so dagre leaves room for it. */
const labelWidth = (text: string) => text.length * 6.4 + 8;

/**
 * Lay a runbook's steps out top to bottom with dagre's layered layout: arms side by side,
 * loops and jumps routed back up, room left for edge labels. dagre is loaded on first use, so
 * only the Runbooks view pays for it (it replaced ELK, whose bundle alone was 450 KiB gzipped).
 */
export async function layout(graph: StepGraph): Promise<Layout> {
  const { default: dagre } = await import("@dagrejs/dagre");
  // Labels: sizes in, dagre's positions (centres) and edge routes out.
  const g = new dagre.graphlib.Graph<
    { rankdir: string; nodesep: number; ranksep: number; width?: number; height?: number },
    { width: number; height: number; x: number; y: number },
    { width?: number; height?: number; labelpos?: "c"; x?: number; y?: number; points?: Point[] }
  >({ multigraph: true });
  g.setGraph({ rankdir: "TB", nodesep: 28, ranksep: 44 });
  for (const node of graph.nodes)
    g.setNode(node.id, { width: NODE_WIDTH, height: NODE_HEIGHT, x: 0, y: 0 });
  for (const edge of graph.edges) {
    const label = edge.label
      ? { width: labelWidth(edge.label), height: 16, labelpos: "c" as const }
      : {};
    g.setEdge(edge.source, edge.target, label, edge.id);
  }
  dagre.layout(g);
  const nodes = new Map<string, Point>();
  for (const id of g.nodes()) {
    const node = g.node(id);
    // dagre gives centres; nodes are placed by their top-left corner.
    nodes.set(id, { x: node.x - NODE_WIDTH / 2, y: node.y - NODE_HEIGHT / 2 });
  }
  const edges: Layout["edges"] = new Map();
  for (const e of g.edges()) {
    const routed = g.edge(e);
    const label =
      routed.x !== undefined && routed.y !== undefined && routed.width
        ? { x: routed.x, y: routed.y }
        : undefined;
    if (e.name) edges.set(e.name, { points: routed.points ?? [], label });
  }
  const { width = 0, height = 0 } = g.graph();
  return { nodes, edges, width, height };
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
