import { useState, type SyntheticEvent } from "react";
import type { RunbookSummary } from "../../api/client";
import { useFollowRun, useStartRunbook } from "../../api/queries";
import { Failure } from "../../components/Failure";
import { navigate } from "../../lib/route";

interface InputDeclaration {
  type?: string;
  required?: boolean;
  default?: unknown;
  description?: string;
  pattern?: string;
  enum?: unknown[];
}

/** A form value as the runbook's input type wants it: numbers and booleans as such. */
function typed(text: string, declaration: InputDeclaration): unknown {
  if (
    declaration.type === "int" ||
    declaration.type === "integer" ||
    declaration.type === "number"
  ) {
    const number = Number(text);
    return text.trim() !== "" && Number.isFinite(number) ? number : text;
  }
  if (declaration.type === "bool" || declaration.type === "boolean") return text === "true";
  return text;
}

/** A default as the form shows it. */
function textOf(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Start a run: the runbook's inputs (required first, defaults filled in), step by step or not. */
/** An ended run whose outcome names this runbook next, with the inputs the outcome gives. */
export interface Following {
  runId: string;
  inputs: Record<string, unknown>;
}

/**
 * The inputs of a new run, typed as the runbook declares them; started in the viewer's name.
 * With `follow`, it continues an ended run instead: prefilled with what its outcome gives, and
 * step by step when that run was.
 */
export function StartForm({ runbook, follow }: { runbook: RunbookSummary; follow?: Following }) {
  const declared = runbook.inputs as Record<string, InputDeclaration> | null;
  const inputs = Object.entries(declared ?? {}).sort(
    ([, a], [, b]) => Number(b.required ?? false) - Number(a.required ?? false),
  );
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(
      inputs.map(([name, d]) => {
        const given = follow?.inputs[name] ?? d.default;
        return [name, given === undefined ? "" : textOf(given)];
      }),
    ),
  );
  const [stepwise, setStepwise] = useState(true);
  const start = useStartRunbook();
  const following = useFollowRun(follow?.runId ?? "");
  const pending = start.isPending || following.isPending;
  const error = start.error ?? following.error;

  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    const given: Record<string, unknown> = {};
    for (const [name, declaration] of inputs) {
      const text = values[name] ?? "";
      if (text === "" && !declaration.required) continue;
      given[name] = typed(text, declaration);
    }
    const open = {
      onSuccess: (run: { id: string }) => {
        navigate("runbooks", "run", run.id);
      },
    };
    if (follow) following.mutate(given, open);
    else start.mutate({ runbook: runbook.name, inputs: given, stepwise }, open);
  };

  return (
    <form
      className="card start-form"
      onSubmit={submit}
      aria-label={follow ? `Continue with ${runbook.name}` : "Start a run"}
    >
      <h2>
        {follow ? (
          <>
            Continue with <span className="mono">{runbook.name}</span>
          </>
        ) : (
          "Start a run"
        )}
      </h2>
      {inputs.length === 0 && <p className="muted">This runbook takes no inputs.</p>}
      {inputs.map(([name, declaration]) => {
        const id = `input-${name}`;
        const hint = `${id}-hint`;
        return (
          <div key={name} className="field">
            <label htmlFor={id}>
              <span className="mono">{name}</span>
              {declaration.required && <span className="muted"> (required)</span>}
            </label>
            {declaration.enum ? (
              <select
                id={id}
                value={values[name] ?? ""}
                aria-describedby={hint}
                onChange={(e) => {
                  setValues({ ...values, [name]: e.target.value });
                }}
              >
                {!declaration.required && <option value="">(default)</option>}
                {declaration.enum.map((option) => (
                  <option key={String(option)} value={String(option)}>
                    {String(option)}
                  </option>
                ))}
              </select>
            ) : (
              <input
                id={id}
                value={values[name] ?? ""}
                required={declaration.required}
                inputMode={declaration.type === "int" ? "numeric" : undefined}
                pattern={declaration.pattern}
                aria-describedby={hint}
                onChange={(e) => {
                  setValues({ ...values, [name]: e.target.value });
                }}
              />
            )}
            <span id={hint} className="muted">
              {declaration.description ?? declaration.type ?? ""}
              {declaration.pattern && (
                <>
                  {" "}
                  (matches <code>{declaration.pattern}</code>)
                </>
              )}
            </span>
          </div>
        );
      })}
      {!follow && (
        <label className="row">
          <input
            type="checkbox"
            checked={stepwise}
            onChange={(e) => {
              setStepwise(e.target.checked);
            }}
          />
          Step by step: wait for my go-ahead before every step
        </label>
      )}
      <div className="row">
        <button type="submit" className="primary" disabled={pending}>
          {pending ? "Starting…" : follow ? "Continue" : "Start the run"}
        </button>
        <span className="muted">It runs in your name; every step is audited.</span>
      </div>
      {error && <Failure error={error} />}
    </form>
  );
}
