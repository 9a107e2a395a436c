//! The HTTP client the OpenID library speaks through: Jig's own outgoing client
//! ([`jig_engine::http_client`]: no redirects followed, bounded in time).

use std::time::Duration;

use openidconnect::{HttpRequest, HttpResponse};

/// How long one request to the provider may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The most of an answer read: discovery, keys and tokens are a few kilobytes; a provider
/// that sends more is refused, not buffered.
const MAX_ANSWER: usize = 1 << 20;

/// A client for the provider.
pub(crate) fn client() -> Result<reqwest::Client, String> {
    jig_engine::http_client(TIMEOUT)
}

/// One request's answer, as the OpenID library awaits it.
type Answer = std::pin::Pin<Box<dyn Future<Output = Result<HttpResponse, Failed>> + Send>>;

/// What the OpenID library calls to make one request.
pub(crate) fn send(client: &reqwest::Client) -> impl Fn(HttpRequest) -> Answer {
    let client = client.clone();
    move |request: HttpRequest| {
        let client = client.clone();
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let response = client
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body)
                .send()
                .await
                .map_err(|e| Failed(e.to_string()))?;
            let mut builder = openidconnect::http::Response::builder().status(response.status());
            for (name, value) in response.headers() {
                builder = builder.header(name, value);
            }
            let mut response = response;
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| Failed(e.to_string()))? {
                if body.len() + chunk.len() > MAX_ANSWER {
                    return Err(Failed(format!("an answer of more than {MAX_ANSWER} bytes")));
                }
                body.extend_from_slice(&chunk);
            }
            builder.body(body).map_err(|e| Failed(e.to_string()))
        })
    }
}

/// A request to the provider that failed.
#[derive(Debug)]
pub(crate) struct Failed(String);

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failed {}
