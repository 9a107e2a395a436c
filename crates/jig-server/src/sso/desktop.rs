//! The desktop app signing in to this server, as RFC 8252 ("OAuth 2.0 for Native Apps") has a
//! native app do it: in the system browser, with a loopback redirect and PKCE.
//!
//! 1. The app listens on `127.0.0.1` on a port of its own and opens the system
//!    browser at `GET /auth/desktop?redirect_uri=http://127.0.0.1:PORT/…&state=…&
//!    code_challenge=…&code_challenge_method=S256`.
//! 2. The browser signs in with the team's provider if it is not already (`/auth/login`, which
//!    comes back here), and the person is asked, on a page of this server, whether to let the
//!    app act as them. Nothing happens without that click: a link someone else made cannot
//!    sign their app in as you without you allowing it.
//! 3. Allowed, the browser goes to the app's loopback address with a one-time code (valid two
//!    minutes, kept only as a hash, bound to the challenge and to that address).
//! 4. The app trades the code and its PKCE verifier at `POST /auth/desktop/token` for a session
//!    of its own — the same kind a signed-in browser has (expiry, sign-out on every instance,
//!    the role worked out from the verified claims on each request). It sends it as the session
//!    cookie; the page in its window never sees it.
//!
//! Only a redirect to a loopback address is accepted, so the code goes to a process on the
//! person's own machine, and only the holder of the verifier can use it.

use std::time::Duration;

use axum::Form;
use axum::extract::{Json, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use jig_audit::{DesktopGrant, WebSession};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::html::escape;
use crate::people::{SESSION_COOKIE, hash, role_of};
use crate::state::AppState;
use jig_model::ErrorCode;

/// How long a code may wait to be traded.
const CODE_TIME: Duration = Duration::from_secs(120);

/// How many codes may be outstanding at once.
const MOST_GRANTS: i64 = 10_000;

/// Where a form on the consent page may send the browser: this server, and the app's loopback
/// address it redirects to (browsers hold a form's redirects to `form-action` too). IPv4 only:
/// a CSP source cannot name an IPv6 address, so the app listens on 127.0.0.1.
const FORM_TARGETS: &str = "'self' http://127.0.0.1:*";

/// What the app asks with (the query of `GET /auth/desktop`, the hidden fields of the form).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Request {
    redirect_uri: String,
    state: String,
    code_challenge: String,
    #[serde(default)]
    code_challenge_method: Option<String>,
}

/// The consent page's answer.
#[derive(Debug, Deserialize)]
pub(crate) struct Decision {
    #[serde(flatten)]
    request: Request,
    /// `allow`, or anything else to refuse.
    decision: String,
}

/// What the app trades.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Trade {
    code: String,
    code_verifier: String,
    redirect_uri: String,
}

/// The app's session.
#[derive(Debug, Serialize)]
pub(crate) struct Traded {
    /// The session: sent as the `jig_session` cookie.
    session: String,
    /// Who it acts as.
    person: String,
    /// When it ends (µs).
    expires_us: i64,
}

