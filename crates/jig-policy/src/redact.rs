//! Redaction: secrets never reach the audit store, the event bus or a screen.
//!
//! A JSON value is redacted structurally — the values of keys named like a secret (`token`,
//! `password`, `authorization`, `cookie`, …) and of every `env` map — and textually: strings are
//! scanned for well-known secret formats (gitleaks-style patterns: cloud keys, forge tokens,
//! private keys, JWTs, bearer credentials, `password=` assignments).

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

/// What replaces a secret.
pub const MARK: &str = "[REDACTED]";

/// Key fragments that mark a value as secret (compared case-insensitively).
const SECRET_KEYS: [&str; 12] = [
    "token",
    "secret",
    "password",
    "passwd",
    "authorization",
    "cookie",
    "api_key",
    "apikey",
    "private_key",
    "credential",
    "session_key",
    "access_key",
];

/// Whether a key names a secret.
pub fn is_secret_key(key: &str) -> bool {
    let lower = key.to_ascii_lowercase().replace('-', "_");
    SECRET_KEYS.iter().any(|fragment| lower.contains(fragment))
}

/// A copy of a request's arguments with only *declared* secrets masked: the values of keys
/// named like a secret (`token`, `password`, an env variable `API_TOKEN`, …). Nothing is
/// masked by its content, so a reviewer or an auditor sees exactly what will run — a command
/// line is never altered by a pattern that happens to look like a credential.
pub fn redact_declared(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(redact_declared).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, child)| {
                    let redacted = if is_secret_key(key) {
                        Value::String(MARK.to_owned())
                    } else {
                        redact_declared(child)
                    };
                    (key.clone(), redacted)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Redact `value` where it is, as [`redact_value`] does; what holds no secret is neither copied
/// nor rebuilt (results can be megabytes).
pub fn redact_in_place(value: &mut Value) {
    match value {
        Value::String(text) => {
            if let Cow::Owned(redacted) = redact_text(text) {
                *text = redacted;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_in_place),
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if is_secret_key(key) {
                    *child = Value::String(MARK.to_owned());
                } else if key == "env" {
                    *child = redact_env(child);
                } else {
                    redact_in_place(child);
                }
            }
        }
        _ => {}
    }
}

/// A redacted copy of `value`.
pub fn redact_value(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(redact_text(text).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(redact_value).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, child)| {
                    let redacted = if is_secret_key(key) {
                        Value::String(MARK.to_owned())
                    } else if key == "env" {
                        redact_env(child)
                    } else {
                        redact_value(child)
                    };
                    (key.clone(), redacted)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Every value of an environment map is secret until proven otherwise.
fn redact_env(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(map.keys().map(|k| (k.clone(), Value::String(MARK.to_owned()))).collect())
        }
        other => redact_value(other),
    }
}

struct Pattern {
    regex: Regex,
    /// The capture group holding the secret (0: the whole match).
    group: usize,
}

/// All patterns in one automaton: most text holds no secret, and one pass over it answers
/// that, instead of one pass per pattern (a 4 MB grep result has 30,000 strings).
fn any_pattern() -> &'static regex::RegexSet {
    static SET: OnceLock<regex::RegexSet> = OnceLock::new();
    SET.get_or_init(|| {
        regex::RegexSet::new(SOURCES.iter().map(|(source, _)| *source))
            .unwrap_or_else(|e| panic!("redaction patterns: {e}"))
    })
}

/// The secret formats, and the capture group that holds the secret itself.
const SOURCES: [(&str, usize); 12] = [
    (r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----", 0),
    (r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}\b", 0),
    (r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b", 0),
    (r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b", 0),
    (r"\bglpat-[A-Za-z0-9_-]{20,}\b", 0),
    (r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b", 0),
    (r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b", 0),
    (r"\bAIza[0-9A-Za-z_-]{35}\b", 0),
    (r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", 0),
    (r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{8,}=*)", 1),
    (r#"(?i)(?:api[_-]?key|secret|token|password|passwd|pwd)\s*[:=]\s*["']?([^\s"',;]{6,})"#, 1),
    (r"://[^/\s:@]+:([^/\s@]+)@", 1),
];

fn patterns() -> &'static [Pattern] {
    static PATTERNS: OnceLock<Vec<Pattern>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        SOURCES
            .iter()
            .map(|(source, group)| Pattern {
                regex: Regex::new(source)
                    .unwrap_or_else(|e| panic!("redaction pattern {source}: {e}")),
                group: *group,
            })
            .collect()
    })
}

/// Whether `text` (one line, typically) holds a recognised secret — rule `secrets.scan`.
pub fn has_secret(text: &str) -> bool {
    static KEY_HEADER: OnceLock<Regex> = OnceLock::new();
    let header = KEY_HEADER.get_or_init(|| {
        Regex::new(r"-----BEGIN [A-Z ]*PRIVATE KEY-----").unwrap_or_else(|e| panic!("{e}"))
    });
    header.is_match(text) || patterns().iter().any(|p| p.regex.is_match(text))
}

/// `text` with every recognised secret replaced by [`MARK`].
pub fn redact_text(text: &str) -> Cow<'_, str> {
    if !any_pattern().is_match(text) {
        return Cow::Borrowed(text);
    }
    let mut current = Cow::Borrowed(text);
    for pattern in patterns() {
        if !pattern.regex.is_match(&current) {
            continue;
        }
        let mut out = String::with_capacity(current.len());
        let mut last = 0;
        for captures in pattern.regex.captures_iter(&current) {
            let Some(secret) = captures.get(pattern.group) else { continue };
            out.push_str(&current[last..secret.start()]);
            out.push_str(MARK);
            last = secret.end();
        }
        out.push_str(&current[last..]);
        current = Cow::Owned(out);
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secret_keys_and_env_values_are_redacted() {
        let request = json!({
            "url": "https://x.example",
            "headers": {"Authorization": "Basic dXNlcjpwYXNz", "Accept": "text/plain"},
            "env": {"PATH": "/usr/bin", "HOME": "/root"},
            "nested": [{"apiKey": "k-123", "name": "ok"}],
            "GITHUB_TOKEN": "x"
        });
        assert_eq!(
            redact_value(&request),
            json!({
                "url": "https://x.example",
                "headers": {"Authorization": MARK, "Accept": "text/plain"},
                "env": {"PATH": MARK, "HOME": MARK},
                "nested": [{"apiKey": MARK, "name": "ok"}],
                "GITHUB_TOKEN": MARK
            })
        );
    }

    #[test]
    fn secrets_inside_text_are_redacted() {
        let cases = [
            ("key AKIAIOSFODNN7EXAMPLE in log", "key [REDACTED] in log"),
            ("token ghp_0123456789abcdefghijABCDEFGHIJ012345 used", "token [REDACTED] used"),
            ("Authorization: Bearer abc.def.ghi-123", "Authorization: Bearer [REDACTED]"),
            ("DB_PASSWORD=hunter22 ./run", "DB_PASSWORD=[REDACTED] ./run"),
            ("https://user:s3cr3t@db.example/x", "https://user:[REDACTED]@db.example/x"),
            ("-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----", MARK),
            ("nothing to see", "nothing to see"),
        ];
        for (input, expected) in cases {
            assert_eq!(redact_text(input), expected, "{input}");
        }
    }
}
