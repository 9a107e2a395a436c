//! The Docker Engine API over TCP with mutual TLS, trusting only the CA the policy names.
//!
//! bollard's own TLS client adds the system's public roots to the given CA, so a publicly
//! trusted certificate for the engine's host name would be taken for the engine — and be
//! handed the plans and the client certificate's proof. This transport's roots are the
//! policy's CA alone; the client certificate and key are the policy's.

use std::path::Path;
use std::sync::Arc;

use bollard::{BollardRequest, ClientVersion, Docker};
use hyper_rustls::HttpsConnectorBuilder;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use jig_model::policy::DockerTls;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A client for the engine at `host` (`tcp://` or `https://`), authenticated both ways with
/// `tls`; why not, naming the file or setting at fault.
pub fn connect(
    host: &str,
    tls: &DockerTls,
    home: impl Fn(&str) -> std::path::PathBuf,
    timeout: u64,
    version: &ClientVersion,
) -> Result<Docker, String> {
    let (ca, cert, key) = (home(&tls.ca), home(&tls.cert), home(&tls.key));
    let mut roots = rustls::RootCertStore::empty();
    for certificate in certificates(&ca)? {
        roots
            .add(certificate)
            .map_err(|e| format!("`plans.docker.tls.ca` {}: {e}", ca.display()))?;
    }
    if roots.is_empty() {
        return Err(format!("`plans.docker.tls.ca` {}: no certificate in it", ca.display()));
    }
    let chain = certificates(&cert)?;
    let private = PrivateKeyDer::from_pem_slice(&read(&key)?)
        .map_err(|e| format!("`plans.docker.tls.key` {}: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, private)
        .map_err(|e| format!("`plans.docker.tls` cert and key: {e}"))?;
    let https =
        HttpsConnectorBuilder::new().with_tls_config(config).https_only().enable_http1().build();
    let client = Client::builder(TokioExecutor::new()).build(https);
    let address =
        format!("https://{}", host.trim_start_matches("tcp://").trim_start_matches("https://"));
    Docker::connect_with_custom_transport(
        move |request: BollardRequest| {
            let client = client.clone();
            async move { client.request(request).await.map_err(bollard::errors::Error::from) }
        },
        Some(address),
        timeout,
        version,
    )
    .map_err(|e| e.to_string())
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    fs_err::read(path).map_err(|e| e.to_string())
}

fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    CertificateDer::pem_slice_iter(&read(path)?)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{}: {e}", path.display()))
}
