//! Signing the app in to a team's `jig serve`, as RFC 8252 has a native app do it: the system
//! browser signs the person in with the team's provider (where they may be signed in already),
//! the server asks them to allow the app, and sends a one-time code to a port the app listens
//! on at 127.0.0.1; the app trades it, with a PKCE verifier that never left this process, for a
//! session of its own (the server's side: jig-server's `sso/desktop.rs`).
//!
//! The browser is the person's own (`$BROWSER`, else `xdg-open`), started through the one path
//! that starts processes outside the sandbox, with an environment the app builds.

use std::time::Duration;

use base64::Engine as _;
use jig_exec::host::{self, HostEnv, HostProgram};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

use crate::remote::Remote;

/// How long the person has to finish in the browser.
const SIGN_IN_TIME: Duration = Duration::from_secs(600);

/// The path of the app's loopback address the server sends the browser to.
const LANDING: &str = "/signed-in";

/// What the browser's environment may keep of the app's (the display, the session, the
/// person's settings; nothing else).
const BROWSER_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LANG",
    "LC_ALL",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_CURRENT_DESKTOP",
    "XDG_DATA_DIRS",
    "BROWSER",
];

/// `GET /auth/status`.
#[derive(Deserialize)]
struct Status {
    sign_in: bool,
}

/// `POST /auth/desktop/token`'s answer.
#[derive(Deserialize)]
struct Traded {
    session: String,
    person: String,
}

/// The server at `address`, checked: `https://`, or `http://` to this computer only (a
/// session must not cross a network in clear). Its origin, without a trailing slash.
pub fn origin_of(address: &str) -> Result<String, String> {
    let trimmed = address.trim();
    let with_scheme =
        if trimmed.contains("://") { trimmed.to_owned() } else { format!("https://{trimmed}") };
    let url = url::Url::parse(&with_scheme).map_err(|e| format!("`{trimmed}`: {e}"))?;
    let local = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name == "localhost",
        None => false,
    };
    match url.scheme() {
        "https" => {}
        "http" if local => {}
        "http" => {
            return Err(format!(
                "`{trimmed}`: a team server is reached over https (plain http only on this computer)"
            ));
        }
        other => return Err(format!("`{trimmed}`: `{other}` is not a web address")),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!("`{trimmed}`: no user or password in the address"));
    }
    Ok(url.origin().ascii_serialization())
}

/// Sign in to the server at `address` in the person's browser; the app's session there.
pub async fn sign_in(address: &str) -> Result<Remote, String> {
    let origin = origin_of(address)?;
    let client = crate::remote::client()?;
    let status: Status = client
        .get(format!("{origin}/auth/status"))
        .send()
        .await
        .map_err(|e| format!("{origin} cannot be reached: {e}"))?
        .json()
        .await
        .map_err(|_| format!("{origin} does not answer as a Jig server"))?;
    if !status.sign_in {
        return Err(format!(
            "{origin} does not sign people in with an OpenID provider (config.auth.oidc); ask its admin to set one up"
        ));
    }
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let redirect = format!("http://127.0.0.1:{port}{LANDING}");
    let verifier = jig_server::auth::new_token();
    let state = jig_server::auth::new_token();
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(Sha256::digest(verifier.as_bytes()));
    let query = serde_urlencoded::to_string([
        ("redirect_uri", redirect.as_str()),
        ("state", state.as_str()),
        ("code_challenge", challenge.as_str()),
        ("code_challenge_method", "S256"),
    ])
    .map_err(|e| e.to_string())?;
    open_browser(&format!("{origin}/auth/desktop?{query}")).await?;
    let code =
        tokio::time::timeout(SIGN_IN_TIME, landing(&listener, &state)).await.map_err(|_| {
            "the sign-in was not finished in the browser within 10 minutes".to_owned()
        })??;
    let answer = client
        .post(format!("{origin}/auth/desktop/token"))
        .json(&serde_json::json!({
            "code": code, "code_verifier": verifier, "redirect_uri": redirect,
        }))
        .send()
        .await
        .map_err(|e| format!("{origin} cannot be reached: {e}"))?;
    if !answer.status().is_success() {
        let why = answer.json::<serde_json::Value>().await.ok();
        let why = why.as_ref().and_then(|v| v["message"].as_str()).unwrap_or("refused");
        return Err(format!("{origin} did not sign the app in: {why}"));
    }
    let traded: Traded = answer.json().await.map_err(|e| e.to_string())?;
    Remote::new(origin, traded.session, traded.person)
}

