//! `jig audit publish`: the chain's signed checkpoint, written where a copy outside this
//! machine keeps it — a file (a mounted share, a repository checked out elsewhere) or an
//! HTTP PUT (an object store, a witness). A chain rewritten later no longer matches it.

use std::path::Path;
use std::time::Duration;

/// How long a PUT may take.
const PUT_WITHIN: Duration = Duration::from_secs(15);

/// Write `note` to `target` (a path relative to `project`, or an http(s) URL). `false`, said
/// on stderr, when the target refused it.
pub async fn write(project: &Path, target: &str, note: &str) -> anyhow::Result<bool> {
    if target.starts_with("http://") || target.starts_with("https://") {
        return put(target, note).await;
    }
    let path = project.join(target);
    let written = match path.parent() {
        Some(parent) => fs_err::create_dir_all(parent),
        None => Ok(()),
    }
    .and_then(|()| crate::files::write_whole(&path, note));
    if let Err(error) = written {
        eprintln!("error[E_FILE_IO]: {}: {error}", path.display());
        return Ok(false);
    }
    Ok(true)
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
            eprintln!("error[E_HTTP]: PUT {url}: the server answered {}", response.status());
            Ok(false)
        }
        Err(error) => {
            eprintln!("error[E_HTTP]: PUT {url}: {error}");
            Ok(false)
        }
    }
}
