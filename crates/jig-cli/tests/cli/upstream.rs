//! Upstream MCP servers behind Jig (`mcp_servers:`): imported from a client's configuration,
//! started in their sandbox, their tools listed and called through the policy and the audit —
//! the real `@modelcontextprotocol/server-filesystem` (npm) and `mcp-server-git` (PyPI) as a
//! user configures them, and a hostile server.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::{jig, jig_env, repo, stderr, stdout_json};

/// The npm packages scripts/setup installs (server-filesystem among them).
fn node_modules() -> PathBuf {
    PathBuf::from(
        std::env::var("JIG_MCP_NODE_MODULES")
            .expect("scripts/setup exports JIG_MCP_NODE_MODULES (the MCP reference servers)"),
    )
}

/// The virtual environment scripts/setup made for the MCP Python SDK and `mcp-server-git`.
fn mcp_venv_bin() -> PathBuf {
    let python = std::env::var("JIG_MCP_PYTHON").expect("scripts/setup exports JIG_MCP_PYTHON");
    Path::new(&python).parent().expect("bin").to_path_buf()
}

/// A project with `servers` as its `mcp_servers:` (JSON, which YAML reads as it is), the
/// example's rules (writes need approval, low risk is allowed), and a file to read.
fn project(servers: &Value) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let manifest = format!(
        "name: upstream\n# servers the team uses\nmcp_servers: {servers}\npolicy:\n  rules:\n    - {{ effects: [write, exec], action: require-approval }}\n    - {{ risk: low, action: allow }}\n  approvals: {{ self_approval: false, allow_as: true }}\n"
    );
    std::fs::write(dir.path().join("jig.yaml"), manifest).expect("manifest");
    std::fs::write(dir.path().join("notes.txt"), "the release is on Monday\n").expect("notes");
    dir
}

fn filesystem() -> Value {
    let modules = node_modules();
    let script = modules.join("@modelcontextprotocol/server-filesystem/dist/index.js");
    json!({
        "command": "node",
        "args": [script, "."],
        "grants": { "paths": ["."], "programs": [modules] },
    })
}

/// `jig call TOOL --args ARGS` in `dir` with `env`, which must succeed: its response.
fn called(dir: &Path, tool: &str, args: &str, env: &[(&str, &str)]) -> Value {
    let done = jig_env(dir, &["call", tool, "--args", args], env);
    assert_eq!(
        done.status.code(),
        Some(0),
        "{tool}: {}{}",
        stderr(&done),
        String::from_utf8_lossy(&done.stdout)
    );
    stdout_json(&done)
}

fn ids(dir: &Path) -> Vec<(String, Value)> {
    let listed = jig(dir, &["list", "--json"]);
    assert_eq!(listed.status.code(), Some(0), "{}", stderr(&listed));
    stdout_json(&listed)
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| (t["id"].as_str().expect("id").to_owned(), t.clone()))
        .collect()
}

