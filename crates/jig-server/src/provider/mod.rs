//! The project's OpenID provider as Jig, its client, sees it: its metadata (discovered, cached,
//! rediscovered as keys rotate) and the HTTP client the OpenID library speaks through. No
//! routes and no state of the server here: sign-in ([`crate::sso`]) builds on it.

pub(crate) mod http;

use std::time::{Duration, Instant};

use openidconnect::IssuerUrl;
use openidconnect::core::CoreProviderMetadata;
use tokio::sync::Mutex;

/// How long a provider's discovery document (and its keys) are reused.
const DISCOVERY_TTL: Duration = Duration::from_secs(300);

/// The provider's metadata, fetched on first use and again after [`DISCOVERY_TTL`] (keys
/// rotate).
#[derive(Default)]
pub struct Discovery(Mutex<Option<(String, Instant, CoreProviderMetadata)>>);

impl std::fmt::Debug for Discovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Discovery")
    }
}

impl Discovery {
    pub(crate) async fn metadata(&self, issuer: &str) -> Result<CoreProviderMetadata, String> {
        let mut cached = self.0.lock().await;
        if let Some((known, at, metadata)) = cached.as_ref()
            && known == issuer
            && at.elapsed() < DISCOVERY_TTL
        {
            return Ok(metadata.clone());
        }
        let url =
            IssuerUrl::new(issuer.to_owned()).map_err(|e| format!("issuer `{issuer}`: {e}"))?;
        let client = http::client()?;
        let metadata = CoreProviderMetadata::discover_async(url, &http::send(&client))
            .await
            .map_err(|e| format!("discovering `{issuer}`: {}", describe(&e)))?;
        *cached = Some((issuer.to_owned(), Instant::now(), metadata.clone()));
        Ok(metadata)
    }
}

/// An error and its causes on one line: the OpenID library puts what went wrong in `source()`.
pub(crate) fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    text
}
