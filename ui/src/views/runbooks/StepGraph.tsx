import {
  Background,
  Controls,
  Handle,
  MarkerType,
  Position,
  ReactFlow,
  type Edge,
  type Node,
  type NodeProps,
} from "@xyflow/react";
import "@xyflow/react/dist/base.css";
import { useEffect, useMemo, useState } from "react";
import type { StepGraph as Graph } from "../../api/client";
import { layout, takenEdges, type Placement, type RunMarks } from "./layout";

type StepState = "waiting" | "failed" | "ended" | "visited" | "idle";

interface StepData extends Record<string, unknown> {
  label: string;
  kind: string;
  detail?: string | null;
  when?: string | null;
  forEach?: string | null;
  state: StepState;
  stepId: string;
}

const STATE_WORDS: Record<StepState, string> = {
  waiting: "waiting for you",
  failed: "failed here",
  ended: "ended here",
  visited: "done",
  idle: "not reached",
};

/** One step: its kind, title and one line on what it does; its state as colour and words. */
function StepNode({ data }: NodeProps<Node<StepData>>) {
  return (
    <div className={`step-node ${data.state}`} title={`${data.label}: ${STATE_WORDS[data.state]}`}>
      <Handle type="target" position={Position.Top} isConnectable={false} />
      <div className="step-node-head">
        <span className={`step-kind ${data.kind}`}>{data.kind}</span>
        <strong className="ellipsis" title={data.label}>
          {data.label}
        </strong>
      </div>
      <div className="step-node-detail ellipsis mono">
        {data.forEach ? `for each in ${data.forEach} · ` : ""}
        {data.when ? `when ${data.when} · ` : ""}
        {data.detail ?? data.stepId}
      </div>
      <Handle type="source" position={Position.Bottom} isConnectable={false} />
    </div>
  );
}

const nodeTypes = { step: StepNode };

function stateOf(stepId: string, marks: RunMarks | undefined): StepState {
  if (!marks) return "idle";
  if (marks.waiting.includes(stepId)) return "waiting";
  if (marks.failed === stepId) return "failed";
  if (marks.ended === stepId) return "ended";
  if (marks.visited.includes(stepId)) return "visited";
  return "idle";
}

/**
 * A runbook's steps drawn as a graph (xyflow, laid out by dagre): branches and parallel arms side
 * by side, loops and jumps dashed; with a run, the path it took is drawn strong and the steps
 * waiting for people are outlined. The same steps are listed for screen readers.
 */
export default function StepGraph({
  graph,
  marks,
  onPick,
}: {
  graph: Graph;
  marks?: RunMarks;
  /** A step's node was clicked: open that step (the step list is the keyboard's way there). */
  onPick?: (stepId: string) => void;
}) {
  const [placement, setPlacement] = useState<Placement | null>(null);
  useEffect(() => {
    let live = true;
    void layout(graph).then((placed) => {
      if (live) setPlacement(placed);
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
  const nodes = useMemo<Node<StepData>[]>(
    () =>
      graph.nodes.map((node) => {
        const state = stateOf(node.step_id, marks);
        return {
          id: node.id,
          type: "step",
          position: placement?.get(node.id) ?? { x: 0, y: 0 },
          ariaLabel: `${node.kind} step ${node.label}: ${STATE_WORDS[state]}`,
          draggable: false,
          connectable: false,
          data: {
            label: node.label,
            kind: node.kind,
            detail: node.detail,
            when: node.when,
            forEach: node.for_each,
            state,
            stepId: node.step_id,
          },
        };
      }),
    [graph, marks, placement],
  );
  const edges = useMemo<Edge[]>(
    () =>
      graph.edges.map((edge) => ({
        id: edge.id,
        source: edge.source,
        target: edge.target,
        label: edge.label ?? undefined,
        type: "smoothstep",
        className: `edge-${edge.kind}${taken.has(edge.id) ? " taken" : ""}`,
        markerEnd: {
          type: MarkerType.ArrowClosed,
          width: 12,
          height: 12,
          color: taken.has(edge.id) ? "var(--accent)" : "var(--muted)",
        },
        focusable: false,
      })),
    [graph, taken],
  );

  return (
    <div className="step-graph" aria-busy={placement === null}>
      {placement && (
        <ReactFlow
          nodes={nodes}
          edges={edges}
          nodeTypes={nodeTypes}
          fitView
          // Text stays readable (about 11 px and up) on a narrow pane: a large graph is panned
          // rather than shrunk to fit.
          fitViewOptions={{ padding: 0.15, maxZoom: 1, minZoom: 0.8 }}
          minZoom={0.2}
          nodesDraggable={false}
          nodesConnectable={false}
          elementsSelectable={false}
          onNodeClick={(_, node) => {
            onPick?.(node.data.stepId);
          }}
          proOptions={{ hideAttribution: true }}
          aria-label="Step graph"
        >
          <Background gap={24} size={1} />
          <Controls showInteractive={false} />
        </ReactFlow>
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