#[test]
fn a_real_servers_tools_are_discovered_called_and_governed() {
    let dir = project(&json!({ "files": filesystem() }));
    // Before anyone asked it, the project loads and says so.
    let before = jig(dir.path(), &["validate"]);
    assert_eq!(before.status.code(), Some(0), "{}", stderr(&before));
    assert!(stderr(&before).contains("has not been asked for its tools"), "{}", stderr(&before));

    let found = jig(dir.path(), &["mcp", "discover"]);
    assert_eq!(found.status.code(), Some(0), "{}", stderr(&found));
    // What the person consents to is said before it starts: the command, what it may reach.
    let said = stderr(&found);
    assert!(said.contains("starting files: node "), "{said}");
    let modules = node_modules().display().to_string();
    assert!(
        said.contains(&format!(
            "may change . and read nothing; outside it, read {modules}; network none"
        )),
        "{said}"
    );
    assert!(said.contains("files: "), "{said}");
    let tools = ids(dir.path());
    let tool = |id: &str| {
        tools
            .iter()
            .find(|(t, _)| t == id)
            .unwrap_or_else(|| panic!("{id} listed: {tools:?}"))
            .1
            .clone()
    };
    // The server's hints, read: a read is a read, a destructive write a write.
    assert_eq!(tool("files.read_text_file")["sideEffects"], json!(["read"]));
    assert_eq!(tool("files.write_file")["sideEffects"], json!(["write"]));

    // A read is answered, from inside the sandbox, and recorded.
    let read =
        jig(dir.path(), &["call", "files.read_text_file", "--args", r#"{"path": "notes.txt"}"#]);
    assert_eq!(read.status.code(), Some(0), "{}", stderr(&read));
    let response = stdout_json(&read);
    assert!(response.to_string().contains("the release is on Monday"), "{response}");
    // A write waits for a person; nothing is written.
    let write = jig(
        dir.path(),
        &[
            "--as",
            "alice",
            "call",
            "files.write_file",
            "--args",
            r#"{"path": "out.txt", "content": "x"}"#,
        ],
    );
    assert_eq!(write.status.code(), Some(1), "{}", stderr(&write));
    assert!(stdout_json(&write)["errors"][0]["details"]["approval_id"].is_string());
    assert!(!dir.path().join("out.txt").exists());
    let audit = jig(dir.path(), &["audit", "verify"]);
    assert_eq!(audit.status.code(), Some(0), "{}", stderr(&audit));
    // Outside its grants the server sees nothing: not the user's home, not Jig's state.
    let outside =
        jig(dir.path(), &["call", "files.list_directory", "--args", r#"{"path": ".jig"}"#]);
    assert!(
        !String::from_utf8_lossy(&outside.stdout).contains("audit.db"),
        "{}",
        String::from_utf8_lossy(&outside.stdout)
    );
}

#[test]
fn import_writes_a_clients_servers_and_keeps_secrets_out_of_the_manifest() {
    let dir = project(&json!({}));
    let git = mcp_venv_bin().join("mcp-server-git");
    let config = json!({ "mcpServers": {
        "Git Tools": { "command": git, "args": ["--repository", "."], "env": { "GITHUB_TOKEN": "ghp_not_in_the_manifest", "LOG_LEVEL": "info" } },
        "old": { "command": "nothing", "disabled": true },
        "Tickets": { "url": "https://mcp.tickets.example/mcp", "headers": {
            "Authorization": "Bearer tk_not_in_the_manifest",
            "X-Api-Key": "${env:TICKETS_KEY}",
            "X-Team": "platform" } },
    }});
    let file = dir.path().join("claude_desktop_config.json");
    std::fs::write(&file, config.to_string()).expect("config");
    let imported = jig(dir.path(), &["mcp", "import", file.to_str().expect("utf-8")]);
    assert_eq!(imported.status.code(), Some(0), "{}", stderr(&imported));
    assert_eq!(String::from_utf8_lossy(&imported.stdout), "git-tools\ntickets\n");
    let text = std::fs::read_to_string(dir.path().join("jig.yaml")).expect("manifest");
    assert!(text.contains("# servers the team uses"), "comments stay: {text}");
    assert!(!text.contains("ghp_not_in_the_manifest"), "{text}");
    assert!(text.contains("env_from") && text.contains("GITHUB_TOKEN"), "{text}");
    assert!(text.contains("LOG_LEVEL"), "{text}");
    assert!(stderr(&imported).contains("looks like a secret"), "{}", stderr(&imported));
    // A token in a header is kept out too: the header names a variable `env_from` passes.
    assert!(!text.contains("tk_not_in_the_manifest"), "{text}");
    let servers = jig_load::yaml::parse(&text, &jig_load::yaml::Caps::DEFAULT).expect("yaml").value;
    let tickets = &servers["mcp_servers"]["tickets"];
    assert_eq!(tickets["headers"]["Authorization"], "${TICKETS_AUTHORIZATION}");
    assert_eq!(tickets["headers"]["X-Api-Key"], "${TICKETS_KEY}");
    assert_eq!(tickets["headers"]["X-Team"], "platform");
    assert_eq!(tickets["env_from"], json!(["TICKETS_AUTHORIZATION", "TICKETS_KEY"]));
    // Importing the same again is refused whole; --replace takes it.
    let again = jig(dir.path(), &["mcp", "import", file.to_str().expect("utf-8")]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(stderr(&again).contains("already has `git-tools`"), "{}", stderr(&again));
    assert_eq!(std::fs::read_to_string(dir.path().join("jig.yaml")).expect("manifest"), text);
    // A file that is not a client's configuration changes nothing.
    std::fs::write(&file, r#"{"servers": {"x": {"command": 7}}}"#).expect("config");
    let bad = jig(dir.path(), &["mcp", "import", file.to_str().expect("utf-8")]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("`x.command` is not a string"), "{}", stderr(&bad));
    assert_eq!(std::fs::read_to_string(dir.path().join("jig.yaml")).expect("manifest"), text);
    let _ = repo();
}

/// Issue #42: the import judged secrets by their names only, so the red team's four values
/// were written verbatim. Each is now found by its value: kept out (passed from Jig's
/// environment), or the import stops, naming the field, with the manifest unchanged.
#[test]
fn import_finds_secrets_by_their_values_and_writes_none() {
    let dir = project(&json!({}));
    let manifest = dir.path().join("jig.yaml");
    let before = std::fs::read_to_string(&manifest).expect("manifest");
    let file = dir.path().join("mcp.json");
    let pat = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    let import = |config: Value| {
        std::fs::write(&file, config.to_string()).expect("config");
        jig(dir.path(), &["mcp", "import", file.to_str().expect("utf-8")])
    };
    for (config, field) in [
        (
            json!({ "mcpServers": { "remote": { "command": "npx", "args": ["mcp-remote", "https://mcp.example/sse", "--header", "Authorization: Bearer sk-live-0123456789abcdef"] } } }),
            "remote.args[3]",
        ),
        (
            json!({ "mcpServers": { "keyed": { "url": "https://mcp.example/mcp?api_key=0123456789abcdef" } } }),
            "keyed.url",
        ),
    ] {
        let refused = import(config);
        assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
        assert!(stderr(&refused).contains(field), "{field}: {}", stderr(&refused));
        assert_eq!(std::fs::read_to_string(&manifest).expect("manifest"), before, "{field}");
    }
    let imported = import(json!({ "mcpServers": { "db": { "command": "mcp-db", "env": {
        "DATABASE_URL": "postgres://app:hunter2hunter2@db.internal/app",
        "GH_PAT": pat,
        "REGION": "eu-west-1",
    } } } }));
    assert_eq!(imported.status.code(), Some(0), "{}", stderr(&imported));
    let text = std::fs::read_to_string(&manifest).expect("manifest");
    assert!(!text.contains("hunter2hunter2") && !text.contains(pat), "{text}");
    let servers = jig_load::yaml::parse(&text, &jig_load::yaml::Caps::DEFAULT).expect("yaml").value;
    let db = &servers["mcp_servers"]["db"];
    assert_eq!(db["env_from"], json!(["DATABASE_URL", "GH_PAT"]), "{db}");
    assert_eq!(db["env"]["REGION"], "eu-west-1", "{db}");
}

/// Issue #42: a server started without a grant for its own code said only Node's version
/// line. Now the error's lines, and the grant that would let it read its program.
#[test]
fn a_server_that_cannot_read_its_own_program_says_which_grant_is_missing() {
    let modules = node_modules();
    let script = modules.join("@modelcontextprotocol/server-filesystem/dist/index.js");
    let dir = project(&json!({ "files": {
        "command": "node", "args": [script, "."], "grants": { "paths": ["."] },
    }}));
    let found = jig(dir.path(), &["mcp", "discover"]);
    let said = stderr(&found);
    assert_ne!(found.status.code(), Some(0), "{said}");
    assert!(said.contains("Cannot find module"), "{said}");
    assert!(!said.contains("it said: Node.js v"), "{said}");
    let install = modules.parent().expect("the install directory").display().to_string();
    assert!(said.contains(&format!("grants.programs: [\"{install}\"]")), "{said}");

    let dir = project(&json!({ "py": { "command": "python3", "args": ["srv/server.py"] } }));
    std::fs::create_dir_all(dir.path().join("srv")).expect("mkdir");
    std::fs::write(dir.path().join("srv/server.py"), "print('never read')\n").expect("server");
    let found = jig(dir.path(), &["mcp", "discover"]);
    let said = stderr(&found);
    assert!(said.contains("grants.read: [\"srv/server.py\"]"), "{said}");
}

/// A project whose server `evil` is tests/fixtures/upstream/hostile.py.
fn hostile_project() -> tempfile::TempDir {
    let dir = project(&json!({ "evil": {
        "command": "python3",
        "args": ["hostile.py"],
        "grants": { "read": ["hostile.py"] },
    }}));
    std::fs::copy(repo().join("tests/fixtures/upstream/hostile.py"), dir.path().join("hostile.py"))
        .expect("server");
    dir
}

#[test]
fn a_hostile_server_is_a_clear_error_on_its_tool_never_a_stuck_jig() {
    let dir = hostile_project();
    let found = jig(dir.path(), &["mcp", "discover"]);
    assert_eq!(found.status.code(), Some(0), "{}", stderr(&found));
    let check = jig(dir.path(), &["validate"]);
    // Names and schemas Jig cannot take are left out, each said.
    for left in ["`../escape`", "`not an object`", "`stringy`"] {
        assert!(stderr(&check).contains(left), "{left}: {}", stderr(&check));
    }
    let tools = ids(dir.path());
    let names: Vec<&str> =
        tools.iter().map(|(t, _)| t.as_str()).filter(|t| t.starts_with("evil.")).collect();
    assert_eq!(names, ["evil.crash", "evil.echo", "evil.hang", "evil.huge", "evil.unhinted"]);
    // Its tools carry the version it gave of itself.
    let echo_def = &tools.iter().find(|(t, _)| t == "evil.echo").expect("echo").1;
    assert_eq!(echo_def["version"], "6.6.6");

    let call =
        |tool: &str, args: &str| jig(dir.path(), &["--as", "alice", "call", tool, "--args", args]);
    let echo = call("evil.echo", r#"{"text": "hi"}"#);
    assert_eq!(echo.status.code(), Some(0), "{}", stderr(&echo));
    assert_eq!(stdout_json(&echo)["data"]["said"], "hi");
    // 20 MiB on one line: refused as too large, not read into memory.
    let huge = call("evil.huge", "{}");
    assert_eq!(huge.status.code(), Some(1));
    assert_eq!(
        stdout_json(&huge)["errors"][0]["code"],
        "E_LIMIT",
        "{}",
        String::from_utf8_lossy(&huge.stdout)
    );
    // It exits in the middle of a call: that call fails saying so.
    let crash = call("evil.crash", "{}");
    assert_eq!(crash.status.code(), Some(1));
    assert!(
        stdout_json(&crash)["errors"][0]["message"].as_str().expect("message").contains("exited")
    );
    // No hints: a person decides.
    let unhinted = call("evil.unhinted", "{}");
    assert_eq!(unhinted.status.code(), Some(1));
    assert!(
        stdout_json(&unhinted)["errors"][0]["details"]["approval_id"].is_string(),
        "{}",
        String::from_utf8_lossy(&unhinted.stdout)
    );
}

#[test]
fn a_real_git_server_reads_freely_and_asks_before_writing() {
    // A Python server needs its venv and the interpreter the venv points at, both read-only.
    let venv = mcp_venv_bin().parent().expect("venv").to_path_buf();
    let python = std::fs::canonicalize(venv.join("bin/python")).expect("interpreter");
    let interpreter = python.parent().and_then(Path::parent).expect("its install");
    let dir = project(&json!({ "git": {
        "command": venv.join("bin/mcp-server-git"),
        "args": ["--repository", "."],
        "grants": { "paths": ["."], "programs": [venv, interpreter] },
    }}));
    let git = |args: &[&str]| {
        let done = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("git");
        assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    };
    git(&["init", "-q"]);
    git(&["add", "notes.txt"]);
    git(&["commit", "-qm", "first"]);
    let found = jig(dir.path(), &["mcp", "discover"]);
    assert_eq!(found.status.code(), Some(0), "{}", stderr(&found));
    let tools = ids(dir.path());
    let effects =
        |id: &str| tools.iter().find(|(t, _)| t == id).map(|(_, t)| t["sideEffects"].clone());
    assert_eq!(effects("git.git_status"), Some(json!(["read"])));
    assert_eq!(effects("git.git_commit"), Some(json!(["write"])));

    let status = jig(dir.path(), &["call", "git.git_status", "--args", r#"{"repo_path": "."}"#]);
    assert_eq!(status.status.code(), Some(0), "{}", stderr(&status));
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("On branch"),
        "{}",
        String::from_utf8_lossy(&status.stdout)
    );
    std::fs::write(dir.path().join("more.txt"), "more\n").expect("file");
    let add = jig(
        dir.path(),
        &[
            "--as",
            "alice",
            "call",
            "git.git_add",
            "--args",
            r#"{"repo_path": ".", "files": ["more.txt"]}"#,
        ],
    );
    assert_eq!(add.status.code(), Some(1), "{}", stderr(&add));
    assert!(stdout_json(&add)["errors"][0]["details"]["approval_id"].is_string());
}

#[test]
fn the_reference_everything_server_answers_through_jig_with_what_it_was_granted() {
    let modules = node_modules();
    let script = modules.join("@modelcontextprotocol/server-everything/dist/index.js");
    let dir = project(&json!({ "everything": {
        "command": "node",
        "args": [script, "stdio"],
        "env": { "GREETING": "granted" },
        "grants": { "programs": [modules] },
    }}));
    let found = jig(dir.path(), &["mcp", "discover"]);
    assert_eq!(found.status.code(), Some(0), "{}", stderr(&found));
    let tools = ids(dir.path());
    let tool = |id: &str| {
        tools
            .iter()
            .find(|(t, _)| t == id)
            .unwrap_or_else(|| {
                panic!("{id} listed: {:?}", tools.iter().map(|t| &t.0).collect::<Vec<_>>())
            })
            .1
            .clone()
    };
    assert_eq!(tool("everything.get-sum")["sideEffects"], json!(["read"]));
    // Not read-only and not destructive: still a write, which the rules send to a person.
    assert_eq!(tool("everything.toggle-simulated-logging")["sideEffects"], json!(["write"]));

    let call = |id: &str, args: &str| called(dir.path(), id, args, &[("JIG_TEST_SECRET", "s3")]);
    let sum = call("everything.get-sum", r#"{"a": 2, "b": 3}"#);
    assert!(sum["data"].to_string().contains("is 5"), "{sum}");
    // Structured content is the data, checked against the output schema the server declared.
    let weather = call("everything.get-structured-content", r#"{"location": "New York"}"#);
    assert!(weather["data"]["temperature"].is_number(), "{weather}");
    // An image arrives as the server sent it (base64 with its type), not as text.
    let image = call("everything.get-tiny-image", "{}");
    assert!(image["data"].to_string().contains("image/png"), "{image}");
    // Progress on a long operation, then its answer.
    let long = call("everything.trigger-long-running-operation", r#"{"duration": 1, "steps": 2}"#);
    assert!(long["data"].to_string().contains("completed"), "{long}");
    // The server's environment is what its entry grants, not the caller's.
    let env = call("everything.get-env", "{}");
    let text = env["data"].to_string();
    assert!(text.contains("granted"), "{text}");
    assert!(!text.contains("JIG_TEST_SECRET") && !text.contains("s3\\\""), "{text}");
    let audit = jig(dir.path(), &["audit", "verify"]);
    assert_eq!(audit.status.code(), Some(0), "{}", stderr(&audit));
}

#[test]
fn a_discovery_file_that_came_with_a_repository_starts_nothing() {
    let dir = hostile_project();
    let (alice, bob) = (tempfile::tempdir().expect("tmp"), tempfile::tempdir().expect("tmp"));
    let as_person = |state: &Path, project: &Path, args: &[&str]| {
        jig_env(project, args, &[("XDG_STATE_HOME", state.to_str().expect("utf-8"))])
    };
    let listed = |state: &Path, project: &Path| -> Vec<String> {
        let out = as_person(state, project, &["list", "--json"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let tools = stdout_json(&out);
        let ids = tools.as_array().expect("tools").iter().map(|t| t["id"].as_str().expect("id"));
        ids.filter(|id| id.starts_with("evil.")).map(str::to_owned).collect()
    };
    let found = as_person(alice.path(), dir.path(), &["mcp", "discover"]);
    assert_eq!(found.status.code(), Some(0), "{}", stderr(&found));
    assert!(listed(alice.path(), dir.path()).contains(&"evil.echo".to_owned()));

    // Bob has the same files, `.jig/mcp/evil.json` with the right hash included, as a
    // repository that carries them would: nothing of the server's is in his registry.
    assert_eq!(listed(bob.path(), dir.path()), Vec::<String>::new());
    let check = as_person(bob.path(), dir.path(), &["validate"]);
    assert!(stderr(&check).contains("nobody here has asked for this server"), "{}", stderr(&check));
    let call =
        as_person(bob.path(), dir.path(), &["call", "evil.echo", "--args", r#"{"text":"hi"}"#]);
    assert_eq!(stdout_json(&call)["errors"][0]["code"], "E_NOT_FOUND");
    // The error says what the tool is and how a person would make it one.
    let message = stdout_json(&call)["errors"][0]["message"].as_str().expect("message").to_owned();
    assert!(message.contains("`evil` is an upstream MCP server"), "{message}");
    assert!(message.contains("jig mcp discover"), "{message}");
    // A copy of the project elsewhere is another project, even for the person who asked.
    let clone = tempfile::tempdir().expect("tmp");
    let copied = std::process::Command::new("cp")
        .args(["-a", &format!("{}/.", dir.path().display()), &clone.path().display().to_string()])
        .status()
        .expect("cp");
    assert!(copied.success());
    assert!(clone.path().join(".jig/mcp/evil.json").is_file());
    assert_eq!(listed(alice.path(), clone.path()), Vec::<String>::new());

    // Bob asks for it himself: now it is his to run.
    let asked = as_person(bob.path(), dir.path(), &["mcp", "discover"]);
    assert_eq!(asked.status.code(), Some(0), "{}", stderr(&asked));
    assert!(listed(bob.path(), dir.path()).contains(&"evil.echo".to_owned()));
}

/// Issue #42: after consent, a pull that changed `.jig/mcp/NAME.json` (keeping the
/// configuration's hash) turned a write into a read that ran at once, and a pull that rewrote
/// the server's program was started on the old consent. The consent now binds what the server
/// listed and the files its command runs.
#[test]
fn a_changed_discovery_file_is_not_believed_and_a_changed_program_is_not_started() {
    let dir = hostile_project();
    let state = tempfile::tempdir().expect("tmp");
    let env = [("XDG_STATE_HOME", state.path().to_str().expect("utf-8"))];
    let run = |args: &[&str]| jig_env(dir.path(), args, &env);
    let found = run(&["mcp", "discover"]);
    assert_eq!(found.status.code(), Some(0), "{}", stderr(&found));
    let waits = stdout_json(&run(&["call", "evil.unhinted", "--args", "{}"]));
    assert!(waits["errors"][0]["details"]["approval_id"].is_string(), "a write waits: {waits}");

    // The pull: the same configuration, `unhinted` now a read.
    let cache = dir.path().join(".jig/mcp/evil.json");
    let text = std::fs::read_to_string(&cache).expect("cache");
    let mut doctored: Value = serde_json::from_str(&text).expect("json");
    for tool in doctored["tools"].as_array_mut().expect("tools") {
        if tool["name"] == "unhinted" {
            tool["annotations"] = json!({ "readOnlyHint": true });
        }
    }
    std::fs::write(&cache, doctored.to_string()).expect("write");
    let check = run(&["validate"]);
    assert!(stderr(&check).contains("is not what the server listed"), "{}", stderr(&check));
    let call = stdout_json(&run(&["call", "evil.unhinted", "--args", "{}"]));
    assert_eq!(call["errors"][0]["code"], "E_NOT_FOUND", "{call}");

    // Asked again, the server's own list is believed again: the write still waits.
    assert_eq!(run(&["mcp", "discover"]).status.code(), Some(0));
    let waits = stdout_json(&run(&["call", "evil.unhinted", "--args", "{}"]));
    assert!(waits["errors"][0]["details"]["approval_id"].is_string(), "{waits}");

    // The pull rewrites the server's program: not started, its tools gone, until asked again.
    let program = dir.path().join("hostile.py");
    let mut code = std::fs::read_to_string(&program).expect("program");
    code.push_str("\n# changed by a pull\n");
    std::fs::write(&program, code).expect("write");
    let check = run(&["validate"]);
    assert!(stderr(&check).contains("the files its command runs changed"), "{}", stderr(&check));
    let call = stdout_json(&run(&["call", "evil.echo", "--args", r#"{"text":"hi"}"#]));
    assert_eq!(call["errors"][0]["code"], "E_NOT_FOUND", "{call}");
    assert_eq!(run(&["mcp", "discover"]).status.code(), Some(0));
    let call = stdout_json(&run(&["call", "evil.echo", "--args", r#"{"text":"hi"}"#]));
    assert_eq!(call["ok"], true, "{call}");
}

/// `jig mcp` on stdio, spoken to line by line: what it writes arrives on a channel.
pub(crate) struct McpSession {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<Value>,
    backlog: Vec<Value>,
}

impl McpSession {
    pub(crate) fn start(dir: &Path) -> Self {
        use std::io::BufRead as _;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_jig"))
            .arg("mcp")
            .current_dir(dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("jig mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(message) = serde_json::from_str(&line) {
                    let _ = sender.send(message);
                }
            }
        });
        let mut session = Self { child, stdin, lines, backlog: Vec::new() };
        session.send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "test", "version": "1" } } }));
        session.wait_for(|m| m["id"] == 1);
        session.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        session
    }

    fn send(&mut self, message: &Value) {
        use std::io::Write as _;
        writeln!(self.stdin, "{message}").expect("write");
        self.stdin.flush().expect("flush");
    }

    /// The first message `wanted` picks, within 30 s; those it passes over are kept for the
    /// next wait (answers to calls in flight together come in any order).
    pub(crate) fn wait_for(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(at) = self.backlog.iter().position(&wanted) {
            return self.backlog.remove(at);
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let message = self.lines.recv_timeout(left).expect("jig mcp said nothing in time");
            if wanted(&message) {
                return message;
            }
            self.backlog.push(message);
        }
    }

    /// What a tool of the `team` server said, from Jig's answer to `tools/call`.
    fn said(answer: &Value) -> String {
        let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
        let data: Value = serde_json::from_str(text).unwrap_or(Value::Null);
        data["said"].as_str().unwrap_or_default().to_owned()
    }

    fn call(&mut self, id: u64, tool: &str) {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": tool, "arguments": {} } }));
    }
}

impl Drop for McpSession {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_upstream_server_takes_calls_at_once_and_its_new_tools_reach_jigs_clients() {
    let dir = project(&json!({ "team": {
        "command": "python3",
        "args": ["team.py"],
        "grants": { "read": ["team.py"] },
    }}));
    std::fs::copy(repo().join("tests/fixtures/upstream/team.py"), dir.path().join("team.py"))
        .expect("server");
    let found = jig(dir.path(), &["mcp", "discover"]);
    assert_eq!(found.status.code(), Some(0), "{}", stderr(&found));
    let mut agent = McpSession::start(dir.path());

    // Two calls in flight on the one server: `meet` answers "met" only when the other is there
    // too (after 10 s alone it says "alone"), so calls sent one after the other would not meet.
    agent.call(2, "team.meet");
    agent.call(3, "team.meet");
    for id in [2, 3] {
        let answer = agent.wait_for(|m| m["id"] == id);
        assert_eq!(McpSession::said(&answer), "met", "{answer}");
    }

    // The server adds a tool and says so: Jig asks it again and tells its own client.
    agent.call(4, "team.grow");
    let grew = agent.wait_for(|m| m["id"] == 4);
    assert_eq!(McpSession::said(&grew), "grew", "{grew}");
    agent.wait_for(|m| m["method"] == "notifications/tools/list_changed");
    agent.send(&json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {} }));
    let listed = agent.wait_for(|m| m["id"] == 5);
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .filter(|n| n.starts_with("team."))
        .collect();
    assert!(names.contains(&"team.grown"), "{names:?}");
    agent.call(6, "team.grown");
    let ran = agent.wait_for(|m| m["id"] == 6);
    assert_eq!(McpSession::said(&ran), "ran grown", "{ran}");
}

/// The reference everything server on Streamable HTTP, on a free loopback port: its address
/// and its process (killed when dropped).
struct HttpEverything {
    child: std::process::Child,
    url: String,
}

impl HttpEverything {
    fn start() -> Self {
        let script = node_modules().join("@modelcontextprotocol/server-everything/dist/index.js");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("port")
            .local_addr()
            .expect("addr")
            .port();
        let child = std::process::Command::new("node")
            .args([script.to_str().expect("utf-8"), "streamableHttp"])
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("node");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(std::time::Instant::now() < deadline, "server-everything did not listen");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Self { child, url: format!("http://127.0.0.1:{port}/mcp") }
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_server_over_streamable_http_is_reached_only_where_the_policy_allows() {
    let server = HttpEverything::start();
    let entry = json!({ "everything": {
        "url": server.url,
        "headers": { "X-Team": "platform", "Authorization": "Bearer ${JIG_TEST_MCP_TOKEN}" },
        "env_from": ["JIG_TEST_MCP_TOKEN"],
    }});
    let dir = project(&entry);
    let with_token = [("JIG_TEST_MCP_TOKEN", "t0ken")];
    // The policy does not let Jig reach this host: nothing is asked, and it says why.
    let refused = jig_env(dir.path(), &["mcp", "discover"], &with_token);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr(&refused));
    assert!(stderr(&refused).contains(&format!("connecting to everything: {}", server.url)));
    assert!(stderr(&refused).contains("127.0.0.1"), "{}", stderr(&refused));

    // Allowed: its tools are listed and called like a started server's.
    let manifest = std::fs::read_to_string(dir.path().join("jig.yaml")).expect("manifest");
    let allowed = manifest.replace(
        "policy:\n",
        "policy:\n  network: { allowed_domains: [\"127.0.0.1\"], allow_private: true }\n",
    );
    std::fs::write(dir.path().join("jig.yaml"), allowed).expect("manifest");
    let found = jig_env(dir.path(), &["mcp", "discover"], &with_token);
    assert_eq!(found.status.code(), Some(0), "{}", stderr(&found));
    let tools = ids(dir.path());
    assert!(
        tools.iter().any(|(t, _)| t == "everything.get-sum"),
        "{:?}",
        tools.iter().map(|t| &t.0).collect::<Vec<_>>()
    );
    let call = |id: &str, args: &str| called(dir.path(), id, args, &with_token);
    let sum = call("everything.get-sum", r#"{"a": 20, "b": 22}"#);
    assert!(sum["data"].to_string().contains("is 42"), "{sum}");
    // Progress arrives in the stream of events that carries the answer.
    let long = call("everything.trigger-long-running-operation", r#"{"duration": 1, "steps": 2}"#);
    assert!(long["data"].to_string().contains("completed"), "{long}");

    // A header naming a variable Jig does not have is an error on the call, saying which.
    let missing = jig(dir.path(), &["call", "everything.get-sum", "--args", r#"{"a": 1, "b": 1}"#]);
    assert_eq!(missing.status.code(), Some(1));
    let error = &stdout_json(&missing)["errors"][0];
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("`Authorization`") && m.contains("JIG_TEST_MCP_TOKEN")),
        "{error}"
    );
}
