//! The projects opened lately, newest first, kept in `~/.config/jig/recent.json`.

use std::path::{Path, PathBuf};

use crate::places;

/// How many are kept.
const KEEP: usize = 10;

fn file() -> PathBuf {
    places::config_dir().join("recent.json")
}

/// The list; an unreadable file counts as empty (it only remembers, it decides nothing).
pub fn list() -> Vec<PathBuf> {
    let Ok(text) = fs_err::read_to_string(file()) else { return Vec::new() };
    match serde_json::from_str::<Vec<PathBuf>>(&text) {
        Ok(paths) => paths,
        Err(error) => {
            tracing::warn!("{}: {error}; starting a new list", file().display());
            Vec::new()
        }
    }
}

/// Put `project` first, dropping the oldest beyond the limit; written whole and renamed.
pub fn remember(project: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut paths = list();
    paths.retain(|p| p != project);
    paths.insert(0, project.to_path_buf());
    paths.truncate(KEEP);
    let target = file();
    fs_err::create_dir_all(places::config_dir())?;
    let staging = target.with_extension(format!("json.{}", std::process::id()));
    let text = serde_json::to_string_pretty(&paths).map_err(std::io::Error::other)?;
    fs_err::write(&staging, text)?;
    fs_err::rename(&staging, &target)?;
    Ok(paths)
}
