//! Every external execution kind from a real project: python, node and php under Jig's tool
//! protocol, http against a loopback server, and gert's stdio, jsonrpc and mcp transports —
//! all with real interpreters and real servers.

use jig_engine::Event;
use jig_testkit::http::{Response, Server};
use serde_json::json;

use crate::{Project, call_once, code};

fn tool(id: &str, input: &str, execution: &str) -> String {
    format!(
        "id: {id}\nversion: 1.0.0\ndescription: A test tool.\ndeterministic: false\nsideEffects: [none]\nrisk: low\ntimeoutMs: 20000\nlimits: {{ maxInputBytes: 65536, maxOutputBytes: 1048576 }}\ninputSchema: {input}\noutputSchema: {{ type: object }}\n{execution}\n"
    )
}

fn project() -> Project {
    let project = Project::new(
        "network:\n  allowed_domains: [\"127.0.0.1\"]\n  allow_private: true\nrules:\n  - { effects: [network, exec], action: allow }",
    );
    let name = "{ type: object, properties: { name: { type: string } }, required: [name] }";
    project.write(
        "tools/py/greet.tool.yaml",
        &tool("py.greet", name, "execution: { kind: python, module: \"greet:run\" }"),
    );
    project.write(
        "tools/py/greet.py",
        "def run(args, ctx):\n    ctx.progress(50, 'halfway')\n    ctx.log('greeting ' + args['name'])\n    return {'greeting': 'hello ' + args['name']}\n",
    );
    project.write(
        "tools/py/fail.tool.yaml",
        &tool(
            "py.fail",
            "{ type: object }",
            "execution: { kind: python, module: \"greet:missing\" }",
        ),
    );
    project.write(
        "tools/py/script.tool.yaml",
        &tool("py.script", name, "execution: { kind: python, script: sum.py }"),
    );
    project.write(
        "tools/py/sum.py",
        "import json, sys\nreq = json.load(sys.stdin)\nprint(json.dumps({'type': 'progress', 'pct': 10, 'message': 'start'}))\nprint(json.dumps({'type': 'result', 'data': {'len': len(req['name'])}}))\n",
    );
    project.write(
        "tools/js/shout.tool.yaml",
        &tool("js.shout", name, "execution: { kind: node, module: \"./shout.mjs:shout\" }"),
    );
    project.write(
        "tools/js/shout.mjs",
        "export async function shout(args, ctx) { ctx.progress(100, 'done'); return { text: args.name.toUpperCase() }; }\n",
    );
    project.write(
        "tools/js/inline.tool.yaml",
        &tool("js.inline", name, "execution:\n  kind: node\n  node: \"let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const r=JSON.parse(s);console.log(JSON.stringify({n:r.name.length}))})\""),
    );
    project.write(
        "tools/php/rev.tool.yaml",
        &tool("php.rev", name, "execution: { kind: php, script: rev.php }"),
    );
    project.write(
        "tools/php/rev.php",
        "<?php\n$req = json_decode(stream_get_contents(STDIN), true);\necho json_encode(['type' => 'result', 'data' => ['reversed' => strrev($req['name'])]]), \"\\n\";\n",
    );
    project.write(
        "tools/php/inline.tool.yaml",
        &tool("php.inline", name, "execution:\n  kind: php\n  php: \"$r = json_decode(stream_get_contents(STDIN), true); echo json_encode(['len' => strlen($r['name'])]);\""),
    );
    project
}

