//! A person's consent to start a project's upstream MCP server, kept outside the project.
//!
//! What discovery found (`.jig/mcp/NAME.json`) lives in the project, so a repository can arrive
//! with one already there — with the right configuration hash, which anyone can compute. The
//! consent that lets Jig start the server on its own therefore lives where a repository cannot
//! put it: under the person's state directory (`$XDG_STATE_HOME/jig/consent`, by default
//! `~/.local/state/jig/consent`), one file per project directory and server, holding the hash of
//! the configuration the person asked for. Another person, another machine or another copy of
//! the repository asks again.

use std::path::{Path, PathBuf};

use jig_model::Sha256Hash;

/// The directory consents are kept in, if this process has a home to keep them in.
fn dir() -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .map(|home| home.join(".local/state"))
    })?;
    Some(state.join("jig").join("consent"))
}

/// The file holding the consent to server `name` of the project at `root`: a project is known by
/// its real path, so a copy elsewhere is another project.
fn file(root: &Path, name: &str) -> Option<PathBuf> {
    let real = fs_err::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let project = Sha256Hash::of_bytes(real.as_os_str().as_encoded_bytes()).to_hex();
    Some(dir()?.join(&project[..32]).join(format!("{name}.mcp")))
}

/// Whether a person on this machine asked for server `name` of `root` with the configuration
/// hashed `config`.
pub fn given(root: &Path, name: &str, config: &str) -> bool {
    file(root, name).is_some_and(|path| holds(&path, config))
}

/// Whether the consent file at `path` names the configuration hashed `config`.
fn holds(path: &Path, config: &str) -> bool {
    fs_err::read_to_string(path).is_ok_and(|kept| kept.lines().next() == Some(config))
}

/// Record that a person asked for server `name` of `root` with the configuration hashed
/// `config`; `Ok(true)` when it was not recorded before. The file is replaced whole.
pub fn give(root: &Path, name: &str, config: &str) -> Result<bool, String> {
    let path = file(root, name)
        .ok_or("neither XDG_STATE_HOME nor HOME is set: there is nowhere to keep the consent")?;
    if holds(&path, config) {
        return Ok(false);
    }
    let parent = path.parent().ok_or("no directory")?;
    fs_err::create_dir_all(parent).map_err(|e| e.to_string())?;
    let temporary = parent.join(format!(".{name}.{}", std::process::id()));
    // The project's path beside the hash, for a person looking through the directory.
    let text = format!("{config}\n{}\n", root.display());
    fs_err::write(&temporary, text)
        .and_then(|()| fs_err::rename(&temporary, &path))
        .map_err(|e| e.to_string())?;
    Ok(true)
}
