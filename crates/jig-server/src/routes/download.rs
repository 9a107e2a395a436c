//! How a file leaves the API: bytes the server never renders, under a name that cannot break
//! out of its header. Shared by run artifacts and runbook attachments.

use axum::http::header;
use axum::response::{IntoResponse, Response};

/// `bytes` as a download named `name`: `application/octet-stream`, no sniffing, and a
/// sandboxing CSP, so even a browser told to open it inline runs nothing from it on the
/// workbench's origin (an HTML report a tool produced must not reach the API as the viewer).
pub fn file(name: &str, bytes: Vec<u8>, immutable: bool) -> Response {
    let safe: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' })
        .collect();
    let safe = if safe.trim_matches(['.', '_']).is_empty() { "download".to_owned() } else { safe };
    let cache = if immutable { "private, max-age=31536000, immutable" } else { "no-store" };
    (
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{safe}\"")),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
            (header::CONTENT_SECURITY_POLICY, "sandbox; default-src 'none'".to_owned()),
            (header::CACHE_CONTROL, cache.to_owned()),
        ],
        bytes,
    )
        .into_response()
}