#[tokio::test(flavor = "multi_thread")]
async fn python_node_and_php_tools_speak_the_protocol() {
    let project = project();
    let engine = project.engine().await;
    let mut events = engine.subscribe();
    let greet = call_once(&engine, "py.greet", json!({ "name": "ada" })).await;
    assert!(greet.ok, "{greet:?}");
    assert_eq!(greet.data, json!({ "greeting": "hello ada" }));
    let mut progress = Vec::new();
    let mut logs = Vec::new();
    while let Ok(event) = events.try_recv() {
        let Event::Message(message) = event else { continue };
        if message.request_id != greet.request_id {
            continue;
        }
        match message.event.as_str() {
            "TaskProgress" => {
                progress.push(message.progress.expect("progress").message.unwrap_or_default())
            }
            "OutputChunk" => logs
                .push(message.data.expect("data")["text"].as_str().unwrap_or_default().to_owned()),
            _ => {}
        }
    }
    assert_eq!(progress, ["halfway"]);
    assert_eq!(logs, ["greeting ada"], "protocol lines are not echoed as output");

    let failed = call_once(&engine, "py.fail", json!({})).await;
    assert_eq!(code(&failed), "E_SHELL", "{failed:?}");
    assert!(failed.errors[0].message.contains("AttributeError"), "{failed:?}");
    for (tool, expected) in [
        ("py.script", json!({ "len": 3 })),
        ("js.shout", json!({ "text": "ADA" })),
        ("js.inline", json!({ "n": 3 })),
        ("php.rev", json!({ "reversed": "ada" })),
        ("php.inline", json!({ "len": 3 })),
    ] {
        let response = call_once(&engine, tool, json!({ "name": "ada" })).await;
        assert!(response.ok, "{tool}: {response:?}");
        assert_eq!(response.data, expected, "{tool}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_http_kind_templates_the_request_and_needs_the_network_cap() {
    let server = Server::start(|request| {
        let body = format!(
            "{{\"path\":\"{}\",\"method\":\"{}\",\"body\":{}}}",
            request.target,
            request.method,
            if request.body.is_empty() {
                "null".to_owned()
            } else {
                String::from_utf8_lossy(&request.body).into_owned()
            }
        );
        if request.target.contains("missing") {
            return Response::text(404, "gone");
        }
        Response::text(200, &body).with_header("Content-Type", "application/json")
    });
    let project = project();
    let base = server.url("");
    let input = "{ type: object, properties: { id: { type: string } }, required: [id] }";
    project.write(
        "tools/web/get.tool.yaml",
        &tool("web.get", input, &format!("templating: {{ engine: jinja2 }}\nexecution: {{ kind: http, url: \"{base}/items/{{{{ id }}}}\" }}\ncaps: {{ network: [http] }}")),
    );
    project.write(
        "tools/web/post.tool.yaml",
        &tool("web.post", input, &format!("execution: {{ kind: http, method: POST, url: \"{base}/items\" }}\ncaps: {{ network: [http] }}")),
    );
    project.write(
        "tools/web/nocap.tool.yaml",
        &tool("web.nocap", input, &format!("execution: {{ kind: http, url: \"{base}/items\" }}")),
    );
    let engine = project.engine().await;
    let get = call_once(&engine, "web.get", json!({ "id": "42" })).await;
    assert!(get.ok, "{get:?}");
    assert_eq!(get.data, json!({ "path": "/items/42", "method": "GET", "body": null }));
    let post = call_once(&engine, "web.post", json!({ "id": "7" })).await;
    assert_eq!(post.data, json!({ "path": "/items", "method": "POST", "body": { "id": "7" } }));
    let missing = call_once(&engine, "web.get", json!({ "id": "missing" })).await;
    assert_eq!(code(&missing), "E_HTTP", "{missing:?}");
    let nocap = call_once(&engine, "web.nocap", json!({ "id": "1" })).await;
    assert_eq!(code(&nocap), "E_POLICY", "{nocap:?}");
    let before = server.requests().len();
    assert_eq!(before, 3, "the refused call sent nothing");
}

#[tokio::test(flavor = "multi_thread")]
#[allow(
    clippy::too_many_lines,
    reason = "one scenario across three transports, read top to bottom"
)]
async fn gert_stdio_jsonrpc_and_mcp_transports() {
    let project = project();
    project.write(
        "tools/gert/text.tool.yaml",
        r#"apiVersion: tool/v0
meta:
  name: text
  description: Text utilities
  binary: printf
  transport: stdio
contract:
  inputs:
    word: { type: string, required: true }
  outputs:
    length: { type: int }
    upper: { type: string }
  side_effects: false
  deterministic: true
actions:
  measure:
    description: Print a word and its length
    argv: ["%s:%s", "{{ .word }}", "5"]
    extract:
      length: { from: stdout, pattern: ":(\\d+)$" }
      upper: { from: stdout, pattern: "^([a-z]+):" }
"#,
    );
    project.write(
        "tools/gert/calc.tool.yaml",
        r#"apiVersion: tool/v0
meta:
  name: calc
  description: A JSON-RPC calculator
transport:
  mode: jsonrpc
  startup:
    argv: [python3, tools/gert/calc_server.py]
    ready_signal: READY
    timeout: 10s
contract:
  inputs:
    a: { type: int, required: true }
    b: { type: int, required: true }
  outputs:
    sum: { type: int }
actions:
  add:
    description: Add two numbers
    method: add
"#,
    );
    project.write(
        "tools/gert/calc_server.py",
        "import json, sys, os\nprint('READY', flush=True)\nfor line in sys.stdin:\n    req = json.loads(line)\n    p = req['params']\n    out = {'jsonrpc': '2.0', 'id': req['id'], 'result': {'sum': p['a'] + p['b'], 'pid': os.getpid()}}\n    print(json.dumps(out), flush=True)\n",
    );
    project.write(
        "tools/gert/notes.tool.yaml",
        r#"apiVersion: tool/v0
meta:
  name: notes
  description: An MCP server's tools
transport:
  mode: mcp
  startup:
    argv: [python3, tools/gert/mcp_server.py]
contract:
  inputs:
    text: { type: string, required: true }
  outputs:
    words: { type: int }
actions:
  count:
    description: Count words
    mcp_tool: count_words
"#,
    );
    project.write(
        "tools/gert/mcp_server.py",
        r#"import json, sys
def send(message):
    sys.stdout.write(json.dumps(message) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "notes", "version": "1"}}})
    elif method == "notifications/initialized":
        pass
    elif method == "tools/call":
        args = msg["params"]["arguments"]
        token = msg["params"].get("_meta", {}).get("progressToken")
        send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": 1, "total": 2, "message": "counting"}})
        if msg["params"]["name"] != "count_words":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {"isError": True, "content": [{"type": "text", "text": "no such tool"}]}})
        else:
            n = len(args["text"].split())
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {"content": [{"type": "text", "text": str(n)}], "structuredContent": {"words": n}}})
"#,
    );
    let engine = project.engine().await;
    let measured = call_once(&engine, "gert/text.measure", json!({ "word": "jig" })).await;
    assert!(measured.ok, "{measured:?}");
    assert_eq!(measured.data, json!({ "length": 5, "upper": "jig" }));
    let first = call_once(&engine, "gert/calc.add", json!({ "a": 2, "b": 3 })).await;
    assert!(first.ok, "{first:?}");
    assert_eq!(first.data["sum"], 5);
    let second = call_once(&engine, "gert/calc.add", json!({ "a": 10, "b": 5 })).await;
    assert_eq!(second.data["sum"], 15);
    assert_eq!(first.data["pid"], second.data["pid"], "the jsonrpc server is persistent");
    // A server that dies is started again by the next call.
    let server = calc_server(&project.root).expect("the server runs");
    assert!(
        std::process::Command::new("kill")
            .args(["-9", &server.to_string()])
            .status()
            .expect("kill")
            .success()
    );
    // Its sandbox (bwrap and the namespace's init) exits a moment after it: the call starts
    // a new server once the whole process the engine holds has ended.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !server_processes(&project.root, false).is_empty() {
        assert!(std::time::Instant::now() < deadline, "the server did not die");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let third = call_once(&engine, "gert/calc.add", json!({ "a": 1, "b": 1 })).await;
    assert_eq!(third.data["sum"], 2, "{third:?}");
    let restarted = calc_server(&project.root).expect("a new server runs");
    assert_ne!(restarted, server);
    // The tool file changes its command: the next call starts the new server and stops the old.
    let edited = std::fs::read_to_string(project.path("tools/gert/calc.tool.yaml")).expect("read");
    project.write(
        "tools/gert/calc.tool.yaml",
        &edited.replace("calc_server.py]", "calc_server.py, --edited]"),
    );
    let snapshot = jig_load::load(&project.root).expect("the edited project loads");
    engine.swap(snapshot).expect("swap");
    let fourth = call_once(&engine, "gert/calc.add", json!({ "a": 2, "b": 2 })).await;
    assert_eq!(fourth.data["sum"], 4, "{fourth:?}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while calc_server_pids(&project.root).contains(&restarted) {
        assert!(std::time::Instant::now() < deadline, "the old server still runs");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(calc_server_pids(&project.root).len(), 1, "only the new server runs");
    let mut events = engine.subscribe();
    let counted = call_once(&engine, "gert/notes.count", json!({ "text": "one two three" })).await;
    assert!(counted.ok, "{counted:?}");
    assert_eq!(counted.data, json!({ "words": 3 }));
    let mut progress = false;
    while let Ok(event) = events.try_recv() {
        if let Event::Message(message) = event
            && message.event == "TaskProgress"
            && message.request_id == counted.request_id
        {
            progress = true;
        }
    }
    assert!(progress, "MCP progress notifications become events");
}

/// The host pid of this project's `calc_server.py` (its own pid namespace hides it from itself).
fn calc_server(root: &std::path::Path) -> Option<u32> {
    calc_server_pids(root).first().copied()
}

/// The host pids of every `calc_server.py` of this project.
fn calc_server_pids(root: &std::path::Path) -> Vec<u32> {
    server_processes(root, true)
}

/// The host pids of processes running this project's `calc_server.py`: the Python processes
/// only, or with the sandbox around them (a zombie has no command line and is not counted).
fn server_processes(root: &std::path::Path, python_only: bool) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let cwd = std::fs::read_link(entry.path().join("cwd")).ok()?;
            let python =
                cmdline.split(|b| *b == 0).next().is_some_and(|arg0| arg0.ends_with(b"python3"));
            let script = cmdline.windows(25).any(|w| w == b"tools/gert/calc_server.py");
            ((python || !python_only) && script && cwd == root).then_some(pid)
        })
        .collect()
}
