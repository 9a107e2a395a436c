//! `curl`: an HTTP(S) client that checks `network.allowed_domains` on every hop.
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

use base64::Engine as _;
use jig_model::ErrorCode;
use jig_policy::Denial;
use jig_policy::network::{check_resolved, check_url};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode};
use serde_json::{Map, Value, json};
use url::{Host, Url};

use crate::executor::{Invocation, Output, ToolError};

/// Redirects followed at most (seed 002 §7, `sec.network.allowlist`).
const MAX_REDIRECTS: usize = 3;

/// Body cap when the call names none (seed 002 §9).
const MAX_BODY: usize = 5 * 1024 * 1024;

/// Headers a caller may not set: they belong to the connection, or would let a request claim
/// another host than the one checked.
const RESERVED_HEADERS: [&str; 6] =
    ["host", "connection", "transfer-encoding", "content-length", "upgrade", "proxy-authorization"];

pub(super) async fn curl(invocation: &Invocation<'_>) -> Result<Output, ToolError> {
    install_crypto();
    let args = invocation.args;
    let network = &invocation.policy.config().network;
    let raw_url = args.get("url").and_then(Value::as_str).unwrap_or_default();
    let mut method =
        Method::from_bytes(args.get("method").and_then(Value::as_str).unwrap_or("GET").as_bytes())
            .map_err(|_| invalid("method", "is not an HTTP method"))?;
    let mut headers = request_headers(args.get("headers"))?;
    let mut body = args.get("body").and_then(Value::as_str).map(str::to_owned);
    let max = args
        .get("max_bytes")
        .and_then(Value::as_u64)
        .map_or(MAX_BODY, |n| usize::try_from(n).unwrap_or(MAX_BODY).min(MAX_BODY));
    let timeout = args
        .get("timeout_ms")
        .and_then(Value::as_u64)
        .map_or(invocation.timeout, |ms| Duration::from_millis(ms).min(invocation.timeout));
    let deadline = Instant::now() + timeout;

    let mut url = check_url(raw_url, network).map_err(denied)?;
    let mut hops = Vec::new();
    loop {
        let addresses = resolve(&url, network).await?;
        let remaining = deadline.saturating_duration_since(Instant::now());
        let client = client(&url, &addresses, remaining)?;
        let mut request = client.request(method.clone(), url.clone()).headers(headers.clone());
        if let Some(text) = &body {
            request = request.body(text.clone());
        }
        let response = tokio::select! {
            sent = request.send() => sent.map_err(|e| http_error(&url, &e))?,
            () = invocation.cancel.cancelled() => return Err(ToolError::new(ErrorCode::Timeout, "`curl` was cancelled")),
        };
        let status = response.status();
        let location = response.headers().get(reqwest::header::LOCATION).cloned();
        if let (true, Some(location)) = (status.is_redirection(), location) {
            if hops.len() == MAX_REDIRECTS {
                return Err(denied(Denial::new(
                    jig_policy::network::RULE,
                    format!("more than {MAX_REDIRECTS} redirects (after {})", hops.join(" → ")),
                )));
            }
            let target =
                location.to_str().ok().and_then(|l| url.join(l).ok()).ok_or_else(|| {
                    ToolError::new(
                        ErrorCode::Http,
                        format!("`{url}` redirected to an unreadable location"),
                    )
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
            continue;
        }
        return read_response(response, status, max, &url, hops.len(), &invocation.cancel).await;
    }
}

async fn read_response(
    mut response: reqwest::Response,
    status: StatusCode,
    max: usize,
    url: &Url,
    redirects: usize,
    cancel: &crate::executor::Cancel,
) -> Result<Output, ToolError> {
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
            () = cancel.cancelled() => return Err(ToolError::new(ErrorCode::Timeout, "`curl` was cancelled")),
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
    Ok(Output::data(json!({
        "status": status.as_u16(),
        "headers": headers,
        "body_b64": base64::engine::general_purpose::STANDARD.encode(&body),
        "truncated": truncated,
        "url": url.as_str(),
        "redirects": redirects,
    })))
}

/// Every address `url`'s host stands for, each checked.
async fn resolve(
    url: &Url,
    network: &jig_model::policy::NetworkPolicy,
) -> Result<Vec<SocketAddr>, ToolError> {
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
            denied(Denial::new(
                d.rule,
                format!(
                    "`{}` resolves to {}: {}",
                    url.host_str().unwrap_or_default(),
                    address.ip(),
                    d.reason
                ),
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

fn request_headers(value: Option<&Value>) -> Result<HeaderMap, ToolError> {
    let mut headers = HeaderMap::new();
    let Some(map) = value.and_then(Value::as_object) else { return Ok(headers) };
    for (name, value) in map {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| invalid("headers", &format!("`{name}` is not a header name")))?;
        if RESERVED_HEADERS.contains(&header.as_str()) {
            return Err(invalid("headers", &format!("`{name}` is set by Jig, not by the caller")));
        }
        let text = value.as_str().unwrap_or_default();
        // HeaderValue refuses CR and LF, so no header can smuggle another.
        let value = HeaderValue::from_str(text).map_err(|_| {
            invalid("headers", &format!("the value of `{name}` has forbidden characters"))
        })?;
        headers.append(header, value);
    }
    Ok(headers)
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

fn invalid(argument: &str, why: &str) -> ToolError {
    ToolError::new(ErrorCode::ValidationFail, format!("argument `{argument}`: {why}"))
        .with_details(json!({ "argument": argument }))
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
