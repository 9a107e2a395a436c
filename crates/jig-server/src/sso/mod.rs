//! Single sign-on: `jig serve` signs people in with the project's OpenID Connect provider
//! (`config.auth.oidc`), authorization code with PKCE.
//!
//! - `GET /auth/login` starts: a random `state`, PKCE verifier and nonce go into the store (any
//!   instance may receive the way back), bound to this browser by a cookie of its own
//!   (`jig_signin`, `SameSite=Lax` so that it comes back on the provider's redirect), and the
//!   browser goes to the provider.
//! - `GET /auth/callback` finishes: the sign-in is taken from the store once and only by the
//!   browser that started it, the code is exchanged (with the verifier and the client's secret),
//!   and the ID token is verified — signature by the provider's published keys, issuer,
//!   audience, expiry, nonce — before anything of it is believed. The person is the configured
//!   claim (a verified `email` by default), never anything the browser sent. A session cookie
//!   (`jig_session`: random, `HttpOnly`, `SameSite=Strict`, `Secure` on https, with an expiry)
//!   is made; the store keeps its hash and the verified claims.
//! - `POST /auth/logout` ends the session in the store (on every instance at once) and clears
//!   the cookie; only a form of this server's own pages may post it.

mod desktop;

use std::time::Duration;

use axum::Form;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use jig_audit::{SignIn, WebSession};
use jig_model::manifest::{NameClaim, OidcConfig};
use openidconnect::core::{CoreAuthenticationFlow, CoreClient, CoreJwsSigningAlgorithm};
use openidconnect::{
    AuthorizationCode, ClientId, ClientSecret, CsrfToken, Nonce, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, Scope, TokenResponse,
};
use serde::Deserialize;
use serde_json::Value;

use crate::people::{SESSION_COOKIE, hash, role_of};
use crate::provider::{describe, http};
use crate::state::AppState;

/// The sign-in routes (`/auth/…`).
pub(crate) fn router() -> axum::Router<AppState> {
    use axum::routing::{get, post};
    axum::Router::new()
        .route("/auth/status", get(status))
        .route("/auth/login", get(login))
        .route("/auth/callback", get(callback))
        .route("/auth/logout", post(logout))
        .route("/auth/desktop", get(desktop::start).post(desktop::decide))
        .route("/auth/desktop/token", post(desktop::token))
}

/// The cookie binding a sign-in under way to the browser that started it.
const SIGN_IN_COOKIE: &str = "jig_signin";

/// How long a sign-in may take, from `/auth/login` to the callback.
const SIGN_IN_TIME: Duration = Duration::from_secs(600);

/// How many sign-ins may be under way at once (anyone may start one).
const MOST_SIGN_INS: i64 = 10_000;

/// The signatures an ID token may carry.
const ASYMMETRIC: [CoreJwsSigningAlgorithm; 10] = [
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha384,
    CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha512,
    CoreJwsSigningAlgorithm::RsaSsaPssSha256,
    CoreJwsSigningAlgorithm::RsaSsaPssSha384,
    CoreJwsSigningAlgorithm::RsaSsaPssSha512,
    CoreJwsSigningAlgorithm::EcdsaP256Sha256,
    CoreJwsSigningAlgorithm::EcdsaP384Sha384,
    CoreJwsSigningAlgorithm::EcdsaP521Sha512,
    CoreJwsSigningAlgorithm::EdDsa,
];

/// The default session, in hours.
const SESSION_HOURS: u32 = 8;

/// The query of `/auth/login`.
#[derive(Debug, Deserialize)]
pub(crate) struct LoginQuery {
    /// Where to come back to (a path of this server).
    #[serde(default)]
    return_to: Option<String>,
}

/// The query of `/auth/callback`.
#[derive(Debug, Deserialize)]
pub(crate) struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
    error_description: Option<String>,
}

/// `GET /auth/status`: what a browser that is not signed in may do here (the UI's sign-in page
/// asks before it offers the provider). Public: it says only whether a provider is set up.
pub(crate) async fn status(State(state): State<AppState>) -> Response {
    let provider = oidc(&state).map(|config| config.issuer);
    axum::Json(serde_json::json!({ "sign_in": provider.is_some(), "provider": provider }))
        .into_response()
}

