//! Inputs into and outputs out of a container, as the tar archives the Docker Engine API moves.
//!
//! What comes back from a container is untrusted: only regular files and directories are
//! unpacked, each path must stay inside `out/` (no absolute path, no `..`), and the total size
//! is capped. A link of any kind refuses the run: an artifact is what the plan wrote, not what a
//! link would reach.

use std::path::{Component, Path, PathBuf};

use jig_exec::ToolError;
use jig_model::ErrorCode;
use serde_json::json;

/// Largest archive of outputs accepted from a container.
pub const OUT_MAX: usize = 1024 * 1024 * 1024;

/// The error for an archive over [`OUT_MAX`].
pub fn too_large() -> ToolError {
    ToolError::new(ErrorCode::Limit, format!("the plan's outputs exceed {OUT_MAX} bytes"))
        .with_details(json!({ "limit": "outputs", "max": OUT_MAX }))
}

/// `in_dir`'s tree as an archive rooted at `/`: entries `work/in/…`, read-only files.
pub fn pack_inputs(in_dir: &Path) -> Result<Vec<u8>, ToolError> {
    let io =
        |e: std::io::Error| ToolError::new(ErrorCode::FileIo, format!("packing the inputs: {e}"));
    let mut builder = tar::Builder::new(Vec::new());
    builder.mode(tar::HeaderMode::Deterministic);
    builder.follow_symlinks(false);
    builder.append_dir_all("work/in", in_dir).map_err(io)?;
    builder.into_inner().map_err(io)
}

/// Unpack the archive of a container's `/work/out` into `out_dir`.
pub fn unpack_outputs(tar_bytes: &[u8], out_dir: &Path) -> Result<(), ToolError> {
    let refuse = |message: String| {
        ToolError::new(ErrorCode::Policy, message).with_details(json!({ "rule": "plans.outputs" }))
    };
    let io = |e: std::io::Error| {
        ToolError::new(ErrorCode::FileIo, format!("unpacking the outputs: {e}"))
    };
    let mut archive = tar::Archive::new(tar_bytes);
    let mut total: u64 = 0;
    for entry in archive.entries().map_err(io)? {
        let mut entry = entry.map_err(io)?;
        let name = entry.path().map_err(io)?.to_string_lossy().into_owned();
        let Some(relative) = inside_out(&name) else {
            return Err(refuse(format!("the output archive holds `{name}`, outside `out/`")));
        };
        let kind = entry.header().entry_type();
        let target = out_dir.join(&relative);
        if kind.is_dir() {
            fs_err::create_dir_all(&target).map_err(io)?;
        } else if kind.is_file() {
            total += entry.header().size().map_err(io)?;
            if total > OUT_MAX as u64 {
                return Err(too_large());
            }
            if let Some(parent) = target.parent() {
                fs_err::create_dir_all(parent).map_err(io)?;
            }
            let mut file = fs_err::File::create(&target).map_err(io)?;
            std::io::copy(&mut entry, &mut file).map_err(io)?;
        } else {
            return Err(refuse(format!(
                "the plan left `{name}` in `out/`, which is not a regular file or directory (a link?)"
            )));
        }
    }
    Ok(())
}

/// The path of an archive entry relative to `out/`, if it stays inside. Docker names entries
/// `out/…`; Podman `/…`.
fn inside_out(name: &str) -> Option<PathBuf> {
    let relative = match name.strip_prefix('/') {
        Some(rest) => Path::new(rest).to_path_buf(),
        None => {
            let path = Path::new(name);
            let mut components = path.components();
            match components.next() {
                Some(Component::Normal(first)) if first == "out" => {
                    components.as_path().to_path_buf()
                }
                _ => return None,
            }
        }
    };
    relative.components().all(|c| matches!(c, Component::Normal(_))).then_some(relative)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archive(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (name, kind, body) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(*kind);
            header.set_size(body.len() as u64);
            header.set_mode(0o644);
            if kind.is_symlink() {
                header.set_link_name("/etc/passwd").unwrap_or_else(|e| panic!("{e}"));
            }
            // `append_data` refuses `..`; write the raw name like a hostile engine could.
            let bytes = name.as_bytes();
            header.as_old_mut().name[..bytes.len()].copy_from_slice(bytes);
            header.set_cksum();
            builder.append(&header, *body).unwrap_or_else(|e| panic!("{e}"));
        }
        builder.into_inner().unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn unpacks_docker_and_podman_layouts() {
        for (dir, file) in [("out/", "out/sub/r.txt"), ("/", "/sub/r.txt")] {
            let temp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            let tar = archive(&[
                (dir, tar::EntryType::Directory, b""),
                (file, tar::EntryType::Regular, b"hi"),
            ]);
            unpack_outputs(&tar, temp.path()).unwrap_or_else(|e| panic!("{e:?}"));
            assert_eq!(
                fs_err::read(temp.path().join("sub/r.txt")).ok().as_deref(),
                Some(&b"hi"[..])
            );
        }
    }

    #[test]
    fn refuses_escapes_and_links() {
        let temp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for tar in [
            archive(&[("out/../escape", tar::EntryType::Regular, b"x")]),
            archive(&[("/../escape", tar::EntryType::Regular, b"x")]),
            archive(&[("etc/passwd", tar::EntryType::Regular, b"x")]),
            archive(&[("out/link", tar::EntryType::Symlink, b"")]),
            archive(&[("out/hard", tar::EntryType::Link, b"")]),
        ] {
            let error =
                unpack_outputs(&tar, temp.path()).err().unwrap_or_else(|| panic!("accepted"));
            assert_eq!(error.code, ErrorCode::Policy, "{error:?}");
        }
        assert!(!temp.path().parent().unwrap_or(temp.path()).join("escape").exists());
    }
}
