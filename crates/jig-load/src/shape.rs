//! Structural validation of Jig's files against the JSON Schemas generated from jig-model.
//!
//! Validating against the schema, rather than stopping at serde's first error, reports every
//! structural problem of a file at once, each at its own line. The raw validator messages are
//! rewritten into sentences that name the field and, for unknown fields and bad enum values,
//! suggest the closest valid spelling.

use std::sync::OnceLock;

use jig_model::Diagnostic;
use jig_model::diagnostic::codes;
use jig_model::file_schemas::FileFormat;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{ValidationError, Validator};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::located::{Located, did_you_mean};
use crate::yaml::{pointer_push, pointer_tokens};

struct Compiled {
    schema: Value,
    validator: Validator,
}

/// `format`'s schema, generated and compiled the first time a file of that format is read:
/// one by one, because a process that reads only a manifest and toolpacks (every `jig call`)
/// should not pay for the runbook formats (a third of a `jig call`'s start in perf).
fn compiled(format: FileFormat) -> &'static Compiled {
    static CACHE: [OnceLock<Compiled>; FileFormat::ALL.len()] =
        [const { OnceLock::new() }; FileFormat::ALL.len()];
    let index = FileFormat::ALL.iter().position(|f| *f == format).unwrap_or(0);
    CACHE[index].get_or_init(|| {
        let schema = format.schema();
        let validator = jsonschema::options()
            .offline()
            .build(&schema)
            .unwrap_or_else(|e| panic!("generated schema for {format:?} is invalid: {e}"));
        Compiled { schema, validator }
    })
}

/// Check `file` against `format`'s schema, then deserialize it. Returns the value, or every
/// structural problem found.
pub(crate) fn check<T: DeserializeOwned>(
    file: &Located,
    format: FileFormat,
) -> Result<T, Vec<Diagnostic>> {
    let compiled = compiled(format);
    let value = &file.doc.value;
    if !compiled.validator.is_valid(value) {
        let mut out = Vec::new();
        for error in compiled.validator.iter_errors(value) {
            translate(&error, &compiled.schema, file, format, &mut out);
        }
        out.dedup();
        return Err(out);
    }
    own(file, format)
}

/// Deserialize one of Jig's own files (the built-in package, embedded in the binary) without the
/// schema check: the loader's tests load toolpacks/std as a project, where every file is
/// checked, and compiling the format's schema only for them cost every `jig` start. [`check`]
/// ends here too, once the schema holds.
pub(crate) fn own<T: DeserializeOwned>(
    file: &Located,
    format: FileFormat,
) -> Result<T, Vec<Diagnostic>> {
    T::deserialize(&file.doc.value).map_err(|e| {
        vec![file.at(
            Diagnostic::error(
                codes::FIELD_INVALID,
                format!("{} is malformed: {e}", format.describe()),
            ),
            "",
        )]
    })
}

