//! The engines seed 001's plans run on, for real: a private Podman serving the Docker Engine
//! API, and a single-node Slurm cluster. `scripts/test` starts both once and exports where they
//! are (`JIG_TEST_DOCKER_HOST`, `JIG_TEST_IMAGE`, `JIG_TEST_PODMAN`, `JIG_TEST_SLURM_CONF`);
//! otherwise the first test that asks starts its own with the project's scripts
//! (`scripts/engines/`), stopped when the test process exits.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// A Docker-API engine and the image the tests run.
#[derive(Debug, Clone)]
pub struct Podman {
    /// `unix:///…/podman.sock`.
    pub docker_host: String,
    /// The test image, pinned by digest.
    pub image: String,
    /// The `podman` command of this engine's storage (for hybrid plans and inspection).
    pub podman: PathBuf,
}

/// A Slurm cluster.
#[derive(Debug, Clone)]
pub struct Slurm {
    /// Its `slurm.conf`.
    pub conf: PathBuf,
}

/// The Podman engine, started on first use.
pub fn podman() -> &'static Podman {
    static ENGINE: OnceLock<Podman> = OnceLock::new();
    ENGINE.get_or_init(|| {
        if let (Ok(docker_host), Ok(image), Ok(podman)) = (
            std::env::var("JIG_TEST_DOCKER_HOST"),
            std::env::var("JIG_TEST_IMAGE"),
            std::env::var("JIG_TEST_PODMAN"),
        ) {
            return Podman { docker_host, image, podman: PathBuf::from(podman) };
        }
        let base = short_dir("jpm");
        let exports = start("podman", &base);
        Podman {
            docker_host: export(&exports, "DOCKER_HOST"),
            image: export(&exports, "JIG_TEST_IMAGE"),
            podman: PathBuf::from(export(&exports, "JIG_TEST_PODMAN")),
        }
    })
}

/// The Slurm cluster, started on first use.
pub fn slurm() -> &'static Slurm {
    static CLUSTER: OnceLock<Slurm> = OnceLock::new();
    CLUSTER.get_or_init(|| {
        if let Ok(conf) = std::env::var("JIG_TEST_SLURM_CONF") {
            return Slurm { conf: PathBuf::from(conf) };
        }
        let base = short_dir("jsl");
        let exports = start("slurm", &base);
        Slurm { conf: PathBuf::from(export(&exports, "SLURM_CONF")) }
    })
}

/// The project's script that starts and stops `engine`. Found from the package under test
/// (`cargo test` sets `CARGO_MANIFEST_DIR` when it runs a test; every package that uses this is
/// under `crates/`): read at run time, because a test binary built from another checkout of the
/// repository into the same target directory keeps the path it was compiled with.
pub fn script(engine: &str) -> PathBuf {
    Path::new(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR").as_str())
        .join("../../scripts/engines")
        .join(engine)
}

/// A fresh directory with a short path: socket paths are limited to 108 bytes.
fn short_dir(prefix: &str) -> PathBuf {
    let dir = PathBuf::from(format!("/tmp/{prefix}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Start `engine` in `base`, with a watchdog that stops it when this process ends; the
/// script's `export` lines.
fn start(engine: &str, base: &Path) -> String {
    let script = script(engine);
    let output = Command::new(&script)
        .arg("up")
        .arg(base)
        .output()
        .unwrap_or_else(|e| panic!("start {}: {e}", script.display()));
    assert!(
        output.status.success(),
        "{} up {}: {}{}",
        script.display(),
        base.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let watchdog = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 0.5; done; {script} down {base} >/dev/null 2>&1",
        pid = std::process::id(),
        script = script.display(),
        base = base.display()
    );
    // Backgrounded by an outer shell that exits at once: init adopts the watchdog.
    let status = Command::new("sh")
        .args(["-c", &format!("({watchdog}) &")])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("start the engine's watchdog");
    assert!(status.success(), "the engine's watchdog did not start");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The value of `export NAME=value` in `exports`.
fn export(exports: &str, name: &str) -> String {
    exports
        .lines()
        .find_map(|line| line.strip_prefix(&format!("export {name}=")))
        .unwrap_or_else(|| panic!("no `{name}` in:\n{exports}"))
        .to_owned()
}
