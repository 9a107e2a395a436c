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

/// Refuse a templated argv element that renders to an option (`-x`, `--pre=sh`) where the
/// tool's author wrote a positional slot: an argument must never become an option of the
/// program. A slot is positional when its template does not itself start with `-`; it may take
/// option-like values only after a literal `--` (which the author writes where the program
/// supports it, e.g. `[rg, --, "{{ pattern }}"]`).
pub fn check_positional(sources: &[String], rendered: &[String]) -> Result<(), ToolError> {
    let mut options_ended = false;
    for (index, (source, value)) in sources.iter().zip(rendered).enumerate() {
        if source == "--" {
            options_ended = true;
        }
        let templated = source.contains("{{");
        if index > 0
            && templated
            && !options_ended
            && !source.starts_with('-')
            && value.starts_with('-')
        {
            return Err(ToolError::new(
                ErrorCode::ValidationFail,
                format!(
                    "argument {index} of the command (`{source}`) would become the option `{value}`; \
                     a value starting with `-` is refused in a positional slot unless the tool puts `--` before it"
                ),
            )
            .with_details(serde_json::json!({ "rule": "sec.argv.positional", "slot": source })));
        }
    }
    Ok(())
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
