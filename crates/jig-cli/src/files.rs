//! Files the CLI writes for people (the manifest, a published checkpoint).

use std::path::Path;

/// Replace `path` whole: a reader sees the old file or the new one, never half.
pub fn write_whole(path: &Path, text: &str) -> std::io::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    fs_err::write(&temporary, text)?;
    fs_err::rename(&temporary, path)
}