/// `GET /auth/login`: to the provider.
pub(crate) async fn login(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<LoginQuery>,
) -> Response {
    let Some(config) = oidc(&state) else { return no_provider(&state) };
    let client = match client(&state, &config, &headers).await {
        Ok(client) => client,
        Err(why) => {
            return page(StatusCode::BAD_GATEWAY, "The sign-in provider cannot be reached", &why);
        }
    };
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let mut request = client
        .authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        )
        .add_scope(Scope::new("openid".to_owned()))
        .set_pkce_challenge(challenge);
    let scopes = config
        .scopes
        .clone()
        .unwrap_or_else(|| ["email", "profile", "groups"].map(str::to_owned).to_vec());
    for scope in scopes {
        request = request.add_scope(Scope::new(scope));
    }
    let (url, csrf, nonce) = request.url();
    let browser = crate::auth::new_token();
    let sign_in = SignIn {
        state: csrf.secret().clone(),
        browser: hash(&browser),
        verifier: verifier.secret().clone(),
        nonce: nonce.secret().clone(),
        return_to: safe_return(query.return_to.as_deref()),
        created_us: jig_audit::time::now_us(),
    };
    match state.engine.people().begin_sign_in(&sign_in, since(), MOST_SIGN_INS).await {
        Ok(true) => {}
        Ok(false) => {
            return page(
                StatusCode::SERVICE_UNAVAILABLE,
                "Too many sign-ins under way",
                "try again in a few minutes",
            );
        }
        Err(error) => {
            return page(StatusCode::INTERNAL_SERVER_ERROR, "Cannot sign in", &error.to_string());
        }
    }
    let secure = origin(&state, &headers).starts_with("https://");
    let cookie = format!(
        "{SIGN_IN_COOKIE}={browser}; HttpOnly; SameSite=Lax; Path=/auth; Max-Age={}{}",
        SIGN_IN_TIME.as_secs(),
        if secure { "; Secure" } else { "" }
    );
    let mut response =
        (StatusCode::SEE_OTHER, [(header::LOCATION, url.to_string())]).into_response();
    set_cookie(&mut response, &cookie);
    response
}

/// `GET /auth/callback`: back from the provider.
pub(crate) async fn callback(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<CallbackQuery>,
) -> Response {
    let Some(config) = oidc(&state) else { return no_provider(&state) };
    if let Some(error) = &query.error {
        let detail = query.error_description.as_deref().unwrap_or(error);
        return page(StatusCode::UNAUTHORIZED, "The provider did not sign you in", detail);
    }
    let (Some(code), Some(returned)) = (&query.code, &query.state) else {
        return page(StatusCode::BAD_REQUEST, "Not a sign-in", "the provider's answer has no code");
    };
    // Taken once: a replayed callback, or one older than the sign-in's time, finds nothing.
    let sign_in = match state.engine.people().take_sign_in(returned, since()).await {
        Ok(Some(sign_in)) => sign_in,
        Ok(None) => {
            return page(
                StatusCode::UNAUTHORIZED,
                "This sign-in has expired",
                "start again from the workbench",
            );
        }
        Err(error) => {
            return page(StatusCode::INTERNAL_SERVER_ERROR, "Cannot sign in", &error.to_string());
        }
    };
    // Only the browser that started it may finish it: else a link could sign someone in as
    // whoever made it.
    let browser = crate::auth::cookie_value(&headers, SIGN_IN_COOKIE).map(|b| hash(&b));
    if browser.as_deref() != Some(sign_in.browser.as_str()) {
        return page(
            StatusCode::UNAUTHORIZED,
            "This sign-in was started elsewhere",
            "start again from the workbench",
        );
    }
    let verified = match verify(&state, &config, &headers, code, &sign_in).await {
        Ok(verified) => verified,
        Err(why) => return page(StatusCode::UNAUTHORIZED, "The sign-in was refused", &why),
    };
    if role_of(&config.roles, &verified.claims).is_none() {
        // The provider no longer gives them a role here: their tokens and sessions, made while
        // it did, stop at once (a token's role is capped by the latest sign-in's claims, and
        // this sign-in made none).
        let why = "the provider's claims give no role here any more";
        let revoked = state.engine.refuse_person(&verified.principal, why).await;
        if let Err(error) = &revoked {
            tracing::error!(%error, person = %verified.principal, "revoking a refused person's tokens");
        }
        return page(
            StatusCode::FORBIDDEN,
            "No role for you here",
            &format!(
                "{} is signed in with the provider, but none of their groups has a role in this project{}",
                verified.principal,
                match revoked {
                    Ok(0) => String::new(),
                    Ok(n) => format!("; the {n} personal token(s) they had here no longer work"),
                    Err(_) => String::new(),
                }
            ),
        );
    }
    let cookie_value = crate::auth::new_token();
    let hours = session_hours(&state);
    let now = jig_audit::time::now_us();
    let session = WebSession {
        id_hash: hash(&cookie_value),
        principal: verified.principal,
        subject: verified.subject,
        issuer: config.issuer.clone(),
        claims: verified.claims,
        created_us: now,
        expires_us: now + i64::from(hours) * 3_600_000_000,
        revoked_us: None,
    };
    if let Err(error) = state.engine.people().create_web_session(&session).await {
        return page(StatusCode::INTERNAL_SERVER_ERROR, "Cannot sign in", &error.to_string());
    }
    let secure = origin(&state, &headers).starts_with("https://");
    let mut response =
        (StatusCode::SEE_OTHER, [(header::LOCATION, sign_in.return_to.clone())]).into_response();
    set_cookie(
        &mut response,
        &format!(
            "{SESSION_COOKIE}={cookie_value}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}{}",
            u64::from(hours) * 3600,
            if secure { "; Secure" } else { "" }
        ),
    );
    set_cookie(
        &mut response,
        &format!("{SIGN_IN_COOKIE}=; HttpOnly; SameSite=Lax; Path=/auth; Max-Age=0"),
    );
    response
}

