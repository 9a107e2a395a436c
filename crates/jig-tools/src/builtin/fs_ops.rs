//! `fs_move`, `fs_copy` and `fs_delete`: every name is opened beneath the workspace root by the
//! kernel, and each operation either completes or leaves the tree as it was.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, OpenOptions, PermissionsExt as _};
use jig_model::ErrorCode;
use jig_policy::sandbox::{Access, SandboxError};
use rustix::fs::RenameFlags;
use serde_json::json;

use super::call::Call;
use jig_exec::{Output, ToolError};

pub(super) fn move_path(call: &Call) -> Result<Output, ToolError> {
    let (src, dst) = (call.str("src")?, call.str("dst")?);
    let overwrite = call.bool("overwrite", false);
    let _held = call.locks.lock(&[src, dst]);
    let (src_dir, src_name) = call.workspace.parent_of(src, Access::Write)?;
    let (dst_dir, dst_name) = call.workspace.parent_of(dst, Access::Write)?;
    src_dir.symlink_metadata(&src_name).map_err(|e| SandboxError::io(src, e))?;
    rename(&src_dir, &src_name, &dst_dir, &dst_name, overwrite).map_err(|e| match e.kind() {
        io::ErrorKind::AlreadyExists => exists(dst),
        _ => ToolError::from(SandboxError::io(dst, e)),
    })?;
    Ok(Output {
        data: json!({ "moved": true }),
        files_touched: vec![src.to_owned(), dst.to_owned()],
        prepared: None,
    })
}

pub(super) fn copy_path(call: &Call) -> Result<Output, ToolError> {
    let (src, dst) = (call.str("src")?, call.str("dst")?);
    let overwrite = call.bool("overwrite", false);
    let preserve_mode = call.bool("preserve_mode", true);
    let _held = call.locks.lock(&[dst]);
    let (src_dir, src_name) = call.workspace.parent_of(src, Access::Read)?;
    let (dst_dir, dst_name) = call.workspace.parent_of(dst, Access::Write)?;
    let meta = src_dir.metadata(&src_name).map_err(|e| SandboxError::io(src, e))?;
    if !overwrite && dst_dir.symlink_metadata(&dst_name).is_ok() {
        return Err(exists(dst));
    }
    // Build the copy under a temporary name next to the destination, then rename it into place:
    // a failure or a timeout half-way leaves no partial copy behind.
    let temp = temp_name(&dst_name);
    let mut copied = Copied::default();
    let built = if meta.is_dir() {
        let from = src_dir.open_dir(&src_name).map_err(|e| SandboxError::io(src, e))?;
        // `src` may be a symlink to a protected directory: judge what was opened.
        call.workspace.check_opened(src, &from, Access::Read)?;
        copy_tree(call, &from, &dst_dir, &temp, preserve_mode, src, &mut copied)
    } else {
        copy_file(call, &src_dir, &src_name, &dst_dir, &temp, preserve_mode, src, &mut copied)
    };
    let placed = built.and_then(|()| {
        replace(&dst_dir, &temp, &dst_name, overwrite, meta.is_dir()).map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => exists(dst),
            _ => ToolError::from(SandboxError::io(dst, e)),
        })
    });
    if let Err(error) = placed {
        let _ = remove_any(&dst_dir, &temp);
        return Err(error);
    }
    let mut data = json!({ "copied": true, "files": copied.files, "bytes": copied.bytes });
    if !copied.skipped.is_empty() {
        data["skipped_symlinks"] = json!(copied.skipped);
    }
    Ok(Output { data, files_touched: vec![dst.to_owned()], prepared: None })
}

pub(super) fn delete_path(call: &Call) -> Result<Output, ToolError> {
    let path = call.str("path")?;
    let recursive = call.bool("recursive", false);
    let force = call.bool("force", false);
    // `.git/`, `.jig/` and the manifests are refused here, whatever the path's spelling.
    let (dir, name) = call.workspace.parent_of(path, Access::Write)?;
    let _held = call.locks.lock(&[path]);
    let meta = match dir.symlink_metadata(&name) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound && force => {
            return Ok(Output::data(json!({ "deleted": false })));
        }
        Err(e) => return Err(SandboxError::io(path, e).into()),
    };
    let removed = if meta.is_dir() {
        if recursive {
            dir.remove_dir_all(&name)
        } else {
            dir.remove_dir(&name).map_err(|e| {
                if e.kind() == io::ErrorKind::DirectoryNotEmpty {
                    io::Error::new(e.kind(), "the directory is not empty; pass `recursive: true` to delete it and everything in it")
                } else {
                    e
                }
            })
        }
    } else {
        // A symlink is removed itself, never what it points to.
        dir.remove_file(&name)
    };
    removed.map_err(|e| SandboxError::io(path, e))?;
    Ok(Output {
        data: json!({ "deleted": true }),
        files_touched: vec![path.to_owned()],
        prepared: None,
    })
}

#[derive(Debug, Default)]
struct Copied {
    files: u64,
    bytes: u64,
    skipped: Vec<String>,
}

