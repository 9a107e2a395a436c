//! Seed 001's plans on real engines, through the engine: a private Podman serving the Docker
//! Engine API and a single-node Slurm cluster (`jig_testkit::engines`). Nothing is mocked: the
//! containers and jobs run, and what they may not do is tried for real.

// Fixtures are written with std::fs (a failing test names the path in its message), and the
// tests start the engines' clients and reference programs.
#![allow(clippy::disallowed_methods)]

mod confinement;
mod docker;
mod slurm;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use jig_audit::RunRecord;
use jig_engine::{CallContext, Engine, EngineOptions, ToolRequest, ToolResponse};
use serde_json::Value;
use tempfile::TempDir;

/// A project whose tools are plans on the test engines; every side effect is allowed (the
/// governance of plans is the ordinary one, tested elsewhere).
pub struct Project {
    _dir: TempDir,
    /// The project directory.
    pub root: PathBuf,
}

impl Default for Project {
    fn default() -> Self {
        Self::new()
    }
}

impl Project {
    /// A fresh project on the test engines.
    pub fn new() -> Self {
        Self::with_docker("")
    }

    /// A fresh project whose `plans.docker` has `extra` (e.g. `, copy: true`).
    pub fn with_docker(extra: &str) -> Self {
        Self::with_docker_at(&jig_testkit::engines::podman().docker_host, extra)
    }

    /// A fresh project whose Docker engine is at `host`, with `extra` settings.
    pub fn with_docker_at(host: &str, extra: &str) -> Self {
        let podman = jig_testkit::engines::podman();
        let slurm = jig_testkit::engines::slurm();
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("project");
        std::fs::create_dir_all(root.join("tools")).expect("mkdir");
        let manifest = format!(
            "name: plans-test\npolicy:\n  rules:\n    - {{ effects: [exec, network], action: allow }}\n  plans:\n    docker: {{ host: '{}', networks: [podman]{extra} }}\n    slurm: {{ conf: '{}', poll: 200ms }}\n    hybrid: {{ runtime: ['{}'] }}\n",
            host,
            slurm.conf.display(),
            podman.podman.display()
        );
        std::fs::write(root.join("jig.yaml"), manifest).expect("manifest");
        std::fs::write(root.join("secret.txt"), "the workspace's secret\n").expect("secret");
        Self { _dir: dir, root }
    }

    /// Add `setting` (YAML, one line) to the manifest's `policy:`.
    pub fn policy(&self, setting: &str) -> &Self {
        let path = self.root.join("jig.yaml");
        let mut manifest = std::fs::read_to_string(&path).expect("manifest");
        manifest.push_str(&format!("  {setting}\n"));
        std::fs::write(path, manifest).expect("manifest");
        self
    }

    /// Write a tool file; `{image}` in `text` becomes the test image.
    pub fn tool(&self, name: &str, text: &str) -> &Self {
        let text = text.replace("{image}", &jig_testkit::engines::podman().image);
        std::fs::write(self.root.join("tools").join(format!("{name}.tool.yaml")), text)
            .expect("tool");
        self
    }

    /// Write a workspace file.
    pub fn file(&self, relative: &str, text: &str) -> &Self {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
        self
    }

    /// A fresh engine on this project (another process would see the same).
    pub async fn engine(&self) -> Arc<Engine> {
        Engine::open(EngineOptions { project: self.root.clone(), ..EngineOptions::default() })
            .await
            .unwrap_or_else(|e| panic!("open the engine: {e}"))
    }

    /// The text of an artifact the response lists under `role`.
    pub fn artifact(&self, response: &ToolResponse, role: &str) -> String {
        let artifacts = response.data["artifacts"].as_array().expect("artifacts");
        let entry = artifacts
            .iter()
            .find(|a| a["role"] == role)
            .unwrap_or_else(|| panic!("no `{role}` artifact in {artifacts:?}"));
        std::fs::read_to_string(self.root.join(entry["path"].as_str().expect("path")))
            .expect("artifact")
    }
}

/// A request with a fresh id.
pub fn request(tool: &str, args: Value) -> ToolRequest {
    ToolRequest {
        kind: Default::default(),
        tool: tool.to_owned(),
        args,
        request_id: format!("req-{}", uuid::Uuid::new_v4().simple()),
        session_id: None,
        timestamp: None,
    }
}

/// `alice` in a session of her own.
pub fn caller() -> CallContext {
    CallContext {
        session_id: format!("s-{}", uuid::Uuid::new_v4().simple()),
        principal: "alice".to_owned(),
        ..CallContext::default()
    }
}

/// Dispatch as [`caller`].
pub async fn call(engine: &Engine, tool: &str, args: Value) -> ToolResponse {
    engine.dispatch(request(tool, args), caller()).await
}

/// The first error's code.
pub fn code(response: &ToolResponse) -> String {
    response.errors.first().map(|e| e.code.to_string()).unwrap_or_default()
}

/// Poll the job of `request_id` until its run is final (at most `limit`); the run.
pub async fn settle(engine: &Engine, request_id: &str, limit: Duration) -> RunRecord {
    let deadline = std::time::Instant::now() + limit;
    loop {
        let run = engine.poll_job(request_id).await.expect("poll").expect("run");
        if run.state.is_final() {
            return run;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{request_id} still {:?} after {limit:?}",
            run.state
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The final response of a job's call.
pub async fn final_response(engine: &Engine, request_id: &str) -> ToolResponse {
    let run = settle(engine, request_id, Duration::from_secs(90)).await;
    assert!(run.state.is_final());
    engine.response_of(request_id).await.expect("response").expect("recorded")
}

/// The packet kinds of a request, in order.
pub async fn kinds(engine: &Engine, request_id: &str) -> Vec<String> {
    engine
        .store()
        .packets_of(request_id)
        .await
        .expect("packets")
        .into_iter()
        .map(|p| p.kind)
        .collect()
}

/// Limits every test tool uses.
pub const LIMITS: &str = "limits: {maxInputBytes: 65536, maxOutputBytes: 1048576}";
