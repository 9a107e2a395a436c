//! What the app has open: a project folder (its engine, the in-process API over it, the
//! watcher that keeps its tool list current) or a team server it is signed in to
//! (`crate::remote`), with the task that forwards events to the window. Opening another
//! replaces all of it at once; one that fails to open leaves the current one in place.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use jig_engine::{Engine, EngineError, EngineOptions};
use jig_server::auth::{Person, Role};
use jig_server::local::{Answer, Local, next};
use serde::Serialize;
use tauri::{AppHandle, Emitter as _, Manager as _};
use tokio::sync::RwLock;

use crate::WINDOW;
use crate::recent;
use crate::remote::Remote;

/// The app's state.
pub struct Desktop {
    started: Instant,
    /// Whether the first project has been opened (or failed to): until then requests wait, so
    /// the engine loads while the webview starts instead of before.
    first_open: tokio::sync::watch::Sender<bool>,
    opened: RwLock<Option<Opened>>,
    failure: std::sync::Mutex<Option<String>>,
    reported_ready: AtomicBool,
    /// Told when the person gives up a sign-in that waits for the browser.
    cancel: tokio::sync::Notify,
}

struct Opened {
    backend: Backend,
    forward: tauri::async_runtime::JoinHandle<()>,
}

/// Where the page's requests go.
enum Backend {
    /// A project folder, in process.
    /// `_resident`: the project's duties while it is open (its watch, jobs, the store
    /// followed, upstream servers, the audit forwarded as `jig serve` and `jig mcp` forward
    /// it), stopped when the project is closed: each forwarder lets what is in flight be
    /// taken, records its place and gives up its lease, so the next process goes on at once.
    Local { local: Local, root: PathBuf, _resident: jig_app::Resident },
    /// A team server.
    Remote(Arc<Remote>),
}

impl Drop for Opened {
    fn drop(&mut self) {
        self.forward.abort();
    }
}

/// What the UI shows about projects.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectInfo {
    /// The open project's root, if one is open.
    pub path: Option<PathBuf>,
    /// The team server the app is signed in to, if that is what is open.
    pub server: Option<String>,
    /// Why the last attempt to open one failed (the loader's diagnostics, rendered).
    pub failure: Option<String>,
    /// Projects opened lately, newest first.
    pub recent: Vec<PathBuf>,
    /// Team servers signed in to lately, newest first.
    pub servers: Vec<String>,
}

impl Desktop {
    /// No project open yet; `started` is when the process began.
    pub fn new(started: Instant) -> Self {
        Self {
            started,
            first_open: tokio::sync::watch::Sender::new(false),
            opened: RwLock::new(None),
            failure: std::sync::Mutex::new(None),
            reported_ready: AtomicBool::new(false),
            cancel: tokio::sync::Notify::new(),
        }
    }

    /// Open the project at `path` (its manifest may be above it) and make it the current one.
    pub async fn open(&self, app: &AppHandle, path: &Path) -> Result<ProjectInfo, String> {
        let opened = open(app, path).await;
        *self.failure.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
            opened.as_ref().err().cloned();
        let opened = opened?;
        let Backend::Local { root, .. } = &opened.backend else {
            unreachable!("a folder opens locally")
        };
        if let Err(error) = recent::remember(root) {
            tracing::warn!("recent projects: {error}");
        }
        let name = root.file_name().unwrap_or_default().to_string_lossy().into_owned();
        self.replace(app, &name, opened).await
    }

    /// Sign in to the team server at `address` (in the person's browser) and make it what is
    /// open.
    pub async fn connect(&self, app: &AppHandle, address: &str) -> Result<ProjectInfo, String> {
        // A sign-in started before and still waiting gives way to this one.
        self.cancel.notify_waiters();
        let remote = tokio::select! {
            remote = crate::team::sign_in(address) => remote.map(Arc::new),
            () = self.cancel.notified() => Err("the sign-in was cancelled".to_owned()),
        };
        // A failure is said where the person typed the address (the page has the answer);
        // once a server is open, no earlier failure is left showing.
        let remote = remote?;
        *self.failure.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        if let Err(error) = recent::remember_server(remote.origin()) {
            tracing::warn!("recent servers: {error}");
        }
        let forward = remote.follow(app.clone());
        let name =
            remote.origin().split_once("://").map_or(remote.origin(), |(_, host)| host).to_owned();
        self.replace(app, &name, Opened { backend: Backend::Remote(remote), forward }).await
    }

    /// Give up a sign-in that waits for the browser.
    pub fn cancel_connect(&self) {
        self.cancel.notify_waiters();
    }

    /// Leave the team server (the page signed out): nothing is open after.
    pub async fn leave(&self) {
        let mut opened = self.opened.write().await;
        if matches!(opened.as_ref().map(|o| &o.backend), Some(Backend::Remote(_))) {
            *opened = None;
        }
    }

    async fn replace(
        &self,
        app: &AppHandle,
        name: &str,
        opened: Opened,
    ) -> Result<ProjectInfo, String> {
        if let Some(window) = app.get_webview_window(WINDOW) {
            let _ = window.set_title(&format!("{name} · Jig"));
        }
        // The old engine goes once no request holds it; its forwarder stops now.
        *self.opened.write().await = Some(opened);
        Ok(self.info_now().await)
    }

    /// The first project is open, or failed to open: let waiting requests through.
    pub fn first_open_done(&self) {
        self.first_open.send_replace(true);
    }

    async fn after_first_open(&self) {
        let mut done = self.first_open.subscribe();
        // An error means the sender is gone, which it is not while `self` lives.
        let _ = done.wait_for(|done| *done).await;
    }

