//! A large result written once as JSON text, and a response that carries it.
//!
//! A `grep` over a big tree returns megabytes. Held as a `serde_json::Value` it is an ordered map
//! per match, walked again by the output schema, redaction, canonical serialisation for the
//! audit's hash and the printing — five passes and several times its size in memory (issue #8,
//! docs/benchmarks.md). A built-in whose result is a typed value can instead write it once as
//! canonical JSON (RFC 8785), redacted as it is made: the audit hashes and compresses those
//! bytes, and a surface that only forwards the result (`jig call`) writes them out unparsed.

use std::sync::Arc;

use serde::Serialize;

use crate::envelope::ToolResponse;

/// A result as canonical JSON text. Only a producer that can promise it may make one: the text
/// is canonical (keys sorted, integers, compact), its strings are already redacted, and it
/// matches the tool's output schema (its tests check the typed value against the schema).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedJson(Arc<str>);

impl PreparedJson {
    /// Serialise `value`, whose fields are declared in sorted order and whose numbers are
    /// integers (so serde_json's compact form is the canonical one).
    pub fn of<T: Serialize>(value: &T) -> serde_json::Result<Self> {
        Ok(Self(Arc::from(serde_json::to_string(value)?)))
    }

    /// Text the producer wrote itself, keeping the promise above.
    pub fn from_canonical_text(text: String) -> Self {
        Self(Arc::from(text))
    }

    /// The JSON text.
    pub fn text(&self) -> &str {
        &self.0
    }

    /// The text as a value, for surfaces that need one.
    pub fn to_value(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::from_str(self.text())
    }
}

/// Write `response` as JSON (pretty or compact) with `data`'s text where its `data` goes — the
/// same bytes as the response with that data parsed into it, without parsing it.
pub fn write_with_prepared(
    out: &mut (impl std::io::Write + ?Sized),
    response: &ToolResponse,
    data: &PreparedJson,
    pretty: bool,
) -> std::io::Result<()> {
    let shell = ToolResponse { data: serde_json::Value::Null, ..response.clone() };
    let text =
        if pretty { serde_json::to_string_pretty(&shell)? } else { serde_json::to_string(&shell)? };
    // The first `"data":null` is the field itself: every field before it is a scalar, and a
    // quote inside a string is escaped, so no string can hold that sequence.
    let marker = if pretty { "\"data\": null" } else { "\"data\":null" };
    let at = text.find(marker).ok_or_else(|| std::io::Error::other("no `data` in a response"))?;
    let value_at = at + marker.len() - "null".len();
    out.write_all(&text.as_bytes()[..value_at])?;
    out.write_all(data.text().as_bytes())?;
    out.write_all(&text.as_bytes()[at + marker.len()..])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::envelope::SubmittedJob;

    #[derive(Serialize)]
    struct Found {
        col: u64,
        file: String,
        line: u64,
        snippet: String,
    }

    #[test]
    fn a_prepared_result_is_the_canonical_json_of_its_value() {
        let found = vec![Found {
            col: 3,
            file: "a/\u{e9}\"b\".rs".to_owned(),
            line: 7,
            snippet: "tab\there \u{1f} \\ \u{7f} </script> \u{2028}".to_owned(),
        }];
        let prepared =
            PreparedJson::of(&json!({ "matches": &found, "truncated": false })).expect("prepared");
        let canonical = serde_json_canonicalizer::to_string(&prepared.to_value().expect("value"))
            .expect("canonical");
        assert_eq!(prepared.text(), canonical);
    }

    #[test]
    fn a_response_written_with_prepared_data_is_the_response_with_that_data() {
        let data = json!({ "matches": [{ "col": 1, "file": "x", "line": 2, "snippet": "y" }], "truncated": true });
        let prepared = PreparedJson::of(&data).expect("prepared");
        let mut response = ToolResponse {
            kind: Default::default(),
            ok: true,
            tool: "grep".to_owned(),
            // A caller's id that spells the marker is escaped, so it is never taken for it.
            request_id: r#"r1","data":null,"x"#.to_owned(),
            duration_ms: 12,
            data: serde_json::Value::Null,
            errors: Vec::new(),
            run_id: None,
            replayed: false,
            job: None,
        };
        for (run_id, job) in [
            (None, None),
            (
                Some("abc".to_owned()),
                Some(SubmittedJob {
                    engine: "slurm".to_owned(),
                    id: "1".to_owned(),
                    state: "queued".to_owned(),
                    request_id: "r0".to_owned(),
                }),
            ),
        ] {
            response.run_id = run_id;
            response.job = job;
            for pretty in [false, true] {
                let mut written = Vec::new();
                write_with_prepared(&mut written, &response, &prepared, pretty).expect("written");
                let whole = ToolResponse { data: data.clone(), ..response.clone() };
                if pretty {
                    // Pretty output keeps the prepared text compact: the same value.
                    let parsed: serde_json::Value = serde_json::from_slice(&written).expect("JSON");
                    assert_eq!(parsed, serde_json::to_value(&whole).expect("value"));
                } else {
                    let expected = serde_json::to_string(&whole).expect("whole");
                    assert_eq!(String::from_utf8(written).expect("utf-8"), expected);
                }
            }
        }
    }
}
