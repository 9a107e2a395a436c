//! The packages shipped in toolpacks/: the built-in catalog and the example project.

use jig_model::SideEffect;
use jig_model::tool_def::{Dialect, ToolExecution};
use jig_model::toolpack::{BUILTIN_TOOLS, Execution};

use crate::support::{dump, repo_root};

#[test]
fn the_std_package_defines_exactly_the_27_builtins_of_seed_002() {
    let snapshot = jig_load::load(&repo_root().join("toolpacks/std"))
        .unwrap_or_else(|f| panic!("{}", dump(&f.diagnostics)));
    assert!(snapshot.warnings().is_empty(), "{}", dump(snapshot.warnings()));
    assert_eq!(snapshot.len(), 27);
    for id in BUILTIN_TOOLS {
        let tool = snapshot.get(id).unwrap_or_else(|| panic!("{id} missing"));
        assert!(matches!(tool.execution, ToolExecution::Toolpack(Execution::Builtin(_))), "{id}");
        assert!(!tool.description.is_empty(), "{id}");
        assert_eq!(tool.input_schema["type"], "object", "{id}");
        assert_eq!(
            tool.input_schema["additionalProperties"], false,
            "{id} refuses unknown arguments"
        );
        assert!(!tool.input_schema.to_string().contains("\"$ref\""), "{id} has resolved schemas");
        // Seed 002 §9 time limits.
        let expected_timeout = match id {
            "shell_exec" | "validate" => 600_000,
            "curl" => 15_000,
            "ast_generate" | "ast_validate" => 300_000,
            "ast_edit" | "ast_external" => 30_000,
            id if id.starts_with("git_") => 30_000,
            _ => 10_000,
        };
        assert_eq!(tool.timeout_ms, expected_timeout, "{id}");
    }
    // Honest side effects: reads read, writes write, the network is the network.
    let effects = |id: &str| snapshot.get(id).map(|t| t.side_effects.clone()).unwrap_or_default();
    assert_eq!(effects("file_read"), [SideEffect::Read]);
    assert_eq!(effects("file_write"), [SideEffect::Write]);
    assert_eq!(effects("shell_exec"), [SideEffect::Exec]);
    assert_eq!(effects("curl"), [SideEffect::Network]);
    assert_eq!(effects("git_push"), [SideEffect::Write, SideEffect::Network]);
    assert!(effects("emit_metrics").is_empty());
    // The embedded copy is the same package.
    let embedded = jig_load::load(tempfile::tempdir().expect("tmp").path()).expect("valid");
    for id in BUILTIN_TOOLS {
        assert_eq!(embedded.get(id).map(|t| &t.hash), snapshot.get(id).map(|t| &t.hash), "{id}");
    }
}

#[test]
fn the_example_project_loads_cleanly_and_uses_every_feature() {
    let snapshot = jig_load::load(&repo_root().join("toolpacks/examples"))
        .unwrap_or_else(|f| panic!("{}", dump(&f.diagnostics)));
    assert!(snapshot.warnings().is_empty(), "{}", dump(snapshot.warnings()));
    let kinds: std::collections::BTreeSet<&str> =
        snapshot.list().map(|t| t.execution.kind()).collect();
    for kind in ["builtin", "python", "node", "php", "cli", "http", "stdio", "docker", "slurm"] {
        assert!(kinds.contains(kind), "no {kind} tool");
    }
    assert!(snapshot.list().any(|t| t.dialect == Dialect::GertV0));
    for id in [
        "acme.changelog",
        "acme.deploy_status",
        "netkit/probe.get",
        "dnskit/dig.a",
        "netkit.tls_days_left",
        "service.restart",
        "journal.tail",
    ] {
        assert!(snapshot.get(id).is_some(), "{id}");
    }
    let formats: Vec<&str> = snapshot.runbooks().map(|r| r.runbook.api_version.as_str()).collect();
    assert_eq!(formats.len(), 4);
    for api in ["runbook/v0", "runbook/v1", "kernel/v0"] {
        assert!(formats.contains(&api), "{api}");
    }
    // Every runbook of the example has scenarios (one per outcome it can reach).
    let scenarios: usize = snapshot.runbooks().map(|r| r.scenarios.len()).sum();
    assert_eq!(scenarios, 10);
    assert!(snapshot.runbooks().all(|r| !r.scenarios.is_empty()));
    let roles: Vec<_> = snapshot.packages().iter().map(|p| (p.name.as_str(), p.role)).collect();
    assert_eq!(roles.len(), 4);
}
