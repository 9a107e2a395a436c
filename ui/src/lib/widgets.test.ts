import { describe, expect, it } from "vitest";
import { formSchema, isContent, takesNoArguments, uiSchemaFor } from "./widgets";

/** The value at `path` in a UI schema. */
const at = (ui: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], ui);

describe("uiSchemaFor", () => {
  it("gives content a text area and leaves one-line values alone", () => {
    const ui = uiSchemaFor({
      type: "object",
      properties: {
        path: { type: "string" },
        content: { type: "string" },
        owner: { type: "string", maxLength: 64 },
      },
    });
    expect(at(ui, "content", "ui:widget")).toBe("textarea");
    expect(ui.path).toBeUndefined();
    expect(ui.owner).toBeUndefined();
  });

  it("follows the tool file's hint over the name, and finds nested and item fields", () => {
    const ui = uiSchemaFor({
      type: "object",
      properties: {
        text: { type: "string", "x-jig-widget": "line" } as never,
        spec: { type: "string", contentMediaType: "application/yaml" } as never,
        change: {
          type: "object",
          properties: { summary: { type: "string", "x-jig-widget": "code" } as never },
        },
        notes: {
          type: "array",
          items: { type: "object", properties: { body: { type: "string" } } },
        },
      },
    });
    expect(ui.text).toBeUndefined();
    expect(at(ui, "spec", "ui:widget")).toBe("textarea");
    expect(at(ui, "change", "summary", "ui:options", "className")).toBe("code-area");
    expect(at(ui, "notes", "items", "body", "ui:widget")).toBe("textarea");
  });

  it("takes a long maxLength for content, but not for a path, a command or a formatted value", () => {
    expect(isContent("value", { type: "string", maxLength: 5000 })).toBe(true);
    expect(isContent("value", { type: "string" })).toBe(false);
    expect(isContent("cmd", { type: "string", maxLength: 65536 })).toBe(false);
    expect(isContent("cwd", { type: "string", maxLength: 4096 })).toBe(false);
    expect(isContent("output_path", { type: "string", maxLength: 4096 })).toBe(false);
    expect(isContent("target", { type: "string", maxLength: 4096, format: "uri" })).toBe(false);
    expect(isContent("mode", { type: "string", maxLength: 4096, pattern: "^[0-7]+$" })).toBe(false);
  });
});

describe("formSchema", () => {
  it("lets a free-form object take keys, and leaves declared ones as they are", () => {
    const shown = formSchema({
      type: "object",
      properties: {
        attribution: { type: "object" },
        strict: { type: "object", properties: { a: { type: "string" } } },
        closed: { type: "object", additionalProperties: false },
      },
      additionalProperties: false,
    });
    expect(at(shown, "properties", "attribution", "additionalProperties")).toBe(true);
    expect(at(shown, "properties", "strict", "additionalProperties")).toBeUndefined();
    expect(at(shown, "properties", "closed", "additionalProperties")).toBe(false);
    expect(shown.additionalProperties).toBe(false);
  });
});

describe("takesNoArguments", () => {
  it("is true only of an object that leaves nothing to fill in", () => {
    expect(takesNoArguments({ type: "object", properties: {} })).toBe(true);
    expect(takesNoArguments({ type: "object", additionalProperties: false })).toBe(true);
    // A free-form object takes any key; the form offers key–value pairs.
    expect(takesNoArguments({ type: "object" })).toBe(false);
    expect(takesNoArguments({ type: "object", properties: {}, additionalProperties: true })).toBe(
      false,
    );
    expect(takesNoArguments({ type: "object", properties: { a: { type: "string" } } })).toBe(false);
    expect(takesNoArguments({ type: "object", properties: {}, oneOf: [{ required: ["a"] }] })).toBe(
      false,
    );
  });
});
