//! `jig show TOOL`: one definition with its resolved schemas.

use jig_model::ToolDef;

use crate::cli::ShowArgs;
use crate::exit::Code;
use crate::output::Settings;

pub fn run(settings: &Settings, args: &ShowArgs) -> anyhow::Result<Code> {
    let Ok(snapshot) = settings.load_or_report() else { return Ok(Code::Invalid) };
    let Some(tool) = snapshot.get(&args.tool) else {
        eprintln!("error[E_NOT_FOUND]: no tool `{}` in this project", args.tool);
        let ids: Vec<&str> = snapshot.list().map(|t| t.id.as_str()).collect();
        if let Some(near) = jig_load::did_you_mean(&args.tool, ids) {
            eprintln!("  = hint: did you mean `{near}`?");
        } else {
            eprintln!("  = hint: `jig list` shows every tool");
        }
        return Ok(Code::Failed);
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(tool.as_ref())?);
    } else {
        print_tool(tool);
    }
    Ok(Code::Ok)
}

fn print_tool(tool: &ToolDef) {
    println!("{} {}", tool.id, tool.version);
    if !tool.description.is_empty() {
        println!("  {}", tool.description.trim());
    }
    println!();
    println!("  package        {}", tool.package);
    println!("  defined in     {}:{}", tool.source.file, tool.source.line);
    println!("  kind           {}", tool.execution.kind());
    let effects: Vec<&str> = tool.side_effects.iter().map(|e| e.as_str()).collect();
    println!(
        "  side effects   {}",
        if effects.is_empty() { "none".to_owned() } else { effects.join(", ") }
    );
    println!("  risk           {}", tool.risk.as_str());
    println!("  deterministic  {}", tool.deterministic);
    println!("  timeout        {} ms", tool.timeout_ms);
    println!(
        "  limits         input {} B, output {} B",
        tool.limits.max_input_bytes, tool.limits.max_output_bytes
    );
    if !tool.tags.is_empty() {
        println!("  tags           {}", tool.tags.join(", "));
    }
    println!();
    println!("input schema:");
    println!("{}", indent(&serde_json::to_string_pretty(&tool.input_schema).unwrap_or_default()));
    println!("output schema:");
    println!("{}", indent(&serde_json::to_string_pretty(&tool.output_schema).unwrap_or_default()));
    println!("execution:");
    println!("{}", indent(&serde_json::to_string_pretty(&tool.execution).unwrap_or_default()));
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n")
}
