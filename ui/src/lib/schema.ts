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

/** One unit as rjsf's error: `required` lands on the missing property, as rjsf expects. */
function toError(unit: OutputUnit): RJSFValidationError {
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
    message = "matches none of the options (or more than one)";
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
    const error = toError(unit);
    return `${error.property || "."}: ${error.message}`;
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
    let errors = relevant(validator(schema).validate(formData ?? {}).errors).map(toError);
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
