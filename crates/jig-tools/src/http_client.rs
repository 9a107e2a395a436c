//! Jig's HTTP client, shared by the `curl` built-in and the `http` kind: it checks
//! `network.allowed_domains` on every hop.
//!
//! Redirects are followed here, not by the HTTP library, so each target is checked like the
//! first: its URL against the allow-list, then every address its name resolves to (no
//! loopback or private address unless `allow_private`), and the connection pinned to exactly
//! those checked addresses — a second DNS answer cannot slip in between check and connect. At
//! most three redirects are followed. No proxy is taken from the environment. The body is
//! capped after decompression.

use std::net::{IpAddr, SocketAddr};
use std::sync::Once;
use std::time::{Duration, Instant};

use jig_model::ErrorCode;
use jig_model::policy::NetworkPolicy;
use jig_policy::Denial;
use jig_policy::network::{RULE, check_resolved, check_url};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode};
use serde_json::{Map, Value, json};
use url::{Host, Url};

use jig_exec::{Cancel, ToolError};

/// Redirects followed at most (seed 002 §7, `sec.network.allowlist`).
pub const MAX_REDIRECTS: usize = 3;

/// Body cap when the caller names none (seed 002 §9).
pub const MAX_BODY: usize = 5 * 1024 * 1024;

/// Headers a caller may not set: they belong to the connection, or would let a request claim
/// another host than the one checked.
const RESERVED_HEADERS: [&str; 6] =
    ["host", "connection", "transfer-encoding", "content-length", "upgrade", "proxy-authorization"];

/// A request.
#[derive(Debug, Clone)]
pub struct Request {
    /// The method.
    pub method: Method,
    /// The URL, not yet checked.
    pub url: String,
    /// Headers (see [`headers`]).
    pub headers: HeaderMap,
    /// A text body.
    pub body: Option<String>,
    /// Body bytes kept at most.
    pub max_bytes: usize,
    /// Time for everything, redirects included.
    pub timeout: Duration,
}

/// A response.
#[derive(Debug, Clone)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Headers, lower-case names, repeated ones joined with `, `.
    pub headers: Map<String, Value>,
    /// The body, decompressed, at most `max_bytes`.
    pub body: Vec<u8>,
    /// Whether the body was cut.
    pub truncated: bool,
    /// The URL that answered.
    pub url: String,
    /// Redirects followed.
    pub redirects: usize,
}

/// Send `request` under `network`, following redirects hop by hop.
pub async fn fetch(
    request: Request,
    network: &NetworkPolicy,
    cancel: &Cancel,
) -> Result<Response, ToolError> {
    install_crypto();
    let deadline = Instant::now() + request.timeout;
    let Request { mut method, url, mut headers, mut body, max_bytes, .. } = request;
    let mut url = check_url(&url, network).map_err(denied)?;
    let mut hops: Vec<String> = Vec::new();
    loop {
        let addresses = resolve(&url, network).await?;
        let client = client(&url, &addresses, deadline.saturating_duration_since(Instant::now()))?;
        let mut outgoing = client.request(method.clone(), url.clone()).headers(headers.clone());
        if let Some(text) = &body {
            outgoing = outgoing.body(text.clone());
        }
        let response = tokio::select! {
            sent = outgoing.send() => sent.map_err(|e| http_error(&url, &e))?,
            () = cancel.cancelled() => return Err(cancelled()),
        };
        let status = response.status();
        let location = response.headers().get(reqwest::header::LOCATION).cloned();
        let Some(location) = location.filter(|_| status.is_redirection()) else {
            return read(response, status, max_bytes, &url, hops.len(), cancel).await;
        };
        if hops.len() == MAX_REDIRECTS {
            return Err(denied(Denial::new(
                RULE,
                format!("more than {MAX_REDIRECTS} redirects (after {})", hops.join(" → ")),
            )));
        }
        let target = location.to_str().ok().and_then(|l| url.join(l).ok()).ok_or_else(|| {
            ToolError::new(ErrorCode::Http, format!("`{url}` redirected to an unreadable location"))
        })?;
        hops.push(url.to_string());
        let next = check_url(target.as_str(), network).map_err(|d| {
            denied(Denial::new(
                d.rule,
                format!("redirect {} of {}: {}", hops.len(), hops[0], d.reason),
            ))
        })?;
        if status == StatusCode::SEE_OTHER
            || (matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND)
                && method == Method::POST)
        {
            method = Method::GET;
            body = None;
        }
        if next.origin() != url.origin() {
            // Credentials were meant for the first origin only.
            for name in ["authorization", "cookie"] {
                headers.remove(name);
            }
        }
        url = next;
    }
}