    /// The open project, the last failure and the recent list, once the first project is open.
    pub async fn info(&self) -> ProjectInfo {
        self.after_first_open().await;
        self.info_now().await
    }

    async fn info_now(&self) -> ProjectInfo {
        let (path, server) = match self.opened.read().await.as_ref().map(|o| &o.backend) {
            Some(Backend::Local { root, .. }) => (Some(root.clone()), None),
            Some(Backend::Remote(remote)) => (None, Some(remote.origin().to_owned())),
            None => (None, None),
        };
        let failure =
            self.failure.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        ProjectInfo { path, server, failure, recent: recent::list(), servers: recent::servers() }
    }

    /// Hand one API request to the open project's router.
    pub async fn api(
        &self,
        method: &str,
        path: &str,
        body: Option<String>,
    ) -> Result<Answer, String> {
        match self.current().await? {
            Current::Local(local) => {
                local.handle(method, path, body).await.map_err(|e| e.to_string())
            }
            Current::Remote(remote) => {
                let answer = remote.handle(method, path, body).await?;
                // Signed out on the server (here, or anywhere: the session ended): nothing
                // is open any more, and the page starts again on the welcome page.
                if (method == "POST" && path == "/auth/logout") || answer.status == 401 {
                    self.leave().await;
                }
                Ok(answer)
            }
        }
    }

    /// What the page's requests go to now.
    async fn current(&self) -> Result<Current, String> {
        self.after_first_open().await;
        match self.opened.read().await.as_ref().map(|o| &o.backend) {
            Some(Backend::Local { local, .. }) => Ok(Current::Local(local.clone())),
            Some(Backend::Remote(remote)) => Ok(Current::Remote(Arc::clone(remote))),
            None => {
                Err("nothing is open: open a folder with a jig.yaml, or a team server".to_owned())
            }
        }
    }

    /// The bytes the API serves at `path`, or the error it answers with, as text.
    pub async fn download(&self, path: &str) -> Result<Vec<u8>, String> {
        let local = match self.current().await? {
            Current::Local(local) => local,
            Current::Remote(remote) => return remote.download(path).await,
        };
        match local.download(path).await.map_err(|e| e.to_string())? {
            (200, bytes) => Ok(bytes),
            (status, body) => Err(serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v["message"].as_str().map(str::to_owned))
                .unwrap_or_else(|| format!("HTTP {status}"))),
        }
    }

    /// The UI says the tool list is on screen and answers keys: log the time since start,
    /// once (the start benchmark reads it), and where it went by the page's own marks.
    pub fn ready(&self, marks: &BTreeMap<String, f64>) {
        if self.reported_ready.swap(true, Ordering::SeqCst) {
            return;
        }
        let elapsed = self.started.elapsed().as_secs_f64() * 1000.0;
        tracing::info!("tool list interactive {elapsed} ms after start");
        if let Some(ready) = marks.get("ready") {
            // The page's clock starts when it began loading; main()'s is ours.
            let page = elapsed - ready;
            let shown: Vec<String> =
                marks.iter().map(|(name, at)| format!("{name} +{at:.0}")).collect();
            tracing::info!(
                "start: the page began loading {page:.0} ms after main(); then {}",
                shown.join(", ")
            );
        }
    }
}

async fn open(app: &AppHandle, path: &Path) -> Result<Opened, String> {
    let shown = path.display();
    if !path.is_dir() {
        return Err(format!("{shown}: no such folder"));
    }
    // A folder without a manifest is not a project: opening it would create `.jig/` in it.
    let Some(manifest) = jig_load::find_manifest(path) else {
        return Err(format!(
            "{shown}: no jig.yaml here or above; a Jig project is a folder with a jig.yaml (see the example project)"
        ));
    };
    let root = manifest.parent().map_or_else(|| path.to_path_buf(), Path::to_path_buf);
    // Watched from its load on: the app follows the project's files while it is open.
    let engine = Engine::open(EngineOptions {
        project: root.clone(),
        watch: true,
        ..EngineOptions::default()
    })
    .await
    .map_err(|e| describe(&e))?;
    let resident = jig_app::App::new(Arc::clone(&engine))
        .open_resident()
        .map_err(|e| format!("{}: {e}", e.code().as_str()))?;
    for said in resident.said() {
        match said.level {
            jig_app::Level::Info => tracing::info!("{}", said.text),
            jig_app::Level::Warning | jig_app::Level::Error => tracing::warn!("{}", said.text),
        }
    }
    let name = root
        .file_name()
        .map_or_else(|| "project".to_owned(), |name| name.to_string_lossy().into_owned());
    let me = Person { name: jig_engine::os_user(), role: Role::Admin };
    let local = Local::new(engine, me, name);
    let mut events = local.events();
    let viewer = local.viewer();
    let app = app.clone();
    let forward = tauri::async_runtime::spawn(async move {
        while let Some(outgoing) = next(&mut events, &viewer).await {
            if let Err(error) = app.emit_to(WINDOW, "jig://event", &outgoing) {
                tracing::warn!("event to the window: {error}");
            }
        }
    });
    Ok(Opened { backend: Backend::Local { local, root, _resident: resident }, forward })
}

/// The backend of one request, held while it runs.
enum Current {
    Local(Local),
    Remote(Arc<Remote>),
}

/// An engine error as the UI shows it: a broken project's diagnostics with file and line.
fn describe(error: &EngineError) -> String {
    match error {
        EngineError::Invalid(failure) => {
            let errors = failure.errors().count();
            format!(
                "{}\nthe project did not load: {errors} error{}",
                jig_load::render::render(&failure.diagnostics, &failure.root, false).trim_end(),
                if errors == 1 { "" } else { "s" }
            )
        }
        other => other.to_string(),
    }
}
