//! `jig list`: the tools, sorted by id, as a table or JSON.

use std::io::Write;

use jig_model::ToolDef;
use serde::Serialize;

use crate::cli::ListArgs;
use crate::exit::Code;
use crate::output::Settings;

/// What `list --json` prints per tool: everything but the schemas (see `jig show`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolSummary<'a> {
    id: &'a str,
    version: &'a str,
    description: &'a str,
    tags: &'a [String],
    package: &'a str,
    dialect: jig_model::tool_def::Dialect,
    kind: &'a str,
    side_effects: &'a [jig_model::SideEffect],
    risk: jig_model::Risk,
    deterministic: bool,
    source: &'a jig_model::tool_def::SourceLocation,
}

impl<'a> From<&'a ToolDef> for ToolSummary<'a> {
    fn from(tool: &'a ToolDef) -> Self {
        Self {
            id: &tool.id,
            version: &tool.version,
            description: &tool.description,
            tags: &tool.tags,
            package: &tool.package,
            dialect: tool.dialect,
            kind: tool.execution.kind(),
            side_effects: &tool.side_effects,
            risk: tool.risk,
            deterministic: tool.deterministic,
            source: &tool.source,
        }
    }
}

pub fn run(settings: &Settings, args: &ListArgs, out: &mut impl Write) -> anyhow::Result<Code> {
    let Ok(snapshot) = settings.load_or_report() else { return Ok(Code::Invalid) };
    let tools: Vec<&ToolDef> = match &args.tag {
        Some(tag) => snapshot.list_tagged(tag).map(AsRef::as_ref).collect(),
        None => snapshot.list().map(AsRef::as_ref).collect(),
    };
    if args.json {
        let summaries: Vec<ToolSummary<'_>> = tools.iter().map(|t| ToolSummary::from(*t)).collect();
        serde_json::to_writer_pretty(&mut *out, &summaries)?;
        writeln!(out)?;
        return Ok(Code::Ok);
    }
    let id_width = tools.iter().map(|t| t.id.len()).max().unwrap_or(2).max(2);
    writeln!(
        out,
        "{:<id_width$}  {:<8}  {:<14}  {:<8}  DESCRIPTION",
        "ID", "KIND", "EFFECTS", "RISK"
    )?;
    for tool in &tools {
        let effects = if tool.side_effects.is_empty() {
            "none".to_owned()
        } else {
            tool.side_effects.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(",")
        };
        let description = shorten(tool.description.lines().next().unwrap_or(""), 70);
        writeln!(
            out,
            "{:<id_width$}  {:<8}  {:<14}  {:<8}  {description}",
            tool.id,
            tool.execution.kind(),
            effects,
            tool.risk.as_str()
        )?;
    }
    Ok(Code::Ok)
}

/// `text` cut at a word boundary to at most `width` characters, with an ellipsis when cut.
fn shorten(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let cut: String = text.chars().take(width - 1).collect();
    let at_word = cut.rfind(' ').filter(|&i| i > width / 2).map_or(cut.as_str(), |i| &cut[..i]);
    format!("{}…", at_word.trim_end_matches([',', ';', ':']))
}
