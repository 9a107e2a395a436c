//! The runbook template language: any input parses or fails with a located error, never
//! panics; what parses prints in a canonical form that parses to the same tree, and evaluating
//! it against sample variables ends (in a value or an error).
#![no_main]

use jig_expr::Template;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else { return };
    let Ok(template) = Template::parse(source) else { return };
    let printed = template.to_string();
    let again = Template::parse(&printed).expect("the canonical form parses");
    assert_eq!(again.nodes(), template.nodes(), "{source:?} printed as {printed:?}");
    let vars = serde_json::json!({
        "a": [1, "two", {"b": null}], "s": "text", "n": 3, "m": {"k": {"j": [true]}},
    });
    let _ = template.evaluate(&vars);
    let _ = template.references();
});
