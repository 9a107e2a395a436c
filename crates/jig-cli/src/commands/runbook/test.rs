//! `jig runbook test`: every recorded scenario played and checked, reported like a test runner.

use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use jig_app::runbooks::scenario::{Mismatch, PlannedCall, ReplayHost, check, play, resolver};
use serde::Serialize;
use serde_json::Value;

use crate::cli::{RunbookTestArgs, TestMode};
use crate::exit::Code;
use crate::output::{Settings, plural, print_json};

/// One scenario's result.
#[derive(Debug, Serialize)]
struct Result {
    runbook: String,
    scenario: String,
    passed: bool,
    /// Why it could not run at all.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    mismatches: Vec<Mismatch>,
    status: Value,
    outcome: Value,
    /// Where and why the run stopped, when a step stopped it.
    #[serde(skip_serializing_if = "Value::is_null")]
    failure: Value,
    visited: Vec<String>,
    /// Dry-run: the tool calls it would make, rendered, with the policy's decision.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    calls: Vec<PlannedCall>,
    duration_ms: f64,
}

pub async fn run(
    settings: &Settings,
    args: &RunbookTestArgs,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    let settings = super::settings_for(settings, &args.paths);
    let paths: Vec<std::path::PathBuf> =
        args.paths.iter().map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone())).collect();
    let Ok(snapshot) = settings.load_with(&paths) else { return Ok(Code::Invalid) };
    let wanted: Vec<_> = snapshot
        .runbooks()
        .filter(|entry| {
            paths.is_empty()
                || paths
                    .iter()
                    .any(|p| snapshot.root().join(&entry.file) == *p || p.ends_with(&entry.file))
        })
        .cloned()
        .collect();
    if !paths.is_empty() && wanted.is_empty() {
        crate::fail!(NotFound, "none of the files given is a runbook of the project");
        return Ok(Code::Failed);
    }
    let Ok(policy) = policy_for(args.mode, &snapshot) else { return Ok(Code::Invalid) };
    let mut results = Vec::new();
    let mut untested = Vec::new();
    'runbooks: for entry in &wanted {
        if entry.scenarios.is_empty() {
            untested.push(entry.name.clone());
        }
        for scenario in &entry.scenarios {
            let started = Instant::now();
            let mut result = Result {
                runbook: entry.name.clone(),
                scenario: scenario.name.clone(),
                passed: false,
                error: None,
                mismatches: Vec::new(),
                status: Value::Null,
                outcome: Value::Null,
                failure: Value::Null,
                visited: Vec::new(),
                calls: Vec::new(),
                duration_ms: 0.0,
            };
            match (&scenario.scenario, &scenario.test) {
                (Some(given), Some(test)) => {
                    let mut host = ReplayHost::new(given, resolver(Arc::clone(&snapshot), entry))
                        .with_runbooks(Arc::clone(&snapshot));
                    if let Some(policy) = &policy {
                        host = host.deciding(Arc::clone(policy), Arc::clone(&snapshot));
                    }
                    match play(&entry.runbook, &entry.name, &entry.hash, given, &host).await {
                        Ok(progress) => {
                            result.mismatches = check(test, &progress);
                            result.passed = result.mismatches.is_empty();
                            result.status =
                                serde_json::to_value(progress.status).unwrap_or(Value::Null);
                            result.outcome =
                                serde_json::to_value(&progress.outcome).unwrap_or(Value::Null);
                            result.failure =
                                serde_json::to_value(&progress.failure).unwrap_or(Value::Null);
                            result.visited = progress.visited;
                            result.calls = host.planned();
                        }
                        Err(error) => result.error = Some(format!("[{}] {error}", error.code())),
                    }
                }
                (None, _) => result.error = Some(format!("{}: no scenario.yaml", scenario.dir)),
                (_, None) => {
                    result.error =
                        Some(format!("{}: no test.yaml (nothing to check)", scenario.dir))
                }
            }
            result.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
            if !args.json {
                report(out, &result)?;
            }
            let failed = !result.passed;
            results.push(result);
            if failed && args.fail_fast {
                break 'runbooks;
            }
        }
    }
    let failed = results.iter().filter(|r| !r.passed).count();
    if args.json {
        print_json(out, &results)?;
    } else {
        writeln!(out, "\n{} passed, {} failed", results.len() - failed, failed)?;
    }
    if !untested.is_empty() {
        eprintln!(
            "note: {} without scenarios: {}",
            plural(untested.len(), "runbook"),
            untested.join(", ")
        );
    }
    Ok(if failed > 0 { Code::Failed } else { Code::Ok })
}

fn report(out: &mut impl Write, result: &Result) -> std::io::Result<()> {
    let name = format!("{}/{}", result.runbook, result.scenario);
    if result.passed {
        writeln!(out, "ok   {name} ({:.1} ms)", result.duration_ms)?;
        return calls(out, &result.calls);
    }
    writeln!(out, "FAIL {name}")?;
    if let Some(error) = &result.error {
        writeln!(out, "     {error}")?;
    }
    for m in &result.mismatches {
        writeln!(out, "     {}: expected {}, got {}", m.field, m.expected, m.actual)?;
    }
    if let (Some(key), Some(kind), Some(message)) = (
        result.failure["key"].as_str(),
        result.failure["failure"]["kind"].as_str(),
        result.failure["failure"]["message"].as_str(),
    ) {
        writeln!(out, "     the run stopped at `{key}` ({kind}): {message}")?;
    }
    calls(out, &result.calls)
}

/// A dry run's calls: each as it would be made, and what the policy would do with it.
fn calls(out: &mut impl Write, calls: &[PlannedCall]) -> std::io::Result<()> {
    for call in calls {
        let inputs = Value::Object(call.inputs.clone());
        let verdict = match call.action.as_str() {
            "require-approval" => "needs approval",
            "deny" => "denied",
            other => other,
        };
        writeln!(out, "     {} → {} {inputs}", call.key, call.tool)?;
        writeln!(out, "       {verdict} by {}: {}", call.rule, call.reason)?;
    }
    Ok(())
}

/// The policy a dry run decides its calls with (none for a replay); `Err` when the project's
/// policy does not compile (said on stderr).
fn policy_for(
    mode: TestMode,
    snapshot: &jig_load::Snapshot,
) -> std::result::Result<Option<Arc<jig_policy::Policy>>, ()> {
    match mode {
        TestMode::Replay => Ok(None),
        TestMode::DryRun => {
            match jig_policy::Policy::new(snapshot.policy().cloned().unwrap_or_default()) {
                Ok(policy) => Ok(Some(Arc::new(policy))),
                Err(error) => {
                    crate::fail!(ValidationFail, "the project's policy: {error}");
                    Err(())
                }
            }
        }
    }
}
