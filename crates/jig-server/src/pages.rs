//! The built UI (`ui/dist`, embedded in the binary). `/` is [`crate::signin`]'s (a `?token=`
//! becomes a cookie first), and it serves [`index_html`] from here.
//!
//! Every page carries a strict Content-Security-Policy: scripts and styles only from this
//! server, no inline script, no framing, connections only back to it. Hashed assets are cached
//! for good; `index.html` never is, so a new build is picked up on reload.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rust_embed::RustEmbed;

use crate::state::AppState;

/// `ui/dist` as built by `npm run build` (empty when the UI was not built).
#[derive(RustEmbed)]
#[folder = "../../ui/dist"]
#[allow_missing = true]
struct Ui;

/// The policy every page is served with.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
    img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; \
    base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The built UI's files; `/` itself is the sign-in exchange's ([`crate::signin`]), which serves
/// [`index_html`] when there is nothing to exchange.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/{*path}", get(asset))
}

/// The UI's page.
pub(crate) fn index_html() -> Response {
    file("index.html").unwrap_or_else(not_built)
}

async fn asset(Path(path): Path<String>) -> Response {
    // `/api/…` that no route took is an API 404, not the UI.
    if path.starts_with("api/") {
        return StatusCode::NOT_FOUND.into_response();
    }
    file(&path).unwrap_or_else(|| StatusCode::NOT_FOUND.into_response())
}

fn file(path: &str) -> Option<Response> {
    let found = Ui::get(path)?;
    let mime = found.metadata.mimetype().to_owned();
    let cache = if path.starts_with("assets/") {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let mut response = (
        [(header::CONTENT_TYPE, mime), (header::CACHE_CONTROL, cache.to_owned())],
        found.data.into_owned(),
    )
        .into_response();
    secure(&mut response);
    Some(response)
}

/// The headers every page gets.
fn secure(response: &mut Response) {
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}

/// A binary built without the UI says how to get it.
fn not_built() -> Response {
    let mut response = (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Jig</title></head>\
         <body><main><h1>Jig</h1><p>This build of Jig has no UI: build it with \
         <code>npm --prefix ui ci &amp;&amp; npm --prefix ui run build</code> and rebuild \
         <code>jig</code>. The API is under <code>/api</code>.</p></main></body></html>",
    )
        .into_response();
    secure(&mut response);
    response
}