/// One schema error as the diagnostics a person reads: the field by its name, what was expected
/// and what was found, and a hint where one helps.
fn translate(
    error: &ValidationError<'_>,
    schema: &Value,
    file: &Located,
    format: FileFormat,
    out: &mut Vec<Diagnostic>,
) {
    let pointer = error.instance_path().as_str().to_owned();
    let field = field_name(&pointer, format);
    let diagnostic = match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let allowed = allowed_properties(schema, error.schema_path().as_str());
            for name in unexpected {
                let diagnostic = unknown_field(name, &allowed, &pointer, format);
                out.push(file.at_key(diagnostic, &pointer_push(&pointer, name)));
            }
            return;
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            let diagnostic = Diagnostic::error(
                codes::FIELD_MISSING,
                format!("missing required field `{name}`{}", context_suffix(&pointer, format)),
            );
            out.push(file.at_key(diagnostic, &pointer));
            return;
        }
        ValidationErrorKind::PropertyNames { error: inner } => {
            // The offending name is the inner error's instance.
            let name = inner.instance().as_str().unwrap_or_default().to_owned();
            let diagnostic = property_name(inner, &name, &field);
            out.push(file.at_key(diagnostic, &pointer_push(&pointer, &name)));
            return;
        }
        ValidationErrorKind::OneOfNotValid { context } | ValidationErrorKind::AnyOf { context } => {
            translate_alternatives(error, context, schema, file, format, out);
            return;
        }
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => article(&t.to_string()),
                TypeKind::Multiple(set) => {
                    set.iter().map(|t| article(&t.to_string())).collect::<Vec<_>>().join(" or ")
                }
            };
            Diagnostic::error(
                codes::FIELD_TYPE,
                format!("{field} must be {expected}, not {}", describe_value(error.instance())),
            )
        }
        ValidationErrorKind::Enum { options } => enum_diagnostic(&field, error.instance(), options),
        ValidationErrorKind::Constant { expected_value } => {
            let options = Value::Array(vec![(**expected_value).clone()]);
            enum_diagnostic(&field, error.instance(), &options)
        }
        ValidationErrorKind::Pattern { pattern } => {
            let (code, hint) = pattern_help(pattern);
            let diagnostic = Diagnostic::error(
                code,
                format!(
                    "{field} {} does not match the pattern `{pattern}`",
                    describe_value(error.instance())
                ),
            );
            with_optional_hint(diagnostic, hint)
        }
        _ => out_of_range(error, &field).unwrap_or_else(|| {
            Diagnostic::error(codes::FIELD_INVALID, format!("{field}: {error}"))
        }),
    };
    out.push(file.at(diagnostic, &pointer));
}

/// An unknown field, with the name it most likely meant or the names the place allows.
fn unknown_field(name: &str, allowed: &[String], pointer: &str, format: FileFormat) -> Diagnostic {
    let diagnostic = Diagnostic::error(
        codes::FIELD_UNKNOWN,
        format!("unknown field `{name}`{}", context_suffix(pointer, format)),
    );
    match did_you_mean(name, allowed.iter().map(String::as_str)) {
        Some(suggestion) => diagnostic.with_hint(format!("did you mean `{suggestion}`?")),
        None if !allowed.is_empty() => {
            diagnostic.with_hint(format!("expected one of: {}", allowed.join(", ")))
        }
        None => diagnostic,
    }
}

/// A key of a map that its `propertyNames` do not allow.
fn property_name(inner: &ValidationError<'_>, name: &str, field: &str) -> Diagnostic {
    let diagnostic = Diagnostic::error(
        codes::FIELD_PATTERN,
        format!("`{name}` is not an allowed name in {field}"),
    );
    match inner.kind() {
        ValidationErrorKind::Pattern { pattern } => {
            let (_, hint) = pattern_help(pattern);
            with_optional_hint(diagnostic, hint.or(Some(format!("names must match `{pattern}`"))))
        }
        _ => diagnostic,
    }
}

/// A number, list or text outside its bounds; `None` for any other error.
fn out_of_range(error: &ValidationError<'_>, field: &str) -> Option<Diagnostic> {
    let found = || describe_value(error.instance());
    let message = match error.kind() {
        ValidationErrorKind::Minimum { limit } => {
            format!("{field} must be at least {limit}, not {}", found())
        }
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!("{field} must be more than {limit}, not {}", found())
        }
        ValidationErrorKind::Maximum { limit }
        | ValidationErrorKind::ExclusiveMaximum { limit } => {
            format!("{field} must be at most {limit}, not {}", found())
        }
        ValidationErrorKind::MinItems { limit } => {
            format!("{field} needs at least {limit} item(s)")
        }
        ValidationErrorKind::MinLength { limit } => {
            format!("{field} must have at least {limit} character(s)")
        }
        _ => return None,
    };
    Some(Diagnostic::error(codes::FIELD_RANGE, message))
}

