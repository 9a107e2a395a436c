import { useState, type SyntheticEvent } from "react";
import type { RunbookSummary } from "../../api/client";
import { useStartRunbook } from "../../api/queries";
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
export function StartForm({ runbook }: { runbook: RunbookSummary }) {
  const declared = runbook.inputs as Record<string, InputDeclaration> | null;
  const inputs = Object.entries(declared ?? {}).sort(
    ([, a], [, b]) => Number(b.required ?? false) - Number(a.required ?? false),
  );
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(
      inputs.map(([name, d]) => [name, d.default === undefined ? "" : textOf(d.default)]),
    ),
  );
  const [stepwise, setStepwise] = useState(true);
  const start = useStartRunbook();

  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    const given: Record<string, unknown> = {};
    for (const [name, declaration] of inputs) {
      const text = values[name] ?? "";
      if (text === "" && !declaration.required) continue;
      given[name] = typed(text, declaration);
    }
    start.mutate(
      { runbook: runbook.name, inputs: given, stepwise },
      {
        onSuccess: (run) => {
          navigate("runbooks", "run", run.id);
        },
      },
    );
  };

  return (
    <form className="card start-form" onSubmit={submit} aria-label="Start a run">
      <h2>Start a run</h2>
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
      <div className="row">
        <button type="submit" className="primary" disabled={start.isPending}>
          {start.isPending ? "Starting…" : "Start the run"}
        </button>
        <span className="muted">It runs in your name; every step is audited.</span>
      </div>
      {start.error && <Failure error={start.error} />}
    </form>
  );
}
