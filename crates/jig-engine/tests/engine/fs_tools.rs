//! The filesystem built-ins through the whole pipeline, on real files: what each does, and
//! that none of them leaves the workspace, follows a planted symlink or leaves partial state.

use std::os::unix::fs::{PermissionsExt, symlink};

use serde_json::{Value, json};

use crate::{Project, call_once, code, read};

const ALLOW_WRITES: &str = "rules:\n  - { effects: [write], action: allow }";

fn project() -> Project {
    let project = Project::new(ALLOW_WRITES);
    for (path, text) in [
        ("src/lib.rs", "pub fn a() {}\n// TODO: panic! here\n"),
        ("src/auth/mod.rs", "fn login() { panic!(\"no\") }\n"),
        ("src/.hidden.rs", "panic!()\n"),
        ("docs/guide.md", "Panic rarely.\n"),
        ("vendor/dep/lib.rs", "panic!()\n"),
        ("target/debug/out.rs", "panic!()\n"),
        (".gitignore", "target/\n"),
    ] {
        project.write(path, text);
    }
    std::fs::write(project.path("src/blob.bin"), b"panic!\0\x01\x02").expect("write");
    // The walker honours .gitignore inside a repository, as rg and fd do.
    std::fs::create_dir_all(project.path(".git")).expect("mkdir .git");
    project
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().expect("array").iter().map(|v| v.as_str().expect("str").to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn fs_list_matches_globs_skipping_ignored_and_hidden_files() {
    let project = project();
    let engine = project.engine().await;
    let response = call_once(&engine, "fs_list", json!({ "glob": "src/**/*.rs" })).await;
    assert!(response.ok, "{response:?}");
    assert_eq!(strings(&response.data["files"]), ["src/auth/mod.rs", "src/lib.rs"]);
    let hidden =
        call_once(&engine, "fs_list", json!({ "glob": "src/**/*.rs", "include_hidden": true }))
            .await;
    assert_eq!(strings(&hidden.data["files"]), ["src/.hidden.rs", "src/auth/mod.rs", "src/lib.rs"]);
    // `*` stays within a directory; `**` crosses them; a directory name means its contents.
    let top = call_once(&engine, "fs_list", json!({ "glob": "src/*.rs" })).await;
    assert_eq!(strings(&top.data["files"]), ["src/lib.rs"]);
    let dir = call_once(&engine, "fs_list", json!({ "glob": "docs" })).await;
    assert_eq!(strings(&dir.data["files"]), ["docs/guide.md"]);
    let all = call_once(&engine, "fs_list", json!({ "glob": "**", "max_results": 2 })).await;
    assert_eq!(all.data["files"].as_array().expect("files").len(), 2);
    assert_eq!(all.data["truncated"], true);
    let everything = call_once(&engine, "fs_list", json!({ "glob": "**" })).await;
    let files = strings(&everything.data["files"]);
    assert!(files.contains(&"vendor/dep/lib.rs".to_owned()), "{files:?}");
    assert!(!files.iter().any(|f| f.starts_with("target/")), "ignored files listed: {files:?}");
    let missing = call_once(&engine, "fs_list", json!({ "glob": "nowhere/**" })).await;
    assert!(missing.ok && strings(&missing.data["files"]).is_empty(), "{missing:?}");
    let bad = call_once(&engine, "fs_list", json!({ "glob": "src/[a" })).await;
    assert_eq!(code(&bad), "E_VALIDATION_FAIL", "{bad:?}");
}

/// `.jigignore` hides paths from the walking tools, in or out of a repository.
#[tokio::test(flavor = "multi_thread")]
async fn jigignore_hides_paths_from_fs_list_and_grep() {
    let project = project();
    project.write(".jigignore", "docs/\n*.md\n");
    let engine = project.engine().await;
    let listed = call_once(&engine, "fs_list", json!({ "glob": "**" })).await;
    let files = strings(&listed.data["files"]);
    assert!(!files.iter().any(|f| f.starts_with("docs/")), "{files:?}");
    assert!(files.contains(&"src/lib.rs".to_owned()), "{files:?}");
    let found = call_once(&engine, "grep", json!({ "pattern": "(?i)panic" })).await;
    assert!(!found.data.to_string().contains("guide.md"), "{}", found.data);
    assert!(found.data.to_string().contains("src/lib.rs"), "{}", found.data);
}

#[tokio::test(flavor = "multi_thread")]
async fn grep_reports_file_line_column_and_skips_binary_vendor_and_ignored_files() {
    let project = project();
    let engine = project.engine().await;
    let response = call_once(&engine, "grep", json!({ "pattern": "panic!" })).await;
    assert!(response.ok, "{response:?}");
    let matches = response.data["matches"].as_array().expect("matches");
    let found: Vec<(String, u64, u64)> = matches
        .iter()
        .map(|m| {
            (
                m["file"].as_str().expect("file").to_owned(),
                m["line"].as_u64().expect("line"),
                m["col"].as_u64().expect("col"),
            )
        })
        .collect();
    assert_eq!(found, [("src/auth/mod.rs".to_owned(), 1, 14), ("src/lib.rs".to_owned(), 2, 10)]);
    assert_eq!(matches[1]["snippet"], "// TODO: panic! here");
    let insensitive = call_once(
        &engine,
        "grep",
        json!({ "pattern": "panic", "case_sensitive": false, "glob": "docs/**" }),
    )
    .await;
    assert_eq!(insensitive.data["matches"][0]["file"], "docs/guide.md", "{insensitive:?}");
    let vendored =
        call_once(&engine, "grep", json!({ "pattern": "panic!", "include_vendor": true })).await;
    assert_eq!(vendored.data["matches"].as_array().expect("matches").len(), 3);
    let capped = call_once(&engine, "grep", json!({ "pattern": "panic!", "max_results": 1 })).await;
    assert_eq!(capped.data["matches"].as_array().expect("matches").len(), 1);
    assert_eq!(capped.data["truncated"], true);
    let bad = call_once(&engine, "grep", json!({ "pattern": "(unclosed" })).await;
    assert_eq!(code(&bad), "E_VALIDATION_FAIL");
    assert!(bad.errors[0].message.contains("pattern"), "{bad:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn fs_move_and_copy_respect_overwrite_and_modes() {
    let project = project();
    let engine = project.engine().await;
    let moved =
        call_once(&engine, "fs_move", json!({ "src": "docs/guide.md", "dst": "guide.md" })).await;
    assert!(moved.ok, "{moved:?}");
    assert!(!project.path("docs/guide.md").exists());
    assert_eq!(read(&project.path("guide.md")), "Panic rarely.\n");
    let clash =
        call_once(&engine, "fs_move", json!({ "src": "guide.md", "dst": "src/lib.rs" })).await;
    assert_eq!(code(&clash), "E_FILE_IO", "{clash:?}");
    assert!(clash.errors[0].message.contains("overwrite"), "{clash:?}");
    assert_eq!(read(&project.path("src/lib.rs")), "pub fn a() {}\n// TODO: panic! here\n");
    let forced = call_once(
        &engine,
        "fs_move",
        json!({ "src": "guide.md", "dst": "src/lib.rs", "overwrite": true }),
    )
    .await;
    assert!(forced.ok, "{forced:?}");
    assert_eq!(read(&project.path("src/lib.rs")), "Panic rarely.\n");

    std::fs::set_permissions(
        project.path("src/auth/mod.rs"),
        std::fs::Permissions::from_mode(0o751),
    )
    .expect("chmod");
    let copied = call_once(&engine, "fs_copy", json!({ "src": "src", "dst": "backup" })).await;
    assert!(copied.ok, "{copied:?}");
    assert_eq!(read(&project.path("backup/auth/mod.rs")), "fn login() { panic!(\"no\") }\n");
    let mode = std::fs::metadata(project.path("backup/auth/mod.rs")).expect("stat").permissions();
    assert_eq!(mode.mode() & 0o777, 0o751);
    let again = call_once(&engine, "fs_copy", json!({ "src": "src", "dst": "backup" })).await;
    assert_eq!(code(&again), "E_FILE_IO");
    std::fs::write(project.path("src/new.rs"), "new\n").expect("write");
    let replaced =
        call_once(&engine, "fs_copy", json!({ "src": "src", "dst": "backup", "overwrite": true }))
            .await;
    assert!(replaced.ok, "{replaced:?}");
    assert!(project.path("backup/new.rs").exists());
    let plain = call_once(
        &engine,
        "fs_copy",
        json!({ "src": "src/auth/mod.rs", "dst": "plain.rs", "preserve_mode": false }),
    )
    .await;
    assert!(plain.ok, "{plain:?}");
    let mode = std::fs::metadata(project.path("plain.rs")).expect("stat").permissions();
    assert_ne!(mode.mode() & 0o777, 0o751);
    let missing = call_once(&engine, "fs_copy", json!({ "src": "nope", "dst": "x" })).await;
    assert_eq!(code(&missing), "E_FILE_IO");
    // No temporary copies are left anywhere.
    let leftovers: Vec<_> = std::fs::read_dir(&project.root)
        .expect("ls")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains(".jig-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn fs_delete_has_safe_defaults() {
    let project = project();
    let engine = project.engine().await;
    let dir = call_once(&engine, "fs_delete", json!({ "path": "src" })).await;
    assert_eq!(code(&dir), "E_FILE_IO", "a directory needs recursive: {dir:?}");
    assert!(dir.errors[0].message.contains("recursive"), "{dir:?}");
    assert!(project.path("src/lib.rs").exists());
    for path in [".", "./", "src/..", ".git", ".jig", "./.git"] {
        let response =
            call_once(&engine, "fs_delete", json!({ "path": path, "recursive": true })).await;
        assert!(!response.ok, "{path} was deleted: {response:?}");
    }
    assert!(project.path(".git").exists() && project.path(".jig").exists());
    let missing = call_once(&engine, "fs_delete", json!({ "path": "nope.txt" })).await;
    assert_eq!(code(&missing), "E_FILE_IO");
    let forced =
        call_once(&engine, "fs_delete", json!({ "path": "nope.txt", "force": true })).await;
    assert!(forced.ok && forced.data["deleted"] == false, "{forced:?}");
    let file = call_once(&engine, "fs_delete", json!({ "path": "docs/guide.md" })).await;
    assert!(file.ok && !project.path("docs/guide.md").exists(), "{file:?}");
    let tree = call_once(&engine, "fs_delete", json!({ "path": "src", "recursive": true })).await;
    assert!(tree.ok && !project.path("src").exists(), "{tree:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn file_patch_applies_hunks_or_refuses_cleanly() {
    let project = project();
    let engine = project.engine().await;
    std::fs::write(project.path("notes.txt"), "one\ntwo\nthree\nfour\nfive\n").expect("write");
    let diff = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n@@ -4,2 +4,3 @@\n four\n five\n+six\n";
    let response =
        call_once(&engine, "file_patch", json!({ "path": "notes.txt", "unified_diff": diff }))
            .await;
    assert!(response.ok, "{response:?}");
    assert_eq!(response.data, json!({ "patched": true, "hunks_applied": 2 }));
    assert_eq!(read(&project.path("notes.txt")), "ONE\ntwo\nthree\nfour\nfive\nsix\n");
    // The same patch again: its context is gone, nothing is written.
    let again =
        call_once(&engine, "file_patch", json!({ "path": "notes.txt", "unified_diff": diff }))
            .await;
    assert_eq!(code(&again), "E_VALIDATION_FAIL", "{again:?}");
    assert!(again.errors[0].message.contains("hunk 1"), "{again:?}");
    assert_eq!(read(&project.path("notes.txt")), "ONE\ntwo\nthree\nfour\nfive\nsix\n");
    let garbage = call_once(
        &engine,
        "file_patch",
        json!({ "path": "notes.txt", "unified_diff": "rm -rf /" }),
    )
    .await;
    assert_eq!(code(&garbage), "E_VALIDATION_FAIL");
}

/// Every filesystem tool, pointed out of the workspace by every trick: refused, and nothing
/// outside is read, written, moved or deleted.
#[tokio::test(flavor = "multi_thread")]
async fn no_fs_tool_leaves_the_workspace() {
    let project = project();
    let engine = project.engine().await;
    let parent = project.root.parent().expect("parent").to_path_buf();
    std::fs::write(parent.join("outside.txt"), "outside secret panic!").expect("write");
    std::fs::create_dir_all(parent.join("outdir")).expect("mkdir");
    std::fs::write(parent.join("outdir/keep.txt"), "keep").expect("write");
    symlink(parent.join("outside.txt"), project.path("link.txt")).expect("symlink");
    symlink(parent.join("outdir"), project.path("linkdir")).expect("symlink");
    let escapes = ["../outside.txt", "/etc/passwd", "linkdir/keep.txt", "src/../../outside.txt"];
    for path in escapes {
        let attempts = [
            ("fs_move", json!({ "src": path, "dst": "stolen.txt" })),
            ("fs_move", json!({ "src": "src/lib.rs", "dst": path, "overwrite": true })),
            ("fs_copy", json!({ "src": path, "dst": "stolen.txt" })),
            ("fs_copy", json!({ "src": "src/lib.rs", "dst": path, "overwrite": true })),
            ("fs_delete", json!({ "path": path, "force": true, "recursive": true })),
            ("file_patch", json!({ "path": path, "unified_diff": "@@ -1 +1 @@\n-keep\n+gone\n" })),
            ("fs_list", json!({ "glob": format!("{path}/**") })),
            ("grep", json!({ "pattern": "secret", "glob": path })),
        ];
        for (tool, args) in attempts {
            let response = call_once(&engine, tool, args.clone()).await;
            let leaked = response.data.to_string().contains("outside secret")
                || response.data["files"].as_array().is_some_and(|f| !f.is_empty())
                || response.data["matches"].as_array().is_some_and(|m| !m.is_empty());
            assert!(!leaked, "{tool} {args}: {response:?}");
            if !["fs_list", "grep"].contains(&tool) || !path.starts_with("linkdir") {
                assert!(!response.ok, "{tool} {args} succeeded: {response:?}");
                assert!(
                    matches!(code(&response).as_str(), "E_POLICY" | "E_FILE_IO"),
                    "{tool} {args}: {response:?}"
                );
            }
        }
    }
    assert_eq!(read(&parent.join("outside.txt")), "outside secret panic!");
    assert_eq!(read(&parent.join("outdir/keep.txt")), "keep");
    assert!(!project.path("stolen.txt").exists());
    // Walking never follows the links out.
    let grep = call_once(&engine, "grep", json!({ "pattern": "outside secret|^keep$" })).await;
    assert_eq!(grep.data["matches"], json!([]), "{grep:?}");
    let listed = call_once(&engine, "fs_list", json!({ "glob": "**" })).await;
    assert!(!listed.data.to_string().contains("keep.txt"), "{listed:?}");
    // Deleting the link removes the link, not its target.
    let unlink = call_once(&engine, "fs_delete", json!({ "path": "linkdir" })).await;
    assert!(unlink.ok, "{unlink:?}");
    assert_eq!(read(&parent.join("outdir/keep.txt")), "keep");
}

#[tokio::test(flavor = "multi_thread")]
async fn file_write_attribution_is_recorded_in_the_audit() {
    let project = project();
    let engine = project.engine().await;
    let response = call_once(
        &engine,
        "file_write",
        json!({ "path": "src/new.rs", "content": "pub fn n() {}\n", "attribution": { "task_id": 42, "agent": "planner" } }),
    )
    .await;
    assert!(response.ok, "{response:?}");
    let packets = crate::packets(&engine, &response.request_id).await;
    let request = packets.iter().find(|p| p.kind == "tool.call.request").expect("request packet");
    assert_eq!(request.data["args"]["attribution"], json!({ "task_id": 42, "agent": "planner" }));
}

/// A large `grep` result a surface only forwards (`dispatch_prepared`) comes back as the text
/// the built-in wrote: the same result, redacted the same way, as the value every other surface
/// gets (which passed the output schema), stored once as a blob under that text's hash — and
/// a call that does not ask for it gets the value.
#[tokio::test(flavor = "multi_thread")]
async fn a_large_grep_result_is_forwarded_as_prepared_text_equal_to_its_checked_value() {
    let project = Project::new("");
    let secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyz";
    for i in 0..40 {
        let lines: String =
            (0..20).map(|j| format!("needle {i}-{j} \"quoted\" \\ tab\t end\n")).collect();
        project.write(&format!("src/f{i:02}.txt"), &lines);
    }
    project.write("src/token.txt", &format!("needle token={secret}\n"));
    let engine = project.engine().await;
    let args = json!({ "pattern": "needle", "max_results": 5000 });

    let value = call_once(&engine, "grep", args.clone()).await;
    assert!(value.ok, "{value:?}");
    assert_eq!(value.data["matches"].as_array().map(Vec::len), Some(801));

    let context = jig_engine::CallContext {
        prepared_results: true,
        ..crate::caller(&crate::uuid(), "alice")
    };
    let (response, prepared) =
        engine.dispatch_prepared(crate::request("grep", args.clone()), context).await;
    assert!(response.ok && response.data.is_null(), "{response:?}");
    let prepared = prepared.expect("a large result comes back prepared");
    assert!(prepared.text().len() > jig_audit::blob::INLINE_MAX);
    assert!(!prepared.text().contains(secret), "the secret was redacted where it was written");
    assert_eq!(
        prepared.to_value().expect("JSON"),
        value.data,
        "the same result as the checked value"
    );
    assert_eq!(
        prepared.text(),
        jig_model::canonical::canonical_json(&value.data),
        "the text is the canonical JSON the audit hashes"
    );

    // Stored once, under the hash of exactly that text; the chain verifies.
    let digest = jig_model::Sha256Hash::of_bytes(prepared.text().as_bytes()).to_hex();
    let stored = engine.store().blob(&digest).await.expect("blob").expect("stored under its hash");
    assert_eq!(stored, value.data);
    let status = engine.history().verify(None, None).await.expect("verify");
    assert!(status.is_ok(), "{status:?}");

    // A small result is a value even when the caller could take text.
    let context = jig_engine::CallContext {
        prepared_results: true,
        ..crate::caller(&crate::uuid(), "alice")
    };
    let small = json!({ "pattern": "token=" });
    let (response, prepared) =
        engine.dispatch_prepared(crate::request("grep", small), context).await;
    assert!(prepared.is_none());
    assert_eq!(response.data["matches"][0]["file"], "src/token.txt");
}
