import type { FieldTemplateProps } from "@rjsf/utils";
import { useContext } from "react";
import { Inline } from "../../components/Inline";
import { count } from "../../lib/format";
import { ShowErrors } from "./touched";

/** A schema's constraints in words: what a field accepts, shown beside it. */
export function constraints(schema: object): string[] {
  const fields = schema as Record<string, unknown>;
  const out: string[] = [];
  const say = (key: string, text: (v: unknown) => string) => {
    if (fields[key] !== undefined) out.push(text(fields[key]));
  };
  say("minimum", (v) => `≥ ${String(v)}`);
  say("exclusiveMinimum", (v) => `> ${String(v)}`);
  say("maximum", (v) => `≤ ${String(v)}`);
  say("exclusiveMaximum", (v) => `< ${String(v)}`);
  say("multipleOf", (v) => `multiple of ${String(v)}`);
  say("minLength", (v) => `at least ${count(v, "character")}`);
  say("maxLength", (v) => `at most ${count(v, "character")}`);
  say("pattern", (v) => `matches /${String(v)}/`);
  say("format", (v) => `format ${String(v)}`);
  say("minItems", (v) => `at least ${count(v, "item")}`);
  say("maxItems", (v) => `at most ${count(v, "item")}`);
  if (fields.uniqueItems === true) out.push("items unique");
  return out;
}

/** The id of the control a label names: rjsf gives a oneOf/anyOf its own option selector. */
function controlId(id: string, schema: object): string {
  if ("oneOf" in schema) return `${id}__oneof_select`;
  if ("anyOf" in schema) return `${id}__anyof_select`;
  return id;
}

/**
 * Each field: its label, the input, its description, its constraints, and its errors as you
 * type (once you have reached it: see `touched.ts`), tied to the input with
 * aria-describedby-friendly ids.
 */
export function FieldTemplate(props: FieldTemplateProps) {
  const {
    id,
    classNames,
    style,
    label,
    required,
    displayLabel,
    description,
    rawErrors,
    children,
    hidden,
    schema,
    help,
  } = props;
  const showErrors = useContext(ShowErrors);
  if (hidden) return <div hidden>{children}</div>;
  const rules = constraints(schema);
  const errors = showErrors(id) ? (rawErrors ?? []) : [];
  return (
    <div
      className={`field ${classNames ?? ""}${errors.length > 0 ? " has-error" : ""}`}
      style={style}
    >
      {displayLabel && label && (
        <label htmlFor={controlId(id, schema)} className="field-label">
          {label}
          {required && <span aria-label="required"> *</span>}
        </label>
      )}
      {children}
      {displayLabel &&
        (typeof schema.description === "string" ? (
          <p className="field-description" id={`${id}__description`}>
            <Inline text={schema.description} />
          </p>
        ) : (
          description
        ))}
      {rules.length > 0 && (
        <div className="field-rules" id={`${id}__rules`}>
          {rules.join(" · ")}
        </div>
      )}
      {errors.length > 0 && (
        <div id={`${id}__error`} role="alert">
          <ul className="field-errors">
            {errors.map((error) => (
              <li key={error}>{error}</li>
            ))}
          </ul>
        </div>
      )}
      {help}
    </div>
  );
}
