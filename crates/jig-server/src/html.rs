//! The few pages the server renders itself (sign-in questions, errors on the way back from the
//! provider), and escaping for what they show. Every such page has its own strict policy.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// A small page of this server's own, allowed to post its form back here only.
pub(crate) fn page(status: StatusCode, title: &str, body: &str) -> Response {
    page_with_forms(status, title, body, "'self'")
}

/// A small page whose forms may go to `form_targets` (a CSP source list; a form's redirects
/// are held to it too).
pub(crate) fn page_with_forms(
    status: StatusCode,
    title: &str,
    body: &str,
    form_targets: &str,
) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\"><title>{title} · Jig</title></head>\
         <body><main><h1>{title}</h1>{body}</main></body></html>",
        title = escape(title),
    );
    let mut response = (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CACHE_CONTROL, "no-store")],
        html,
    )
        .into_response();
    let headers = response.headers_mut();
    let policy = format!(
        "default-src 'none'; form-action {form_targets}; base-uri 'none'; frame-ancestors 'none'"
    );
    if let Ok(policy) = HeaderValue::from_str(&policy) {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // Not `no-referrer`: under it a browser posts these pages' forms with `Origin: null`, which
    // the guard refuses. `same-origin` sends nothing to another site all the same.
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// `text` safe inside HTML text and attribute values (and in the markup a desktop
/// notification's body may carry).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