/// A `oneOf`/`anyOf` failed. For a union tagged by a `kind` (or `type`) field, report the
/// errors of the variant the tag selects, or an unknown tag. Otherwise report the alternative
/// that came closest (the fewest errors, type mismatches counting most).
fn translate_alternatives(
    error: &ValidationError<'_>,
    context: &[Vec<ValidationError<'static>>],
    schema: &Value,
    file: &Located,
    format: FileFormat,
    out: &mut Vec<Diagnostic>,
) {
    let pointer = error.instance_path().as_str().to_owned();
    for tag in ["kind", "type"] {
        let Some(tag_value) = error.instance().get(tag) else { continue };
        let tag_pointer = pointer_push(&pointer, tag);
        let is_tag_error = |e: &ValidationError<'_>| {
            e.instance_path().as_str() == tag_pointer
                && matches!(
                    e.kind(),
                    ValidationErrorKind::Constant { .. } | ValidationErrorKind::Enum { .. }
                )
        };
        let tags: Vec<Value> = context
            .iter()
            .flat_map(|errors| errors.iter().filter(|e| is_tag_error(e)))
            .filter_map(|e| match e.kind() {
                ValidationErrorKind::Constant { expected_value } => {
                    Some((**expected_value).clone())
                }
                _ => None,
            })
            .collect();
        if tags.is_empty() {
            continue;
        }
        if let Some(selected) = context.iter().find(|errors| !errors.iter().any(&is_tag_error)) {
            for inner in selected {
                translate(inner, schema, file, format, out);
            }
        } else {
            let field = field_name(&tag_pointer, format);
            out.push(
                file.at(enum_diagnostic(&field, tag_value, &Value::Array(tags)), &tag_pointer),
            );
        }
        return;
    }
    // An enum written as `oneOf` of documented constants: one constant error per alternative.
    let constants: Option<Vec<Value>> = context
        .iter()
        .map(|errors| match errors.as_slice() {
            [only] if only.instance_path().as_str() == pointer => match only.kind() {
                ValidationErrorKind::Constant { expected_value } => {
                    Some((**expected_value).clone())
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    if let Some(options) = constants.filter(|c| !c.is_empty()) {
        let field = field_name(&pointer, format);
        out.push(
            file.at(enum_diagnostic(&field, error.instance(), &Value::Array(options)), &pointer),
        );
        return;
    }
    let score = |errors: &Vec<ValidationError<'static>>| -> usize {
        errors
            .iter()
            .map(|e| {
                if matches!(e.kind(), ValidationErrorKind::Type { .. })
                    && e.instance_path().as_str() == pointer
                {
                    100
                } else {
                    1
                }
            })
            .sum()
    };
    let Some(best) = context.iter().min_by_key(|errors| score(errors)) else { return };
    if score(best) >= 100 {
        let field = field_name(&pointer, format);
        let diagnostic = Diagnostic::error(
            codes::FIELD_TYPE,
            format!("{field} has the wrong shape ({})", describe_value(error.instance())),
        )
        .with_hint(alternatives_hint(error, schema));
        out.push(file.at(diagnostic, &pointer));
        return;
    }
    for inner in best {
        translate(inner, schema, file, format, out);
    }
}

fn alternatives_hint(error: &ValidationError<'_>, schema: &Value) -> String {
    let alternatives = schema_at(schema, error.schema_path().as_str())
        .and_then(Value::as_array)
        .map(|options| {
            options.iter().map(|o| describe_schema(o, schema)).collect::<Vec<_>>().join(", or ")
        })
        .unwrap_or_default();
    if alternatives.is_empty() {
        "see the schema under schemas/".into()
    } else {
        format!("expected {alternatives}")
    }
}

fn describe_schema(option: &Value, root: &Value) -> String {
    let resolved = option
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|p| schema_at(root, p))
        .unwrap_or(option);
    match resolved.get("type").and_then(Value::as_str) {
        Some("array") => {
            let item = resolved
                .get("items")
                .and_then(|i| i.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("value");
            format!("a list of {item}s")
        }
        Some("object") => "a map".to_owned(),
        Some(other) => article(other),
        None => "a value".to_owned(),
    }
}

fn enum_diagnostic(field: &str, found: &Value, options: &Value) -> Diagnostic {
    let names: Vec<String> = options
        .as_array()
        .map(|o| {
            o.iter().map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned)).collect()
        })
        .unwrap_or_default();
    let diagnostic = Diagnostic::error(
        codes::FIELD_ENUM,
        format!("{field} must be one of {}, not {}", names.join(", "), describe_value(found)),
    );
    match found.as_str().and_then(|s| did_you_mean(s, names.iter().map(String::as_str))) {
        Some(suggestion) => diagnostic.with_hint(format!("did you mean `{suggestion}`?")),
        None => diagnostic,
    }
}

fn with_optional_hint(diagnostic: Diagnostic, hint: Option<String>) -> Diagnostic {
    match hint {
        Some(hint) => diagnostic.with_hint(hint),
        None => diagnostic,
    }
}

/// A code and an explanation for the patterns Jig's schemas use.
fn pattern_help(pattern: &str) -> (&'static str, Option<String>) {
    use jig_model::manifest::PACKAGE_NAME_PATTERN;
    use jig_model::toolpack::{ENV_NAME_PATTERN, TOOL_ID_PATTERN};
    if pattern == TOOL_ID_PATTERN {
        (
            codes::TOOL_ID,
            Some(
                "tool ids are dotted lowercase segments, e.g. `acme.deploy` or `net.http_get`"
                    .into(),
            ),
        )
    } else if pattern == ENV_NAME_PATTERN {
        (
            codes::FIELD_PATTERN,
            Some(
                "environment variable names are UPPER_CASE letters, digits and underscores".into(),
            ),
        )
    } else if pattern == PACKAGE_NAME_PATTERN {
        (
            codes::FIELD_PATTERN,
            Some("package names start with a letter and use letters, digits, `-` and `_`".into()),
        )
    } else {
        (codes::FIELD_PATTERN, None)
    }
}

/// The property names allowed by the schema object owning an `additionalProperties` keyword.
fn allowed_properties(schema: &Value, schema_path: &str) -> Vec<String> {
    let parent = schema_path.strip_suffix("/additionalProperties").unwrap_or(schema_path);
    schema_at(schema, parent)
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default()
}

fn schema_at<'a>(schema: &'a Value, pointer: &str) -> Option<&'a Value> {
    if pointer.is_empty() { Some(schema) } else { schema.pointer(pointer) }
}

