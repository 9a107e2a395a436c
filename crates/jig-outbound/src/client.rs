//! Jig's own outgoing HTTP client — for the sign-in provider, the project's webhooks and
//! published checkpoints; a tool's requests go through `jig_tools::http_client` instead, which
//! checks every host. rustls with ring, no redirects followed (an endpoint answers directly; a
//! redirect is refused rather than followed somewhere else), bounded in time, Jig's user agent.
//!
//! A receiver the manifest names (a webhook, a forwarder) is reached only through the policy's
//! network rules, as a tool's request is: its host in `network.allowed_domains`, every address
//! its name resolves to public unless `allow_private`, and the connection pinned to exactly
//! the addresses checked ([`checked_addresses`]), so a second DNS answer cannot slip between
//! the check and the connection.

use std::net::SocketAddr;
use std::time::Duration;

use jig_model::policy::NetworkPolicy;

/// A client whose requests each take at most `timeout`.
pub fn http_client(timeout: Duration) -> Result<reqwest::Client, String> {
    http_client_trusting(timeout, None)
}

/// [`http_client`] for another of Jig's programs, which says it is `agent` (the desktop app
/// talking to a team server: `jig-desktop/<version>`).
pub fn http_client_as(timeout: Duration, agent: &str) -> Result<reqwest::Client, String> {
    built(client_builder(timeout, None)?.user_agent(agent))
}

/// [`http_client`], trusting only the CAs in the PEM file `ca` when one is given (a receiver
/// with a private CA) instead of the public ones.
pub fn http_client_trusting(
    timeout: Duration,
    ca: Option<&std::path::Path>,
) -> Result<reqwest::Client, String> {
    built(client_builder(timeout, ca)?)
}

fn built(builder: reqwest::ClientBuilder) -> Result<reqwest::Client, String> {
    builder.build().map_err(|e| format!("cannot set up an HTTP client: {e}"))
}

/// The builder both clients start from.
fn client_builder(
    timeout: Duration,
    ca: Option<&std::path::Path>,
) -> Result<reqwest::ClientBuilder, String> {
    // reqwest uses the process-wide rustls provider; Jig ships ring's.
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    let mut builder = reqwest::Client::builder();
    if let Some(ca) = ca {
        let pem = fs_err::read(ca).map_err(|e| format!("`ca`: {e}"))?;
        let certificates = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| format!("`ca` {}: {e}", ca.display()))?;
        builder = builder.tls_certs_only(certificates);
    }
    Ok(builder
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .user_agent(concat!("jig/", env!("CARGO_PKG_VERSION"))))
}

/// The addresses a connection to the receiver at `url` may use under `network`: the URL's
/// host checked against the allow-list (a `syslog+tls://` URL as if it were `https://`), then
/// every address it resolves to. `Err` says which rule refused it.
pub async fn checked_addresses(
    url: &str,
    network: &NetworkPolicy,
) -> Result<(String, Vec<SocketAddr>), String> {
    let as_http = match url.strip_prefix("syslog+tls://") {
        Some(rest) => format!("https://{rest}"),
        None => url.to_owned(),
    };
    let parsed = jig_policy::network::check_url(&as_http, network)
        .map_err(|denial| format!("{} ({})", denial.reason, denial.rule))?;
    let host = parsed
        .host_str()
        .ok_or("no host")?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = parsed.port_or_known_default().ok_or("no port")?;
    let resolved: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
        .await
        .map_err(|e| format!("`{host}` cannot be resolved: {e}"))?
        .collect();
    if resolved.is_empty() {
        return Err(format!("`{host}` resolves to no address"));
    }
    for address in &resolved {
        jig_policy::network::check_resolved(address.ip(), network)
            .map_err(|denial| format!("`{host}`: {} ({})", denial.reason, denial.rule))?;
    }
    Ok((host, resolved))
}

/// A client for the receiver at `url` that connects only to the addresses [`checked_addresses`]
/// allowed, trusting only the CAs of `ca` when given.
pub async fn checked_client(
    url: &str,
    network: &NetworkPolicy,
    timeout: Duration,
    ca: Option<&std::path::Path>,
) -> Result<reqwest::Client, String> {
    let (host, addresses) = checked_addresses(url, network).await?;
    client_builder(timeout, ca)?
        .resolve_to_addrs(&host, &addresses)
        .build()
        .map_err(|e| format!("cannot set up an HTTP client: {e}"))
}
