import type { RunDetail } from "../../api/client";

/** The parts of a run people compare: its arguments, the decision, and what came out. */
export interface RunParts {
  args: unknown;
  decision: unknown;
  outcome: unknown;
}

/** Read a run's arguments, decision and outcome from its packets and record. */
export function runParts(detail: RunDetail): RunParts {
  const packet = (kind: string) => detail.packets.find((p) => p.kind === kind)?.data;
  const request = packet("tool.call.request") as { args?: unknown } | undefined;
  const response = detail.run.response as { data?: unknown; errors?: unknown } | null | undefined;
  return {
    args: request?.args ?? null,
    decision: packet("tool.call.decision") ?? { rule: detail.run.rule },
    outcome: response
      ? {
          ok: detail.run.state === "succeeded",
          data: response.data ?? null,
          errors: response.errors ?? [],
        }
      : { error: detail.run.error },
  };
}
