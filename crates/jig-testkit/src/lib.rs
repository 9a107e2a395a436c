//! Test support shared by Jig's crates: real servers on loopback.
//!
//! - [`postgres_url`]: a fresh database on a real PostgreSQL server.
//! - [`http::Server`]: a small HTTP/1.1 server on 127.0.0.1 whose answers a test scripts.
//! - [`serve::Serve`]: a real `jig serve` process, and a plain HTTP client for it.
//! - [`engines::podman`] and [`engines::slurm`]: real engines for seed 001's plans;
//!   [`tls_front::tls_front`]: a mutual-TLS TCP front on the Docker API's socket.
//! - [`rsyslog::Rsyslog`]: Debian's rsyslog taking syslog over TLS.

// Test support reports problems by panicking with the command that failed, and starts
// PostgreSQL, the engines, git and TLS fronts.
#![allow(clippy::disallowed_methods, clippy::print_stderr)]

pub mod engines;
pub mod http;
mod postgres;
pub mod rsyslog;
pub mod serve;
pub mod tls_front;

pub use postgres::postgres_url;

/// Run the real `git` in `dir` with a fixed identity; its trimmed stdout. Panics with git's
/// stderr when it fails.
pub fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .output()
        .expect("run git");
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}
