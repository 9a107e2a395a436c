//! Decoding requests at the boundary, strictly: JSON with a repeated key is refused (a plain JSON
//! parser keeps the last value silently, so `{"path": "a", "path": "/etc/passwd"}` could show one
//! thing to a reviewer and do another).

use std::fmt;

use jig_model::envelope::ToolRequest;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Parse `text` as JSON, refusing duplicate keys at any depth.
pub fn parse_json_strict(text: &str) -> Result<Value, String> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Strict::deserialize(&mut deserializer).map_err(|e| e.to_string())?;
    deserializer.end().map_err(|e| e.to_string())?;
    Ok(value.0)
}

/// A `ToolRequest` from JSON text (strict), e.g. `jig call --request FILE`.
pub fn decode_request(text: &str) -> Result<ToolRequest, String> {
    let value = parse_json_strict(text)?;
    serde_json::from_value(value).map_err(|e| format!("not a ToolRequest: {e}"))
}

struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number JSON cannot hold"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Strict(value) = map.next_value()?;
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!("duplicate key `{key}`")));
            }
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_refused_at_any_depth() {
        assert!(
            parse_json_strict(r#"{"a": 1, "a": 2}"#).unwrap_err().contains("duplicate key `a`")
        );
        assert!(parse_json_strict(r#"{"x": [{"p": "a", "p": "/etc/passwd"}]}"#).is_err());
        assert_eq!(
            parse_json_strict(r#"{"a": {"a": 1}}"#).expect("nested same name is fine"),
            serde_json::json!({"a": {"a": 1}})
        );
        assert!(parse_json_strict("{} trailing").is_err());
    }
}
