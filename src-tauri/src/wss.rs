//! WebSocket connections to a team server: TLS checked against the system's trusted
//! certificates (rustls with ring and the platform's verifier, as the app's HTTP client), plain
//! only to this computer (the server address was checked when the app signed in).

use std::sync::{Arc, Once};
use std::time::Duration;

use rustls_platform_verifier::ConfigVerifierExt as _;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::client::{Request, Response};

/// How long connecting (TCP, TLS and the upgrade) may take.
const CONNECT_TIME: Duration = Duration::from_secs(10);

/// A connection, with or without TLS.
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// rustls's ring provider, once per process (reqwest and this share it).
pub fn install_crypto() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Open the WebSocket of `request` (`wss://` or, to this computer, `ws://`).
pub async fn connect(request: Request) -> Result<(WebSocketStream<Box<dyn Io>>, Response), String> {
    tokio::time::timeout(CONNECT_TIME, open(request))
        .await
        .map_err(|_| "connecting took too long".to_owned())?
}

async fn open(request: Request) -> Result<(WebSocketStream<Box<dyn Io>>, Response), String> {
    let uri = request.uri().clone();
    let host = uri.host().ok_or("the address has no host")?.trim_matches(['[', ']']).to_owned();
    let secure = uri.scheme_str() == Some("wss");
    let port = uri.port_u16().unwrap_or(if secure { 443 } else { 80 });
    let tcp = TcpStream::connect((host.as_str(), port)).await.map_err(|e| e.to_string())?;
    let stream: Box<dyn Io> = if secure {
        install_crypto();
        let config = rustls::ClientConfig::with_platform_verifier().map_err(|e| e.to_string())?;
        let name = rustls::pki_types::ServerName::try_from(host).map_err(|e| e.to_string())?;
        let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS: {e}"))?;
        Box::new(tls)
    } else {
        Box::new(tcp)
    };
    tokio_tungstenite::client_async(request, stream).await.map_err(|e| e.to_string())
}