async fn read(
    mut response: reqwest::Response,
    status: StatusCode,
    max: usize,
    url: &Url,
    redirects: usize,
    cancel: &Cancel,
) -> Result<Response, ToolError> {
    let mut headers = Map::new();
    for (name, value) in response.headers() {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        match headers.get_mut(name.as_str()) {
            Some(Value::String(existing)) => {
                existing.push_str(", ");
                existing.push_str(&value);
            }
            _ => {
                headers.insert(name.as_str().to_owned(), Value::String(value));
            }
        }
    }
    let mut body = Vec::new();
    let mut truncated = false;
    loop {
        let chunk = tokio::select! {
            chunk = response.chunk() => chunk.map_err(|e| http_error(url, &e))?,
            () = cancel.cancelled() => return Err(cancelled()),
        };
        let Some(chunk) = chunk else { break };
        let room = max - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            truncated = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Response {
        status: status.as_u16(),
        headers,
        body,
        truncated,
        url: url.to_string(),
        redirects,
    })
}

/// Every address `url`'s host stands for, each checked.
async fn resolve(url: &Url, network: &NetworkPolicy) -> Result<Vec<SocketAddr>, ToolError> {
    let port = url.port_or_known_default().unwrap_or(80);
    let addresses: Vec<SocketAddr> = match url.host() {
        Some(Host::Ipv4(ip)) => vec![SocketAddr::new(IpAddr::V4(ip), port)],
        Some(Host::Ipv6(ip)) => vec![SocketAddr::new(IpAddr::V6(ip), port)],
        Some(Host::Domain(name)) => tokio::net::lookup_host((name, port))
            .await
            .map_err(|e| ToolError::new(ErrorCode::Http, format!("cannot resolve `{name}`: {e}")))?
            .collect(),
        None => Vec::new(),
    };
    if addresses.is_empty() {
        return Err(ToolError::new(ErrorCode::Http, format!("`{url}` resolves to no address")));
    }
    for address in &addresses {
        check_resolved(address.ip(), network).map_err(|d| {
            let host = url.host_str().unwrap_or_default();
            denied(Denial::new(
                d.rule,
                format!("`{host}` resolves to {}: {}", address.ip(), d.reason),
            ))
        })?;
    }
    Ok(addresses)
}

/// A client for one hop: no proxy, no automatic redirects, connections only to `addresses`.
fn client(
    url: &Url,
    addresses: &[SocketAddr],
    timeout: Duration,
) -> Result<reqwest::Client, ToolError> {
    let mut builder = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .gzip(true)
        .deflate(true)
        .user_agent(concat!("jig/", env!("CARGO_PKG_VERSION")));
    if let Some(Host::Domain(name)) = url.host() {
        builder = builder.resolve_to_addrs(name, addresses);
    }
    builder.build().map_err(|e| {
        ToolError::new(ErrorCode::Internal, format!("cannot set up the HTTP client: {e}"))
    })
}

/// Headers from a JSON object of strings, refusing names Jig sets and values with line breaks.
pub fn headers(value: Option<&Value>) -> Result<HeaderMap, ToolError> {
    let mut headers = HeaderMap::new();
    let Some(map) = value.and_then(Value::as_object) else { return Ok(headers) };
    for (name, value) in map {
        add_header(&mut headers, name, value.as_str().unwrap_or_default())?;
    }
    Ok(headers)
}

/// Add one header, with the same checks as [`headers`].
pub fn add_header(headers: &mut HeaderMap, name: &str, value: &str) -> Result<(), ToolError> {
    let header = HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| invalid("headers", &format!("`{name}` is not a header name")))?;
    if RESERVED_HEADERS.contains(&header.as_str()) {
        return Err(invalid("headers", &format!("`{name}` is set by Jig, not by the caller")));
    }
    // HeaderValue refuses CR and LF, so no header can smuggle another.
    let value = HeaderValue::from_str(value).map_err(|_| {
        invalid("headers", &format!("the value of `{name}` has forbidden characters"))
    })?;
    headers.append(header, value);
    Ok(())
}

/// reqwest uses the process-wide rustls provider; Jig ships ring's.
fn install_crypto() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

fn denied(denial: Denial) -> ToolError {
    ToolError::new(ErrorCode::Policy, denial.reason).with_details(json!({ "rule": denial.rule }))
}

/// An argument error naming the argument.
pub fn invalid(argument: &str, why: &str) -> ToolError {
    ToolError::new(ErrorCode::ValidationFail, format!("argument `{argument}`: {why}"))
        .with_details(json!({ "argument": argument }))
}

fn cancelled() -> ToolError {
    ToolError::new(ErrorCode::Timeout, "the HTTP request was cancelled")
}

fn http_error(url: &Url, error: &reqwest::Error) -> ToolError {
    let code = if error.is_timeout() { ErrorCode::Timeout } else { ErrorCode::Http };
    // reqwest's Display hides the cause; the chain names it (refused, reset, TLS, …).
    let mut message = format!("`{url}`: {error}");
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    ToolError::new(code, message)
}
