//! The example project, built into the app so it opens on something real the first time: it
//! is written out once to the user's data directory and opened from there (the app never
//! writes into a project it did not make).

use std::path::{Path, PathBuf};

use rust_embed::RustEmbed;

use crate::places;

#[derive(RustEmbed)]
#[folder = "../toolpacks/examples"]
#[exclude = ".jig/*"]
struct Example;

/// The example project's copy, written out if it is not there yet.
pub fn ensure() -> std::io::Result<PathBuf> {
    let target = places::data_dir().join("example");
    if target.join("jig.yaml").is_file() {
        return Ok(target);
    }
    // Written beside the target and renamed into place, so an interrupted first start never
    // leaves half a project behind.
    let parent = places::data_dir();
    fs_err::create_dir_all(&parent)?;
    let staging = parent.join(format!(".example-{}", std::process::id()));
    if staging.exists() {
        fs_err::remove_dir_all(&staging)?;
    }
    for name in Example::iter() {
        let Some(file) = Example::get(&name) else { continue };
        let path = staging.join(Path::new(name.as_ref()));
        if let Some(dir) = path.parent() {
            fs_err::create_dir_all(dir)?;
        }
        fs_err::write(&path, file.data)?;
    }
    if target.exists() {
        // A copy without its manifest is not the example any more; keep it, aside.
        fs_err::rename(&target, parent.join(format!("example.broken-{}", std::process::id())))?;
    }
    fs_err::rename(&staging, &target)?;
    Ok(target)
}
