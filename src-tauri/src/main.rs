//! `jig-desktop [PATH]`: the workbench as a desktop app. The UI is the same as `jig serve`'s;
//! its requests go to the same API in process (no TCP port), acting as the OS user. Opens
//! `PATH` (a folder with a jig.yaml, or inside one), or else the built-in example project.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod commands;
mod example;
mod places;
mod project;
mod recent;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use tauri::Manager as _;

use crate::project::Desktop;

const USAGE: &str = "usage: jig-desktop [PATH]\n\nOpens the Jig project at PATH (a folder with a jig.yaml, or inside one);\nwithout PATH, the example project (copied to ~/.local/share/jig/example).";

fn main() -> ExitCode {
    let started = Instant::now();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("JIG_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let mut args = std::env::args_os().skip(1);
    let path = args.next().map(PathBuf::from);
    if args.next().is_some()
        || path.as_ref().is_some_and(|p| p.as_os_str().to_string_lossy().starts_with('-'))
    {
        #[expect(clippy::print_stderr, reason = "the usage goes to the terminal that started us")]
        {
            eprintln!("{USAGE}");
        }
        return ExitCode::from(2);
    }
    let result = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .manage(Desktop::new(started))
        .invoke_handler(tauri::generate_handler![
            commands::api,
            commands::project,
            commands::open_project,
            commands::pick_project,
            commands::save_file,
            commands::ready,
        ])
        .setup(move |app| {
            let handle = app.handle().clone();
            let project = match path {
                Some(path) => Ok(path),
                None => example::ensure(),
            };
            tauri::async_runtime::block_on(async move {
                let desktop = handle.state::<Desktop>();
                match project {
                    // A project that does not open leaves the app on its project picker,
                    // showing why.
                    Ok(path) => {
                        if let Err(message) = desktop.open(&handle, &path).await {
                            tracing::error!("{}: {message}", path.display());
                        }
                    }
                    Err(error) => tracing::error!("the example project: {error}"),
                }
            });
            Ok(())
        })
        .run(tauri::generate_context!());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error}");
            ExitCode::FAILURE
        }
    }
}
