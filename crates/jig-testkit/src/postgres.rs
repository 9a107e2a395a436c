//! A real PostgreSQL server for the audit store's tests: the one named by
//! `JIG_TEST_POSTGRES_URL` when set (`scripts/test` starts one), otherwise a private cluster this
//! process creates with `initdb` and starts with `pg_ctl` on a free loopback port, and stops when
//! the process exits. Each call creates a fresh, empty database on it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A URL of a new, empty database on a real PostgreSQL server.
pub fn postgres_url() -> String {
    let server = server();
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let name = format!("jig_test_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    psql(&server.admin_url, &format!("CREATE DATABASE {name}"));
    format!("{}/{name}", server.base_url)
}

struct Server {
    /// `postgres://user@host:port` without a database.
    base_url: String,
    /// The maintenance database, for CREATE DATABASE.
    admin_url: String,
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| match std::env::var("JIG_TEST_POSTGRES_URL") {
        Ok(url) => {
            let base_url = url.rsplit_once('/').map_or(url.clone(), |(base, _)| base.to_owned());
            Server { admin_url: format!("{base_url}/postgres"), base_url }
        }
        Err(_) => start_private_cluster(),
    })
}

fn start_private_cluster() -> Server {
    let bin = bindir();
    let dir = std::env::temp_dir().join(format!("jig-pg-{}", std::process::id()));
    let data = dir.join("data");
    std::fs::create_dir_all(&dir).expect("create the cluster directory");
    let as_root = is_root();
    if as_root {
        // PostgreSQL refuses to run as root: the cluster belongs to the `postgres` user.
        run(Command::new("chown").args(["-R", "postgres:postgres"]).arg(&dir));
    }
    let port = free_port();
    let initdb = bin.join("initdb");
    run(as_user(as_root, &initdb).arg("-D").arg(&data).args([
        "-A",
        "trust",
        "-U",
        "postgres",
        "--no-sync",
    ]));
    let options = format!("-p {port} -k {} -c listen_addresses=127.0.0.1", dir.display());
    let pg_ctl = bin.join("pg_ctl");
    run(as_user(as_root, &pg_ctl)
        .arg("-D")
        .arg(&data)
        .args(["-o", &options, "-w", "-l"])
        .arg(dir.join("log"))
        .arg("start"));
    watch_and_stop(as_root, &pg_ctl, &data, &dir);
    let base_url = format!("postgres://postgres@127.0.0.1:{port}");
    Server { admin_url: format!("{base_url}/postgres"), base_url }
}

/// A detached shell that waits for this process to end, then stops the cluster and removes it:
/// test binaries exit without running destructors of statics.
fn watch_and_stop(as_root: bool, pg_ctl: &Path, data: &Path, dir: &Path) {
    let stop = if as_root {
        format!(
            "runuser -u postgres -- {} -D {} -m immediate stop",
            pg_ctl.display(),
            data.display()
        )
    } else {
        format!("{} -D {} -m immediate stop", pg_ctl.display(), data.display())
    };
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 0.5; done; {stop} >/dev/null 2>&1; rm -rf {dir}",
        pid = std::process::id(),
        dir = dir.display()
    );
    // The outer shell backgrounds the watchdog and exits at once, so the watchdog is adopted
    // by init and nothing is left for this process to reap.
    let status = Command::new("sh")
        .args(["-c", &format!("({script}) &")])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("start the cluster's watchdog");
    assert!(status.success(), "the cluster's watchdog did not start");
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn as_user(as_root: bool, program: &Path) -> Command {
    if as_root {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

fn bindir() -> PathBuf {
    if let Ok(output) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        if dir.join("initdb").is_file() {
            return dir;
        }
    }
    let mut candidates: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path().join("bin"))
                .filter(|p| p.join("initdb").is_file())
                .collect()
        })
        .unwrap_or_default();
    candidates.sort();
    candidates
        .pop()
        .expect("PostgreSQL server binaries (initdb, pg_ctl): install Debian's `postgresql`")
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("address").port()
}

fn run(command: &mut Command) {
    let output = command.output().unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn psql(url: &str, sql: &str) {
    run(Command::new("psql").args(["-q", "-v", "ON_ERROR_STOP=1", url, "-c", sql]));
}
