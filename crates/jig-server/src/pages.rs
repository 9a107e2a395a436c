//! The pages: `/` (which trades the URL's `?token=` for a cookie) and the UI's files.

use axum::Router;
use axum::extract::Query;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;

use crate::auth::COOKIE;
use crate::state::AppState;

#[derive(Debug, Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/", get(index))
}

/// With `?token=`: set the cookie and redirect to the clean URL (the token leaves the address
/// bar and the history). Without: the page.
async fn index(Query(query): Query<TokenQuery>) -> Response {
    if let Some(token) = query.token {
        let cookie = format!("{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/");
        let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.headers_mut().insert(header::SET_COOKIE, value);
        }
        return response;
    }
    Html(PLACEHOLDER).into_response()
}

const PLACEHOLDER: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Jig</title></head>\
<body><main><h1>Jig</h1><p>The API is under <code>/api</code>; its OpenAPI document is \
<code>docs/openapi.json</code> in the repository.</p></main></body></html>";
