//! `jig-desktop [PATH]`: the workbench as a desktop app. The UI is the same as `jig serve`'s;
//! its requests go to the same API in process (no TCP port), acting as the OS user. Opens
//! `PATH` (a folder with a jig.yaml, or inside one), or else the built-in example project.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod commands;
mod example;
mod notify;
mod places;
mod project;
mod recent;
mod remote;
mod team;
mod wss;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use tauri::Manager as _;

use crate::project::Desktop;

/// The window every event goes to.
const WINDOW: &str = "main";

const USAGE: &str = "usage: jig-desktop [PATH]\n\nOpens the Jig project at PATH (a folder with a jig.yaml, or inside one);\nwithout PATH, the example project (copied to ~/.local/share/jig/example).";

/// Whether the page is drawn without GPU compositing (the default; `JIG_DESKTOP_GPU=1` opts out).
fn software() -> bool {
    std::env::var_os("JIG_DESKTOP_GPU").is_none_or(|v| v != "1")
}

/// Without GPU drawing, keep GDK from opening GLX when it opens the display
/// (`GDK_GL=disable`): ~80 ms of a warm start and ~7 MiB (docs/benchmarks.md). WebKit still
/// sets up EGL for itself. (`WEBKIT_DISABLE_DMABUF_RENDERER=1` beside it made one start in
/// four ~450 ms slower, so it is not set.) A value the person set is left as they set it.
///
/// Called first in `main`, before any thread exists, so nothing reads the environment while
/// it changes (the reason `std::env::set_var` is unsafe). A failure is for the log once there
/// is one: not fatal, the app only starts a little slower.
fn software_environment() -> Result<(), glib::BoolError> {
    if !software() || std::env::var_os("GDK_GL").is_some() {
        return Ok(());
    }
    glib::setenv("GDK_GL", "disable", false)
}

/// Draw the page without GPU compositing unless `JIG_DESKTOP_GPU=1`: WebKit's compositing layers
/// cost its web process about 85 MiB (202 → 118 MiB PSS under Xvfb; docs/benchmarks.md), and a
/// workbench of lists and forms does not need them. (WebKitWebDriver's snapshot never returned
/// for some views in this mode; the desktop suite takes its screenshots from the X server.)
fn software_rendering(app: &tauri::App) {
    if !software() {
        return;
    }
    let Some(window) = app.get_webview_window(WINDOW) else { return };
    let applied = window.with_webview(|webview| {
        use webkit2gtk::{HardwareAccelerationPolicy, SettingsExt as _, WebViewExt as _};
        if let Some(settings) = webview.inner().settings() {
            settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never);
        }
    });
    if let Err(error) = applied {
        tracing::warn!("the webview's rendering settings: {error}");
    }
}

fn main() -> ExitCode {
    let started = Instant::now();
    let environment = software_environment();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("JIG_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    if let Err(error) = environment {
        tracing::warn!(%error, "could not set GDK_GL for software drawing");
    }
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
            commands::open_example,
            commands::connect_server,
            commands::cancel_connect,
            commands::save_file,
            commands::save_download,
            commands::ready,
            commands::notify,
        ])
        .setup(move |app| {
            software_rendering(app);
            let handle = app.handle().clone();
            // Opened in the background: the engine loads while the webview starts, and the
            // window's first requests wait for it.
            tauri::async_runtime::spawn(async move {
                // Spans of the calls made here, when the environment asks for them.
                jig_engine::telemetry::start_from_env();
                let desktop = handle.state::<Desktop>();
                let project = match path {
                    Some(path) => Ok(path),
                    None => example::ensure(),
                };
                match project {
                    // A project that does not open leaves the app on its welcome page, showing
                    // why.
                    Ok(path) => {
                        if let Err(message) = desktop.open(&handle, &path).await {
                            tracing::error!("{}: {message}", path.display());
                        }
                    }
                    Err(error) => tracing::error!("the example project: {error}"),
                }
                desktop.first_open_done();
            });
            Ok(())
        })
        .build(tauri::generate_context!());
    match result {
        Ok(app) => {
            app.run(|_, event| {
                // The last spans and metrics go out before the process does (at most
                // FLUSH_WITHIN; nothing when export is off).
                if let tauri::RunEvent::Exit = event {
                    tauri::async_runtime::block_on(jig_engine::telemetry::flush(
                        jig_engine::telemetry::FLUSH_WITHIN,
                    ));
                }
            });
            ExitCode::SUCCESS
        }
        Err(error) => {
            tracing::error!("{error}");
            ExitCode::FAILURE
        }
    }
}
