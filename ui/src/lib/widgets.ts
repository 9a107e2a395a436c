import type { RJSFSchema, UiSchema } from "@rjsf/utils";

/**
 * Which of a tool's string inputs are content a person writes on several lines — a file's
 * text, a commit message, a script — and so get a text area instead of a one-line field
 * (Enter makes a new line; a one-line field would swallow it). Told from the schema, most
 * explicit first:
 * - `x-jig-widget: textarea` (or `code`) in the tool file, or `x-jig-widget: line` to keep
 *   one line;
 * - `contentMediaType` (the value is a document of that type);
 * - the property's name: `content`, `body`, `text`, `message`, `script`, `code`, `patch`,
 *   `diff`, `query`, `sql`, `description`, `notes`, `template`;
 * - `maxLength` over 200, for a free string (not a path, a command line, a name, nor a value
 *   with a `format` or a `pattern`).
 */
const CONTENT_NAMES = new Set([
  "content",
  "body",
  "text",
  "message",
  "script",
  "code",
  "patch",
  "diff",
  "query",
  "sql",
  "description",
  "notes",
  "template",
]);

/** Names of values that are one line whatever their length allows: paths, commands, names. */
const ONE_LINE_NAMES = new Set([
  "path",
  "cwd",
  "dir",
  "directory",
  "file",
  "url",
  "uri",
  "cmd",
  "command",
  "name",
  "id",
  "ref",
  "branch",
  "tag",
  "host",
  "email",
]);

/** How many lines a text area starts with (it grows with what is typed, by the user's hand). */
const ROWS = 6;

type Schema = RJSFSchema & { "x-jig-widget"?: unknown; contentMediaType?: unknown };

/** Whether the string property `name` (schema `schema`) is multi-line content. */
export function isContent(name: string, schema: Schema): boolean {
  const hint = schema["x-jig-widget"];
  if (hint === "line") return false;
  if (hint === "textarea" || hint === "code") return true;
  if (typeof schema.contentMediaType === "string") return true;
  const lower = name.toLowerCase();
  if (CONTENT_NAMES.has(lower)) return true;
  // A long allowed length says content only of a free string: not a path, a command line, a
  // value with a format or a pattern.
  const oneLine =
    ONE_LINE_NAMES.has(lower) || lower.endsWith("_path") || schema.format !== undefined;
  return (
    !oneLine &&
    schema.pattern === undefined &&
    typeof schema.maxLength === "number" &&
    schema.maxLength > 200
  );
}

function isString(schema: Schema): boolean {
  const type = schema.type;
  return type === "string" || (Array.isArray(type) && type.includes("string"));
}

/** The UI schema for `schema`'s properties (nested objects and array items included). */
export function uiSchemaFor(schema: RJSFSchema, depth = 0): UiSchema {
  const ui: UiSchema = {};
  // Deep enough for any real form; a recursive schema ($ref to itself) stops here.
  if (depth > 8 || typeof schema !== "object") return ui;
  for (const [name, value] of Object.entries(schema.properties ?? {})) {
    if (typeof value !== "object") continue;
    const property = value as Schema;
    if (isString(property) && isContent(name, property)) {
      ui[name] = {
        "ui:widget": "textarea",
        "ui:options": {
          rows: ROWS,
          className: property["x-jig-widget"] === "code" ? "code-area" : undefined,
        },
      };
    } else if (property.type === "object") {
      const nested = uiSchemaFor(property, depth + 1);
      if (Object.keys(nested).length > 0) ui[name] = nested;
    } else if (property.type === "array" && typeof property.items === "object") {
      const items = uiSchemaFor(property.items, depth + 1);
      if (Object.keys(items).length > 0) ui[name] = { items };
    }
  }
  return ui;
}

/**
 * Whether a tool's input schema leaves nothing to fill in: an object with no properties and no
 * other keys, choices or conditions (an MCP tool without parameters lists `properties: {}`).
 * The form then says so instead of drawing nothing.
 */
export function takesNoArguments(schema: RJSFSchema): boolean {
  const properties = schema.properties ?? {};
  const others = schema.additionalProperties;
  return (
    schema.type === "object" &&
    Object.keys(properties).length === 0 &&
    (schema.properties !== undefined || others === false) &&
    (others === undefined || others === false) &&
    schema.patternProperties === undefined &&
    schema.oneOf === undefined &&
    schema.anyOf === undefined &&
    schema.allOf === undefined &&
    schema.$ref === undefined &&
    schema.if === undefined
  );
}

/**
 * The schema as the form draws it: a free-form object (no `properties`, nothing said of other
 * keys) takes any key, so the form offers to add key–value pairs instead of an empty box where
 * nothing can be entered. JSON Schema already allows those keys; the engine checks the call
 * against the tool's own schema either way.
 */
export function formSchema(schema: RJSFSchema, depth = 0): RJSFSchema {
  if (depth > 8 || typeof schema !== "object") return schema;
  const copy: RJSFSchema = { ...schema };
  const freeForm =
    copy.type === "object" &&
    copy.properties === undefined &&
    copy.additionalProperties === undefined &&
    copy.patternProperties === undefined;
  if (freeForm) copy.additionalProperties = true;
  if (copy.properties) {
    copy.properties = Object.fromEntries(
      Object.entries(copy.properties).map(([name, value]) => [
        name,
        typeof value === "object" ? formSchema(value, depth + 1) : value,
      ]),
    );
  }
  if (copy.items && typeof copy.items === "object" && !Array.isArray(copy.items)) {
    copy.items = formSchema(copy.items, depth + 1);
  }
  return copy;
}