/// `GET /auth/desktop`: sign in first if need be, then ask the person.
pub(crate) async fn start(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Response {
    if super::oidc(&state).is_none() {
        return super::no_provider(&state);
    }
    let request = match serde_urlencoded::from_str::<Request>(raw.as_deref().unwrap_or_default())
        .map_err(|e| e.to_string())
        .and_then(|request| checked(&request).map(|()| request))
    {
        Ok(request) => request,
        // Never sent anywhere: an address that is not checked is not followed.
        Err(why) => return super::page(StatusCode::BAD_REQUEST, "Not a sign-in request", &why),
    };
    let Some((person, _)) = browser(&state, &headers).await else {
        let back = format!("/auth/desktop?{}", raw.unwrap_or_default());
        let login = format!(
            "/auth/login?{}",
            serde_urlencoded::to_string([("return_to", back)]).unwrap_or_default()
        );
        return (StatusCode::SEE_OTHER, [(header::LOCATION, login)]).into_response();
    };
    let hours = super::session_hours(&state);
    let field = |name: &str, value: &str| {
        format!("<input type=\"hidden\" name=\"{name}\" value=\"{}\">", escape(value))
    };
    let body = format!(
        "<p>The Jig desktop app asks to act as <strong>{person}</strong> on this server: to see \
         what you see here, and to run and approve what you may.</p>\
         <p>It gets a session of its own, which ends after {hours} hours or when you sign out \
         in the app. Allow it only if you just asked for this in the app on this computer.</p>\
         <form method=\"post\" action=\"/auth/desktop\">{}{}{}{}\
         <button type=\"submit\" name=\"decision\" value=\"allow\" autofocus>Allow the desktop app</button> \
         <button type=\"submit\" name=\"decision\" value=\"deny\">Cancel</button></form>",
        field("redirect_uri", &request.redirect_uri),
        field("state", &request.state),
        field("code_challenge", &request.code_challenge),
        field("code_challenge_method", "S256"),
        person = escape(&person),
    );
    crate::html::page_with_forms(StatusCode::OK, "Sign in the desktop app?", &body, FORM_TARGETS)
}

/// `POST /auth/desktop`: the person allowed the app (a one-time code to its loopback address)
/// or did not (an `access_denied` there).
pub(crate) async fn decide(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<Decision>,
) -> Response {
    if let Err(error) = state.access.guard.check_origin_present(&headers) {
        return error.into_response();
    }
    if let Err(why) = checked(&form.request) {
        return super::page(StatusCode::BAD_REQUEST, "Not a sign-in request", &why);
    }
    let Some((_, session_hash)) = browser(&state, &headers).await else {
        return super::page(
            StatusCode::UNAUTHORIZED,
            "You are not signed in here",
            "start again from the desktop app",
        );
    };
    let request = form.request;
    if form.decision != "allow" {
        return back_to_app(&request, &[("error", "access_denied"), ("state", &request.state)]);
    }
    let code = crate::auth::new_token();
    let grant = DesktopGrant {
        code_hash: hash(&code),
        session_hash,
        challenge: request.code_challenge.clone(),
        redirect_uri: request.redirect_uri.clone(),
        created_us: jig_audit::time::now_us(),
    };
    match state.engine.people().grant_desktop(&grant, since(), MOST_GRANTS).await {
        Ok(true) => back_to_app(&request, &[("code", &code), ("state", &request.state)]),
        Ok(false) => super::page(
            StatusCode::SERVICE_UNAVAILABLE,
            "Too many sign-ins under way",
            "try again in a few minutes",
        ),
        Err(error) => {
            super::page(StatusCode::INTERNAL_SERVER_ERROR, "Cannot sign in", &error.to_string())
        }
    }
}

/// `POST /auth/desktop/token`: the code and the verifier, for the app's session. A code is
/// taken once, whatever follows: a wrong verifier spends it.
pub(crate) async fn token(
    State(state): State<AppState>,
    Json(trade): Json<Trade>,
) -> Result<Json<Traded>, ApiError> {
    let refused = |why: &str| ApiError::new(StatusCode::UNAUTHORIZED, ErrorCode::Policy, why);
    let people = state.engine.people();
    let grant = people.take_desktop_grant(&hash(&trade.code), since()).await?.ok_or_else(|| {
        refused("`code`: not a code this server gave, or used, or older than two minutes")
    })?;
    if challenge_of(&trade.code_verifier) != grant.challenge {
        return Err(refused("`code_verifier` does not match the challenge the code was given for"));
    }
    if trade.redirect_uri != grant.redirect_uri {
        return Err(refused("`redirect_uri` is not the address the code was sent to"));
    }
    let now = jig_audit::time::now_us();
    let browser = people
        .web_session(&grant.session_hash, now)
        .await?
        .ok_or_else(|| refused("the browser session that allowed the app has ended"))?;
    let mapping = state.access.people.as_ref().and_then(crate::people::People::mapping);
    if mapping.as_ref().and_then(|m| role_of(m, &browser.claims)).is_none() {
        return Err(ApiError::forbidden(format!(
            "{} has no role in this project",
            browser.principal
        )));
    }
    let secret = crate::auth::new_token();
    let expires_us = now + i64::from(super::session_hours(&state)) * 3_600_000_000;
    let session = WebSession {
        id_hash: hash(&secret),
        principal: browser.principal.clone(),
        subject: browser.subject,
        issuer: browser.issuer,
        claims: browser.claims,
        created_us: now,
        expires_us,
        revoked_us: None,
    };
    people.create_web_session(&session).await?;
    Ok(Json(Traded { session: secret, person: browser.principal, expires_us }))
}

/// The person of this browser's live session, with the session's hash.
async fn browser(state: &AppState, headers: &HeaderMap) -> Option<(String, String)> {
    let people = state.access.people.as_ref()?;
    let person = people.by_session(headers).await?;
    let cookie = crate::auth::cookie_value(headers, SESSION_COOKIE)?;
    Some((person.name, hash(&cookie)))
}

/// Whether the app's request is one to follow: `http://127.0.0.1` with a port and no
/// query or fragment of its own, a plain `state`, an S256 challenge.
fn checked(request: &Request) -> Result<(), String> {
    let url = url::Url::parse(&request.redirect_uri).map_err(|e| format!("`redirect_uri`: {e}"))?;
    let loopback = url.host() == Some(url::Host::Ipv4(std::net::Ipv4Addr::LOCALHOST));
    if url.scheme() != "http"
        || !loopback
        || url.port().is_none()
        || !url.username().is_empty()
        || url.password().is_some()
        || url.query().is_some()
        || url.fragment().is_some()
        || request.redirect_uri.len() > 200
    {
        return Err(
            "`redirect_uri` must be the app's own loopback address: http://127.0.0.1:PORT/…, without a query"
                .to_owned(),
        );
    }
    let plain =
        |text: &str| text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !(8..=128).contains(&request.state.len()) || !plain(&request.state) {
        return Err("`state`: 8 to 128 letters, digits, `-` or `_`".to_owned());
    }
    if request.code_challenge.len() != 43 || !plain(&request.code_challenge) {
        return Err("`code_challenge`: a PKCE S256 challenge (43 base64url characters)".to_owned());
    }
    if request.code_challenge_method.as_deref() != Some("S256") {
        return Err("`code_challenge_method` must be S256".to_owned());
    }
    Ok(())
}

/// PKCE's S256: the verifier's SHA-256, base64url without padding.
fn challenge_of(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// To the app's loopback address (checked) with `pairs` as its query.
fn back_to_app(request: &Request, pairs: &[(&str, &str)]) -> Response {
    let mut url = request.redirect_uri.clone();
    url.push('?');
    url.push_str(&serde_urlencoded::to_string(pairs).unwrap_or_default());
    match HeaderValue::from_str(&url) {
        Ok(location) => (StatusCode::SEE_OTHER, [(header::LOCATION, location)]).into_response(),
        Err(_) => super::page(
            StatusCode::BAD_REQUEST,
            "Not a sign-in request",
            "the address is not valid",
        ),
    }
}

/// When the oldest code still valid was given.
fn since() -> i64 {
    jig_audit::time::now_us() - i64::try_from(CODE_TIME.as_micros()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::{Request, challenge_of, checked};

    fn request(redirect: &str) -> Request {
        Request {
            redirect_uri: redirect.to_owned(),
            state: "abcdefgh12".to_owned(),
            code_challenge: challenge_of("verifier"),
            code_challenge_method: Some("S256".to_owned()),
        }
    }

    #[test]
    fn only_a_loopback_address_of_the_app_is_followed() {
        assert!(checked(&request("http://127.0.0.1:4711/done")).is_ok());
        for refused in [
            "https://evil.example/cb",
            "http://localhost:4711/",
            "http://127.0.0.1/",
            "http://127.0.0.1.evil.example:80/",
            "http://user@127.0.0.1:4711/",
            "http://127.0.0.1:4711/?next=https://evil.example",
            "http://127.0.0.1:4711/#x",
            "javascript:alert(1)",
            "http://10.0.0.1:4711/",
            "http://127.0.0.2:4711/",
            "http://[::1]:4711/",
        ] {
            assert!(checked(&request(refused)).is_err(), "{refused}");
        }
    }

    #[test]
    fn the_challenge_is_s256() {
        // RFC 7636, appendix B.
        assert_eq!(
            challenge_of("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let mut plain = request("http://127.0.0.1:4711/");
        plain.code_challenge_method = Some("plain".to_owned());
        assert!(checked(&plain).is_err());
    }
}
