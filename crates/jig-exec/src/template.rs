//! Jinja2 templating of execution strings (seed 000 `templating.engine: jinja2`).

use std::sync::OnceLock;

use jig_model::ErrorCode;
use jig_model::toolpack::Templating;
use serde_json::Value;

use crate::executor::ToolError;

/// Render each of `strings` with the arguments (and `templating.context`), or return them
/// unchanged when the tool declares no templating.
pub fn render_all(
    strings: &[String],
    args: &Value,
    templating: Option<&Templating>,
) -> Result<Vec<String>, ToolError> {
    let Some(templating) = templating else { return Ok(strings.to_vec()) };
    let mut context = templating.context.clone();
    if let Value::Object(args) = args {
        context.extend(args.clone());
    }
    let context = Value::Object(context);
    strings.iter().map(|s| render(s, &context)).collect()
}

/// Refuse a templated argv element that renders to an option where the tool's author wrote a
/// positional slot (`jig_policy::arguments::check_positional`).
pub fn check_positional(sources: &[String], rendered: &[String]) -> Result<(), ToolError> {
    jig_policy::arguments::check_positional(sources, rendered).map_err(|denial| {
        let slot = jig_policy::arguments::option_in_positional_slot(sources, rendered)
            .map(|index| sources[index].clone());
        ToolError::new(ErrorCode::ValidationFail, denial.reason)
            .with_details(serde_json::json!({ "rule": denial.rule, "slot": slot }))
    })
}

/// Render one string with the arguments (and `templating.context` when given), whether or not
/// the tool declares templating — for execution fields that are templates by definition, like
/// an `http` tool's URL.
pub fn render_always(
    source: &str,
    args: &Value,
    templating: Option<&Templating>,
) -> Result<String, ToolError> {
    let mut context = templating.map(|t| t.context.clone()).unwrap_or_default();
    if let Value::Object(args) = args {
        context.extend(args.clone());
    }
    render(source, &Value::Object(context))
}

fn render(source: &str, context: &Value) -> Result<String, ToolError> {
    static ENV: OnceLock<minijinja::Environment<'static>> = OnceLock::new();
    let env = ENV.get_or_init(|| {
        let mut env = minijinja::Environment::new();
        // A missing variable is an error, not an empty string in a command line.
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        env
    });
    env.render_str(source, minijinja::value::Value::from(minijinja::value::Serde(context)))
        .map_err(|e| ToolError::new(ErrorCode::ValidationFail, format!("template `{source}`: {e}")))
}
