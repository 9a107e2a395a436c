//! A private Debian rsyslogd receiving RFC 5424 syslog over TLS (its OpenSSL driver), for the
//! audit forwarder's tests and benchmark: stopped and started again on the same port as a
//! service would be, and read back by seq.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A private rsyslogd taking RFC 5424 over TLS (its OpenSSL driver) on `port`, writing each
/// message's MSGID, structured data and body to `received.log`.
pub struct Rsyslog {
    dir: tempfile::TempDir,
    port: u16,
    child: Option<Child>,
}

impl Rsyslog {
    /// Start one, with a new CA and a certificate for `localhost` and 127.0.0.1.
    pub fn start() -> Self {
        let dir = tempfile::tempdir().expect("tmp");
        let run = |args: &[&str]| {
            let done = Command::new("openssl")
                .args(args)
                .current_dir(dir.path())
                .output()
                .expect("openssl");
            assert!(
                done.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&done.stderr)
            );
        };
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
        run(&[
            &["req", "-x509"][..],
            &ec,
            &["-keyout", "ca-key.pem", "-out", "ca.pem", "-days", "2", "-subj", "/CN=jig-test-ca"],
        ]
        .concat());
        run(&[
            &["req"][..],
            &ec,
            &["-keyout", "key.pem", "-out", "req.pem", "-subj", "/CN=localhost"],
        ]
        .concat());
        std::fs::write(dir.path().join("ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n")
            .expect("ext");
        run(&[
            "x509",
            "-req",
            "-in",
            "req.pem",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca-key.pem",
            "-CAcreateserial",
            "-out",
            "cert.pem",
            "-days",
            "2",
            "-extfile",
            "ext",
        ]);
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("port")
            .local_addr()
            .expect("addr")
            .port();
        let d = dir.path().display();
        let config = format!(
            "global(workDirectory=\"{d}\" DefaultNetstreamDriver=\"ossl\" DefaultNetstreamDriverCAFile=\"{d}/ca.pem\" DefaultNetstreamDriverCertFile=\"{d}/cert.pem\" DefaultNetstreamDriverKeyFile=\"{d}/key.pem\")\n\
             module(load=\"imtcp\" StreamDriver.Name=\"ossl\" StreamDriver.Mode=\"1\" StreamDriver.AuthMode=\"anon\")\n\
             input(type=\"imtcp\" address=\"127.0.0.1\" port=\"{port}\")\n\
             template(name=\"seen\" type=\"string\" string=\"%msgid% %structured-data% %msg%\\n\")\n\
             *.* action(type=\"omfile\" file=\"{d}/received.log\" template=\"seen\")\n"
        );
        std::fs::write(dir.path().join("rsyslog.conf"), config).expect("config");
        let mut receiver = Self { dir, port, child: None };
        receiver.resume();
        receiver
    }

    /// Start it (again) on the same port.
    pub fn resume(&mut self) {
        let child = Command::new("rsyslogd")
            // Absolute paths: rsyslogd changes to `/` before it writes its pid file, so a
            // relative one would be shared by every instance (and the second refuse to run).
            .arg("-n")
            .arg("-f")
            .arg(self.dir.path().join("rsyslog.conf"))
            .arg("-i")
            .arg(self.dir.path().join("rsyslogd.pid"))
            .current_dir(self.dir.path())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(self.dir.path().join("rsyslogd.err")).expect("log"))
            .spawn()
            .expect("rsyslogd (scripts/setup installs rsyslog and rsyslog-openssl)");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "rsyslogd did not listen on {}: {}",
                self.port,
                std::fs::read_to_string(self.dir.path().join("rsyslogd.err")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stop it as its service would be stopped (SIGTERM), and wait until it has.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
            let _ = child.wait();
        }
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The file of what it received: a line a message, `MSGID STRUCTURED-DATA MSG`.
    pub fn log(&self) -> PathBuf {
        self.dir.path().join("received.log")
    }

    /// The CA its certificate is signed by.
    pub fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// The seqs received, in the order they arrived (copies included).
    pub fn seqs(&self) -> Vec<i64> {
        let text =
            std::fs::read_to_string(self.dir.path().join("received.log")).unwrap_or_default();
        text.lines()
            .filter_map(|line| {
                let at = line.find("seq=\"")? + 5;
                line[at..].split('"').next()?.parse().ok()
            })
            .collect()
    }

    /// Wait until at least `count` distinct seqs arrived.
    pub fn wait_for(&self, count: usize, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let distinct = self.seqs().into_iter().collect::<BTreeSet<_>>().len();
            if distinct >= count {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{distinct} of {count} packets arrived within {within:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Rsyslog {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
