/**
 * The parts of a JSON Schema that apply at a place in a value: what the JSON editor offers
 * there. A `$ref` into the root (`#/$defs/…`, `#/definitions/…`) is followed, and every option
 * of a `oneOf`/`anyOf`/`allOf` counts (the editor offers what any of them accepts; the
 * validator says which fits).
 */

type Schema = Record<string, unknown>;

/** One step into a value: an object's key, or an array's index. */
export type Step = string | number;

const MAX_DEPTH = 32;
/**
 * At most this many schemas at one place: a hostile tool file nesting `oneOf`s (each level
 * doubling) or `$ref` loops would otherwise hold the page while someone types.
 */
const MAX_SCHEMAS = 256;

/** The schemas that apply at `path` in a value of `root`. */
export function schemasAt(root: object, path: Step[]): Schema[] {
  let here = expand(root as Schema, root as Schema);
  for (const step of path) {
    const next: Schema[] = [];
    for (const schema of here) {
      for (const child of childOf(schema, step)) {
        if (next.length >= MAX_SCHEMAS) break;
        next.push(...expand(child, root as Schema).slice(0, MAX_SCHEMAS - next.length));
      }
    }
    here = next;
    if (here.length === 0) break;
  }
  return here;
}

/** The keys an object at `path` may have, each with its description and whether required. */
export function keysAt(
  root: object,
  path: Step[],
): { key: string; description?: string; required: boolean; schema: Schema }[] {
  const out = new Map<
    string,
    { key: string; description?: string; required: boolean; schema: Schema }
  >();
  for (const schema of schemasAt(root, path)) {
    const properties = schema.properties;
    if (!isObject(properties)) continue;
    const required = Array.isArray(schema.required) ? schema.required : [];
    for (const [key, raw] of Object.entries(properties)) {
      const property = isObject(raw) ? (expand(raw, root as Schema)[0] ?? raw) : {};
      const was = out.get(key);
      const description =
        typeof property.description === "string"
          ? property.description
          : typeof raw === "object" && raw && typeof (raw as Schema).description === "string"
            ? ((raw as Schema).description as string)
            : undefined;
      out.set(key, {
        key,
        description: was?.description ?? description,
        required: (was?.required ?? false) || required.includes(key),
        schema: property,
      });
    }
  }
  return [...out.values()];
}

/** The values a place accepts as a list: `enum`, `const`, booleans, `null`, its default. */
export function valuesAt(root: object, path: Step[]): { value: unknown; detail: string }[] {
  const out: { value: unknown; detail: string }[] = [];
  const seen = new Set<string>();
  const add = (value: unknown, detail: string) => {
    const key = JSON.stringify(value);
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ value, detail });
  };
  for (const schema of schemasAt(root, path)) {
    if (Array.isArray(schema.enum))
      for (const v of schema.enum as unknown[]) add(v, "one of the schema's values");
    if ("const" in schema) add(schema.const, "the only value allowed");
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (types.includes("boolean")) {
      add(true, "boolean");
      add(false, "boolean");
    }
    if (types.includes("null")) add(null, "null");
    if ("default" in schema) add(schema.default, "the default");
  }
  return out;
}

function childOf(schema: Schema, step: Step): Schema[] {
  if (typeof step === "number") {
    const prefix = schema.prefixItems;
    if (Array.isArray(prefix) && isObject(prefix[step])) return [prefix[step]];
    return isObject(schema.items) ? [schema.items] : [];
  }
  const properties = schema.properties;
  if (isObject(properties) && isObject(properties[step])) return [properties[step]];
  return isObject(schema.additionalProperties) ? [schema.additionalProperties] : [];
}

/**
 * A schema with its `$ref` followed and its options spread out, bounded in depth (a loop
 * ends) and in number (see `MAX_SCHEMAS`).
 */
function expand(schema: Schema, root: Schema): Schema[] {
  const out: Schema[] = [];
  const visit = (here: Schema, depth: number) => {
    if (depth > MAX_DEPTH || out.length >= MAX_SCHEMAS) return;
    out.push(here);
    if (typeof here.$ref === "string") {
      const target = resolve(root, here.$ref);
      if (target) visit(target, depth + 1);
    }
    for (const keyword of ["oneOf", "anyOf", "allOf"]) {
      const options = here[keyword];
      if (Array.isArray(options))
        for (const option of options) if (isObject(option)) visit(option, depth + 1);
    }
  };
  visit(schema, 0);
  return out;
}

/** `#/$defs/a` in `root`; nothing for a reference elsewhere (the editor reads no network). */
function resolve(root: Schema, ref: string): Schema | undefined {
  if (!ref.startsWith("#")) return undefined;
  let here: unknown = root;
  for (const part of ref.slice(1).split("/").filter(Boolean)) {
    const key = decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isObject(here)) return undefined;
    here = here[key];
  }
  return isObject(here) ? here : undefined;
}

function isObject(value: unknown): value is Schema {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
