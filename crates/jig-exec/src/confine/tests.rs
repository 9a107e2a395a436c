use super::*;

#[test]
fn protected_paths_are_bound_after_the_writable_workspace() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    fs_err::create_dir_all(root.join(".jig/runs/r1")).expect("mkdir");
    fs_err::write(root.join("jig.yaml"), "name: x\n").expect("write");
    let confinement = Confinement {
        write: vec![root.to_path_buf(), root.join(".jig/runs/r1")],
        hidden: vec![root.join(".jig")],
        read_only: vec![root.join("jig.yaml")],
        ..Confinement::default()
    };
    let argv: Vec<String> = confinement
        .options(root, &BTreeMap::new())
        .expect("options")
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let at = |flag: &str, path: &Path| {
        argv.windows(2)
            .position(|w| w[0] == flag && w[1] == path.display().to_string())
            .unwrap_or_else(|| panic!("{flag} {} in {argv:?}", path.display()))
    };
    assert!(at("--bind", root) < at("--ro-bind", &root.join("jig.yaml")));
    assert!(at("--ro-bind", &root.join("jig.yaml")) < at("--tmpfs", &root.join(".jig")));
    assert!(at("--tmpfs", &root.join(".jig")) < at("--remount-ro", &root.join(".jig")));
    assert!(argv.contains(&"--unshare-net".to_owned()));
}

#[test]
fn a_relative_program_adds_no_grant_and_hides_none() {
    assert!(prefixes(Path::new("./bin/report.sh")).is_empty());
    let usr = prefixes(Path::new("/usr/bin/true"));
    assert!(!usr.is_empty() && usr.iter().all(|p| p == Path::new("/usr")), "{usr:?}");
}

#[test]
fn the_directories_above_a_protected_path_are_pinned_before_it_is_bound() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    fs_err::create_dir_all(root.join(".git/modules/sub/hooks")).expect("mkdir");
    fs_err::create_dir_all(root.join("work")).expect("mkdir");
    fs_err::write(root.join("jig.yaml"), "name: x\n").expect("write");
    let argv_of = |write: Vec<PathBuf>| -> Vec<String> {
        let confinement = Confinement {
            read: vec![root.to_path_buf()],
            write,
            read_only: vec![root.join(".git/modules/sub/hooks"), root.join("jig.yaml")],
            ..Confinement::default()
        };
        confinement
            .options(root, &BTreeMap::new())
            .expect("options")
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect()
    };
    let argv = argv_of(vec![root.to_path_buf()]);
    let at = |flag: &str, path: &Path| {
        argv.windows(2)
            .position(|w| w[0] == flag && w[1] == path.display().to_string())
            .unwrap_or_else(|| panic!("{flag} {} in {argv:?}", path.display()))
    };
    let git = at("--bind", &root.join(".git"));
    let modules = at("--bind", &root.join(".git/modules"));
    let sub = at("--bind", &root.join(".git/modules/sub"));
    let hooks = at("--ro-bind", &root.join(".git/modules/sub/hooks"));
    assert!(git < modules && modules < sub && sub < hooks, "{argv:?}");
    // Nothing outside a writable tree is bound writable to pin it.
    let argv = argv_of(vec![root.join("work")]);
    let git = root.join(".git").display().to_string();
    assert!(!argv.windows(2).any(|w| w[0] == "--bind" && w[1] == git), "{argv:?}");
}

/// The red team's escape: a tool's `LD_PRELOAD` loaded its library into bwrap itself, and
/// its `PATH` chose which program "bwrap" was. Both ran as Jig's user, outside any sandbox.
#[tokio::test]
#[allow(clippy::disallowed_methods, reason = "the test compiles a library with the C compiler")]
async fn a_tools_variables_never_reach_the_launcher() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().canonicalize().expect("canonical");
    let marked = root.join("loaded-outside");
    fs_err::write(
            root.join("mark.c"),
            format!(
                "#include <stdio.h>\n__attribute__((constructor)) static void mark(void) {{ \
                 FILE *f = fopen(\"{}\", \"a\"); if (f) {{ fputs(\"constructor\\n\", f); fclose(f); }} }}\n",
                marked.display()
            ),
        )
        .expect("write");
    let compiled = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-o", "libmark.so", "mark.c"])
        .current_dir(&root)
        .status()
        .expect("cc");
    assert!(compiled.success());
    fs_err::create_dir_all(root.join("vendor/bin")).expect("mkdir");
    let fake = root.join("vendor/bin/bwrap");
    fs_err::write(
        &fake,
        format!("#!/bin/sh\necho fake-bwrap >> {}\nexec \"$@\"\n", marked.display()),
    )
    .expect("write");
    fs_err::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let scratch = Scratch::new(&root, "launcher").expect("scratch");
    let confinement = Confinement {
        read: SYSTEM.iter().map(PathBuf::from).collect(),
        tmp: Some(scratch.path().to_path_buf()),
        required: true,
        ..Confinement::default()
    };
    let env = BTreeMap::from([
        ("LD_PRELOAD".to_owned(), root.join("libmark.so").display().to_string()),
        ("PATH".to_owned(), format!("{}:/usr/bin:/bin", root.join("vendor/bin").display())),
        ("JIG_PROBE".to_owned(), "inside".to_owned()),
    ]);
    let argv = ["sh".to_owned(), "-c".to_owned(), "echo \"$JIG_PROBE\"".to_owned()];
    let finished = crate::process::run(
        crate::process::Spawn {
            argv: &argv,
            cwd: &root,
            env,
            stdin: None,
            timeout: std::time::Duration::from_secs(20),
            max_output: 4096,
            confine: &confinement,
        },
        &crate::executor::Cancel::new(),
        &crate::executor::Events::discard("launcher"),
    )
    .await
    .expect("runs");
    // The variables reach the tool, inside.
    assert_eq!(finished.code, Some(0), "{finished:?}");
    assert_eq!(finished.stdout.trim(), "inside");
    // Nothing ran outside: not the library's constructor, not the planted "bwrap".
    assert!(!marked.exists(), "{}", fs_err::read_to_string(&marked).unwrap_or_default());
}

#[test]
fn a_variable_that_cannot_be_one_is_refused() {
    let confinement = Confinement::default();
    for (name, value) in [("A=B", "x"), ("", "x"), ("A", "x\0y")] {
        let env = BTreeMap::from([(name.to_owned(), value.to_owned())]);
        assert!(confinement.options(Path::new("/"), &env).is_err(), "{name:?}");
    }
}
