//! A mutual-TLS TCP front on a Docker-API unix socket, for the path a remote Docker host takes
//! (`tcp://` with `plans.docker.tls`): openssl makes a CA, a server certificate for
//! `localhost`, a client certificate the CA signed and one it did not; stunnel terminates TLS,
//! requires a client certificate the CA signed, and forwards to the socket.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running TLS front; stopped and its files removed when dropped.
#[derive(Debug)]
pub struct TlsFront {
    /// `tcp://localhost:PORT`.
    pub host: String,
    /// The CA that signed the server's and the good client's certificates.
    pub ca: PathBuf,
    /// A client certificate and key the front accepts.
    pub cert: PathBuf,
    /// The key of [`Self::cert`].
    pub key: PathBuf,
    /// A client certificate and key from another CA, which the front refuses.
    pub rogue_cert: PathBuf,
    /// The key of [`Self::rogue_cert`].
    pub rogue_key: PathBuf,
    dir: PathBuf,
    stunnel: Child,
}

/// Start a front for the engine at `docker_host` (`unix:///…`).
pub fn tls_front(docker_host: &str) -> TlsFront {
    let socket = docker_host.strip_prefix("unix://").expect("a unix:// engine");
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("jig-tls-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tls dir");
    let file = |name: &str| dir.join(name);

    self_signed(&dir, "ca", "/CN=jig test CA");
    signed(&dir, "server", "/CN=localhost", Some("subjectAltName=DNS:localhost,IP:127.0.0.1"));
    signed(&dir, "client", "/CN=jig", Some("extendedKeyUsage=clientAuth"));
    self_signed(&dir, "rogue", "/CN=rogue");
    // stunnel reads the server's certificate and key from one file.
    let pem = [
        std::fs::read_to_string(file("server.pem")).expect("pem"),
        std::fs::read_to_string(file("server.key")).expect("key"),
    ]
    .concat();
    std::fs::write(file("server-all.pem"), pem).expect("server pem");

    let port =
        TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
    let config = format!(
        "foreground = yes\npid =\nsyslog = no\noutput = {log}\n[docker]\naccept = 127.0.0.1:{port}\nconnect = {socket}\ncert = {cert}\nCAfile = {ca}\nverifyChain = yes\nrequireCert = yes\n",
        log = file("stunnel.log").display(),
        cert = file("server-all.pem").display(),
        ca = file("ca.pem").display(),
    );
    std::fs::write(file("stunnel.conf"), config).expect("stunnel.conf");
    let stunnel = Command::new("stunnel")
        .arg(file("stunnel.conf"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start stunnel (scripts/setup installs it)");
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "stunnel did not listen on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
    TlsFront {
        host: format!("tcp://localhost:{port}"),
        ca: file("ca.pem"),
        cert: file("client.pem"),
        key: file("client.key"),
        rogue_cert: file("rogue.pem"),
        rogue_key: file("rogue.key"),
        dir,
        stunnel,
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        let _ = self.stunnel.kill();
        let _ = self.stunnel.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A key and self-signed certificate `NAME.key`/`NAME.pem` for `subject` (a CA).
fn self_signed(dir: &Path, name: &str, subject: &str) {
    let (key, pem) = (format!("{name}.key"), format!("{name}.pem"));
    openssl(
        dir,
        &[
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", subject,
            "-keyout", &key, "-out", &pem,
        ],
    );
}

/// A key and certificate `NAME.key`/`NAME.pem` for `subject`, signed by `ca.pem`.
fn signed(dir: &Path, name: &str, subject: &str, extension: Option<&str>) {
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            subject,
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.csr"),
        ],
    );
    let mut args = vec![
        "x509",
        "-req",
        "-in",
        &format!("{name}.csr"),
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-out",
        &format!("{name}.pem"),
    ]
    .into_iter()
    .map(str::to_owned)
    .collect::<Vec<_>>();
    if let Some(extension) = extension {
        std::fs::write(dir.join(format!("{name}.ext")), extension).expect("ext");
        args.extend(["-extfile".to_owned(), format!("{name}.ext")]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    openssl(dir, &args);
}

fn openssl(dir: &Path, args: &[&str]) {
    let output = Command::new("openssl").args(args).current_dir(dir).output().expect("run openssl");
    assert!(
        output.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}
