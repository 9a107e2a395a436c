//! A team server the app is signed in to: the page's API requests go to it over HTTPS (plain
//! HTTP only on this computer) with the app's session, and its event stream is followed and
//! handed to the window as the in-process engine's would be. The session stays here, in the
//! app's process: the page never sees it, and it goes to the server it was made by and no
//! other (no redirects are followed).

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use jig_server::local::Answer;
use tauri::{AppHandle, Emitter as _};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

use crate::WINDOW;

/// How long one API request may take (a call answers at once and is followed by events).
const REQUEST_TIME: Duration = Duration::from_secs(120);

/// The most of one answer read: an artifact may be large, a page of JSON is not.
const MOST_ANSWER: usize = 256 << 20;

/// A server and the app's session on it.
pub struct Remote {
    /// `https://host[:port]`: where requests go, and the `Origin` they carry.
    origin: String,
    /// The session cookie's value.
    session: String,
    /// Who the session acts as.
    pub person: String,
    client: reqwest::Client,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("origin", &self.origin)
            .field("person", &self.person)
            .finish()
    }
}

impl Remote {
    /// The session `session` (acting as `person`) on the server at `origin`.
    pub fn new(origin: String, session: String, person: String) -> Result<Self, String> {
        Ok(Self { origin, session, person, client: client()? })
    }

    /// The server's address.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// One request of the page: only the API, the sign-in status and signing out reach the
    /// server.
    pub async fn handle(
        &self,
        method: &str,
        path: &str,
        body: Option<String>,
    ) -> Result<Answer, String> {
        let allowed = path.starts_with("/api/")
            || (method == "GET" && path == "/auth/status")
            || (method == "POST" && path == "/auth/logout");
        if !allowed || path.contains("://") || path.starts_with("//") {
            return Err(format!("`{path}` is not a request of the workbench"));
        }
        let method = reqwest::Method::from_bytes(method.as_bytes()).map_err(|e| e.to_string())?;
        let mut request = self.request(method, path);
        if let Some(body) = body {
            let kind = if path == "/auth/logout" {
                "application/x-www-form-urlencoded"
            } else {
                "application/json"
            };
            request = request.header(reqwest::header::CONTENT_TYPE, kind).body(body);
        }
        let response = request.send().await.map_err(|e| unreachable(&self.origin, &e))?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .filter(|(name, _)| *name != reqwest::header::SET_COOKIE)
            .filter_map(|(name, value)| Some((name.to_string(), value.to_str().ok()?.to_owned())))
            .collect();
        let bytes = read(response).await?;
        Ok(Answer { status, headers, body: String::from_utf8_lossy(&bytes).into_owned() })
    }

    /// The bytes the API serves at `path`, or the error it answers with, as text.
    pub async fn download(&self, path: &str) -> Result<Vec<u8>, String> {
        if !path.starts_with("/api/") || path.contains("://") {
            return Err(format!("`{path}` is not a download of the workbench"));
        }
        let response = self
            .request(reqwest::Method::GET, path)
            .send()
            .await
            .map_err(|e| unreachable(&self.origin, &e))?;
        let status = response.status();
        let bytes = read(response).await?;
        if status.is_success() {
            return Ok(bytes);
        }
        Err(serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .and_then(|v| v["message"].as_str().map(str::to_owned))
            .unwrap_or_else(|| format!("HTTP {status}")))
    }

    /// A request to `path` on the server, with the app's session and the server's own origin.
    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.origin))
            .header(reqwest::header::COOKIE, format!("jig_session={}", self.session))
            .header(reqwest::header::ORIGIN, &self.origin)
    }

    /// Follow the server's event stream into the window, reconnecting after a break (the page
    /// reads what it shows again when it hears the stream is back).
    pub fn follow(self: &Arc<Self>, app: AppHandle) -> tauri::async_runtime::JoinHandle<()> {
        let remote = Arc::clone(self);
        tauri::async_runtime::spawn(async move {
            let mut wait = Duration::from_millis(500);
            loop {
                match remote.stream(&app).await {
                    Ok(()) => wait = Duration::from_millis(500),
                    Err(error) => tracing::info!("{}: the event stream: {error}", remote.origin),
                }
                let _ = app.emit_to(WINDOW, "jig://connected", false);
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(10));
            }
        })
    }

    /// One connection of the event stream, until it ends.
    async fn stream(&self, app: &AppHandle) -> Result<(), String> {
        let url = format!("{}/api/events", self.origin.replacen("http", "ws", 1));
        let mut request = url.into_client_request().map_err(|e| e.to_string())?;
        let headers = request.headers_mut();
        for (name, value) in
            [("cookie", format!("jig_session={}", self.session)), ("origin", self.origin.clone())]
        {
            headers.insert(name, value.parse().map_err(|_| "a header is not valid".to_owned())?);
        }
        let (mut socket, _) = crate::wss::connect(request).await?;
        let _ = app.emit_to(WINDOW, "jig://connected", true);
        while let Some(message) = socket.next().await {
            match message.map_err(|e| e.to_string())? {
                Message::Text(text) => {
                    let Ok(event) = serde_json::from_str::<serde_json::Value>(&text) else {
                        continue;
                    };
                    if let Err(error) = app.emit_to(WINDOW, "jig://event", &event) {
                        tracing::warn!("event to the window: {error}");
                    }
                }
                Message::Close(_) => return Ok(()),
                _ => {}
            }
        }
        Ok(())
    }
}

/// The HTTP client every request to a team server goes through: Jig's own (the system's
/// trusted certificates, no redirects, bounded in time), saying it is the desktop app.
pub fn client() -> Result<reqwest::Client, String> {
    // The WebSocket to the same server (`crate::wss`) needs the process's TLS provider too.
    crate::wss::install_crypto();
    jig_outbound::client::http_client_as(
        REQUEST_TIME,
        concat!("jig-desktop/", env!("CARGO_PKG_VERSION")),
    )
}

/// An answer's body, refused beyond [`MOST_ANSWER`].
async fn read(mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        if bytes.len() + chunk.len() > MOST_ANSWER {
            return Err("the server's answer is larger than the app reads".to_owned());
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

fn unreachable(origin: &str, error: &reqwest::Error) -> String {
    let mut text = format!("{origin} cannot be reached: {error}");
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}
