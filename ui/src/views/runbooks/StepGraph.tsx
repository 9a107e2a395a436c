import { useEffect, useId, useMemo, useState } from "react";
import type { StepGraph as Graph } from "../../api/client";
import { GraphCanvas } from "../../components/GraphCanvas";
import { layout, takenEdges, type Layout, type Point, type RunMarks } from "./layout";

type StepState = "waiting" | "failed" | "ended" | "visited" | "idle";

type GraphNode = Graph["nodes"][number];

const STATE_WORDS: Record<StepState, string> = {
  waiting: "waiting for you",
  failed: "failed here",
  ended: "ended here",
  visited: "done",
  idle: "not reached",
};

function stateOf(stepId: string, marks: RunMarks | undefined): StepState {
  if (!marks) return "idle";
  if (marks.waiting.includes(stepId)) return "waiting";
  if (marks.failed === stepId) return "failed";
  if (marks.ended === stepId) return "ended";
  if (marks.visited.includes(stepId)) return "visited";
  return "idle";
}

/** One step: its kind, title and one line on what it does; its state as colour and words. */
function StepNode({
  node,
  at,
  state,
  onPick,
}: {
  node: GraphNode;
  at: Point;
  state: StepState;
  onPick?: (stepId: string) => void;
}) {
  const body = (
    <>
      <span className="step-node-head">
        <span className={`step-kind ${node.kind}`}>{node.kind}</span>
        <strong className="ellipsis">{node.label}</strong>
      </span>
      <span className="step-node-detail ellipsis mono">
        {node.for_each ? `for each in ${node.for_each} · ` : ""}
        {node.when ? `when ${node.when} · ` : ""}
        {node.detail ?? node.step_id}
      </span>
    </>
  );
  const name = `${node.kind} step ${node.label}: ${STATE_WORDS[state]}`;
  const style = { left: at.x, top: at.y };
  // With somewhere to open a step, a node is a button; on a runbook's page it is a picture.
  return onPick ? (
    <button
      type="button"
      className={`step-node ${state}`}
      style={style}
      aria-label={name}
      title={name}
      onClick={() => {
        onPick(node.step_id);
      }}
    >
      {body}
    </button>
  ) : (
    <div className={`step-node ${state}`} style={style} role="img" aria-label={name} title={name}>
      {body}
    </div>
  );
}

/** An edge's route as a path: straight from its ends, rounded through dagre's bend points. */
function routePath(points: Point[]): string {
  const [first, ...rest] = points;
  if (!first) return "";
  let d = `M${first.x},${first.y}`;
  for (let i = 0; i < rest.length - 1; i++) {
    const p = rest[i];
    const q = rest[i + 1];
    if (p && q) d += ` Q${p.x},${p.y} ${(p.x + q.x) / 2},${(p.y + q.y) / 2}`;
  }
  const last = rest.at(-1);
  if (last) d += ` L${last.x},${last.y}`;
  return d;
}

/** The edges under the nodes: solid for the flow, dashed for loops and jumps, strong if taken. */
function Edges({ graph, placed, taken }: { graph: Graph; placed: Layout; taken: Set<string> }) {
  const id = useId();
  return (
    <>
      <svg className="graph-edges" width={placed.width} height={placed.height} aria-hidden="true">
        <defs>
          {(["plain", "taken"] as const).map((kind) => (
            <marker
              key={kind}
              id={`${id}-${kind}`}
              viewBox="0 0 10 10"
              refX="9"
              refY="5"
              // In the drawing's pixels: the same arrow on a thin edge and on the strong path.
              markerUnits="userSpaceOnUse"
              markerWidth="9"
              markerHeight="9"
              orient="auto-start-reverse"
            >
              <path d="M0,0 L10,5 L0,10 z" className={`arrow-${kind}`} />
            </marker>
          ))}
        </defs>
        {graph.edges.map((edge) => {
          const route = placed.edges.get(edge.id);
          if (!route) return null;
          const on = taken.has(edge.id);
          return (
            <path
              key={edge.id}
              className={`edge-${edge.kind}${on ? " taken" : ""}`}
              d={routePath(route.points)}
              markerEnd={`url(#${id}-${on ? "taken" : "plain"})`}
            />
          );
        })}
      </svg>
      {graph.edges.map((edge) => {
        const at = placed.edges.get(edge.id)?.label;
        return edge.label && at ? (
          <span key={edge.id} className="edge-label" style={{ left: at.x, top: at.y }} aria-hidden>
            {edge.label}
          </span>
        ) : null;
      })}
    </>
  );
}

/**
 * A runbook's steps drawn as a graph (laid out by dagre): branches and parallel arms side by
 * side, loops and jumps dashed; with a run, the path it took is drawn strong and the steps
 * waiting for people are outlined. The same steps are listed for screen readers.
 */
export default function StepGraph({
  graph,
  marks,
  onPick,
}: {
  graph: Graph;
  marks?: RunMarks;
  /** A step's node was chosen (clicked, or Enter on it): open that step. */
  onPick?: (stepId: string) => void;
}) {
  const [placed, setPlaced] = useState<Layout | null>(null);
  useEffect(() => {
    let live = true;
    void layout(graph).then((done) => {
      if (live) setPlaced(done);
    });
    return () => {
      live = false;
    };
  }, [graph]);

  // The path runs up to the step waiting now.
  const taken = useMemo(
    () => takenEdges(graph, [...(marks?.visited ?? []), ...(marks?.waiting.slice(0, 1) ?? [])]),
    [graph, marks],
  );

  return (
    <div className="step-graph" aria-busy={placed === null}>
      {placed && (
        <GraphCanvas width={placed.width} height={placed.height} label="Step graph">
          <Edges graph={graph} placed={placed} taken={taken} />
          {graph.nodes.map((node) => (
            <StepNode
              key={node.id}
              node={node}
              at={placed.nodes.get(node.id) ?? { x: 0, y: 0 }}
              state={stateOf(node.step_id, marks)}
              onPick={onPick}
            />
          ))}
        </GraphCanvas>
      )}
      <ol className="visually-hidden" aria-label="Steps in order">
        {graph.nodes.map((node) => (
          <li key={node.id}>
            {node.kind} step {node.label}: {STATE_WORDS[stateOf(node.step_id, marks)]}
          </li>
        ))}
      </ol>
    </div>
  );
}
