//! Scalars as YAML 1.2's core schema reads them, into JSON values: null, booleans, integers
//! (decimal, `0x`, `0o`) and floats by their form or their `!!` tag, everything else a string;
//! a value JSON has no equivalent for (`.inf`, `.nan`) refused with a hint to quote it.

use super::*;

/// Resolve a scalar by the YAML 1.2 core schema.
pub(super) fn scalar(
    text: &str,
    style: ScalarStyle,
    tag: Option<&(String, String)>,
    pos: Pos,
) -> Result<Value, YamlError> {
    if let Some((handle, suffix)) = tag {
        if handle != "tag:yaml.org,2002:" {
            return Err(unsupported_tag(handle, suffix, pos));
        }
        return match suffix.as_str() {
            "str" => Ok(Value::String(text.to_owned())),
            "null" | "bool" | "int" | "float" => match plain_scalar(text, pos)? {
                value @ (Value::Null | Value::Bool(_) | Value::Number(_)) => Ok(value),
                _ => Err(YamlError::new(
                    codes::YAML_NOT_JSON,
                    format!("`{text}` is not a valid !!{suffix}"),
                    Some(pos),
                )),
            },
            other => Err(unsupported_tag(handle, other, pos)),
        };
    }
    if style == ScalarStyle::Plain {
        plain_scalar(text, pos)
    } else {
        Ok(Value::String(text.to_owned()))
    }
}

pub(super) fn plain_scalar(text: &str, pos: Pos) -> Result<Value, YamlError> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Value::Null),
        "true" | "True" | "TRUE" => return Ok(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Ok(Value::Bool(false)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => {
            return Err(YamlError::new(
                codes::YAML_NOT_JSON,
                format!("`{text}` has no JSON equivalent"),
                Some(pos),
            )
            .with_hint("quote it if you meant the text"));
        }
        _ => {}
    }
    if let Some(number) = integer(text) {
        return Ok(Value::Number(number));
    }
    if is_float(text)
        && let Ok(f) = text.parse::<f64>()
        && let Some(n) = Number::from_f64(f)
    {
        return Ok(Value::Number(n));
    }
    Ok(Value::String(text.to_owned()))
}

pub(super) fn integer(text: &str) -> Option<Number> {
    let bytes = text.as_bytes();
    if let Some(hex) = text.strip_prefix("0x") {
        return u64::from_str_radix(hex, 16).ok().map(Number::from);
    }
    if let Some(oct) = text.strip_prefix("0o") {
        return u64::from_str_radix(oct, 8).ok().map(Number::from);
    }
    let digits = match bytes.first() {
        Some(b'-' | b'+') => &text[1..],
        _ => text,
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if let Ok(i) = text.parse::<i64>() {
        return Some(Number::from(i));
    }
    if let Ok(u) = text.trim_start_matches('+').parse::<u64>() {
        return Some(Number::from(u));
    }
    // Too large for 64 bits: keep it as a float, like JSON parsers do.
    text.parse::<f64>().ok().and_then(Number::from_f64)
}

pub(super) fn is_float(text: &str) -> bool {
    // [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
    let mut rest = text.strip_prefix(['-', '+']).unwrap_or(text);
    let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    rest = &rest[int_len..];
    let mut frac_len = 0;
    if let Some(after_dot) = rest.strip_prefix('.') {
        frac_len = after_dot.bytes().take_while(u8::is_ascii_digit).count();
        rest = &after_dot[frac_len..];
    }
    if int_len == 0 && frac_len == 0 {
        return false;
    }
    if let Some(exp) = rest.strip_prefix(['e', 'E']) {
        let exp = exp.strip_prefix(['-', '+']).unwrap_or(exp);
        return !exp.is_empty() && exp.bytes().all(|b| b.is_ascii_digit());
    }
    rest.is_empty()
}
