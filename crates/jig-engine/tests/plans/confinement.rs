//! What a plan may not do, tried for real: reach the network, write its root filesystem or
//! its inputs, read the workspace outside what it was handed, gain privileges, or turn an
//! argument into a command or an option.

use serde_json::json;

use super::*;

fn docker_probe(id: &str, script: &str, network: &str, effects: &str) -> String {
    format!(
        "abiVersion: v1\nid: {id}\nversion: 1.0.0\ndeterministic: false\nsideEffects: [{effects}]\ntimeoutMs: 60000\n{LIMITS}\n\
         inputSchema:\n  type: object\n  required: [notes]\n  properties:\n    notes: {{type: string, format: workspace-path}}\n    word: {{type: string, default: x}}\n\
         outputSchema: {{type: object}}\ntemplating: {{engine: jinja2}}\n\
         execution:\n  kind: docker\n  image: '{{image}}'\n  command: [/bin/sh, -c, {script:?}, probe]\n  args: [\"{{{{ word | default('x') }}}}\"]\n  inputs: [{{role: notes, destName: notes.md}}]\n{network}\
         outputs:\n  - {{role: probe, type: text/plain, path: probe.txt}}\n"
    )
}

/// Each line: a check and what happened.
const PROBE: &str = "\
{ ip -o link | grep -v ': lo:' >/dev/null && echo 'net: interfaces' || echo 'net: loopback only';
  wget -q -T 2 -O- http://10.88.0.1/ >/dev/null 2>&1 && echo 'egress: reached' || echo 'egress: refused';
  touch /x 2>/dev/null && echo 'root: written' || echo 'root: read-only';
  touch /work/in/x 2>/dev/null && echo 'in: written' || echo 'in: read-only';
  find / -xdev -name secret.txt 2>/dev/null | grep -q . && echo 'workspace: visible' || echo 'workspace: invisible';
  grep CapEff /proc/self/status | tr -d '\\t';
  echo \"arg: $1\"; } > /work/out/probe.txt";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_gets_no_network_a_read_only_root_and_only_its_inputs() {
    let project = Project::new();
    project.tool("probe", &docker_probe("c.probe", PROBE, "", "exec")).file("n.md", "x\n");
    let engine = project.engine().await;
    let response =
        call(&engine, "c.probe", json!({"notes": "n.md", "word": "$(touch /work/out/pwned)"}))
            .await;
    assert!(response.ok, "{response:?}");
    assert_eq!(
        project.artifact(&response, "probe"),
        "net: loopback only\negress: refused\nroot: read-only\nin: read-only\nworkspace: invisible\nCapEff:0000000000000000\narg: $(touch /work/out/pwned)\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_with_copied_inputs_is_confined_the_same() {
    let project = Project::with_docker(", copy: true");
    project.tool("probe", &docker_probe("c.copied_probe", PROBE, "", "exec")).file("n.md", "x\n");
    let engine = project.engine().await;
    let response = call(&engine, "c.copied_probe", json!({"notes": "n.md", "word": "w"})).await;
    assert!(response.ok, "{response:?}");
    assert_eq!(
        project.artifact(&response, "probe"),
        "net: loopback only\negress: refused\nroot: read-only\nin: read-only\nworkspace: invisible\nCapEff:0000000000000000\narg: w\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_network_is_joined_only_when_the_tool_declares_it_and_the_policy_lists_it() {
    let project = Project::new();
    let listed = "  network: podman\n";
    let unlisted = "  network: host\n";
    project
        .tool("joins", &docker_probe("c.joins", PROBE, listed, "exec, network"))
        .tool("host", &docker_probe("c.host", PROBE, unlisted, "exec, network"))
        .file("n.md", "x\n");
    let engine = project.engine().await;
    // The control: the engine does attach a listed network.
    let joined = call(&engine, "c.joins", json!({"notes": "n.md"})).await;
    assert!(joined.ok, "{joined:?}");
    assert!(project.artifact(&joined, "probe").starts_with("net: interfaces\n"));
    // `host` is not in the policy's `plans.docker.networks`: refused before any container.
    let refused = call(&engine, "c.host", json!({"notes": "n.md"})).await;
    assert_eq!(code(&refused), "E_POLICY", "{refused:?}");
    assert_eq!(
        refused.errors[0].details.as_ref().expect("details")["rule"],
        "plans.docker.networks"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_argument_cannot_become_an_option_of_the_plans_program() {
    let project = Project::new();
    project.tool("probe", &docker_probe("c.option", PROBE, "", "exec")).file("n.md", "x\n");
    let engine = project.engine().await;
    let response =
        call(&engine, "c.option", json!({"notes": "n.md", "word": "--rcfile=/etc/passwd"})).await;
    assert_eq!(code(&response), "E_VALIDATION_FAIL", "{response:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slurm_job_sees_only_its_run_directory_and_no_network() {
    let project = Project::new();
    let script = "\
{ echo \"project: $(ls -A \"$2\" | tr '\\n' ' ')\";
  cat \"$2/secret.txt\" 2>/dev/null || echo 'secret: unreadable';
  echo \"state: $(ls -A \"$2/.jig\" | tr '\\n' ' ')\";
  echo \"runs: $(ls -A \"$2/.jig/runs\" | wc -l)\";
  touch in/x 2>/dev/null && echo 'in: written' || echo 'in: read-only';
  touch /usr/x 2>/dev/null && echo 'system: written' || echo 'system: read-only';
  grep -c : /proc/net/dev;
  grep CapEff /proc/self/status | tr -d '\\t';
  echo \"env: $(env | cut -d= -f1 | sort | tr '\\n' ' ')$GREETING\"; } > out/probe.txt";
    let script: String = script.lines().map(|l| format!("    {l}\n")).collect();
    let text = format!(
        "abiVersion: v1\nid: c.job\nversion: 1.0.0\ndeterministic: false\nsideEffects: [exec]\ntimeoutMs: 60000\n{LIMITS}\n\
         inputSchema:\n  type: object\n  required: [data, project]\n  properties:\n    data: {{type: string, format: workspace-path}}\n    project: {{type: string}}\n\
         outputSchema: {{type: object}}\ntemplating: {{engine: jinja2}}\n\
         execution:\n  kind: slurm\n  env: {{GREETING: hello}}\n  script: |\n{script}  args: [\"{{{{ data }}}}\", \"{{{{ project }}}}\"]\n\
         \x20 io:\n    inputs: [{{role: data, dest_relpath: in/data.csv}}]\n    outputs: [{{role: probe, type: text/plain, srcRelpath: out/probe.txt}}]\n\
         outputs:\n  - {{role: probe, type: text/plain, srcRelpath: out/probe.txt}}\n"
    );
    project.tool("job", &text).file("d.csv", "a\n");
    let engine = project.engine().await;
    let root = project.root.display().to_string();
    let queued = call(&engine, "c.job", json!({"data": "d.csv", "project": root})).await;
    let done = final_response(&engine, &queued.request_id).await;
    assert!(done.ok, "{done:?}");
    // The run directory is bound at its own path, so the directories leading to it exist —
    // empty but for that path: no file of the workspace, nothing else of Jig's state, no
    // other run. `/proc/net/dev` lists `lo` alone.
    assert_eq!(
        project.artifact(&done, "probe"),
        "project: .jig \nsecret: unreadable\nstate: runs \nruns: 1\nin: read-only\nsystem: read-only\n1\nCapEff:0000000000000000\n\
         env: GREETING HOME LANG PATH PWD TMPDIR hello\n"
    );
}
