import { formatDuration } from "../../lib/format";
import { href } from "../../lib/route";
import type { StepRecord } from "./steps";

/** A step's status in a word and a tone; a step still running or waiting has none yet. */
export function stepTone(status: string | undefined): { tone: string; words: string } {
  switch (status) {
    case "success":
      return { tone: "ok", words: "success" };
    case "failed":
    case "error":
      return { tone: "bad", words: status };
    case "skipped":
      return { tone: "warn", words: "skipped" };
    case "entered":
      return { tone: "ok", words: "entered" };
    default:
      return { tone: "", words: "not finished" };
  }
}

/**
 * The steps a run reached, in order, with status and duration, like a CI run's jobs; each opens
 * its detail (the URL names it, so a link to a step can be shared).
 */
export function StepList({
  runId,
  steps,
  open,
  tookMs,
}: {
  runId: string;
  steps: StepRecord[];
  open: string | undefined;
  /** How long a step took (its call's duration for a tool step). */
  tookMs: (step: StepRecord) => number | undefined;
}) {
  if (steps.length === 0)
    return (
      <section className="card" aria-labelledby="steps-heading">
        <h2 id="steps-heading">Steps</h2>
        <p className="muted">No step has run yet: each appears here as the run reaches it.</p>
      </section>
    );
  return (
    <section className="card" aria-labelledby="steps-heading">
      <h2 id="steps-heading">Steps</h2>
      <ol className="step-list">
        {steps.map((step) => {
          const { tone, words } = stepTone(step.status);
          const took = tookMs(step);
          return (
            <li key={step.key}>
              <a
                href={href("runbooks", "run", runId, step.key)}
                className={step.key === open ? "step-row open" : "step-row"}
                aria-current={step.key === open ? "true" : undefined}
              >
                <span className={`step-dot ${tone}`} aria-hidden />
                <span className="mono step-key">{step.key}</span>
                <span className="visually-hidden">{words}</span>
                <span className="muted step-tool">{step.tool ?? step.type ?? ""}</span>
                <span className="mono muted step-took">
                  {took === undefined ? "–" : formatDuration(took)}
                </span>
              </a>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