/// How a field is named in messages: `` `execution.kind` ``, `` `limits.maxInputBytes` ``.
fn field_name(pointer: &str, format: FileFormat) -> String {
    if pointer.is_empty() {
        return format!("the {}", format.describe());
    }
    let mut name = String::new();
    for token in pointer_tokens(pointer) {
        if token.parse::<usize>().is_ok() {
            name.push_str(&format!("[{token}]"));
        } else {
            if !name.is_empty() {
                name.push('.');
            }
            name.push_str(&token);
        }
    }
    format!("`{name}`")
}

fn context_suffix(pointer: &str, format: FileFormat) -> String {
    if pointer.is_empty() {
        format!(" in {}", article(format.describe()))
    } else {
        format!(" in {}", field_name(pointer, format))
    }
}

fn article(noun: &str) -> String {
    let first = noun.chars().next().unwrap_or('x');
    let a = if "aeiou".contains(first) { "an" } else { "a" };
    format!("{a} {noun}")
}

/// A short rendering of a value for messages.
pub(crate) fn describe_value(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("`{b}`"),
        Value::Number(n) => format!("`{n}`"),
        Value::String(s) if s.chars().count() > 40 => {
            format!("\"{}…\"", s.chars().take(40).collect::<String>())
        }
        Value::String(s) => format!("\"{s}\""),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "a map".to_owned(),
    }
}
