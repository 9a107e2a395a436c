import { CompletionContext } from "@codemirror/autocomplete";
import { json } from "@codemirror/lang-json";
import { ensureSyntaxTree } from "@codemirror/language";
import { EditorState } from "@codemirror/state";
import { describe, expect, it } from "vitest";
import { schemaCompletion, schemaDiagnostics } from "./complete";
import { keysAt, schemasAt, valuesAt } from "./schemaAt";

/** The maintenance window's schema: $defs/$ref, oneOf, arrays of objects, enums, nullable. */
const schema = {
  type: "object",
  $defs: {
    service: {
      type: "object",
      properties: {
        name: { type: "string", description: "As in the service catalog." },
        environment: { enum: ["dev", "staging", "production"] },
        drain_minutes: { type: "integer", default: 5 },
      },
      required: ["name", "environment"],
    },
  },
  properties: {
    start: {
      oneOf: [
        { title: "At a time", properties: { at: { type: "string" } }, required: ["at"] },
        { title: "After", properties: { after_minutes: { type: "integer" } } },
      ],
    },
    services: { type: "array", items: { $ref: "#/$defs/service" } },
    dry_run: { type: "boolean" },
    ticket: { type: ["string", "null"] },
  },
  required: ["start", "services"],
};

/** `text` with `|` as the cursor: the completion labels offered there. */
function offered(text: string, explicit = true): string[] {
  const pos = text.indexOf("|");
  const doc = text.replace("|", "");
  const state = EditorState.create({ doc, selection: { anchor: pos }, extensions: [json()] });
  ensureSyntaxTree(state, doc.length, 1000);
  const result = schemaCompletion(schema)(new CompletionContext(state, pos, explicit));
  return result ? result.options.map((o) => o.label) : [];
}

describe("schemasAt", () => {
  it("follows $ref, array items and every option of a oneOf", () => {
    expect(keysAt(schema, ["services", 3]).map((k) => k.key)).toEqual([
      "name",
      "environment",
      "drain_minutes",
    ]);
    expect(keysAt(schema, ["start"]).map((k) => k.key)).toEqual(["at", "after_minutes"]);
    expect(valuesAt(schema, ["services", 0, "environment"]).map((v) => v.value)).toEqual([
      "dev",
      "staging",
      "production",
    ]);
    expect(valuesAt(schema, ["ticket"]).map((v) => v.value)).toEqual([null]);
    expect(schemasAt(schema, ["nowhere", "deeper"])).toEqual([]);
  });

  it("stops on a $ref that loops, and on options nested to explode", () => {
    const loop = { $defs: { a: { $ref: "#/$defs/a" } }, $ref: "#/$defs/a" };
    expect(schemasAt(loop, []).length).toBeLessThan(40);
    // Each level doubles: 2^32 schemas unbounded; a hostile tool file must not hold the page.
    const doubling = {
      $defs: { d: { oneOf: [{ $ref: "#/$defs/d" }, { $ref: "#/$defs/d" }] } },
      $ref: "#/$defs/d",
      properties: { x: { $ref: "#/$defs/d" } },
    };
    expect(schemasAt(doubling, []).length).toBeLessThanOrEqual(256);
    expect(keysAt(doubling, ["x", "y"])).toEqual([]);
  });
});

describe("completion", () => {
  it("offers the keys an object may still have, required ones marked", () => {
    expect(offered('{"start": {}, |}')).toEqual(['"services"', '"dry_run"', '"ticket"']);
    expect(offered("{|}")).toEqual(['"start"', '"services"', '"dry_run"', '"ticket"']);
    expect(offered('{"services": [{"name": "api", "|')).toEqual([
      '"environment"',
      '"drain_minutes"',
    ]);
  });

  it("offers the values a place lists", () => {
    expect(offered('{"services": [{"environment": |')).toEqual([
      '"dev"',
      '"staging"',
      '"production"',
    ]);
    expect(offered('{"dry_run": t|', false)).toEqual(["true", "false"]);
    expect(offered('{"services": [{"drain_minutes": |}]}')).toEqual(["5"]);
  });

  it("offers nothing where the schema says nothing, or unasked before anything is typed", () => {
    expect(offered('{"services": [{"name": |')).toEqual([]);
    expect(offered("{|}", false)).toEqual([]);
  });
});

describe("marks", () => {
  it("puts each problem on the value at fault, a missing key on its object", () => {
    const doc = '{"start": {"at": "x"}, "services": [{"name": "api", "environment": "moon"}]}';
    const state = EditorState.create({ doc, extensions: [json()] });
    ensureSyntaxTree(state, doc.length, 1000);
    const marks = schemaDiagnostics(schema, state).map((d) => [doc.slice(d.from, d.to), d.message]);
    expect(marks).toContainEqual([
      '"moon"',
      expect.stringMatching(/^\/services\/0\/environment: /),
    ]);
    const missing = schemaDiagnostics(
      schema,
      EditorState.create({ doc: '{"services": []}', extensions: [json()] }),
    );
    expect(missing.map((d) => d.message)).toEqual(['the arguments: needs "start"']);
    expect([missing[0]?.from, missing[0]?.to]).toEqual([0, 16]);
  });
});
