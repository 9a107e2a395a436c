//! Signing a browser in with a token: `/?token=` (the URL `jig serve` prints) trades the token
//! for a cookie and drops it from the address bar.
//!
//! A page on another origin can send a person's browser to any URL of this server, so the
//! exchange trusts nothing of the URL but a token that is valid here:
//! - an unknown token sets nothing (a planted, made-up value never becomes a cookie);
//! - a browser already signed in as someone else is never switched to another person by a
//!   link: it is asked, on a page of this server, and only a form posted from this server's own
//!   origin (checked: `Origin`) signs it in as the other person — else someone could act, and
//!   be recorded, as whoever's token a page chose;
//! - a browser signed in as nobody that another site sent here (`Sec-Fetch-Site: cross-site`)
//!   is asked the same way (login CSRF), while the URL `jig serve` prints, opened from a
//!   terminal or typed, signs in at once;
//! - the cookie's value is encoded and its attributes are set here (`HttpOnly`,
//!   `SameSite=Strict`, `Path=/`), so no part of a token can add attributes of its own.

use axum::Form;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::auth::{self, COOKIE, Person};
use crate::html::{escape, page};
use crate::state::AppState;

/// `/` and `POST /signin`.
pub(crate) fn router() -> axum::Router<AppState> {
    use axum::routing::{get, post};
    axum::Router::new().route("/", get(index)).route("/signin", post(confirmed))
}

/// The query of `/`.
#[derive(Debug, Deserialize)]
pub(crate) struct TokenQuery {
    token: Option<String>,
}

/// The form of `POST /signin`.
#[derive(Debug, Deserialize)]
pub(crate) struct SignInForm {
    token: String,
}

/// `/?token=`: a valid token becomes the cookie, unless the browser is signed in as someone
/// else (then it is asked). `None` without a token: the caller serves the UI.
pub(crate) fn exchange(
    state: &AppState,
    headers: &HeaderMap,
    query: &TokenQuery,
) -> Option<Response> {
    let token = query.token.as_deref()?;
    let Some(person) = state.access.users.find(token) else {
        return Some(page(
            StatusCode::UNAUTHORIZED,
            "This link's token is not valid here",
            "<p>Nothing changed. Ask for a new link, or open the one <code>jig serve</code> printed.</p>",
        ));
    };
    match signed_in(state, headers) {
        Some(current) if current.name != person.name => Some(confirm(&current, person, token)),
        Some(_) => Some(sign_in(token)),
        // A browser signed in as nobody, sent here by another site: login CSRF, the person
        // then acting (and recorded) as whoever's link the page chose. The URL `jig serve`
        // prints, opened from a terminal or typed, comes with `Sec-Fetch-Site: none`.
        None if from_another_site(headers) => Some(confirm_first(person, token)),
        None => Some(sign_in(token)),
    }
}

/// Whether the browser says the request was started by another site (`Sec-Fetch-Site:
/// cross-site` or `same-site`: another port or subdomain is another site's page too).
fn from_another_site(headers: &HeaderMap) -> bool {
    headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()).is_some_and(|site| {
        site.eq_ignore_ascii_case("cross-site") || site.eq_ignore_ascii_case("same-site")
    })
}

/// `POST /signin`: the confirmation form, accepted only from this server's own page.
pub(crate) async fn confirmed(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<SignInForm>,
) -> Response {
    if let Err(error) = state.access.guard.check_origin_present(&headers) {
        return error.into_response();
    }
    if state.access.users.find(&form.token).is_none() {
        return page(
            StatusCode::UNAUTHORIZED,
            "This token is not valid here",
            "<p>Nothing changed.</p>",
        );
    }
    sign_in(&form.token)
}

/// The person the browser's cookie names now.
fn signed_in(state: &AppState, headers: &HeaderMap) -> Option<Person> {
    auth::cookie_token(headers).and_then(|token| state.access.users.find(&token).cloned())
}

/// Set the cookie and go to the clean URL.
fn sign_in(token: &str) -> Response {
    let cookie =
        format!("{COOKIE}={}; HttpOnly; SameSite=Strict; Path=/", auth::encode_cookie(token));
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// Ask before a link signs the browser in as someone else.
fn confirm(current: &Person, other: &Person, token: &str) -> Response {
    let body = format!(
        "<p>This browser is signed in as <strong>{current}</strong>. The link you followed would \
         sign it in as <strong>{other}</strong> instead: what you do next would be recorded as \
         {other}'s.</p>\
         <form method=\"post\" action=\"/signin\"><input type=\"hidden\" name=\"token\" value=\"{token}\">\
         <button type=\"submit\">Sign in as {other}</button></form>\
         <p><a href=\"/\">Stay signed in as {current}</a></p>",
        current = escape(&current.name),
        other = escape(&other.name),
        token = escape(token),
    );
    page(StatusCode::OK, "Switch person?", &body)
}

/// Ask before another site's link signs a browser in at all.
fn confirm_first(person: &Person, token: &str) -> Response {
    let body = format!(
        "<p>A page on another site sent you here with a link that signs this browser in as \
         <strong>{name}</strong>: what you do next would be recorded as {name}'s.</p>\
         <form method=\"post\" action=\"/signin\"><input type=\"hidden\" name=\"token\" value=\"{token}\">\
         <button type=\"submit\">Sign in as {name}</button></form>\
         <p>If you did not expect this, close the page: nothing changed.</p>",
        name = escape(&person.name),
        token = escape(token),
    );
    page(StatusCode::OK, "Sign in?", &body)
}

/// The index route: the exchange when there is a token.
pub(crate) async fn index(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<TokenQuery>,
) -> Response {
    exchange(&state, &headers, &query).unwrap_or_else(crate::pages::index_html)
}
