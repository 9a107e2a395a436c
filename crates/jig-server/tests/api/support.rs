//! A served copy of the example project with three people, and a small HTTP client.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use jig_engine::{Engine, EngineOptions};
use jig_server::auth::Users;
use jig_server::serve::Bound;
use serde_json::Value;

pub const ALICE: &str = "alice-runner-token-0123456789abcdef";
pub const BOB: &str = "bob-approver-token-0123456789abcdef";
pub const VIC: &str = "vic-viewer-token-0123456789abcdef0";

pub struct Served {
    pub base: String,
    pub port: u16,
    pub dir: tempfile::TempDir,
    pub engine: Arc<Engine>,
    http: reqwest::Client,
}

fn repo() -> PathBuf {
    Path::new(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR").as_str())
        .join("../..")
}

fn copy(from: &Path, to: &Path) {
    for entry in fs_err::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_name() == ".jig" {
            continue;
        }
        if entry.file_type().expect("type").is_dir() {
            fs_err::create_dir_all(&target).expect("mkdir");
            copy(&entry.path(), &target);
        } else {
            fs_err::copy(entry.path(), &target).expect("copy");
        }
    }
}

impl Served {
    pub async fn start() -> Self {
        Self::start_with(&[]).await
    }

    /// Serve a copy of the example project with these files added (path, content).
    pub async fn start_with(extra: &[(&str, &str)]) -> Self {
        Self::start_configured(extra, |_| {}).await
    }

    /// The same, with the engine's options as `configure` leaves them.
    pub async fn start_configured(
        extra: &[(&str, &str)],
        configure: impl FnOnce(&mut EngineOptions),
    ) -> Self {
        // reqwest is built without a TLS provider of its own; these requests are plain HTTP.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let dir = tempfile::tempdir().expect("tmp");
        copy(&repo().join("toolpacks/examples"), dir.path());
        for (path, content) in extra {
            fs_err::write(dir.path().join(path), content).expect("extra file");
        }
        let users_file = dir.path().join("users.yaml");
        fs_err::write(
            &users_file,
            format!(
                "users:\n  - {{ name: alice, role: runner, token: {ALICE} }}\n  - {{ name: bob, role: approver, token: {BOB} }}\n  - {{ name: vic, role: viewer, token: {VIC} }}\n"
            ),
        )
        .expect("users");
        let users = Users::from_file(&users_file).expect("users file");
        let mut options =
            EngineOptions { project: dir.path().to_path_buf(), ..EngineOptions::default() };
        configure(&mut options);
        let engine = Engine::open(options).await.expect("engine");
        let bound = Bound::bind(
            "127.0.0.1:0".parse().expect("addr"),
            Arc::clone(&engine),
            users,
            "examples".to_owned(),
            &[],
        )
        .await
        .expect("bind");
        let port = bound.addr.port();
        tokio::spawn(bound.run(std::future::pending()));
        Self {
            base: format!("http://127.0.0.1:{port}"),
            port,
            dir,
            engine,
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
        }
    }

    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.http.get(format!("{}{path}", self.base))
    }

    pub fn put(&self, path: &str, body: &Value) -> reqwest::RequestBuilder {
        self.http
            .put(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body.to_string())
    }

    pub fn delete(&self, path: &str) -> reqwest::RequestBuilder {
        self.http.delete(format!("{}{path}", self.base))
    }

    pub fn post_form(&self, path: &str, body: &str) -> reqwest::RequestBuilder {
        self.http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body.to_owned())
    }

    pub fn post(&self, path: &str, body: &Value) -> reqwest::RequestBuilder {
        self.http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body.to_string())
    }
}

/// Send, and return the status and the JSON body (`Null` when empty).
pub async fn send(request: reqwest::RequestBuilder, token: Option<&str>) -> (u16, Value) {
    let request = match token {
        Some(token) => request.bearer_auth(token),
        None => request,
    };
    let response = request.send().await.expect("send");
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    (status, body)
}
