//! The projects opened lately, newest first, kept in `~/.config/jig/recent.json`, and the team
//! servers signed in to lately in `~/.config/jig/servers.json` (their addresses only: the app's
//! sessions are never written down).

use std::path::{Path, PathBuf};

use crate::places;

/// How many are kept.
const KEEP: usize = 10;

const PROJECTS: &str = "recent.json";
const SERVERS: &str = "servers.json";

/// The projects; an unreadable file counts as empty (it only remembers, it decides nothing).
pub fn list() -> Vec<PathBuf> {
    read(PROJECTS)
}

/// The team servers' addresses.
pub fn servers() -> Vec<String> {
    read(SERVERS)
}

/// Put `project` first, dropping the oldest beyond the limit.
pub fn remember(project: &Path) -> std::io::Result<Vec<PathBuf>> {
    put_first(PROJECTS, project.to_path_buf())
}

/// Put the server at `origin` first.
pub fn remember_server(origin: &str) -> std::io::Result<Vec<String>> {
    put_first(SERVERS, origin.to_owned())
}

fn read<T: serde::de::DeserializeOwned>(name: &str) -> Vec<T> {
    let file = places::config_dir().join(name);
    let Ok(text) = fs_err::read_to_string(&file) else { return Vec::new() };
    match serde_json::from_str::<Vec<T>>(&text) {
        Ok(items) => items,
        Err(error) => {
            tracing::warn!("{}: {error}; starting a new list", file.display());
            Vec::new()
        }
    }
}

/// `item` first in the list `name`, the oldest beyond the limit dropped; written whole and
/// renamed.
fn put_first<T>(name: &str, item: T) -> std::io::Result<Vec<T>>
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq,
{
    let mut items = read::<T>(name);
    items.retain(|i| *i != item);
    items.insert(0, item);
    items.truncate(KEEP);
    let target = places::config_dir().join(name);
    fs_err::create_dir_all(places::config_dir())?;
    let staging = target.with_extension(format!("json.{}", std::process::id()));
    let text = serde_json::to_string_pretty(&items).map_err(std::io::Error::other)?;
    fs_err::write(&staging, text)?;
    fs_err::rename(&staging, &target)?;
    Ok(items)
}
