//! `jig show TOOL`: one definition with its resolved schemas.

use std::io::Write;

use jig_model::ToolDef;

use crate::cli::ShowArgs;
use crate::exit::Code;
use crate::output::Settings;

pub fn run(settings: &Settings, args: &ShowArgs, out: &mut impl Write) -> anyhow::Result<Code> {
    let Ok(snapshot) = settings.load_or_report() else { return Ok(Code::Invalid) };
    let Some(tool) = snapshot.get(&args.tool) else {
        crate::fail!(NotFound, "no tool `{}` in this project", args.tool);
        let ids: Vec<&str> = snapshot.list().map(|t| t.id.as_str()).collect();
        if let Some(near) = jig_load::did_you_mean(&args.tool, ids) {
            eprintln!("  = hint: did you mean `{near}`?");
        } else {
            eprintln!("  = hint: `jig list` shows every tool");
        }
        return Ok(Code::Failed);
    };
    if args.json {
        serde_json::to_writer_pretty(&mut *out, tool.as_ref())?;
        writeln!(out)?;
    } else {
        print_tool(tool, out)?;
    }
    Ok(Code::Ok)
}

fn print_tool(tool: &ToolDef, out: &mut impl Write) -> std::io::Result<()> {
    writeln!(out, "{} {}", tool.id, tool.version)?;
    if !tool.description.is_empty() {
        writeln!(out, "  {}", tool.description.trim())?;
    }
    let effects: Vec<&str> = tool.side_effects.iter().map(|e| e.as_str()).collect();
    let rows = [
        ("package", tool.package.clone()),
        ("defined in", format!("{}:{}", tool.source.file, tool.source.line)),
        ("kind", tool.execution.kind().to_owned()),
        ("side effects", if effects.is_empty() { "none".to_owned() } else { effects.join(", ") }),
        ("risk", tool.risk.as_str().to_owned()),
        ("deterministic", tool.deterministic.to_string()),
        ("timeout", format!("{} ms", tool.timeout_ms)),
        (
            "limits",
            format!(
                "input {} B, output {} B",
                tool.limits.max_input_bytes, tool.limits.max_output_bytes
            ),
        ),
        ("tags", tool.tags.join(", ")),
    ];
    writeln!(out)?;
    for (label, value) in rows.iter().filter(|(_, v)| !v.is_empty()) {
        writeln!(out, "  {label:<14} {value}")?;
    }
    for (title, value) in [
        ("input schema", serde_json::to_value(&tool.input_schema)),
        ("output schema", serde_json::to_value(&tool.output_schema)),
        ("execution", serde_json::to_value(&tool.execution)),
    ] {
        writeln!(out, "\n{title}:")?;
        writeln!(
            out,
            "{}",
            indent(&serde_json::to_string_pretty(&value.unwrap_or_default()).unwrap_or_default())
        )?;
    }
    Ok(())
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n")
}
