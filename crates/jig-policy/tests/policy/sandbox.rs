//! The workspace sandbox against escapes: lexical, absolute, symlinks, swaps, sibling prefixes.

use std::os::unix::fs::symlink;

use jig_policy::sandbox::{SandboxError, Workspace};

struct Setup {
    _parent: tempfile::TempDir,
    root: std::path::PathBuf,
    sibling: std::path::PathBuf,
}

/// `<tmp>/ws` (the workspace) and `<tmp>/ws-evil` (a sibling whose name starts like it).
fn setup() -> Setup {
    let parent = tempfile::tempdir().expect("tmp");
    let root = parent.path().join("ws");
    let sibling = parent.path().join("ws-evil");
    std::fs::create_dir_all(root.join("src")).expect("mkdir");
    std::fs::create_dir_all(&sibling).expect("mkdir");
    std::fs::write(root.join("src/lib.rs"), "fn main() {}\n").expect("write");
    std::fs::write(sibling.join("secret.txt"), "s3cret\n").expect("write");
    std::fs::write(parent.path().join("outside.txt"), "outside\n").expect("write");
    Setup { _parent: parent, root, sibling }
}

fn is_escape(result: &Result<Vec<u8>, SandboxError>) -> bool {
    matches!(result, Err(SandboxError::Escape { .. }))
}

#[test]
fn reads_inside_the_workspace_work() {
    let s = setup();
    let ws = Workspace::open(&s.root).expect("open");
    assert_eq!(ws.read("src/lib.rs", 1024).expect("read"), b"fn main() {}\n");
    assert_eq!(ws.read("./src/../src/lib.rs", 1024).expect("read"), b"fn main() {}\n");
    assert!(matches!(ws.read("src/missing.rs", 1024), Err(SandboxError::NotFound { .. })));
    assert!(matches!(
        ws.read("src/lib.rs", 4),
        Err(SandboxError::TooLarge { size: 13, max: 4, .. })
    ));
}

#[test]
fn lexical_escapes_are_refused() {
    let s = setup();
    let ws = Workspace::open(&s.root).expect("open");
    for path in ["../outside.txt", "src/../../outside.txt", "/etc/passwd", "../ws-evil/secret.txt"]
    {
        assert!(is_escape(&ws.read(path, 1024)), "{path}");
    }
    let absolute = s.sibling.join("secret.txt").display().to_string();
    assert!(is_escape(&ws.read(&absolute, 1024)));
}

#[test]
fn a_symlink_inside_pointing_out_is_refused_by_the_kernel() {
    let s = setup();
    symlink(s.sibling.join("secret.txt"), s.root.join("src/link.txt")).expect("symlink");
    symlink(&s.sibling, s.root.join("sibling-dir")).expect("symlink");
    symlink("/etc", s.root.join("etc")).expect("symlink");
    let ws = Workspace::open(&s.root).expect("open");
    assert!(is_escape(&ws.read("src/link.txt", 1024)));
    assert!(is_escape(&ws.read("sibling-dir/secret.txt", 1024)));
    assert!(is_escape(&ws.read("etc/passwd", 1024)));
    // A symlink that stays inside is fine.
    symlink("lib.rs", s.root.join("src/alias.rs")).expect("symlink");
    assert_eq!(ws.read("src/alias.rs", 1024).expect("inside"), b"fn main() {}\n");
}

#[test]
fn a_symlink_swapped_in_after_a_check_is_still_refused() {
    let s = setup();
    let ws = Workspace::open(&s.root).expect("open");
    // The path passes the lexical check and is a plain file when "checked"...
    jig_policy::sandbox::check_lexically("src/swap.txt").expect("lexically fine");
    std::fs::write(s.root.join("src/swap.txt"), "innocent\n").expect("write");
    // ...then becomes a link to the outside before the open: the open itself refuses.
    std::fs::remove_file(s.root.join("src/swap.txt")).expect("rm");
    symlink(s.sibling.join("secret.txt"), s.root.join("src/swap.txt")).expect("symlink");
    assert!(is_escape(&ws.read("src/swap.txt", 1024)));
    // Writes through the swapped link are refused too and leave the target untouched.
    let written =
        ws.write_atomic("src/swap.txt/../../../ws-evil/secret.txt", b"pwned", false, None);
    assert!(written.is_err());
    assert_eq!(std::fs::read_to_string(s.sibling.join("secret.txt")).expect("read"), "s3cret\n");
}

#[test]
fn atomic_writes_create_replace_and_keep_modes() {
    use std::os::unix::fs::PermissionsExt;
    let s = setup();
    let ws = Workspace::open(&s.root).expect("open");
    assert_eq!(ws.write_atomic("out/report.txt", b"one", true, Some(0o640)).expect("write"), 3);
    let path = s.root.join("out/report.txt");
    assert_eq!(std::fs::read(&path).expect("read"), b"one");
    assert_eq!(std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777, 0o640);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    ws.write_atomic("out/report.txt", b"two", false, Some(0o644)).expect("replace");
    assert_eq!(std::fs::read(&path).expect("read"), b"two");
    assert_eq!(std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777, 0o600, "kept");
    // No temporary files are left behind.
    let names: Vec<String> = std::fs::read_dir(s.root.join("out"))
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["report.txt"]);
    // Without create_dirs, a missing directory is an error, not a silent mkdir.
    assert!(ws.write_atomic("new/dir/x.txt", b"x", false, None).is_err());
    assert!(!s.root.join("new").exists());
}

#[test]
fn writes_through_a_symlink_out_are_refused() {
    let s = setup();
    symlink(&s.sibling, s.root.join("out")).expect("symlink");
    let ws = Workspace::open(&s.root).expect("open");
    assert!(matches!(
        ws.write_atomic("out/secret.txt", b"x", false, None),
        Err(SandboxError::Escape { .. })
    ));
    assert_eq!(std::fs::read_to_string(s.sibling.join("secret.txt")).expect("read"), "s3cret\n");
}