/// Wait for the browser at the app's loopback address; the code it brings. Anything else
/// that knocks (another state, another path) is answered and ignored.
async fn landing(listener: &TcpListener, state: &str) -> Result<String, String> {
    loop {
        let (mut stream, _) = listener.accept().await.map_err(|e| e.to_string())?;
        let Some(target) = request_target(&mut stream).await else { continue };
        let query = target.strip_prefix(LANDING).and_then(|rest| rest.strip_prefix('?'));
        let pairs: Vec<(String, String)> =
            query.and_then(|q| serde_urlencoded::from_str(q).ok()).unwrap_or_default();
        let get = |name: &str| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        if get("state") != Some(state) {
            answer(&mut stream, "404 Not Found", "Not a sign-in of this app", "").await;
            continue;
        }
        if let Some(code) = get("code") {
            answer(
                &mut stream,
                "200 OK",
                "Signed in",
                "The Jig app is signed in. You can close this tab and go back to it.",
            )
            .await;
            return Ok(code.to_owned());
        }
        answer(
            &mut stream,
            "200 OK",
            "Not signed in",
            "You did not allow the app: nothing changed.",
        )
        .await;
        return Err("the sign-in was cancelled in the browser".to_owned());
    }
}

/// The target of one HTTP request on `stream` (`/signed-in?…`), read within a few seconds.
async fn request_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buffer = [0_u8; 2048];
    let read = async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
            let n = stream.read(&mut buffer).await.ok()?;
            if n == 0 {
                return None;
            }
            head.extend_from_slice(&buffer[..n]);
        }
        Some(())
    };
    tokio::time::timeout(Duration::from_secs(5), read).await.ok()??;
    let line = String::from_utf8_lossy(&head).lines().next()?.to_owned();
    let mut parts = line.split(' ');
    (parts.next()? == "GET").then(|| parts.next().map(str::to_owned))?
}

/// A small page for the browser tab.
async fn answer(stream: &mut TcpStream, status: &str, title: &str, text: &str) {
    let title = jig_server::escape_html(title);
    let text = jig_server::escape_html(text);
    let body = format!(
        "<!doctype html><meta charset=\"utf-8\"><title>{title} · Jig</title><h1>{title}</h1><p>{text}</p>"
    );
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Content-Security-Policy: default-src 'none'\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// Open `url` in the person's browser: the first program of `$BROWSER`, else `xdg-open`.
async fn open_browser(url: &str) -> Result<(), String> {
    let chosen = std::env::var("BROWSER")
        .ok()
        .and_then(|list| list.split(':').map(str::trim).find(|p| !p.is_empty()).map(str::to_owned));
    let program = match chosen.as_deref() {
        Some(path) if path.starts_with('/') => HostProgram::at(std::path::Path::new(path)),
        Some(name) => HostProgram::find(name),
        None => HostProgram::find("xdg-open"),
    }
    .map_err(|e| format!("no browser to sign in with: {}", e.message))?;
    let mut command = host::async_command(&program, &HostEnv::empty().inherit(BROWSER_ENV));
    command.arg(url).kill_on_drop(false);
    let mut child = host::spawn(|| command.spawn())
        .map_err(|e| format!("{}: {e}", program.path().display()))?;
    // The browser outlives the call (xdg-open returns at once; a browser may not): reaped in
    // the background.
    tauri::async_runtime::spawn(async move {
        let _ = child.wait().await;
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::origin_of;

    #[test]
    fn a_session_travels_over_https_or_stays_on_this_computer() {
        assert_eq!(origin_of("jig.acme.example").unwrap(), "https://jig.acme.example");
        assert_eq!(origin_of("https://jig.acme.example/x/").unwrap(), "https://jig.acme.example");
        assert_eq!(origin_of("http://127.0.0.1:8080").unwrap(), "http://127.0.0.1:8080");
        assert_eq!(origin_of("http://localhost:8080").unwrap(), "http://localhost:8080");
        assert!(origin_of("http://jig.acme.example").is_err());
        assert!(origin_of("https://alice:pw@jig.acme.example").is_err());
        assert!(origin_of("file:///etc/passwd").is_err());
        assert!(origin_of("javascript:alert(1)").is_err());
    }
}
