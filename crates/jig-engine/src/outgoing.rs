//! Jig's own outgoing HTTP client — for the sign-in provider, the project's webhooks and
//! published checkpoints; a tool's requests go through `jig_tools::http_client` instead, which
//! checks every host. rustls with ring, no redirects followed (an endpoint answers directly; a
//! redirect is refused rather than followed somewhere else), bounded in time, Jig's user agent.

use std::time::Duration;

/// A client whose requests each take at most `timeout`.
pub fn http_client(timeout: Duration) -> Result<reqwest::Client, String> {
    http_client_trusting(timeout, None)
}

/// [`http_client`], trusting only the CAs in the PEM file `ca` when one is given (a receiver
/// with a private CA) instead of the public ones.
pub fn http_client_trusting(
    timeout: Duration,
    ca: Option<&std::path::Path>,
) -> Result<reqwest::Client, String> {
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
    builder
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .user_agent(concat!("jig/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot set up an HTTP client: {e}"))
}
