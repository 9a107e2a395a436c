//! `jig audit publish`: the chain's signed checkpoint, written where a copy outside this
//! machine keeps it — a file (a mounted share, a repository checked out elsewhere) or an
//! HTTP PUT (an object store, a witness). A chain rewritten later no longer matches it.

use std::path::Path;
use std::time::Duration;

/// How long a PUT may take.
const PUT_WITHIN: Duration = Duration::from_secs(15);

/// Where the checkpoint goes, and who chose it.
pub enum Target<'a> {
    /// `--to`: the person running the command named it.
    Named(&'a str),
    /// The manifest's `config.audit.publish`: the repository's word.
    Manifest(&'a str),
}

/// Write `note` to `target` (a path relative to `project`, an absolute path, or an http(s)
/// URL). `false`, said on stderr, when the target refused it or it waits for consent.
///
/// A manifest's target inside the project is written beneath the root by the kernel (a
/// symlink in the repository cannot carry it out, and a manifest, `.jig` or `.git` is refused
/// as for any tool); one outside the project (an absolute path, `..`, a URL) is written only
/// once a person consented to it (`jig trust`): a cloned manifest once pointed it at
/// `../../.bashrc`.
pub async fn write(project: &Path, target: Target<'_>, note: &str) -> anyhow::Result<bool> {
    let (target, named) = match target {
        Target::Named(target) => (target, true),
        Target::Manifest(target) => (target, false),
    };
    if !named && jig_load::trust::leaves_the_project(target) {
        let item = jig_load::trust::Outbound::publish(target);
        if !item.trusted(project) {
            crate::fail!(
                Policy,
                "config.audit.publish: {} waits for your consent",
                item.describe()
            );
            eprintln!("  = hint: read it, then `jig trust`; or name the place yourself with --to");
            return Ok(false);
        }
    }
    if target.starts_with("http://") || target.starts_with("https://") {
        return put(target, note).await;
    }
    if !jig_load::trust::leaves_the_project(target) {
        return Ok(inside(project, target, note));
    }
    let path = project.join(target);
    let written = match path.parent() {
        Some(parent) => fs_err::create_dir_all(parent),
        None => Ok(()),
    }
    .and_then(|()| crate::files::write_whole(&path, note));
    if let Err(error) = written {
        crate::fail!(FileIo, "{}: {error}", path.display());
        return Ok(false);
    }
    Ok(true)
}

/// Write `note` at `target` beneath `project`, resolved by the kernel.
fn inside(project: &Path, target: &str, note: &str) -> bool {
    let written = jig_policy::sandbox::Workspace::open(project)
        .and_then(|workspace| workspace.write_atomic(target, note.as_bytes(), true, Some(0o644)));
    match written {
        Ok(_) => true,
        Err(error) => {
            crate::fail!(FileIo, "config.audit.publish: {error}");
            false
        }
    }
}

async fn put(url: &str, note: &str) -> anyhow::Result<bool> {
    let client = jig_engine::http_client(PUT_WITHIN).map_err(anyhow::Error::msg)?;
    let sent = client
        .put(url)
        .header("content-type", "text/plain; charset=utf-8")
        .body(note.to_owned())
        .send()
        .await;
    match sent {
        Ok(response) if response.status().is_success() => Ok(true),
        Ok(response) => {
            crate::fail!(Http, "PUT {url}: the server answered {}", response.status());
            Ok(false)
        }
        Err(error) => {
            crate::fail!(Http, "PUT {url}: {error}");
            Ok(false)
        }
    }
}
