//! The functions templates may call: Go's built-ins that make sense over JSON values, and the
//! string helpers gert's runbooks use (`contains`, `hasPrefix`, `default` …).
//!
//! `and` and `or` are not here: they must not evaluate arguments they do not need, so the
//! evaluator handles them.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use crate::value::{compare, describe, equal, text, truthy};

/// Every function name, with how many arguments it takes (`max` none: any number).
const FUNCTIONS: &[(&str, usize, Option<usize>)] = &[
    ("and", 1, None),
    ("or", 1, None),
    ("not", 1, Some(1)),
    ("eq", 2, None),
    ("ne", 2, Some(2)),
    ("lt", 2, Some(2)),
    ("le", 2, Some(2)),
    ("gt", 2, Some(2)),
    ("ge", 2, Some(2)),
    ("len", 1, Some(1)),
    ("index", 1, None),
    ("contains", 2, Some(2)),
    ("hasPrefix", 2, Some(2)),
    ("hasSuffix", 2, Some(2)),
    ("default", 2, Some(2)),
    ("print", 0, None),
    ("printf", 1, None),
    ("lower", 1, Some(1)),
    ("upper", 1, Some(1)),
    ("trim", 1, Some(1)),
    ("join", 2, Some(2)),
    ("split", 2, Some(2)),
    ("toJson", 1, Some(1)),
    ("urlquery", 1, None),
];

/// Whether `name` is a function.
pub fn exists(name: &str) -> bool {
    FUNCTIONS.iter().any(|(n, ..)| *n == name)
}

/// Every function name, for completion and documentation.
pub fn names() -> impl Iterator<Item = &'static str> {
    FUNCTIONS.iter().map(|(n, ..)| *n)
}

/// Checks the number of arguments of `name`.
pub(crate) fn arity(name: &str, given: usize) -> Result<(), String> {
    let Some((_, min, max)) = FUNCTIONS.iter().find(|(n, ..)| *n == name) else {
        return Err(format!("unknown function `{name}`"));
    };
    if given < *min || max.is_some_and(|max| given > max) {
        let wanted = match max {
            Some(max) if max == min => format!("{min}"),
            Some(max) => format!("{min} to {max}"),
            None => format!("at least {min}"),
        };
        return Err(format!("`{name}` takes {wanted} argument(s), given {given}"));
    }
    Ok(())
}

/// Calls `name` (not `and`/`or`) on evaluated arguments.
pub(crate) fn call(name: &str, args: &[Value]) -> Result<Value, String> {
    arity(name, args.len())?;
    const NULL: &Value = &Value::Null;
    let a = args.first().unwrap_or(NULL);
    Ok(match name {
        "not" => Value::Bool(!truthy(a)),
        "eq" => Value::Bool(args[1..].iter().any(|b| equal(a, b))),
        "ne" => Value::Bool(!equal(a, &args[1])),
        "lt" => Value::Bool(compare(a, &args[1])? == Ordering::Less),
        "le" => Value::Bool(compare(a, &args[1])? != Ordering::Greater),
        "gt" => Value::Bool(compare(a, &args[1])? == Ordering::Greater),
        "ge" => Value::Bool(compare(a, &args[1])? != Ordering::Less),
        "len" => Value::from(match a {
            Value::String(s) => s.chars().count(),
            Value::Array(items) => items.len(),
            Value::Object(map) => map.len(),
            other => return Err(format!("`len` of {}", describe(other))),
        }),
        "index" => index(a, &args[1..])?,
        "contains" => Value::Bool(match a {
            Value::Array(items) => items.iter().any(|item| equal(item, &args[1])),
            Value::Object(map) => map.contains_key(&text(&args[1])),
            other => text(other).contains(&text(&args[1])),
        }),
        "hasPrefix" => Value::Bool(text(a).starts_with(&text(&args[1]))),
        "hasSuffix" => Value::Bool(text(a).ends_with(&text(&args[1]))),
        // gert's order: `default FALLBACK VALUE`, so that `.x | default "none"` reads well.
        "default" => {
            let value = &args[1];
            if value.is_null() || text(value).is_empty() { a.clone() } else { value.clone() }
        }
        "print" => Value::String(args.iter().map(text).collect()),
        "printf" => Value::String(printf(&text(a), &args[1..])?),
        "lower" => Value::String(text(a).to_lowercase()),
        "upper" => Value::String(text(a).to_uppercase()),
        "trim" => Value::String(text(a).trim().to_owned()),
        // Separator first, as sprig has it, so that `.list | join ","` reads well.
        "join" => match &args[1] {
            Value::Array(items) => {
                Value::String(items.iter().map(text).collect::<Vec<_>>().join(&text(a)))
            }
            other => return Err(format!("`join` needs a list, given {}", describe(other))),
        },
        "split" => Value::Array(text(&args[1]).split(&text(a)).map(Value::from).collect()),
        "toJson" => Value::String(a.to_string()),
        "urlquery" => Value::String(url_escape(&args.iter().map(text).collect::<String>())),
        other => return Err(format!("unknown function `{other}`")),
    })
}

