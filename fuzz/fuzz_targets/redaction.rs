//! Redaction: a well-known secret placed anywhere in any text never survives, and redacting
//! twice changes nothing more.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let once = jig_policy::redact::redact_text(text).into_owned();
    assert_eq!(jig_policy::redact::redact_text(&once), once, "not idempotent on {text:?}");
    // A GitHub token built from the input, planted between two halves of it.
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let body: String = (0..36)
        .map(|i| alphabet[usize::from(data.get(i).copied().unwrap_or(7)) % alphabet.len()] as char)
        .collect();
    let secret = format!("ghp_{body}");
    let split = text.char_indices().nth(text.chars().count() / 2).map_or(0, |(i, _)| i);
    let planted = format!("{} {secret} {}", &text[..split], &text[split..]);
    let redacted = jig_policy::redact::redact_text(&planted);
    assert!(!redacted.contains(&secret), "{secret} survived in {planted:?}");
});
