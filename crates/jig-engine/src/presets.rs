//! Presets: named arguments for a tool, saved as files beside the tool's definition
//! (`<tool-id>.<name>.preset.json`, a package's `/` spelt `~`) so a team shares them in git like the tool itself. The
//! built-in tools have no file in the project; theirs live in `<root>/presets/`.
//!
//! A preset is data for a person to load into the run form, never run by itself: loading one
//! goes through the form, the preview and the policy like typed arguments.

use std::path::{Path, PathBuf};

use jig_model::ToolDef;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Engine, EngineError};

/// The largest preset file read or written.
pub const MAX_PRESET_BYTES: usize = 64 * 1024;

/// One preset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Preset {
    /// The tool it is for.
    pub tool: String,
    /// Its name (`[a-z0-9][a-z0-9_-]*`, up to 64 characters).
    pub name: String,
    /// What it is for, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub args: Value,
}

/// The presets of a tool, and the files that could not be read as presets.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Presets {
    /// Where they are kept (relative to the project root).
    pub dir: String,
    /// The presets, by name.
    pub presets: Vec<Preset>,
    /// `file: problem` for each file that is not a valid preset of this tool.
    pub problems: Vec<String>,
}

/// Check a preset's name: it becomes part of a file name.
fn check_name(name: &str) -> Result<(), EngineError> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name.bytes().enumerate().all(|(i, b)| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || (i > 0 && (b == b'-' || b == b'_'))
        });
    if valid {
        Ok(())
    } else {
        Err(EngineError::BadPreset(format!(
            "name `{name}`: use 1–64 of a-z, 0-9, `-` and `_`, starting with a letter or digit"
        )))
    }
}

/// How a tool's id starts its preset files' names: a package-qualified id (`dnskit/dig.cname`)
/// has its `/` spelt `~`, which no id contains, so it stays one file name.
fn file_stem(tool: &str) -> String {
    tool.replace('/', "~")
}

impl Engine {
    /// The folder a tool's presets live in: beside its definition, or `<root>/presets/`.
    fn preset_dir(&self, tool: &ToolDef) -> (PathBuf, String) {
        let root = self.snapshot().root().to_path_buf();
        // Beside the definition when it is inside the project; a built-in (`<std>/…`) or a
        // package required from outside the project keeps its presets in `presets/`.
        let inside =
            |dir: &Path| dir.components().all(|c| matches!(c, std::path::Component::Normal(_)));
        let relative = match Path::new(&tool.source.file).parent() {
            Some(dir) if !tool.source.file.starts_with('<') && inside(dir) => dir.to_path_buf(),
            _ => PathBuf::from("presets"),
        };
        (root.join(&relative), relative.to_string_lossy().into_owned())
    }

    fn tool_for_presets(&self, tool: &str) -> Result<std::sync::Arc<ToolDef>, EngineError> {
        self.get(tool).ok_or_else(|| EngineError::NoTool(tool.to_owned()))
    }

    /// The presets saved for `tool`, sorted by name.
    pub fn presets(&self, tool: &str) -> Result<Presets, EngineError> {
        let def = self.tool_for_presets(tool)?;
        let (dir, shown) = self.preset_dir(&def);
        let prefix = format!("{}.", file_stem(tool));
        let mut presets = Vec::new();
        let mut problems = Vec::new();
        let entries = match fs_err::read_dir(&dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Presets { dir: shown, presets, problems });
            }
            Err(error) => return Err(EngineError::PresetIo { path: shown, source: error }),
        };
        for entry in entries.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            let Some(name) =
                file.strip_prefix(&prefix).and_then(|rest| rest.strip_suffix(".preset.json"))
            else {
                continue;
            };
            match read_preset(&entry.path(), tool, name) {
                Ok(preset) => presets.push(preset),
                Err(problem) => problems.push(format!("{shown}/{file}: {problem}")),
            }
        }
        presets.sort_by(|a, b| a.name.cmp(&b.name));
        problems.sort();
        Ok(Presets { dir: shown, presets, problems })
    }

    /// Save (or replace) a preset of `tool`. The arguments must be a JSON object; they are
    /// not checked against the input schema (a preset may be a partial form).
    pub fn save_preset(&self, preset: Preset) -> Result<Preset, EngineError> {
        let def = self.tool_for_presets(&preset.tool)?;
        check_name(&preset.name)?;
        if !preset.args.is_object() {
            return Err(EngineError::BadPreset("args: must be a JSON object".to_owned()));
        }
        let text = serde_json::to_string_pretty(&preset).unwrap_or_default() + "\n";
        if text.len() > MAX_PRESET_BYTES {
            return Err(EngineError::BadPreset(format!(
                "args: {} bytes, more than the {MAX_PRESET_BYTES} a preset may hold",
                text.len()
            )));
        }
        let (dir, shown) = self.preset_dir(&def);
        let file = format!("{}.{}.preset.json", file_stem(&preset.tool), preset.name);
        let io = |source| EngineError::PresetIo { path: format!("{shown}/{file}"), source };
        std::fs::create_dir_all(&dir).map_err(io)?;
        // Write beside, then rename: a reader (or the watcher) never sees half a file.
        let temporary = dir.join(format!(".{file}.{}", uuid::Uuid::new_v4().simple()));
        fs_err::write(&temporary, text).map_err(io)?;
        std::fs::rename(&temporary, dir.join(&file)).map_err(|error| {
            let _ = std::fs::remove_file(&temporary);
            io(error)
        })?;
        Ok(preset)
    }

    /// Delete a preset of `tool`.
    pub fn delete_preset(&self, tool: &str, name: &str) -> Result<(), EngineError> {
        let def = self.tool_for_presets(tool)?;
        check_name(name)?;
        let (dir, shown) = self.preset_dir(&def);
        let file = format!("{}.{name}.preset.json", file_stem(tool));
        match std::fs::remove_file(dir.join(&file)) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                Err(EngineError::NoPreset(format!("{tool}/{name}")))
            }
            Err(error) => {
                Err(EngineError::PresetIo { path: format!("{shown}/{file}"), source: error })
            }
        }
    }
}

/// Read one preset file, checking it belongs where it is.
fn read_preset(path: &Path, tool: &str, name: &str) -> Result<Preset, String> {
    let metadata = std::fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    if !metadata.is_file() {
        return Err("not a regular file".to_owned());
    }
    if metadata.len() > MAX_PRESET_BYTES as u64 {
        return Err(format!("larger than {MAX_PRESET_BYTES} bytes"));
    }
    let text = fs_err::read_to_string(path).map_err(|e| e.to_string())?;
    let preset: Preset = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    if preset.tool != tool || preset.name != name {
        return Err(format!(
            "says it is `{}` of `{}`, but its file name says `{name}` of `{tool}`",
            preset.name, preset.tool
        ));
    }
    if !preset.args.is_object() {
        return Err("args: must be a JSON object".to_owned());
    }
    Ok(preset)
}
