//! RFC 8785 (JCS): the RFC's own examples, and independence from key order and number spelling.

use jig_model::canonical::{canonical_json, params_hash, run_id};
use proptest::prelude::*;
use serde_json::{Value, json};

fn canon(text: &str) -> String {
    canonical_json(&serde_json::from_str::<Value>(text).expect("json"))
}

#[test]
fn rfc8785_section_3_2_2_example() {
    let input = r#"{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }"#;
    assert_eq!(
        canon(input),
        r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
    );
}

#[test]
fn rfc8785_section_3_2_3_sorts_keys_by_utf16_code_units() {
    let input = r#"{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}"#;
    let expected = "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\"\u{f6}\":\"Latin Small Letter O With Diaeresis\",\"\u{20ac}\":\"Euro Sign\",\"\u{1f600}\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}";
    assert_eq!(canon(input), expected);
}

#[test]
fn rfc8785_appendix_b_number_serialization() {
    // IEEE 754 bit patterns and their ECMAScript serialisation (RFC 8785 Appendix B).
    let vectors: [(u64, &str); 20] = [
        (0x0000000000000000, "0"),
        (0x8000000000000000, "0"),
        (0x0000000000000001, "5e-324"),
        (0x8000000000000001, "-5e-324"),
        (0x7fefffffffffffff, "1.7976931348623157e+308"),
        (0xffefffffffffffff, "-1.7976931348623157e+308"),
        (0x4340000000000000, "9007199254740992"),
        (0xc340000000000000, "-9007199254740992"),
        (0x4430000000000000, "295147905179352830000"),
        (0x44b52d02c7e14af5, "9.999999999999997e+22"),
        (0x44b52d02c7e14af6, "1e+23"),
        (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
        (0x444b1ae4d6e2ef4e, "999999999999999700000"),
        (0x444b1ae4d6e2ef50, "1e+21"),
        (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
        (0x3eb0c6f7a0b5ed8d, "0.000001"),
        (0x41b3de4355555553, "333333333.3333332"),
        (0x41b3de4355555557, "333333333.33333343"),
        (0xbecbf647612f3696, "-0.0000033333333333333333"),
        (0x43143ff3c1cb0959, "1424953923781206.2"),
    ];
    for (bits, expected) in vectors {
        let value = json!(f64::from_bits(bits));
        assert_eq!(canonical_json(&value), expected, "{bits:#018x}");
    }
}

#[test]
fn run_identity_follows_design_section_5() {
    let args = json!({"path": "src/main.rs", "max_bytes": 1024});
    let reordered = json!({"max_bytes": 1024.0, "path": "src/main.rs"});
    assert_eq!(params_hash(&args), params_hash(&reordered));
    assert_eq!(params_hash(&args).len(), 64);
    let a = run_id("file_read", "1.0.0", "p", &params_hash(&args));
    assert_eq!(a, run_id("file_read", "1.0.0", "p", &params_hash(&reordered)));
    assert_ne!(a, run_id("file_read", "1.0.1", "p", &params_hash(&args)));
    assert_ne!(a, run_id("file_read", "1.0.0", "q", &params_hash(&args)));
}

/// Arbitrary JSON values, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1.0e12f64..1.0e12).prop_map(|f| json!(f)),
        "[a-z€😀\\n\"]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z0-9_]{1,6}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The same value with every object's keys in reverse insertion order.
fn reversed(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(map.iter().rev().map(|(k, v)| (k.clone(), reversed(v))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(reversed).collect()),
        other => other.clone(),
    }
}

/// Values with what the canonical writer treats specially: keys whose UTF-16 order is not
/// their UTF-8 order, integers beyond 2^53 and u64, strings with controls and quotes.
fn awkward_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
        "[\\x00-\\x1f\"\\\\a-z\u{7f}\u{e000}\u{fb33}\u{ffff}😀\u{2028}]{0,8}"
            .prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-z\u{e000}\u{fb33}😀\u{10000}]{0,3}", inner), 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn the_canonical_writer_matches_the_reference_implementation(value in awkward_value()) {
        let reference = serde_json_canonicalizer::to_string(&value).expect("canonical");
        prop_assert_eq!(canonical_json(&value), reference);
    }

    #[test]
    fn key_order_does_not_change_the_canonical_form(value in json_value()) {
        prop_assert_eq!(canonical_json(&value), canonical_json(&reversed(&value)));
    }

    #[test]
    fn number_spelling_does_not_change_the_canonical_form(n in -1_000_000i64..1_000_000, exp in 0u32..3) {
        // 12, 12.0, 1.2e1 and 120e-1 are the same number.
        let scale = 10f64.powi(exp as i32);
        let spellings = [
            format!("{n}"),
            format!("{n}.0"),
            format!("{}e{exp}", n as f64 / scale),
            format!("{}E+{exp}", n as f64 / scale),
        ];
        let forms: Vec<String> = spellings.iter().map(|s| canon(&format!("{{\"n\":{s}}}"))).collect();
        for form in &forms {
            prop_assert_eq!(form, &forms[0], "{:?}", spellings);
        }
    }

    #[test]
    fn canonical_json_parses_back_to_the_same_value(value in json_value()) {
        let text = canonical_json(&value);
        let back: Value = serde_json::from_str(&text).expect("valid json");
        prop_assert_eq!(canonical_json(&back), text);
    }
}
