//! Tauri's build step: the app's commands become permissions (`allow-api`, …) that the main
//! window's capability grants one by one.

fn main() {
    let commands = tauri_build::AppManifest::new().commands(&[
        "api",
        "project",
        "open_project",
        "pick_project",
        "open_example",
        "connect_server",
        "cancel_connect",
        "save_file",
        "save_download",
        "ready",
        "notify",
    ]);
    tauri_build::try_build(tauri_build::Attributes::new().app_manifest(commands))
        .unwrap_or_else(|e| panic!("tauri build: {e}"));
}