#[allow(clippy::too_many_arguments)] // one copy step: the workspace, where from, where to, how
fn copy_file(
    call: &Call,
    from_dir: &Dir,
    from: &str,
    to_dir: &Dir,
    to: &str,
    preserve_mode: bool,
    shown: &str,
    copied: &mut Copied,
) -> Result<(), ToolError> {
    // Regular files only (a FIFO would hang), and not a protected one reached by a symlink.
    let mut source = call.workspace.open_regular_in(from_dir, from, shown)?;
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    let mut target = to_dir.open_with(to, &options).map_err(|e| SandboxError::io(shown, e))?;
    copied.bytes += io::copy(&mut source, &mut target).map_err(|e| SandboxError::io(shown, e))?;
    copied.files += 1;
    if preserve_mode {
        let mode = source.metadata().map_err(|e| SandboxError::io(shown, e))?.permissions().mode();
        target
            .set_permissions(cap_std::fs::Permissions::from_mode(mode))
            .map_err(|e| SandboxError::io(shown, e))?;
    }
    target.sync_all().map_err(|e| SandboxError::io(shown, e))?;
    Ok(())
}

fn copy_tree(
    call: &Call,
    from: &Dir,
    to_parent: &Dir,
    to: &str,
    preserve_mode: bool,
    shown: &str,
    copied: &mut Copied,
) -> Result<(), ToolError> {
    call.check_time()?;
    to_parent.create_dir(to).map_err(|e| SandboxError::io(shown, e))?;
    let target = to_parent.open_dir(to).map_err(|e| SandboxError::io(shown, e))?;
    if preserve_mode {
        let mode =
            from.dir_metadata().map_err(|e| SandboxError::io(shown, e))?.permissions().mode();
        to_parent
            .set_permissions(to, cap_std::fs::Permissions::from_mode(mode | 0o700))
            .map_err(|e| SandboxError::io(shown, e))?;
    }
    for entry in from.entries().map_err(|e| SandboxError::io(shown, e))? {
        call.check_time()?;
        let entry = entry.map_err(|e| SandboxError::io(shown, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let inner = format!("{shown}/{name}");
        let kind = entry.file_type().map_err(|e| SandboxError::io(&inner, e))?;
        if kind.is_symlink() {
            // A link may point anywhere; copying it would carry that anywhere along.
            copied.skipped.push(inner);
        } else if kind.is_dir() {
            let sub = entry.open_dir().map_err(|e| SandboxError::io(&inner, e))?;
            copy_tree(call, &sub, &target, &name, preserve_mode, &inner, copied)?;
        } else if kind.is_file() {
            copy_file(call, from, &name, &target, &name, preserve_mode, &inner, copied)?;
        } else {
            // A FIFO, socket or device has no content to copy, and reading one may block.
            copied.skipped.push(inner);
        }
    }
    Ok(())
}

/// Put `temp` at `name`. Without `overwrite` the kernel refuses an existing `name`
/// (`RENAME_NOREPLACE`); with it, an existing directory is moved aside first and removed after.
fn replace(dir: &Dir, temp: &str, name: &str, overwrite: bool, is_dir: bool) -> io::Result<()> {
    if !overwrite {
        return rename(dir, temp, dir, name, false);
    }
    let old_is_dir = dir.symlink_metadata(name).is_ok_and(|m| m.is_dir());
    if is_dir || old_is_dir {
        let aside = temp_name(name);
        let moved_aside = match rename(dir, name, dir, &aside, false) {
            Ok(()) => true,
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(e) => return Err(e),
        };
        if let Err(e) = rename(dir, temp, dir, name, false) {
            if moved_aside {
                let _ = rename(dir, &aside, dir, name, false);
            }
            return Err(e);
        }
        if moved_aside {
            remove_any(dir, &aside)?;
        }
        return Ok(());
    }
    rename(dir, temp, dir, name, true)
}

/// `renameat2` between two directory handles; names are single components, so nothing is
/// followed on the way.
fn rename(from_dir: &Dir, from: &str, to_dir: &Dir, to: &str, overwrite: bool) -> io::Result<()> {
    let flags = if overwrite { RenameFlags::empty() } else { RenameFlags::NOREPLACE };
    match rustix::fs::renameat_with(from_dir, from, to_dir, to, flags) {
        Ok(()) => Ok(()),
        // A file system without RENAME_NOREPLACE: check, then rename (a narrow race remains).
        Err(rustix::io::Errno::INVAL) if !overwrite => {
            if to_dir.symlink_metadata(to).is_ok() {
                return Err(io::Error::from(io::ErrorKind::AlreadyExists));
            }
            rustix::fs::renameat(from_dir, from, to_dir, to).map_err(io::Error::from)
        }
        Err(errno) => Err(io::Error::from(errno)),
    }
}

fn remove_any(dir: &Dir, name: &str) -> io::Result<()> {
    match dir.symlink_metadata(name) {
        Ok(meta) if meta.is_dir() => dir.remove_dir_all(name),
        Ok(_) => dir.remove_file(name),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn temp_name(name: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(".{name}.jig-{}-{unique}.tmp", std::process::id())
}

fn exists(path: &str) -> ToolError {
    ToolError::new(
        ErrorCode::FileIo,
        format!("`{path}` already exists; pass `overwrite: true` to replace it"),
    )
    .with_details(json!({ "path": path }))
}
