//! The commands the window may call, each granted by its own permission
//! (`capabilities/main.json`). `api` carries every API request; the rest manage projects and
//! files, which only a desktop app has.

use std::path::PathBuf;

use jig_server::local::Answer;
use tauri::{AppHandle, State};
use tauri_plugin_dialog::DialogExt as _;

use crate::project::{Desktop, ProjectInfo};

/// One API request, answered by the open project's router.
#[tauri::command]
pub async fn api(
    desktop: State<'_, Desktop>,
    method: String,
    path: String,
    body: Option<String>,
) -> Result<Answer, String> {
    let began = std::time::Instant::now();
    let answer = desktop.api(&method, &path, body).await;
    tracing::debug!(%method, %path, took_ms = began.elapsed().as_secs_f64() * 1000.0, "api");
    answer
}

/// The open project, the last failure and the recent list.
#[tauri::command]
pub async fn project(desktop: State<'_, Desktop>) -> Result<ProjectInfo, String> {
    Ok(desktop.info().await)
}

/// Open the project at `path` (a recent one, or one typed in).
#[tauri::command]
pub async fn open_project(
    app: AppHandle,
    desktop: State<'_, Desktop>,
    path: PathBuf,
) -> Result<ProjectInfo, String> {
    desktop.open(&app, &path).await
}

/// Sign in to the team server at `address` in the person's browser and open it. Another call
/// while one waits replaces it (the first answers that it was cancelled).
#[tauri::command]
pub async fn connect_server(
    app: AppHandle,
    desktop: State<'_, Desktop>,
    address: String,
) -> Result<ProjectInfo, String> {
    desktop.connect(&app, &address).await
}

/// Give up a sign-in that waits for the browser.
#[tauri::command]
#[expect(clippy::needless_pass_by_value, reason = "Tauri hands a command its state by value")]
pub fn cancel_connect(desktop: State<'_, Desktop>) {
    desktop.cancel_connect();
}

/// Open the example project, writing it out first if it is not there yet.
#[tauri::command]
pub async fn open_example(
    app: AppHandle,
    desktop: State<'_, Desktop>,
) -> Result<ProjectInfo, String> {
    let path = tauri::async_runtime::spawn_blocking(crate::example::ensure)
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("the example project: {e}"))?;
    desktop.open(&app, &path).await
}

/// Ask for a folder with the system's picker and open it; `None` when the person cancels.
#[tauri::command]
pub async fn pick_project(
    app: AppHandle,
    desktop: State<'_, Desktop>,
) -> Result<Option<ProjectInfo>, String> {
    let dialog = app.dialog().file().set_title("Open a Jig project (a folder with a jig.yaml)");
    let picked = tauri::async_runtime::spawn_blocking(move || dialog.blocking_pick_folder())
        .await
        .map_err(|e| e.to_string())?;
    let Some(picked) = picked else { return Ok(None) };
    let path = picked.into_path().map_err(|e| e.to_string())?;
    desktop.open(&app, &path).await.map(Some)
}

/// Save `text` where the person chooses (the audit export); `false` when they cancel.
#[tauri::command]
pub async fn save_file(app: AppHandle, name: String, text: String) -> Result<bool, String> {
    save_as(&app, &name, text.into_bytes()).await
}

/// Save what the API serves at `path` (a run's artifact, a runbook attachment) where the person
/// chooses, named `name` by default; `false` when they cancel. The bytes go from the router to
/// the file without passing through the page.
#[tauri::command]
pub async fn save_download(
    app: AppHandle,
    desktop: State<'_, Desktop>,
    path: String,
    name: String,
) -> Result<bool, String> {
    // Fetched first: a missing artifact is said before a dialog asks where to put it.
    let bytes = desktop.download(&path).await?;
    save_as(&app, &name, bytes).await
}

/// Ask where to save `name` with the system's dialog and write `bytes` there.
async fn save_as(app: &AppHandle, name: &str, bytes: Vec<u8>) -> Result<bool, String> {
    let dialog = app.dialog().file().set_file_name(name);
    let picked = tauri::async_runtime::spawn_blocking(move || dialog.blocking_save_file())
        .await
        .map_err(|e| e.to_string())?;
    let Some(picked) = picked else { return Ok(false) };
    let target = picked.into_path().map_err(|e| e.to_string())?;
    fs_err::write(&target, bytes).map_err(|e| e.to_string())?;
    Ok(true)
}

/// The tool list is on screen and interactive. `marks` are the page's own times (ms since it
/// began loading: `script`, `view-loaded`, `project`, `tools`, `app-render` (React's first
/// render of the app), `view-render` (the tools view's first render with its list), `committed`
/// (that render in the page), `ready`), logged to say where a start went.
#[tauri::command]
#[expect(clippy::needless_pass_by_value, reason = "Tauri hands a command its state by value")]
pub fn ready(desktop: State<'_, Desktop>, marks: Option<std::collections::BTreeMap<String, f64>>) {
    desktop.ready(&marks.unwrap_or_default());
}

/// Tell the person something waits for them with the system's notification (the page asks
/// only while the window is not in front). A missing notification server is logged, not
/// answered as an error: the in-app notice is there either way.
#[tauri::command]
pub async fn notify(summary: String, body: String) {
    let shown =
        tauri::async_runtime::spawn_blocking(move || crate::notify::show(&summary, &body)).await;
    match shown {
        Ok(Ok(())) => {}
        Ok(Err(error)) => tracing::info!("no system notification: {error}"),
        Err(error) => tracing::warn!("the notification task: {error}"),
    }
}