/// `index COLLECTION KEY…`: list elements by integer, map entries by key. A missing entry is
/// an error, like an undefined variable.
fn index(collection: &Value, keys: &[Value]) -> Result<Value, String> {
    let mut current = collection;
    for key in keys {
        current = match current {
            Value::Array(items) => {
                let i = match key {
                    Value::Number(n) => n.as_i64(),
                    Value::String(s) => s.parse::<i64>().ok(),
                    _ => None,
                }
                .ok_or_else(|| {
                    format!("a list is indexed by a whole number, not {}", describe(key))
                })?;
                usize::try_from(i).ok().and_then(|i| items.get(i)).ok_or_else(|| {
                    format!("index {i} is out of range for a list of {}", items.len())
                })?
            }
            Value::Object(map) => {
                let name = text(key);
                map.get(&name).ok_or_else(|| no_key(map, &name))?
            }
            other => return Err(format!("cannot index {}", describe(other))),
        };
    }
    Ok(current.clone())
}

pub(crate) fn no_key(map: &Map<String, Value>, name: &str) -> String {
    let mut keys: Vec<&str> = map.keys().map(String::as_str).take(8).collect();
    keys.sort_unstable();
    if keys.is_empty() {
        format!("no key `{name}` (the map is empty)")
    } else {
        format!("no key `{name}` (keys: {})", keys.join(", "))
    }
}

/// The verbs runbooks use: `%s %v %d %f %q %t %%`.
fn printf(format: &str, args: &[Value]) -> Result<String, String> {
    let mut out = String::new();
    let mut args = args.iter();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let verb = chars.next().ok_or("`printf` format ends with `%`")?;
        if verb == '%' {
            out.push('%');
            continue;
        }
        let arg = args.next().ok_or_else(|| format!("`printf` has no argument for `%{verb}`"))?;
        match verb {
            's' | 'v' => out.push_str(&text(arg)),
            'q' => out.push_str(&Value::String(text(arg)).to_string()),
            'd' => match arg.as_i64().or_else(|| text(arg).trim().parse().ok()) {
                Some(n) => out.push_str(&n.to_string()),
                None => return Err(format!("`%d` needs a whole number, given {}", describe(arg))),
            },
            'f' => match crate::value::number(arg) {
                Some(f) => out.push_str(&format!("{f:.6}")),
                None => return Err(format!("`%f` needs a number, given {}", describe(arg))),
            },
            't' => out.push_str(&truthy(arg).to_string()),
            other => return Err(format!("`printf` does not know `%{other}`")),
        }
    }
    if args.next().is_some() {
        return Err("`printf` was given more arguments than its format uses".to_owned());
    }
    Ok(out)
}

/// Percent-encodes everything but the unreserved characters of RFC 3986.
fn url_escape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for byte in raw.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}
