//! Syslog over TLS: each packet one RFC 5424 message, framed by its length (RFC 5425's octet
//! counting, so a message may hold any byte), on a TLS connection trusting the CAs the
//! forwarder names. The message's structured data carries the packet's seq and hash, its
//! body the event after a byte order mark (RFC 5424 §6.4: UTF-8).
//!
//! Syslog never answers, so what was taken is inferred: the bytes the receiver's TCP has
//! acknowledged (the socket's send queue, as the kernel shows it in `/proc/self/net/tcp`), on a
//! connection still up a moment later — a receiver that stops closes its end, and a read here
//! sees it at once. What was written in the last moments before a close is sent again.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use jig_audit::Packet;
use jig_model::manifest::AuditForward;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt, WriteHalf};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio_rustls::client::TlsStream;

/// How long connecting (TCP and the TLS handshake) may take.
const CONNECT: Duration = Duration::from_secs(10);
/// How long writing one batch may take.
const WRITE: Duration = Duration::from_secs(30);
/// `<PRI>`: facility 13 (log audit) × 8 + severity 6 (informational).
const PRI: u8 = 13 * 8 + 6;
/// The structured data's id. Jig has no private enterprise number of its own; 32473 is the
/// one RFC 5612 sets aside for documentation, so receivers key on the name `jig`.
const SD_ID: &str = "jig@32473";
/// Where the system keeps the public CAs, trusted when the forwarder names none.
const SYSTEM_CAS: &str = "/etc/ssl/certs/ca-certificates.crt";

/// Where a syslog forwarder connects, and how it trusts the receiver: read once, so a CA file
/// that cannot be read is said when the forwarder starts, not retried.
#[derive(Debug, Clone)]
pub(super) struct Endpoint {
    address: String,
    name: ServerName<'static>,
    tls: Arc<rustls::ClientConfig>,
}

impl Endpoint {
    pub(super) fn new(config: &AuditForward, root: &Path) -> Result<Self, String> {
        let address = config.url.trim_start_matches("syslog+tls://").to_owned();
        let (host, _) = address.rsplit_once(':').ok_or("`url` has no port")?;
        let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
        let ca = config.ca.as_deref().map_or_else(|| SYSTEM_CAS.into(), |ca| root.join(ca));
        let tls = Arc::new(client_config(&ca)?);
        let name = ServerName::try_from(host).map_err(|e| format!("`url`: {e}"))?;
        Ok(Self { address, name, tls })
    }
}

pub(super) struct Syslog {
    write: WriteHalf<TlsStream<TcpStream>>,
    /// Reads the receiver's end until it closes (then it has finished, and says so in `gone`).
    reader: tokio::task::JoinHandle<()>,
    gone: Arc<Notify>,
    host: String,
    /// This end and the receiver's, to find the connection among the kernel's.
    ends: Option<(std::net::SocketAddr, std::net::SocketAddr)>,
    /// Whether the receiver's TCP acknowledged the last batch (`None`: the kernel does not
    /// say). Nothing is in flight before the first.
    acknowledged: Option<bool>,
}

impl Drop for Syslog {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Syslog {
    /// Connect to `endpoint` at `addresses` (its name's, as the network policy checked them).
    pub(super) async fn connect(
        endpoint: &Endpoint,
        addresses: &[std::net::SocketAddr],
    ) -> Result<Self, String> {
        let address = endpoint.address.as_str();
        let (name, tls) = (endpoint.name.clone(), Arc::clone(&endpoint.tls));
        let stream = tokio::time::timeout(CONNECT, async {
            let tcp = TcpStream::connect(addresses).await.map_err(|e| format!("{address}: {e}"))?;
            let _ = tcp.set_nodelay(true);
            let ends = tcp.local_addr().ok().zip(tcp.peer_addr().ok());
            tokio_rustls::TlsConnector::from(tls)
                .connect(name, tcp)
                .await
                .map(|stream| (stream, ends))
                .map_err(|e| format!("{address}: TLS: {e}"))
        })
        .await
        .map_err(|_| format!("{address}: no connection within {}s", CONNECT.as_secs()))??;
        let (stream, ends) = stream;
        let (mut read, write) = tokio::io::split(stream);
        let gone = Arc::new(Notify::new());
        // A syslog receiver never writes: anything read is its end closing.
        let reader = tokio::spawn({
            let gone = Arc::clone(&gone);
            async move {
                let mut buffer = [0u8; 256];
                while matches!(read.read(&mut buffer).await, Ok(n) if n > 0) {}
                gone.notify_one();
            }
        });
        let host = super::host_name();
        Ok(Self { write, reader, gone, host, ends, acknowledged: Some(true) })
    }

