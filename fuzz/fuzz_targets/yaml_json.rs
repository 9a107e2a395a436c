//! The YAML reader against serde_json: JSON is YAML, so any JSON document the reader accepts
//! must read as the same value (numbers compared as numbers).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(json) = serde_json::from_str::<Value>(text) else { return };
    if let Ok(document) = jig_load::yaml::parse(text, &jig_load::yaml::Caps::DEFAULT) {
        assert!(same(&document.value, &json), "{text:?}: yaml {} json {json}", document.value);
    }
});
