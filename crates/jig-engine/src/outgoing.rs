//! Jig's own outgoing HTTP client — for the sign-in provider, the project's webhooks and
//! published checkpoints; a tool's requests go through `jig_tools::http_client` instead, which
//! checks every host. rustls with ring, no redirects followed (an endpoint answers directly; a
//! redirect is refused rather than followed somewhere else), bounded in time, Jig's user agent.

use std::time::Duration;

/// A client whose requests each take at most `timeout`.
pub fn http_client(timeout: Duration) -> Result<reqwest::Client, String> {
    // reqwest uses the process-wide rustls provider; Jig ships ring's.
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .user_agent(concat!("jig/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("cannot set up an HTTP client: {e}"))
}
