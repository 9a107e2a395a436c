//! End-to-end tests of the `jig` binary: real processes on real projects.

// Test fixtures are written with std::fs (a failing test names the path in its message), and
// the tests start `jig` and reference programs as a person would.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod attacks;
mod calls;
mod catalog;
mod checkpoints;
mod commands;
mod concurrency;
mod consent;
mod decisions;
mod forward;
mod gert_compat;
mod grants;
mod launcher;
mod layers;
mod notices;
mod plans;
mod receiver;
mod runbooks;
mod teams;
mod telemetry;
mod truncation;
mod upstream;

/// Run `jig` with `args` in `dir`.
pub fn jig(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_jig"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("run jig")
}

/// Run `jig` with `args` in `dir`, with `env` set.
pub fn jig_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_jig"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .envs(env.iter().copied())
        .output()
        .expect("run jig")
}

/// The packets of `kind` in the project's record (`jig audit export`, with `env` set), oldest
/// first.
pub fn packets_of(dir: &Path, env: &[(&str, &str)], kind: &str) -> Vec<Value> {
    let export = jig_env(dir, &["audit", "export"], env);
    assert_eq!(export.status.code(), Some(0), "{}", stderr(&export));
    String::from_utf8_lossy(&export.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"))
        .filter(|packet| packet["kind"] == kind)
        .collect()
}

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR").as_str())
        .join("../..")
        .canonicalize()
        .expect("repo")
}

/// Standard output, parsed as JSON.
pub fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!("stdout is not JSON ({e}): {}", String::from_utf8_lossy(&output.stdout))
    })
}

/// Standard error, as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