/// The form of `POST /auth/logout` (none; the session is the cookie's).
#[derive(Debug, Deserialize)]
pub(crate) struct LogoutForm {}

/// `POST /auth/logout`: the session ends everywhere, the cookie is cleared.
pub(crate) async fn logout(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(_): Form<LogoutForm>,
) -> Response {
    if let Err(error) = state.access.guard.check_origin_present(&headers) {
        return error.into_response();
    }
    if let Some(cookie) = crate::auth::cookie_value(&headers, SESSION_COOKIE) {
        let _ = state
            .engine
            .people()
            .revoke_web_session(&hash(&cookie), jig_audit::time::now_us())
            .await;
    }
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
    set_cookie(
        &mut response,
        &format!("{SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"),
    );
    response
}

/// What a verified sign-in says.
struct Verified {
    principal: String,
    subject: String,
    claims: Value,
}

/// Exchange `code`, and verify the ID token it brings: signature, issuer, audience, expiry,
/// nonce; the person is the configured claim.
async fn verify(
    state: &AppState,
    config: &OidcConfig,
    headers: &HeaderMap,
    code: &str,
    sign_in: &SignIn,
) -> Result<Verified, String> {
    let client = client(state, config, headers).await?;
    let http = http::client()?;
    let tokens = client
        .exchange_code(AuthorizationCode::new(code.to_owned()))
        .map_err(|e| e.to_string())?
        .set_pkce_verifier(PkceCodeVerifier::new(sign_in.verifier.clone()))
        .request_async(&http::send(&http))
        .await
        .map_err(|e| format!("the provider refused the code: {}", describe(&e)))?;
    let id_token = tokens.id_token().ok_or("the provider sent no ID token")?;
    // Signed with the provider's published keys only: never `none`, never a MAC keyed with
    // the client secret (which is not the provider's alone).
    let verifier = client.id_token_verifier().set_allowed_algs(ASYMMETRIC);
    let claims = id_token
        .claims(&verifier, &Nonce::new(sign_in.nonce.clone()))
        .map_err(|e| format!("the ID token is not valid here: {e}"))?;
    let subject = claims.subject().to_string();
    // Verified above; read every claim (groups) from the same token.
    let all = payload(&id_token.to_string()).ok_or("the ID token cannot be read")?;
    let principal = match config.name_claim.unwrap_or_default() {
        NameClaim::Email => {
            let email = all["email"].as_str().ok_or("the ID token carries no email")?;
            // Only `email_verified: true` makes an email a name: a provider that says nothing
            // (Entra ID carries no such claim, and lets users edit `email`) would let mallory
            // sign in as adam by typing his address (the nOAuth pattern). A team whose
            // provider does not verify emails names another claim (`sub`).
            if all["email_verified"] != Value::Bool(true) {
                return Err(format!(
                    "{email} is not verified at the provider (its ID token has no `email_verified: true`); \
                     sign-in by email needs a verified one, or set `name_claim: sub`"
                ));
            }
            email.to_owned()
        }
        NameClaim::PreferredUsername => all["preferred_username"]
            .as_str()
            .ok_or("the ID token carries no preferred_username")?
            .to_owned(),
        NameClaim::Sub => subject.clone(),
    };
    Ok(Verified { principal, subject, claims: all })
}

/// The provider's client, with this server's callback as its redirect.
async fn client(
    state: &AppState,
    config: &OidcConfig,
    headers: &HeaderMap,
) -> Result<
    CoreClient<
        openidconnect::EndpointSet,
        openidconnect::EndpointNotSet,
        openidconnect::EndpointNotSet,
        openidconnect::EndpointNotSet,
        openidconnect::EndpointMaybeSet,
        openidconnect::EndpointMaybeSet,
    >,
    String,
