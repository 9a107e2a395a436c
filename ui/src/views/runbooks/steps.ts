import type { Packet } from "../../api/client";
import { stepIdOfKey } from "./layout";

/** A person's act on a step, as the chain has it. */
export interface StepAct {
  by: string;
  what: string;
  us: number;
}

/** One step instance of a run, read from the run's trace (kernel-v0 §11 events and people's acts). */
export interface StepRecord {
  /** The instance key (`check`, `hosts/look[2]`, `check@2`). */
  key: string;
  /** The step's id in the runbook. */
  stepId: string;
  type?: string;
  tool?: string;
  /** The inputs as they were sent, rendered. */
  inputs?: unknown;
  startedUs?: number;
  endedUs?: number;
  /** `success`, `failed`, `skipped`, `error`; none while it has not finished. */
  status?: string;
  outputs?: unknown;
  failure?: { kind: string; message: string } | null;
  /** Who completed it, when a person did (a manual step's evidence, a choice). */
  completedBy?: string;
  /** Go-aheads, skips, evidence, choices, retries, in order. */
  acts: StepAct[];
  /** Every packet about this step, in chain order. */
  packets: Packet[];
}

interface TraceData {
  event?: string;
  step?: string | null;
  actor?: { kind?: string; id?: string };
  data?: {
    step_id?: string;
    type?: string;
    tool?: string | null;
    inputs?: unknown;
    status?: string;
    outputs?: unknown;
    failure?: { kind: string; message: string } | null;
  };
  action?: { action?: string };
}

/**
 * The run's steps in the order they were first recorded, each with its timing, what went in and
 * came out, who acted, and its packets. Packets that name no step (the run's start, a pause
 * asked for the run as a whole) belong to none.
 */
export function stepsOf(packets: readonly Packet[]): StepRecord[] {
  const steps = new Map<string, StepRecord>();
  for (const packet of packets) {
    const key = packet.thread_id;
    if (!key) continue;
    const data = packet.data as TraceData;
    let step = steps.get(key);
    if (!step) {
      step = { key, stepId: data.data?.step_id ?? stepIdOfKey(key), acts: [], packets: [] };
      steps.set(key, step);
    }
    step.packets.push(packet);
    const detail = data.data ?? {};
    switch (data.event) {
      case "step_start":
        step.startedUs = packet.ts_us;
        step.type = detail.type ?? step.type;
        step.tool = detail.tool ?? step.tool;
        step.inputs = detail.inputs;
        break;
      case "step_complete":
        step.endedUs = packet.ts_us;
        step.status = detail.status;
        step.outputs = detail.outputs;
        step.failure = detail.failure ?? null;
        if (data.actor?.kind === "human") step.completedBy = data.actor.id;
        break;
      // A branch, a loop or parallel arms: entered, with no result of their own.
      case "branch_enter":
      case "for_each_start":
      case "repeat_start":
      case "parallel_fork":
        step.status ??= "entered";
        break;
      case "person":
        step.acts.push({
          by: packet.principal ?? "someone",
          what: data.action?.action ?? "acted",
          us: packet.ts_us,
        });
        break;
    }
  }
  return [...steps.values()];
}

/**
 * How long a step took (ms) by its trace: from its start to its completion, waiting for people
 * included; none before either. A tool step's call has its own, exact duration.
 */
export function stepDurationMs(step: StepRecord): number | undefined {
  if (step.startedUs === undefined || step.endedUs === undefined) return undefined;
  return Math.max(0, (step.endedUs - step.startedUs) / 1000);
}

/** The instance of a step id to open when its graph node is picked: the latest reached. */
export function latestKeyOf(steps: readonly StepRecord[], stepId: string): string | undefined {
  return steps.filter((s) => s.stepId === stepId).pop()?.key;
}
