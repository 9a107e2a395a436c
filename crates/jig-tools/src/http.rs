//! `execution.kind: http` — a templated request through Jig's HTTP client.
//!
//! The URL, header values and body are Jinja2 templates over the arguments; without a `body`
//! template, methods that carry one send the arguments as JSON. The URL is checked against the
//! policy on every hop like `curl`'s, and the tool must declare the URL's scheme in
//! `caps.network`. A 2xx JSON answer is the result as it is; other 2xx answers are
//! `{status, body}`; anything else is `E_HTTP` with the status and the start of the body.

use async_trait::async_trait;
use jig_model::ErrorCode;
use jig_model::tool_def::ToolExecution;
use jig_model::toolpack::{Execution as Kind, HttpMethod, NetworkCap};
use reqwest::Method;
use serde_json::{Value, json};

use crate::http_client::{self, MAX_BODY, Request};
use jig_exec::template;
use jig_exec::{Execution, Executor, Invocation, Output, ToolError};

/// Runs `http` toolpacks.
#[derive(Debug, Default)]
pub struct HttpExecutor;

#[async_trait]
impl Executor for HttpExecutor {
    async fn execute(&self, invocation: Invocation<'_>) -> Result<Execution, ToolError> {
        let tool = invocation.tool;
        let ToolExecution::Toolpack(Kind::Http(http)) = &tool.execution else {
            return Err(ToolError::new(
                ErrorCode::Internal,
                format!("`{}` is not an http tool", tool.id),
            ));
        };
        let url = template::render_always(&http.url, invocation.args, tool.templating.as_ref())?;
        let scheme = url.split(':').next().unwrap_or_default().to_ascii_lowercase();
        let declared = tool.caps.as_ref().is_some_and(|caps| {
            caps.network.iter().any(|cap| {
                matches!(
                    (cap, scheme.as_str()),
                    (NetworkCap::Http, "http") | (NetworkCap::Https, "https")
                )
            })
        });
        if !declared {
            return Err(ToolError::new(
                ErrorCode::Policy,
                format!(
                    "`{}` may not reach the network over `{scheme}`: add it to `caps.network`",
                    tool.id
                ),
            )
            .with_details(json!({ "rule": "caps.network", "scheme": scheme })));
        }
        let method = match http.method.unwrap_or(HttpMethod::Get) {
            HttpMethod::Get => Method::GET,
            HttpMethod::Post => Method::POST,
            HttpMethod::Put => Method::PUT,
            HttpMethod::Patch => Method::PATCH,
            HttpMethod::Delete => Method::DELETE,
            HttpMethod::Head => Method::HEAD,
        };
        let mut headers = reqwest::header::HeaderMap::new();
        for (name, value) in &http.headers {
            let value = template::render_always(value, invocation.args, tool.templating.as_ref())?;
            http_client::add_header(&mut headers, name, &value)?;
        }
        let body = match &http.body {
            Some(body) => {
                Some(template::render_always(body, invocation.args, tool.templating.as_ref())?)
            }
            None if matches!(method, Method::POST | Method::PUT | Method::PATCH) => {
                http_client::add_header(&mut headers, "content-type", "application/json")?;
                Some(invocation.args.to_string())
            }
            None => None,
        };
        let max_bytes =
            usize::try_from(tool.limits.max_output_bytes).unwrap_or(MAX_BODY).min(MAX_BODY);
        let request =
            Request { method, url, headers, body, max_bytes, timeout: invocation.timeout };
        let response =
            http_client::fetch(request, &invocation.policy.config().network, &invocation.cancel)
                .await?;
        let text = String::from_utf8_lossy(&response.body).into_owned();
        if !(200..300).contains(&response.status) {
            let start: String = text.chars().take(2000).collect();
            return Err(ToolError::new(
                ErrorCode::Http,
                format!("`{}` answered {} for `{}`", tool.id, response.status, response.url),
            )
            .with_details(json!({ "status": response.status, "body": start })));
        }
        let json_type = response
            .headers
            .get("content-type")
            .and_then(Value::as_str)
            .is_some_and(|t| t.contains("json"));
        let data = match serde_json::from_str::<Value>(&text) {
            Ok(value) if json_type => value,
            _ => {
                json!({ "status": response.status, "body": text, "truncated": response.truncated })
            }
        };
        Ok(Execution::Done(Output::data(data)))
    }
}
