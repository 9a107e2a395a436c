//! The direction of the house (docs/architecture.md, "what each crate may import"), kept by a
//! test: the surfaces — the CLI, the HTTP API, MCP and the desktop app — act through jig-app.
//! None depends on the runbook service, none reaches the engine's raw store or starts a call
//! itself, and they depend on each other only along the edges written down here.

#![allow(clippy::disallowed_methods, clippy::unwrap_used)] // a test reads the workspace's files as they are

use std::path::{Path, PathBuf};

/// The workspace's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The surfaces, by crate directory.
const SURFACES: [(&str, &str); 4] = [
    ("jig-cli", "crates/jig-cli"),
    ("jig-server", "crates/jig-server"),
    ("jig-mcp", "crates/jig-mcp"),
    ("jig-desktop", "src-tauri"),
];

/// The edges between surfaces there are, and why each must be:
/// - the `jig` binary (jig-cli) hosts `jig serve` and `jig mcp`, so it links both;
/// - the HTTP server mounts MCP's Streamable HTTP transport at `/mcp`;
/// - the desktop app serves the HTTP API in process (`jig_server::local`), the same routes
///   the browser calls, so the two cannot drift.
const ALLOWED: [(&str, &str); 4] = [
    ("jig-cli", "jig-server"),
    ("jig-cli", "jig-mcp"),
    ("jig-server", "jig-mcp"),
    ("jig-desktop", "jig-server"),
];

/// The crates a manifest's `[dependencies]` names (not its dev-dependencies: a test may reach
/// further than the code it tests).
fn dependencies(dir: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(dir).join("Cargo.toml")).unwrap();
    let mut in_dependencies = false;
    let mut names = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
            continue;
        }
        if in_dependencies && let Some((name, _)) = line.split_once(['=', '.']) {
            let name = name.trim();
            if !name.is_empty() && !name.starts_with('#') {
                names.push(name.to_owned());
            }
        }
    }
    names
}

#[test]
fn surfaces_depend_on_the_application_layer_not_below_it_nor_on_each_other() {
    let mut wrong = Vec::new();
    for (name, dir) in SURFACES {
        let dependencies = dependencies(dir);
        assert!(
            dependencies.iter().any(|d| d == "jig-app"),
            "{name} acts through jig-app, so it depends on it"
        );
        if dependencies.iter().any(|d| d == "jig-runbook") {
            wrong.push(format!("{name} depends on jig-runbook: runbook runs go through jig-app"));
        }
        for (other, _) in SURFACES {
            if other != name
                && dependencies.iter().any(|d| d == other)
                && !ALLOWED.contains(&(name, other))
            {
                wrong.push(format!("{name} depends on the surface {other}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn surfaces_neither_start_calls_nor_walk_runs_nor_reach_the_store_themselves() {
    // What only jig-app (and below it the engine) may do, by the text that does it.
    let forbidden = [
        (".dispatch(", "starts a call itself (App::call / App::run_call)"),
        (".dispatch_prepared(", "starts a call itself (App::call)"),
        ("Runbooks::new", "builds the runbook service (App's runbook methods)"),
        (".store()", "reaches the engine's raw store (Engine::history, people, App)"),
        ("approve_and_run(", "decides an approval itself (App::approve)"),
    ];
    let mut wrong = Vec::new();
    for (name, dir) in SURFACES {
        let mut files = Vec::new();
        sources(&root().join(dir).join("src"), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for (needle, what) in forbidden {
                for (n, line) in text.lines().enumerate() {
                    let code = line.split("//").next().unwrap_or_default();
                    if code.contains(needle) {
                        let shown = file.strip_prefix(root()).unwrap_or(&file).display();
                        wrong.push(format!("{name}: {shown}:{}: {what}", n + 1));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_check_reads_real_manifests() {
    // A parser that found nothing would pass the rules above without looking.
    let cli = dependencies("crates/jig-cli");
    assert!(cli.iter().any(|d| d == "jig-engine"), "{cli:?}");
    assert!(dependencies("crates/jig-runbook").iter().any(|d| d == "jig-engine"));
}

#[test]
fn what_leaves_the_machine_is_below_the_engine() {
    // jig-outbound sends; the engine decides whether it may (consent, the policy). A
    // dependency the other way would let a sender reach around that decision.
    let outbound = dependencies("crates/jig-outbound");
    assert!(outbound.iter().any(|d| d == "jig-audit"), "{outbound:?}");
    for below in ["jig-engine", "jig-app", "jig-runbook", "jig-load", "jig-tools"] {
        assert!(!outbound.iter().any(|d| d == below), "jig-outbound depends on {below}");
    }
    assert!(dependencies("crates/jig-engine").iter().any(|d| d == "jig-outbound"));
}