> {
    let metadata = state.sso.metadata(&config.issuer).await?;
    let secret = match &config.client_secret_env {
        Some(name) => Some(ClientSecret::new(
            std::env::var(name).map_err(|_| format!("the client secret `{name}` is not set"))?,
        )),
        None => None,
    };
    let redirect = format!("{}/auth/callback", origin(state, headers));
    Ok(CoreClient::from_provider_metadata(
        metadata,
        ClientId::new(config.client_id.clone()),
        secret,
    )
    .set_redirect_uri(RedirectUrl::new(redirect).map_err(|e| e.to_string())?))
}

/// This server's origin as the browser reached it (its `Host` was checked by the guard): a
/// public URL's when the `Host` is its name.
fn origin(state: &AppState, headers: &HeaderMap) -> String {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    state
        .access
        .guard
        .origins
        .iter()
        .find(|origin| origin.split_once("://").is_some_and(|(_, h)| h.eq_ignore_ascii_case(host)))
        .cloned()
        .unwrap_or_else(|| format!("http://{host}"))
}

/// How long a session lasts here, in hours.
fn session_hours(state: &AppState) -> u32 {
    state.engine.snapshot().auth().and_then(|a| a.session_hours).unwrap_or(SESSION_HOURS)
}

/// When the oldest sign-in still under way may have started.
fn since() -> i64 {
    jig_audit::time::now_us() - i64::try_from(SIGN_IN_TIME.as_micros()).unwrap_or(0)
}

/// The project's OpenID configuration now.
/// The sign-in provider, once a person consented to it as the manifest names it (`jig
/// trust`): a cloned manifest's provider decides who signs in as whom, with which role, and is
/// handed the client secret's variable — none of which it does before that consent.
fn oidc(state: &AppState) -> Option<OidcConfig> {
    let config = state.engine.snapshot().auth()?.oidc.clone()?;
    state.engine.sign_in_trusted().then_some(config)
}

/// Why there is no provider to sign in with: none is set up, or it waits for consent.
fn no_provider(state: &AppState) -> Response {
    let named = state.engine.snapshot().auth().is_some_and(|auth| auth.oidc.is_some());
    if !named {
        return not_configured();
    }
    page(
        StatusCode::SERVICE_UNAVAILABLE,
        "Sign-in waits for consent",
        &format!(
            "this project names a sign-in provider that nobody on this server has consented to yet; \
             whoever runs it reads `jig trust --show` and runs `jig trust` in {}",
            state.engine.root().display()
        ),
    )
}

/// A path of this server to come back to; anything else is `/`.
fn safe_return(path: Option<&str>) -> String {
    path.and_then(same_origin_path).unwrap_or_else(|| "/".to_owned())
}

/// `path` as a path on this server, the way a browser will read it, or `None`. Browsers drop
/// tabs and new lines from a URL and read `\` as `/`, so `/%09/evil.example` (decoded: a
/// tab) is `//evil.example` to them, another host: judged by the URL standard's own parser
/// against a base, and by what it serializes back to.
fn same_origin_path(path: &str) -> Option<String> {
    if !path.starts_with('/')
        || path.chars().any(|c| c.is_control() || c == '\\' || c.is_whitespace())
    {
        return None;
    }
    let base = url::Url::parse("http://jig.invalid/").ok()?;
    let joined = base.join(path).ok()?;
    if joined.origin() != base.origin() {
        return None;
    }
    let rest = &joined[url::Position::BeforePath..];
    (rest.starts_with('/') && !rest.starts_with("//")).then(|| rest.to_owned())
}

/// A JWT's payload, decoded (its signature checked elsewhere).
fn payload(jwt: &str) -> Option<Value> {
    use base64::Engine as _;
    let part = jwt.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(part).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn set_cookie(response: &mut Response, cookie: &str) {
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
}

fn not_configured() -> Response {
    page(
        StatusCode::NOT_FOUND,
        "Single sign-on is not set up",
        "this project has no `config.auth.oidc`",
    )
}

fn page(status: StatusCode, title: &str, detail: &str) -> Response {
    crate::html::page(
        status,
        title,
        &format!(
            "<p>{}</p><p><a href=\"/\">Back to the workbench</a></p>",
            crate::html::escape(detail)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_return_path_never_leads_to_another_host_however_a_browser_reads_it() {
        for hostile in [
            "//evil.example/x",
            "/\t/evil.example",
            "/\n/evil.example",
            "/\\evil.example",
            "/.//evil.example",
            "/ /evil.example",
            "https://evil.example/",
            "evil.example",
            "/%2e%2e//evil.example",
        ] {
            assert_eq!(safe_return(Some(hostile)), "/", "{hostile:?}");
        }
        assert_eq!(safe_return(Some("/audit?state=denied#run")), "/audit?state=denied#run");
        assert_eq!(safe_return(None), "/");
    }
}
