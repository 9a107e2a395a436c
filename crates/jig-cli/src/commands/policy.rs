//! `jig policy show`: the effective policy, rule by rule, with the layer each rule came from.

use std::io::Write;

use jig_policy::report::{Overridden, PolicyReport, RuleKind, RuleView};

use crate::cli::PolicyCommand;
use crate::exit::Code;
use crate::output::Settings;

pub fn run(
    settings: &Settings,
    command: &PolicyCommand,
    out: &mut impl Write,
) -> anyhow::Result<Code> {
    let PolicyCommand::Show { json } = command;
    // The load reads the layers with the project: one it cannot read is reported here and
    // stops the command, as it stops every other.
    let Ok(snapshot) = settings.load_or_report() else { return Ok(Code::Invalid) };
    let policy = match jig_engine::policy_view::compile(&snapshot) {
        Ok(policy) => policy,
        Err(error) => {
            eprintln!("error[{}]: {error}", error.code());
            return Ok(Code::Invalid);
        }
    };
    let report = jig_engine::policy_view::report(&snapshot, &policy);
    if *json {
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
    } else {
        write_text(&report, out)?;
    }
    Ok(Code::Ok)
}

fn write_text(report: &PolicyReport, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "policy {}", report.policy_hash)?;
    writeln!(out, "\nlayers, strongest first:")?;
    for layer in &report.layers {
        writeln!(out, "  {:<8} {}", layer.layer.as_str(), layer.source)?;
    }
    writeln!(out, "\nrules:")?;
    for rule in &report.rules {
        write_rule(rule, out)?;
    }
    if !report.settings.is_empty() {
        writeln!(out, "\nsettings a layer above narrowed:")?;
        for setting in &report.settings {
            writeln!(
                out,
                "  {:<36} {} (the project said {}; by the {} layer)",
                setting.setting, setting.now, setting.was, setting.layer
            )?;
        }
    }
    Ok(())
}

fn write_rule(rule: &RuleView, out: &mut impl Write) -> std::io::Result<()> {
    let action = match (rule.kind, rule.action) {
        (RuleKind::Limit, _) => "limits the project's allows".to_owned(),
        (_, Some(action)) => action.as_str().to_owned(),
        (_, None) => "-".to_owned(),
    };
    let matches = match rule.kind {
        RuleKind::Default => "where no other rule of its layer matches".to_owned(),
        RuleKind::BuiltIn => "where no rule speaks".to_owned(),
        _ => rule.matches.to_string(),
    };
    writeln!(out, "  {:<34} {:<8} {:<17} {matches}", rule.rule, rule.layer.as_str(), action)?;
    writeln!(out, "  {:<34} from {}", "", rule.source)?;
    if !rule.decides.is_empty() {
        writeln!(out, "  {:<34} decides {}", "", rule.decides.join(", "))?;
    }
    for (other, tools) in grouped(&rule.overrode) {
        writeln!(out, "  {:<34} overrode {other} for {}", "", tools.join(", "))?;
    }
    for (other, tools) in grouped(&rule.overridden_by) {
        writeln!(out, "  {:<34} overridden by {other} for {}", "", tools.join(", "))?;
    }
    Ok(())
}

/// The other side of each override, with the tools it holds for: one line per rule.
fn grouped(overrides: &[Overridden]) -> Vec<(String, Vec<&str>)> {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for over in overrides {
        let other = format!("{} ({}, {} layer)", over.rule, over.action.as_str(), over.layer);
        match groups.iter_mut().find(|(name, _)| *name == other) {
            Some((_, tools)) => tools.push(&over.tool),
            None => groups.push((other, vec![&over.tool])),
        }
    }
    groups
}
