//! Templates inside step fields: every string of a value is a template; a string that is one
//! action (`"{{ .nodes }}"`) keeps the action's type.

use jig_expr::Template;
use serde_json::{Map, Value};

/// A template error, with the field it was in.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RenderError {
    pub field: String,
    pub message: String,
}

impl RenderError {
    fn new(field: &str, error: &jig_expr::Error) -> Self {
        Self { field: field.to_owned(), message: error.to_string() }
    }
}

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}`: {}", self.field, self.message)
    }
}

/// `value` with every string template evaluated against `vars`.
pub(crate) fn value(field: &str, value: &Value, vars: &Value) -> Result<Value, RenderError> {
    match value {
        Value::String(source) if jig_expr::is_template(source) => Template::parse(source)
            .and_then(|t| t.evaluate(vars))
            .map_err(|error| RenderError::new(field, &error)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| self::value(&format!("{field}[{i}]"), item, vars))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::Object(object) => self::map(field, object, vars).map(Value::Object),
        other => Ok(other.clone()),
    }
}

/// Every value of `map` rendered.
pub(crate) fn map(
    field: &str,
    map: &Map<String, Value>,
    vars: &Value,
) -> Result<Map<String, Value>, RenderError> {
    map.iter()
        .map(|(k, v)| {
            let name = if field.is_empty() { k.clone() } else { format!("{field}.{k}") };
            self::value(&name, v, vars).map(|v| (k.clone(), v))
        })
        .collect()
}

/// A template rendered to text.
pub(crate) fn text(field: &str, source: &str, vars: &Value) -> Result<String, RenderError> {
    if !jig_expr::is_template(source) {
        return Ok(source.to_owned());
    }
    Template::parse(source)
        .and_then(|t| t.render(vars))
        .map_err(|error| RenderError::new(field, &error))
}

/// A command's argv, each element a template, refused where a value would become an option in
/// a slot the author wrote as positional (`jig_policy::arguments::check_positional`): inputs,
/// captured output and evidence reach these slots, and must stay arguments.
pub(crate) fn argv(field: &str, argv: &[String], vars: &Value) -> Result<Vec<String>, RenderError> {
    let rendered = argv
        .iter()
        .enumerate()
        .map(|(i, a)| text(&format!("{field}[{i}]"), a, vars))
        .collect::<Result<Vec<_>, _>>()?;
    if let Err(denial) = jig_policy::arguments::check_positional(argv, &rendered) {
        let index = jig_policy::arguments::option_in_positional_slot(argv, &rendered).unwrap_or(0);
        return Err(RenderError {
            field: format!("{field}[{index}]"),
            message: format!("{} ({})", denial.reason, denial.rule),
        });
    }
    Ok(rendered)
}

/// A condition (`when`, a branch arm, `until`): `default` and an empty condition hold.
pub(crate) fn condition(field: &str, source: &str, vars: &Value) -> Result<bool, RenderError> {
    let trimmed = source.trim();
    if trimmed.is_empty() || trimmed == "default" {
        return Ok(true);
    }
    Template::parse(source)
        .and_then(|t| t.condition(vars))
        .map_err(|error| RenderError::new(field, &error))
}
