//! How template values behave: truth, printing, comparison.
//!
//! Values are JSON. Truth follows Go's templates (false, 0, null, and empty strings, lists and
//! maps are false). Printing differs from Go where Go's output is useless on a command line:
//! lists and maps print as JSON, null prints as nothing.

use std::cmp::Ordering;

use serde_json::Value;

/// Whether `value` counts as true in `if`, `and`, `or`, `not` and `when`.
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// `value` as text, as an action prints it.
pub fn text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(_) | Value::Object(_) => value.to_string(),
    }
}

/// The number `value` is or spells, if any: `"200"` compares with `200`, as gert's do.
pub(crate) fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        _ => None,
    }
}

/// `eq`: numbers (or numeric text) by value, everything else by its printed text.
pub(crate) fn equal(a: &Value, b: &Value) -> bool {
    if let (Value::Number(x), Value::Number(y)) = (a, b) {
        return match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => x.as_f64() == y.as_f64(),
        };
    }
    if (matches!(a, Value::Number(_)) || matches!(b, Value::Number(_)))
        && let (Some(x), Some(y)) = (number(a), number(b))
    {
        return x == y;
    }
    text(a) == text(b)
}

/// `lt`, `le`, `gt`, `ge`: numerically when both are numbers or numeric text (so `"10"` is
/// greater than `"9"`, unlike gert's string comparison), as text when neither is; a number
/// against other text is an error rather than a guess.
pub(crate) fn compare(a: &Value, b: &Value) -> Result<Ordering, String> {
    match (number(a), number(b)) {
        (Some(x), Some(y)) => x.partial_cmp(&y).ok_or_else(|| "cannot order NaN".to_owned()),
        (None, None) if is_scalar_text(a) && is_scalar_text(b) => Ok(text(a).cmp(&text(b))),
        _ => Err(format!("cannot order {} and {}", describe(a), describe(b))),
    }
}

fn is_scalar_text(value: &Value) -> bool {
    matches!(value, Value::String(_) | Value::Bool(_))
}

/// `value` described for an error message: its type and a short rendering.
pub(crate) fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".to_owned(),
        Value::Bool(_) => "the boolean",
        Value::Number(_) => "the number",
        Value::String(_) => "the string",
        Value::Array(a) => return format!("a list of {}", a.len()),
        Value::Object(o) => return format!("a map of {} keys", o.len()),
    };
    let mut shown = value.to_string();
    if shown.chars().count() > 40 {
        shown = shown.chars().take(40).collect::<String>() + "…";
    }
    format!("{kind} {shown}")
}
