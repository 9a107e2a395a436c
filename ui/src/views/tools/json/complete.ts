import type { Completion, CompletionContext, CompletionResult } from "@codemirror/autocomplete";
import type { Diagnostic } from "@codemirror/lint";
import type { EditorState } from "@codemirror/state";
import { locate } from "../../../lib/schema";
import { nodeAt, placeAt } from "./place";
import { keysAt, valuesAt } from "./schemaAt";

/**
 * Completion from the tool's input schema: at a key, the keys the object may still have
 * (required ones first, each with its description); at a value, what the schema lists for it
 * (enum and const values, booleans, null, the default).
 */
export function schemaCompletion(schema: object) {
  return (context: CompletionContext): CompletionResult | null => {
    const word = context.matchBefore(/"?[^"\s,:{}[\]]*"?$/) ?? context.matchBefore(/$/);
    if (!word) return null;
    const typed = word.text;
    if (!context.explicit && typed === "") return null;
    const place = placeAt(context.state, word.from);
    if (!place) return null;
    if (place.kind === "key") {
      const options: Completion[] = keysAt(schema, place.path)
        .filter((k) => !place.present.includes(k.key))
        .map((k, i) => ({
          label: JSON.stringify(k.key),
          apply: `${JSON.stringify(k.key)}: `,
          type: "property",
          detail: [typeName(k.schema), k.required ? "required" : ""].filter(Boolean).join(" · "),
          info: k.description,
          // The schema's order, required keys first (the list is otherwise sorted by name).
          boost: (k.required ? 50 : 0) - Math.min(i, 49),
        }));
      return options.length > 0
        ? { from: word.from, to: closingQuote(context, word.to), options }
        : null;
    }
    const options: Completion[] = valuesAt(schema, place.path).map(({ value, detail }, i) => ({
      label: JSON.stringify(value),
      boost: -Math.min(i, 99),
      type: value === null || typeof value === "boolean" ? "keyword" : "enum",
      detail,
    }));
    return options.length > 0
      ? { from: word.from, to: closingQuote(context, word.to), options }
      : null;
  };
}

/** A closing quote the editor put after the cursor is replaced too, not doubled. */
function closingQuote(context: CompletionContext, to: number): number {
  const next = context.state.doc.sliceString(to, to + 1);
  const text = context.state.doc.sliceString(0, to);
  const open = (text.match(/"/g) ?? []).length % 2 === 1;
  return next === '"' && open ? to + 1 : to;
}

function typeName(schema: Record<string, unknown>): string {
  const type = schema.type;
  if (Array.isArray(type)) return type.join(" | ");
  if (typeof type === "string") return type;
  if (Array.isArray(schema.enum)) return "enum";
  if (Array.isArray(schema.oneOf)) return "one of";
  return "";
}

/**
 * The schema's problems marked where they are, once the text is JSON (a syntax error is
 * marked by the JSON linter instead): a missing key on its object, a wrong value on itself.
 */
export function schemaDiagnostics(schema: object, state: EditorState): Diagnostic[] {
  let value: unknown;
  try {
    value = JSON.parse(state.doc.toString());
  } catch {
    return [];
  }
  return locate(schema, value).map(({ at, message }) => {
    const node = nodeAt(state, at);
    const where = at.length > 0 ? `/${at.join("/")}` : "the arguments";
    return {
      from: node?.from ?? 0,
      to: node?.to ?? state.doc.length,
      severity: "error",
      message: `${where}: ${message}`,
    };
  });
}
