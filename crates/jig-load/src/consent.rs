//! A person's consent, kept outside the project: to start a project's upstream MCP server, and
//! to what its manifest sends off the machine or writes outside it (`crate::trust`).
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

/// The directory of the project at `root`'s consents: a project is known by its real path, so
/// a copy elsewhere is another project.
fn project_dir(root: &Path) -> Option<PathBuf> {
    let real = fs_err::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let project = Sha256Hash::of_bytes(real.as_os_str().as_encoded_bytes()).to_hex();
    Some(dir()?.join(&project[..32]))
}

/// The file holding the consent to server `name` of the project at `root`.
fn file(root: &Path, name: &str) -> Option<PathBuf> {
    Some(project_dir(root)?.join(format!("{name}.mcp")))
}

/// The file holding a consent of `kind` (`forwarder`, `webhook`, …) to `name`: named by a hash
/// of the name, which the manifest chooses and may spell anyhow.
fn keyed_file(root: &Path, kind: &str, name: &str) -> Option<PathBuf> {
    let key = Sha256Hash::of_bytes(name.as_bytes()).to_hex();
    Some(project_dir(root)?.join(format!("{kind}.{}.trust", &key[..24])))
}

/// The hash a person consented to for `kind` `name` of `root`, if any consent is kept.
pub fn kept(root: &Path, kind: &str, name: &str) -> Option<String> {
    let path = keyed_file(root, kind, name)?;
    let text = fs_err::read_to_string(path).ok()?;
    text.lines().next().map(str::to_owned)
}

/// Keep a person's consent to `kind` `name` of `root` with the configuration hashed `hash`
/// (`about` is written beside it, for a person reading the directory); `Ok(true)` when it was
/// not kept before. Replaces any earlier consent to it.
pub fn keep(root: &Path, kind: &str, name: &str, hash: &str, about: &str) -> Result<bool, String> {
    let path = keyed_file(root, kind, name)
        .ok_or("neither XDG_STATE_HOME nor HOME is set: there is nowhere to keep the consent")?;
    if kept(root, kind, name).as_deref() == Some(hash) {
        return Ok(false);
    }
    let text = format!("{hash}\n{about}\n{}\n", root.display());
    write_whole(&path, &text)?;
    Ok(true)
}

/// Take back the consent to `kind` `name` of `root`; `Ok(true)` when one was kept.
pub fn forget(root: &Path, kind: &str, name: &str) -> Result<bool, String> {
    let Some(path) = keyed_file(root, kind, name) else { return Ok(false) };
    match fs_err::remove_file(&path) {
        Ok(()) => Ok(true),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(error.to_string()),
    }
}

/// Write `text` to `path` whole: a temporary file beside it, renamed over it.
fn write_whole(path: &Path, text: &str) -> Result<(), String> {
    let parent = path.parent().ok_or("no directory")?;
    fs_err::create_dir_all(parent).map_err(|e| e.to_string())?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = parent.join(format!(".{name}.{}", std::process::id()));
    fs_err::write(&temporary, text)
        .and_then(|()| fs_err::rename(&temporary, path))
        .map_err(|e| e.to_string())
}

/// What a person consented to for an upstream server: its configuration, the tools it listed
/// when they asked (a discovery file changed by anyone but Jig is not believed), and the
/// files its command runs (a pull that rewrites `srv/server.py` is not started on the old
/// consent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConsent {
    /// The configuration's hash (`upstream::config_hash`).
    pub config: String,
    /// The hash of the tools as the server listed them (`upstream::tools_hash`).
    pub tools: String,
    /// The hash of the files its command and arguments name (`upstream::program_hash`).
    pub program: String,
}

/// The consent kept for server `name` of `root`, if one is (one kept by an older Jig, which
/// bound the configuration only, counts as none: asking again binds the rest).
pub fn server(root: &Path, name: &str) -> Option<ServerConsent> {
    let text = fs_err::read_to_string(file(root, name)?).ok()?;
    let mut lines = text.lines();
    let config = lines.next()?.to_owned();
    let tools = lines.next()?.strip_prefix("tools:")?.to_owned();
    let program = lines.next()?.strip_prefix("program:")?.to_owned();
    Some(ServerConsent { config, tools, program })
}

/// Keep `consent` for server `name` of `root`, replacing what was kept; `Ok(true)` when its
/// configuration was not consented to before.
pub fn give_server(root: &Path, name: &str, consent: &ServerConsent) -> Result<bool, String> {
    let path = file(root, name)
        .ok_or("neither XDG_STATE_HOME nor HOME is set: there is nowhere to keep the consent")?;
    let before = server(root, name);
    if before.as_ref() == Some(consent) {
        return Ok(false);
    }
    // The project's path after the hashes, for a person looking through the directory.
    let text = format!(
        "{}\ntools:{}\nprogram:{}\n{}\n",
        consent.config,
        consent.tools,
        consent.program,
        root.display()
    );
    write_whole(&path, &text)?;
    Ok(before.is_none_or(|b| b.config != consent.config))
}
