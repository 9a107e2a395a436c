//! The git built-ins on real repositories made here, with a bare remote for push and pull;
//! the `git` program checks what they did.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::{Project, call_once, code, git, read};

const ALLOW: &str =
    "git:\n  allow_push: true\nrules:\n  - { effects: [write, network], action: allow }";

fn write(root: &Path, path: &str, text: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
    std::fs::write(full, text).expect("write");
}

/// Write a file, stage it and commit it.
fn commit_file(root: &Path, path: &str, text: &str, message: &str) {
    write(root, path, text);
    git(root, &["add", path]);
    git(root, &["commit", "-q", "-m", message]);
}

/// A project that is a repository on `main` with one commit, and a bare `origin` beside it.
fn repo(policy: &str) -> (Project, PathBuf) {
    let project = Project::new(policy);
    let root = project.root.clone();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["config", "user.name", "Test"]);
    git(&root, &["config", "user.email", "test@example.invalid"]);
    write(&root, "src/lib.rs", "pub fn a() {}\n");
    write(&root, "README.md", "hello\n");
    write(&root, ".gitignore", ".jig/\n");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "initial"]);
    let remote = root.parent().expect("parent").join("remote.git");
    git(root.parent().expect("parent"), &["init", "-q", "--bare", "-b", "main", "remote.git"]);
    git(&root, &["remote", "add", "origin", &remote.display().to_string()]);
    git(&root, &["push", "-q", "-u", "origin", "main"]);
    (project, remote)
}