    pub(super) async fn send(
        &mut self,
        packets: &[Packet],
        events: &[serde_json::Value],
    ) -> Result<(), String> {
        self.check()?;
        let mut buffer = String::new();
        for (packet, event) in packets.iter().zip(events) {
            let message = message(packet, event, &self.host);
            buffer.push_str(&format!("{} {message}", message.len()));
        }
        tokio::time::timeout(WRITE, async {
            self.write.write_all(buffer.as_bytes()).await?;
            self.write.flush().await
        })
        .await
        .map_err(|_| format!("the receiver took no batch within {}s", WRITE.as_secs()))?
        .map_err(|e| format!("writing to the receiver: {e}"))?;
        // One batch in flight at a time: the next is written once the receiver's TCP took
        // this one, so what a stop can catch unread is one batch, not the stream.
        let deadline = tokio::time::Instant::now() + WRITE;
        let mut pause = Duration::from_millis(1);
        loop {
            self.acknowledged = self.send_queue_empty();
            if self.acknowledged != Some(false) {
                return Ok(());
            }
            self.check()?;
            if tokio::time::Instant::now() >= deadline {
                return Err(format!("the receiver took no batch within {}s", WRITE.as_secs()));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }

    /// Whether the receiver's TCP acknowledged the last batch; `None` when the kernel does not
    /// say.
    pub(super) fn acknowledged(&self) -> Option<bool> {
        self.acknowledged
    }

    /// Whether the receiver's TCP has acknowledged every byte written, as the kernel's table
    /// of sockets says; `None` when it does not.
    fn send_queue_empty(&self) -> Option<bool> {
        let (local, peer) = self.ends?;
        let table = if local.is_ipv4() { "/proc/self/net/tcp" } else { "/proc/self/net/tcp6" };
        let text = fs_err::read_to_string(table).ok()?;
        send_queue(&text, local.port(), peer.port()).map(|queued| queued == 0)
    }

    pub(super) fn check(&self) -> Result<(), String> {
        if self.reader.is_finished() {
            return Err("the receiver closed the connection".to_owned());
        }
        Ok(())
    }

    pub(super) async fn closed(&self) -> String {
        if !self.reader.is_finished() {
            self.gone.notified().await;
        }
        "the receiver closed the connection".to_owned()
    }
}

/// One packet as an RFC 5424 message (without its length).
fn message(packet: &Packet, event: &serde_json::Value, host: &str) -> String {
    // MSGID: 1–32 printable characters.
    let kind: String = packet.kind.chars().filter(char::is_ascii_graphic).take(32).collect();
    let kind = if kind.is_empty() { "-".to_owned() } else { kind };
    format!(
        "<{PRI}>1 {} {host} jig - {kind} [{SD_ID} seq=\"{}\" hash=\"{}\"] \u{feff}{event}",
        jig_audit::time::rfc3339(packet.ts_us),
        packet.seq,
        packet.hash,
    )
}

/// The bytes not yet acknowledged by the other end of the connection from `local` to `peer`
/// port, from the kernel's table of TCP sockets (`tx_queue`, hexadecimal).
fn send_queue(table: &str, local: u16, peer: u16) -> Option<u64> {
    let port = |address: &str| u16::from_str_radix(address.rsplit(':').next()?, 16).ok();
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (ours, theirs, queues) = (fields.get(1)?, fields.get(2)?, fields.get(4)?);
        if port(ours)? != local || port(theirs)? != peer {
            return None;
        }
        u64::from_str_radix(queues.split(':').next()?, 16).ok()
    })
}

/// A TLS client trusting the CAs in `ca` alone.
fn client_config(ca: &Path) -> Result<rustls::ClientConfig, String> {
    let bytes = fs_err::read(ca).map_err(|e| format!("`ca`: {e}"))?;
    let mut roots = rustls::RootCertStore::empty();
    for certificate in CertificateDer::pem_slice_iter(&bytes) {
        let certificate = certificate.map_err(|e| format!("`ca` {}: {e}", ca.display()))?;
        // A bundle may hold certificates rustls cannot take; the others still count.
        let _ = roots.add(certificate);
    }
    if roots.is_empty() {
        return Err(format!("`ca` {}: no certificate in it", ca.display()));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_send_queue_is_read_from_the_kernels_table_for_this_connection() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr\n   0: 0100007F:94A9 0100007F:3E8E 01 000001F4:00000000 00:00000000\n   1: 0100007F:94AA 0100007F:3E8E 01 00000000:00000000 00:00000000\n";
        assert_eq!(send_queue(table, 0x94A9, 0x3E8E), Some(500));
        assert_eq!(send_queue(table, 0x94AA, 0x3E8E), Some(0));
        assert_eq!(send_queue(table, 0x94AB, 0x3E8E), None);
    }

    #[test]
    fn a_packet_is_one_rfc5424_message_with_its_seq_in_structured_data() {
        let packet = Packet {
            seq: 42,
            kind: "tool.call.request".to_owned(),
            ts_us: 1_764_000_000_123_456,
            session_id: None,
            thread_id: None,
            principal: None,
            request_id: None,
            run_id: None,
            tool: None,
            args_hash: None,
            data: serde_json::Value::Null,
            prev_hash: String::new(),
            hash: "ab12".to_owned(),
        };
        let text = message(&packet, &serde_json::json!({ "id": "ab12" }), "build-1");
        assert_eq!(
            text,
            "<110>1 2025-11-24T16:00:00.123Z build-1 jig - tool.call.request [jig@32473 seq=\"42\" hash=\"ab12\"] \u{feff}{\"id\":\"ab12\"}"
        );
    }
}
