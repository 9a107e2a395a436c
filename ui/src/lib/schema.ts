import { Validator, type OutputUnit } from "@cfworker/json-schema";
import {
  createErrorHandler,
  toErrorSchema,
  unwrapErrorHandler,
  validationDataMerge,
  type CustomValidator,
  type ErrorTransformer,
  type RJSFSchema,
  type RJSFValidationError,
  type UiSchema,
  type ValidationData,
  type ValidatorType,
} from "@rjsf/utils";

/*
 * JSON Schema 2020-12 without code generation. Ajv (rjsf's usual validator) compiles each schema
 * to a function with `new Function`, which needs `'unsafe-eval'` in the Content-Security-Policy;
 * the schemas here come from toolpacks, which may be hostile, so the UI keeps a strict CSP and
 * interprets schemas instead (@cfworker/json-schema). The engine checks every call again.
 */

/** Summaries of nested failures; the nested units say what is wrong, where. */
const SUMMARIES = new Set([
  "properties",
  "patternProperties",
  "items",
  "prefixItems",
  "$ref",
  "$dynamicRef",
  "allOf",
  "false",
  "dependentSchemas",
  "if",
  "then",
  "else",
  "contains",
  "unevaluatedProperties",
  "unevaluatedItems",
]);

function validator(schema: object, root?: object): Validator {
  // A sub-schema rjsf asks about may still point into the root's $defs.
  const defs: unknown = root && root !== schema ? (root as { $defs?: unknown }).$defs : undefined;
  const merged = defs === undefined ? schema : { ...schema, $defs: defs };
  return new Validator(merged, "2020-12", false);
}

/** `#/a/0/b` → `.a.0.b` (rjsf's property paths). */
function property(location: string): string {
  return location
    .replace(/^#/, "")
    .split("/")
    .filter(Boolean)
    .map((part) => "." + decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~"))
    .join("");
}

/** Keep what a person can act on: leaf failures, and inside a oneOf/anyOf only deeper ones. */
function relevant(units: OutputUnit[]): OutputUnit[] {
  const branches = units.filter((u) => u.keyword === "oneOf" || u.keyword === "anyOf");
  return units.filter((unit) => {
    if (SUMMARIES.has(unit.keyword)) return false;
    const inBranch = /\/(oneOf|anyOf)\/\d+/.test(unit.keywordLocation);
    if (!inBranch) return true;
    return !branches.some((b) => b.instanceLocation === unit.instanceLocation);
  });
}

/** The value at a JSON pointer (`#/a/0`), or undefined. */
function at(root: unknown, pointer: string): unknown {
  let value = root;
  for (const part of pointer.replace(/^#/, "").split("/").filter(Boolean)) {
    const key = decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~");
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * What a person is told when a value fits none of a `oneOf`/`anyOf`'s options (or, for
 * `oneOf`, several): the options by their titles, and what each still needs.
 */
function choiceMessage(unit: OutputUnit, schema: object, value: unknown): string {
  const options = at(schema, unit.keywordLocation);
  const several = /\((\d+) matches\)/.exec(unit.error)?.[1];
  if (!Array.isArray(options)) {
    return several && several !== "0"
      ? "matches more than one of the options"
      : "matches none of the options";
  }
  const instance = at(value, unit.instanceLocation);
  const described = options.map((option: unknown, i) => {
    const { title, required } = (option ?? {}) as { title?: unknown; required?: unknown };
    const name = typeof title === "string" ? title : `option ${i + 1}`;
    const present = instance !== null && typeof instance === "object" ? Object.keys(instance) : [];
    const missing = Array.isArray(required)
      ? required.filter((key): key is string => typeof key === "string" && !present.includes(key))
      : [];
    return missing.length > 0 ? `${name} (needs ${missing.join(", ")})` : name;
  });
  if (several && several !== "0") return `fits more than one of: ${described.join("; ")}`;
  return `choose one of: ${described.join("; ")}`;
}

/** One unit as rjsf's error: `required` lands on the missing property, as rjsf expects. */
function toError(unit: OutputUnit, schema: object = {}, value?: unknown): RJSFValidationError {
  let path = property(unit.instanceLocation);
  let message = unit.error.replace(/^Instance /, "").replace(/\.$/, "");
  const missing = /required property "(.+)"/.exec(unit.error)?.[1];
  if (unit.keyword === "required" && missing !== undefined) {
    path = `${path}.${missing}`;
    message = "is required";
  }
  const extra = /Property "(.+)" does not match additional properties/.exec(unit.error)?.[1];
  if (unit.keyword === "additionalProperties" && extra !== undefined)
    message = `has "${extra}", which the schema does not allow`;
  if (unit.keyword === "oneOf" || unit.keyword === "anyOf")
    message = choiceMessage(unit, schema, value);
  return {
    name: unit.keyword,
    property: path,
    message,
    stack: `${path || "."} ${message}`,
    schemaPath: unit.keywordLocation,
  };
}

/** Problems of `value` against `schema` (`pointer: message`), empty when it matches. */
export function check(schema: object, value: unknown): string[] {
  return relevant(validator(schema).validate(value).errors).map((unit) => {
    const error = toError(unit, schema, value);
    return `${error.property || "."}: ${error.message}`;
  });
}

/**
 * Problems of `value` against `schema`, each with where it is (the keys and indices to the
 * value at fault; a missing property is its object's) and what is wrong: for marking them in
 * a JSON text.
 */
export function locate(schema: object, value: unknown): { at: string[]; message: string }[] {
  return relevant(validator(schema).validate(value).errors).map((unit) => {
    const at = unit.instanceLocation
      .replace(/^#/, "")
      .split("/")
      .filter(Boolean)
      .map((part) => decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~"));
    const missing =
      unit.keyword === "required" ? /required property "(.+)"/.exec(unit.error)?.[1] : undefined;
    return {
      at,
      message:
        missing !== undefined
          ? `needs "${missing}"`
          : (toError(unit, schema, value).message ?? unit.error),
    };
  });
}

/** rjsf's validator interface over the interpreter. */
class InterpretingValidator implements ValidatorType {
  validateFormData(
    formData: unknown,
    schema: RJSFSchema,
    customValidate?: CustomValidator,
    transformErrors?: ErrorTransformer,
    uiSchema?: UiSchema,
  ): ValidationData<unknown> {
    let errors = relevant(validator(schema).validate(formData ?? {}).errors).map((unit) =>
      toError(unit, schema, formData ?? {}),
    );
    if (transformErrors) errors = transformErrors(errors, uiSchema);
    const data = { errors, errorSchema: toErrorSchema(errors) };
    if (!customValidate) return data;
    const handler = customValidate(formData, createErrorHandler(formData), uiSchema);
    return validationDataMerge(data, unwrapErrorHandler(handler));
  }

  isValid(schema: RJSFSchema, formData: unknown, rootSchema: RJSFSchema): boolean {
    try {
      return validator(schema, rootSchema).validate(formData).valid;
    } catch {
      return false;
    }
  }

  // The interface's `Result` is the caller's to name; these are the interpreter's output units.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters
  rawValidation<Result = OutputUnit>(schema: RJSFSchema, formData?: unknown) {
    try {
      return { errors: validator(schema).validate(formData).errors as Result[] };
    } catch (error) {
      return { validationError: error as Error };
    }
  }
}

/** The form's validator. */
export const formValidator: ValidatorType = new InterpretingValidator();