fn changes(response: &jig_engine::ToolResponse) -> Vec<(String, String)> {
    response.data["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            (
                c["path"].as_str().expect("path").to_owned(),
                c["status"].as_str().expect("status").to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn git_status_matches_git_and_hides_jigs_own_directory() {
    let (project, _) = repo(ALLOW);
    let root = &project.root;
    std::fs::remove_file(root.join(".gitignore")).expect("rm");
    git(root, &["commit", "-q", "-am", "no ignore file"]);
    let engine = project.engine().await;
    write(root, "src/lib.rs", "pub fn a() { }\n");
    write(root, "src/new.rs", "new\n");
    git(root, &["add", "src/new.rs"]);
    write(root, "notes/todo.txt", "x\n");
    let response = call_once(&engine, "git_status", json!({})).await;
    assert!(response.ok, "{response:?}");
    assert_eq!(response.data["branch"], "main");
    let mut found = changes(&response);
    found.sort();
    assert_eq!(
        found,
        [
            ("notes/".to_owned(), "??".to_owned()),
            ("src/lib.rs".to_owned(), " M".to_owned()),
            ("src/new.rs".to_owned(), "A ".to_owned()),
        ],
        "git says:\n{}",
        git(root, &["status", "--porcelain"])
    );
    git(root, &["commit", "-q", "-m", "more"]);
    let ahead = call_once(&engine, "git_status", json!({ "porcelain": true })).await;
    let counted: u64 =
        git(root, &["rev-list", "--count", "origin/main..HEAD"]).parse().expect("count");
    assert_eq!(
        (ahead.data["ahead"].as_u64(), ahead.data["behind"].as_u64()),
        (Some(counted), Some(0))
    );
    assert_eq!(counted, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn git_add_and_commit_with_signoff_and_empty_guard() {
    let (project, _) = repo(ALLOW);
    let root = &project.root;
    let engine = project.engine().await;
    write(root, "src/b.rs", "b\n");
    write(root, "src/lib.rs", "pub fn a() -> u8 { 1 }\n");
    write(root, "docs/x.md", "x\n");
    let added = call_once(&engine, "git_add", json!({ "paths": ["src/**"] })).await;
    assert!(added.ok, "{added:?}");
    assert_eq!(added.data["added"], 2);
    assert_eq!(git(root, &["diff", "--cached", "--name-only"]), "src/b.rs\nsrc/lib.rs");
    let committed =
        call_once(&engine, "git_commit", json!({ "message": "feat(src): add b", "signoff": true }))
            .await;
    assert!(committed.ok, "{committed:?}");
    assert_eq!(committed.data["commit"], git(root, &["rev-parse", "HEAD"]));
    assert_eq!(
        git(root, &["log", "-1", "--format=%B"]),
        "feat(src): add b\n\nSigned-off-by: Test <test@example.invalid>"
    );
    let empty = call_once(&engine, "git_commit", json!({ "message": "nothing" })).await;
    assert_eq!(code(&empty), "E_GIT", "{empty:?}");
    let allowed =
        call_once(&engine, "git_commit", json!({ "message": "empty", "allow_empty": true })).await;
    assert!(allowed.ok, "{allowed:?}");
    assert_eq!(git(root, &["log", "-1", "--format=%s"]), "empty");
    // A deletion is staged too.
    std::fs::remove_file(root.join("src/b.rs")).expect("rm");
    call_once(&engine, "git_add", json!({ "paths": ["src"] })).await;
    assert_eq!(git(root, &["diff", "--cached", "--name-status"]), "D\tsrc/b.rs");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_commit_with_unstaged_changes_is_refused_when_the_policy_says_so() {
    let (project, _) = repo(&format!("{ALLOW}\n"));
    project.set_policy("git:\n  require_clean_tree_for_commit: true\nrules:\n  - { effects: [write], action: allow }");
    let root = &project.root;
    let engine = project.engine().await;
    write(root, "src/b.rs", "b\n");
    git(root, &["add", "src/b.rs"]);
    write(root, "README.md", "changed, not staged\n");
    let response = call_once(&engine, "git_commit", json!({ "message": "partial" })).await;
    assert_eq!(code(&response), "E_GIT", "{response:?}");
    assert_eq!(response.errors[0].details.as_ref().expect("details")["rule"], "sec.git.clean_tree");
    assert_eq!(git(root, &["log", "-1", "--format=%s"]), "initial");
}

#[tokio::test(flavor = "multi_thread")]
async fn git_diff_against_a_revision_and_the_index() {
    let (project, _) = repo(ALLOW);
    let root = &project.root;
    let engine = project.engine().await;
    write(root, "src/lib.rs", "pub fn a() {}\npub fn b() {}\n");
    write(root, "README.md", "hello again\n");
    git(root, &["add", "README.md"]);
    let all = call_once(&engine, "git_diff", json!({ "rev": "HEAD" })).await;
    assert!(all.ok, "{all:?}");
    let patch = all.data["patch"].as_str().expect("patch");
    assert!(patch.contains("+pub fn b() {}") && patch.contains("+hello again"), "{patch}");
    let scoped =
        call_once(&engine, "git_diff", json!({ "rev": "HEAD", "paths": ["src/**"] })).await;
    assert!(!scoped.data["patch"].as_str().expect("patch").contains("hello again"));
    // Without a revision: unstaged changes only, as `git diff`.
    let unstaged = call_once(&engine, "git_diff", json!({})).await;
    let expected = git(root, &["diff"]);
    assert_eq!(unstaged.data["patch"].as_str().expect("patch").trim(), expected);
    let bad = call_once(&engine, "git_diff", json!({ "rev": "no-such-rev" })).await;
    assert_eq!(code(&bad), "E_GIT");
}

#[tokio::test(flavor = "multi_thread")]
async fn git_checkout_creates_switches_tracks_and_blocks_a_dirty_tree() {
    let (project, remote) = repo(ALLOW);
    let root = &project.root;
    let engine = project.engine().await;
    let created =
        call_once(&engine, "git_checkout", json!({ "target": "feature/x", "create": true })).await;
    assert!(created.ok, "{created:?}");
    assert_eq!(git(root, &["branch", "--show-current"]), "feature/x");
    write(root, "src/lib.rs", "dirty\n");
    let blocked = call_once(&engine, "git_checkout", json!({ "target": "main" })).await;
    assert_eq!(code(&blocked), "E_GIT", "{blocked:?}");
    assert_eq!(blocked.errors[0].details.as_ref().expect("details")["rule"], "sec.git.clean_tree");
    assert_eq!(read(&root.join("src/lib.rs")), "dirty\n");
    git(root, &["checkout", "--", "src/lib.rs"]);
    // A branch that exists only on the remote is checked out tracking it.
    let other = root.parent().expect("parent").join("other");
    git(root.parent().expect("parent"), &["clone", "-q", &remote.display().to_string(), "other"]);
    git(&other, &["checkout", "-q", "-b", "topic"]);
    commit_file(&other, "topic.txt", "topic\n", "topic");
    git(&other, &["push", "-q", "origin", "topic"]);
    git(root, &["fetch", "-q", "origin"]);
    let tracked = call_once(&engine, "git_checkout", json!({ "target": "topic" })).await;
    assert!(tracked.ok, "{tracked:?}");
    assert_eq!(git(root, &["rev-parse", "--abbrev-ref", "topic@{upstream}"]), "origin/topic");
    assert_eq!(read(&root.join("topic.txt")), "topic\n");
    let first = git(root, &["rev-list", "--max-parents=0", "HEAD"]);
    let detached = call_once(&engine, "git_checkout", json!({ "target": first })).await;
    assert!(detached.ok, "{detached:?}");
    assert_eq!(git(root, &["rev-parse", "HEAD"]), first);
    let option = call_once(&engine, "git_checkout", json!({ "target": "--orphan" })).await;
    assert!(!option.ok);
}

#[tokio::test(flavor = "multi_thread")]
async fn git_merge_fast_forwards_merges_and_reports_conflicts_without_touching_anything() {
    let (project, _) = repo(ALLOW);
    let root = &project.root;
    let engine = project.engine().await;
    git(root, &["checkout", "-q", "-b", "feature"]);
    commit_file(root, "feature.txt", "f\n", "feature");
    git(root, &["checkout", "-q", "main"]);
    let ff = call_once(&engine, "git_merge", json!({ "branch": "feature" })).await;
    assert!(ff.ok, "{ff:?}");
    assert_eq!(ff.data["fast_forward"], true);
    assert_eq!(git(root, &["rev-parse", "main"]), git(root, &["rev-parse", "feature"]));
    assert!(root.join("feature.txt").exists());

    git(root, &["checkout", "-q", "-b", "side"]);
    commit_file(root, "side.txt", "s\n", "side");
    git(root, &["checkout", "-q", "main"]);
    commit_file(root, "main.txt", "m\n", "main work");
    let merged = call_once(&engine, "git_merge", json!({ "branch": "side", "no_ff": true })).await;
    assert!(merged.ok && merged.data["merged"] == true, "{merged:?}");
    let parents = git(root, &["rev-list", "--parents", "-n", "1", "HEAD"]);
    assert_eq!(parents.split(' ').count(), 3, "a merge commit has two parents: {parents}");
    assert!(root.join("side.txt").exists());

    git(root, &["checkout", "-q", "-b", "clash"]);
    write(root, "README.md", "clash side\n");
    git(root, &["commit", "-q", "-am", "clash"]);
    git(root, &["checkout", "-q", "main"]);
    write(root, "README.md", "main side\n");
    git(root, &["commit", "-q", "-am", "main readme"]);
    let head = git(root, &["rev-parse", "HEAD"]);
    let conflict = call_once(&engine, "git_merge", json!({ "branch": "clash" })).await;
    assert!(conflict.ok, "{conflict:?}");
    assert_eq!(conflict.data, json!({ "merged": false, "conflicts": ["README.md"] }));
    assert_eq!(git(root, &["rev-parse", "HEAD"]), head);
    assert_eq!(read(&root.join("README.md")), "main side\n");
    assert_eq!(git(root, &["status", "--porcelain", "--untracked-files=no"]), "");
}

#[tokio::test(flavor = "multi_thread")]
async fn git_rebase_replays_autosquashes_and_refuses_conflicts_cleanly() {
    let (project, _) = repo(ALLOW);
    let root = &project.root;
    let engine = project.engine().await;
    git(root, &["checkout", "-q", "-b", "work"]);
    commit_file(root, "a.txt", "a\n", "add a");
    commit_file(root, "b.txt", "b\n", "add b");
    write(root, "a.txt", "a fixed\n");
    git(root, &["commit", "-q", "-am", "fixup! add a"]);
    git(root, &["checkout", "-q", "main"]);
    commit_file(root, "main.txt", "m\n", "main moves");
    git(root, &["checkout", "-q", "work"]);
    let rebased =
        call_once(&engine, "git_rebase", json!({ "onto": "main", "autosquash": true })).await;
    assert!(rebased.ok, "{rebased:?}");
    assert_eq!(
        git(root, &["log", "--format=%s", "main..work"]),
        "add b\nadd a",
        "the fixup folded into its target"
    );
    assert_eq!(git(root, &["merge-base", "main", "work"]), git(root, &["rev-parse", "main"]));
    assert_eq!(read(&root.join("a.txt")), "a fixed\n");
    assert_eq!(git(root, &["show", "work~1:a.txt"]), "a fixed");

    git(root, &["checkout", "-q", "main"]);
    commit_file(root, "b.txt", "main's b\n", "main b");
    git(root, &["checkout", "-q", "work"]);
    let head = git(root, &["rev-parse", "HEAD"]);
    let refused = call_once(&engine, "git_rebase", json!({ "onto": "main" })).await;
    assert_eq!(code(&refused), "E_GIT", "{refused:?}");
    assert_eq!(git(root, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(root, &["status", "--porcelain", "--untracked-files=no"]), "");
    write(root, "a.txt", "dirty\n");
    let dirty = call_once(&engine, "git_rebase", json!({ "onto": "HEAD~1" })).await;
    assert_eq!(code(&dirty), "E_GIT", "{dirty:?}");
    assert_eq!(dirty.errors[0].details.as_ref().expect("details")["rule"], "sec.git.clean_tree");
}

#[tokio::test(flavor = "multi_thread")]
async fn git_push_and_pull_through_a_bare_remote() {
    let (project, remote) = repo(ALLOW);
    let root = &project.root;
    let engine = project.engine().await;
    commit_file(root, "pushed.txt", "p\n", "to push");
    let pushed = call_once(&engine, "git_push", json!({})).await;
    assert!(pushed.ok, "{pushed:?}");
    assert_eq!(git(&remote, &["rev-parse", "main"]), git(root, &["rev-parse", "HEAD"]));

    let other = root.parent().expect("parent").join("other");
    git(root.parent().expect("parent"), &["clone", "-q", &remote.display().to_string(), "other"]);
    commit_file(&other, "theirs.txt", "t\n", "theirs");
    git(&other, &["push", "-q", "origin", "main"]);
    let pulled = call_once(&engine, "git_pull", json!({})).await;
    assert!(pulled.ok, "{pulled:?}");
    assert_eq!(pulled.data["fast_forward"], true);
    assert_eq!(read(&root.join("theirs.txt")), "t\n");

    // Diverged: the remote rejects a plain push; force replaces it.
    commit_file(&other, "more.txt", "m\n", "more");
    git(&other, &["push", "-q", "origin", "main"]);
    commit_file(root, "mine.txt", "mine\n", "mine");
    let rejected =
        call_once(&engine, "git_push", json!({ "refspec": "refs/heads/main:refs/heads/main" }))
            .await;
    assert_eq!(code(&rejected), "E_GIT", "{rejected:?}");
    let rebased = call_once(&engine, "git_pull", json!({ "rebase": true })).await;
    assert!(rebased.ok, "{rebased:?}");
    assert_eq!(git(root, &["log", "--format=%s", "-3"]), "mine\nmore\ntheirs");
    let again = call_once(&engine, "git_push", json!({ "remote": "origin" })).await;
    assert!(again.ok, "{again:?}");
    assert_eq!(git(&remote, &["rev-parse", "main"]), git(root, &["rev-parse", "HEAD"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn push_is_policy_gated_and_remotes_are_allow_listed() {
    let (project, _) = repo("rules:\n  - { effects: [write, network], action: allow }");
    let root = &project.root;
    let engine = project.engine().await;
    let refused = call_once(&engine, "git_push", json!({})).await;
    assert_eq!(code(&refused), "E_POLICY", "{refused:?}");
    git(root, &["remote", "add", "evil", "https://evil.example/repo.git"]);
    git(root, &["remote", "add", "scp", "git@evil.example:repo.git"]);
    for remote in ["evil", "scp"] {
        let response = call_once(&engine, "git_pull", json!({ "remote": remote })).await;
        assert_eq!(code(&response), "E_POLICY", "{remote}: {response:?}");
    }
}

/// A repository's hooks and fsmonitor never run from the git built-ins.
#[tokio::test(flavor = "multi_thread")]
async fn repository_configuration_runs_no_code() {
    let (project, _) = repo(ALLOW);
    let root = &project.root;
    for hook in ["pre-commit", "commit-msg", "post-commit", "post-checkout", "post-merge"] {
        let path = root.join(".git/hooks").join(hook);
        std::fs::write(&path, format!("#!/bin/sh\ntouch {}/hook-{hook}\n", root.display()))
            .expect("hook");
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
    }
    let monitor = root.parent().expect("parent").join("fsmonitor.sh");
    std::fs::write(&monitor, format!("#!/bin/sh\ntouch {}/monitor-ran\n", root.display()))
        .expect("write");
    std::fs::set_permissions(&monitor, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    git(root, &["config", "core.fsmonitor", &monitor.display().to_string()]);
    let engine = project.engine().await;
    write(root, "x.txt", "x\n");
    for (tool, args) in [
        ("git_status", json!({})),
        ("git_add", json!({ "paths": ["x.txt"] })),
        ("git_commit", json!({ "message": "x" })),
        ("git_checkout", json!({ "target": "b", "create": true })),
        ("git_merge", json!({ "branch": "main" })),
    ] {
        let response = call_once(&engine, tool, args).await;
        assert!(response.ok, "{tool}: {response:?}");
    }
    let ran: Vec<String> = std::fs::read_dir(root)
        .expect("ls")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("hook-") || n == "monitor-ran")
        .collect();
    assert!(ran.is_empty(), "repository code ran: {ran:?}");
}
