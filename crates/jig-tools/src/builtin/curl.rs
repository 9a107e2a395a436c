//! `curl`: one HTTP(S) request through Jig's client (allow-list on every hop, at most three
//! redirects, capped decompressed body), answered with status, headers and the body in base64.

use std::time::Duration;

use base64::Engine as _;
use reqwest::Method;
use serde_json::{Value, json};

use crate::http_client::{self, MAX_BODY, Request, invalid};
use jig_exec::{Invocation, Output, ToolError};

pub(super) async fn curl(invocation: &Invocation<'_>) -> Result<Output, ToolError> {
    let args = invocation.args;
    let method = args.get("method").and_then(Value::as_str).unwrap_or("GET");
    let request = Request {
        method: Method::from_bytes(method.as_bytes())
            .map_err(|_| invalid("method", "is not an HTTP method"))?,
        url: args.get("url").and_then(Value::as_str).unwrap_or_default().to_owned(),
        headers: http_client::headers(args.get("headers"))?,
        body: args.get("body").and_then(Value::as_str).map(str::to_owned),
        max_bytes: args
            .get("max_bytes")
            .and_then(Value::as_u64)
            .map_or(MAX_BODY, |n| usize::try_from(n).unwrap_or(MAX_BODY).min(MAX_BODY)),
        timeout: args
            .get("timeout_ms")
            .and_then(Value::as_u64)
            .map_or(invocation.timeout, |ms| Duration::from_millis(ms).min(invocation.timeout)),
    };
    let response =
        http_client::fetch(request, &invocation.policy.config().network, &invocation.cancel)
            .await?;
    Ok(Output::data(json!({
        "status": response.status,
        "headers": response.headers,
        "body_b64": base64::engine::general_purpose::STANDARD.encode(&response.body),
        "truncated": response.truncated,
        "url": response.url,
        "redirects": response.redirects,
    })))
}
