import { useState, type SyntheticEvent } from "react";
import type { RunbookSummary } from "../../api/client";
import { useFollowRun, useStartRunbook } from "../../api/queries";
import { Failure } from "../../components/Failure";
import { navigate } from "../../lib/route";
import { Inline } from "../../components/Inline";

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
 * step by step when that run was. With `prefill` (run again), a new run starts from those
 * values, each still editable.
 */
export function StartForm({
  runbook,
  follow,
  prefill,
  label,
}: {
  runbook: RunbookSummary;
  follow?: Following;
  prefill?: Record<string, unknown>;
  /** The form's name and heading when not the default ("Start a run"). */
  label?: string;
}) {
  const declared = runbook.inputs as Record<string, InputDeclaration> | null;
  const inputs = Object.entries(declared ?? {}).sort(
    ([, a], [, b]) => Number(b.required ?? false) - Number(a.required ?? false),
  );
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(
      inputs.map(([name, d]) => {
        const given = follow?.inputs[name] ?? prefill?.[name] ?? d.default;
        return [name, given === undefined ? "" : textOf(given)];
      }),
    ),
  );
  const [stepwise, setStepwise] = useState(true);
  // Said beside each field, in the app's words (not the browser's popup).
  const [problems, setProblems] = useState<Record<string, string>>({});
  const start = useStartRunbook();
  const following = useFollowRun(follow?.runId ?? "");
  const pending = start.isPending || following.isPending;
  const error = start.error ?? following.error;

  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    const found = Object.fromEntries(
      inputs.flatMap(([name, declaration]) => {
        const problem = problemOf(values[name] ?? "", declaration);
        return problem ? [[name, problem]] : [];
      }),
    );
    setProblems(found);
    const first = inputs.find(([name]) => name in found);
    if (first) {
      document.getElementById(`input-${first[0]}`)?.focus();
      return;
    }
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
      noValidate
      onSubmit={submit}
      aria-label={follow ? `Continue with ${runbook.name}` : (label ?? "Start a run")}
    >
      <h2>
        {follow ? (
          <>
            Continue with <span className="mono">{runbook.name}</span>
          </>
        ) : (
          (label ?? "Start a run")
        )}
      </h2>
      {inputs.length === 0 && <p className="muted">This runbook takes no inputs.</p>}
      {inputs.map(([name, declaration]) => {
        const id = `input-${name}`;
        const problem = problems[name];
        const hint = problem ? `${id}-hint ${id}-problem` : `${id}-hint`;
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
                aria-invalid={problem ? true : undefined}
                aria-describedby={hint}
                onChange={(e) => {
                  setValues({ ...values, [name]: e.target.value });
                  if (problem) {
                    setProblems((now) =>
                      Object.fromEntries(Object.entries(now).filter(([key]) => key !== name)),
                    );
                  }
                }}
              />
            )}
            {problem && (
              <span id={`${id}-problem`} className="field-error" role="alert">
                {problem}
              </span>
            )}
            <span id={`${id}-hint`} className="muted">
              <Inline text={declaration.description ?? declaration.type ?? ""} />
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

/** What is wrong with `text` for `declaration`, if anything (the server checks again). */
export function problemOf(text: string, declaration: InputDeclaration): string | null {
  if (text === "") return declaration.required ? "is required" : null;
  if (declaration.type === "int" && !/^-?\d+$/.test(text.trim())) return "is a whole number";
  if (declaration.pattern) {
    let pattern: RegExp | null = null;
    try {
      pattern = new RegExp(`^(?:${declaration.pattern})$`, "u");
    } catch {
      pattern = null;
    }
    if (pattern && !pattern.test(text)) return `does not match ${declaration.pattern}`;
  }
  return null;
}
