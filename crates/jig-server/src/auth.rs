//! Who is acting, and whether the request may come from where it comes from.
//!
//! Every API and WebSocket request carries a token (the `jig_token` cookie the browser got in
//! exchange for the URL's `?token=`, or `Authorization: Bearer` for scripts); the token names a
//! [`Person`] with a [`Role`]. A request with a foreign `Host` (DNS rebinding) or `Origin`
//! (another site's page) is refused before the token is looked at.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::ApiError;

pub use crate::identity::{
    COOKIE, Person, Role, Users, UsersError, cookie_token, cookie_value, encode_cookie, new_token,
};
/// Where requests may come from.
#[derive(Debug, Clone, Default)]
pub struct Guard {
    /// `Host` values accepted (`127.0.0.1:PORT`, `localhost:PORT`); `None` accepts any (the
    /// desktop app, whose requests never cross a network).
    pub hosts: Option<Vec<String>>,
    /// `Origin` values accepted besides `http://HOST` of each host (a public URL's own
    /// origin, `https://jig.acme.example`, behind a proxy that ends TLS).
    pub origins: Vec<String>,
}

/// The name people reach a server by, behind a proxy: its `Host`, and its origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicName {
    /// `jig.acme.example` (with `:port` when not the scheme's default).
    pub host: String,
    /// `https://jig.acme.example`.
    pub origin: String,
}

impl PublicName {
    /// The name of `url` (`http` or `https`, nothing after the authority but `/`).
    pub fn parse(url: &str) -> Result<Self, String> {
        let (scheme, rest) = url
            .split_once("://")
            .filter(|(scheme, _)| matches!(*scheme, "http" | "https"))
            .ok_or_else(|| format!("`{url}` is not an http:// or https:// URL"))?;
        let host = rest.strip_suffix('/').unwrap_or(rest);
        if host.is_empty() || host.contains(['/', '?', '#', '@', ' ']) {
            return Err(format!(
                "`{url}` must be a scheme and a host, like https://jig.acme.example"
            ));
        }
        let host = host.to_ascii_lowercase();
        Ok(Self { origin: format!("{scheme}://{host}"), host })
    }
}

impl Guard {
    /// Accept the loopback names of `port`, `extra` hosts (a remote address served with
    /// `--allow-remote`), and the public names people use behind a proxy.
    pub fn loopback(port: u16, extra: &[String], public: &[PublicName]) -> Self {
        let mut hosts =
            vec![format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")];
        hosts.extend(extra.iter().cloned());
        hosts.extend(public.iter().map(|name| name.host.clone()));
        Self {
            hosts: Some(hosts),
            origins: public.iter().map(|name| name.origin.clone()).collect(),
        }
    }

    /// Refuse a `Host` that is not this server's (a DNS-rebinding page).
    fn check_host(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        let Some(hosts) = &self.hosts else { return Ok(()) };
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
        if hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            Ok(())
        } else {
            Err(ApiError::forbidden(format!(
                "Host `{host}` is not this server's (a DNS-rebinding page?)"
            )))
        }
    }

    /// For a form posted from one of this server's pages: the `Host` is this server's and an
    /// `Origin` is present and is this server (browsers send it with every form POST).
    pub fn check_origin_present(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        if self.hosts.is_some() && headers.get(header::ORIGIN).is_none() {
            return Err(ApiError::forbidden("a form posted without `Origin` is refused"));
        }
        self.check(headers)
    }

    /// Refuse a foreign `Host`, or an `Origin` that is not one of this server's pages.
    fn check(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        self.check_host(headers)?;
        let (Some(hosts), Some(origin)) = (&self.hosts, headers.get(header::ORIGIN)) else {
            return Ok(());
        };
        let origin = origin.to_str().unwrap_or_default();
        if hosts.iter().any(|h| origin.eq_ignore_ascii_case(&format!("http://{h}")))
            || self.origins.iter().any(|o| origin.eq_ignore_ascii_case(o))
        {
            Ok(())
        } else {
            Err(ApiError::forbidden(format!("Origin `{origin}` is not this server's page")))
        }
    }
}

/// What the middleware needs.
#[derive(Debug, Clone)]
pub struct Access {
    /// Known tokens.
    pub users: Arc<Users>,
    /// Allowed hosts and origins.
    pub guard: Guard,
    /// Signed-in browsers and personal tokens, in the store (`jig serve`; not the desktop app,
    /// whose one person is the OS user).
    pub people: Option<crate::people::People>,
}

/// How a request's person was recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// A token of the `--users` file (a bearer header, or the cookie of `/?token=`), or the
    /// desktop app's own.
    UsersToken,
    /// A personal API token (`jig_pat_…`).
    PersonalToken,
    /// A browser signed in with the project's OpenID provider.
    SignIn,
}

impl Access {
    /// Who `headers` say acts, and how they were recognised: a bearer token (of `--users`, or
    /// a personal token), else a signed-in browser's session, else the `?token=` cookie.
    pub async fn person(&self, headers: &HeaderMap) -> Option<(Person, Via)> {
        if let Some(bearer) = bearer(headers) {
            if let Some(person) = self.users.find(&bearer) {
                return Some((person.clone(), Via::UsersToken));
            }
            let people = self.people.as_ref()?;
            return Some((people.by_token(&bearer, &self.users).await?, Via::PersonalToken));
        }
        if let Some(people) = &self.people
            && let Some(person) = people.by_session(headers).await
        {
            return Some((person, Via::SignIn));
        }
        let person = cookie_token(headers).and_then(|token| self.users.find(&token).cloned())?;
        Some((person, Via::UsersToken))
    }
}

/// The token of a request: bearer header, then cookie (a session cookie, or the `?token=` one).
pub fn token_of(headers: &HeaderMap) -> Option<String> {
    bearer(headers)
        .or_else(|| cookie_value(headers, crate::people::SESSION_COOKIE))
        .or_else(|| cookie_token(headers))
}

/// The `Authorization: Bearer` token.
fn bearer(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .map(|token| token.trim().to_owned())
}
/// Middleware for the API: Host and Origin first (403), then the token (401); the person goes
/// into the request's extensions.
pub async fn require_person(
    State(access): State<Access>,
    mut request: Request,
    next: Next,
) -> Response {
    if let Err(error) = access.guard.check(request.headers()) {
        return error.into_response();
    }
    let Some((person, via)) = access.person(request.headers()).await else {
        return ApiError::new(
            StatusCode::UNAUTHORIZED,
            jig_model::ErrorCode::Policy,
            "sign in, open the URL `jig serve` printed, or send `Authorization: Bearer TOKEN`",
        )
        .into_response();
    };
    request.extensions_mut().insert(person);
    request.extensions_mut().insert(via);
    next.run(request).await
}

/// Middleware for the pages: Host only (a page is no secret, but a rebinding page must not get
/// one that then talks to the API with the victim's cookie).
pub async fn check_host(State(access): State<Access>, request: Request, next: Next) -> Response {
    if let Err(error) = access.guard.check_host(request.headers()) {
        return error.into_response();
    }
    next.run(request).await
}
