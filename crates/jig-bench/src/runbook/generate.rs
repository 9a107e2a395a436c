//! The benchmark's projects, written from code.

use std::fmt::Write as _;
use std::path::Path;

/// Tool steps of the overhead comparison.
pub const OVERHEAD_STEPS: usize = 200;

const PROBE: &str = "apiVersion: tool/v0\nmeta:\n  name: probe\n  description: Probe a URL.\n  transport: stdio\n  binary: \"true\"\ncontract:\n  inputs:\n    url: { type: string, required: true }\n  outputs:\n    status_code: { type: string }\n  side_effects: false\n  deterministic: true\n  idempotent: true\n  reads: [network]\nactions:\n  check:\n    argv: [\"true\", \"{{ .url }}\"]\n";

/// A project with one runbook of 1,000 steps and a scenario answering all its tool steps;
/// returns the step count.
pub fn big_runbook(dir: &Path) -> anyhow::Result<usize> {
    fs_err::write(dir.join("jig.yaml"), "name: bench\n")?;
    fs_err::create_dir_all(dir.join("tools"))?;
    fs_err::create_dir_all(dir.join("runbooks/scenarios/big/pass"))?;
    fs_err::write(dir.join("tools/probe.tool.yaml"), PROBE)?;
    let mut steps = String::new();
    let mut count = 0;
    let mut calls = 0;
    for group in 0..20 {
        for i in 0..46 {
            writeln!(
                steps,
                "  - {{ id: t{group}_{i}, type: tool, tool: probe, action: check, inputs: {{ url: \"https://{{{{ .host }}}}/{group}/{i}\" }} }}"
            )?;
            count += 1;
            calls += 1;
        }
        writeln!(
            steps,
            "  - {{ id: a{group}, type: assert, assert: [{{ type: equals, value: \"{{{{ .status_code }}}}\", expected: \"200\" }}] }}"
        )?;
        writeln!(
            steps,
            "  - id: b{group}\n    type: branch\n    branches:\n      - condition: '{{{{ eq .status_code \"200\" }}}}'\n        label: up\n        steps: [{{ id: ok{group}, type: tool, tool: probe, action: check, inputs: {{ url: \"https://{{{{ .host }}}}/ok\" }} }}]\n      - condition: default\n        label: down\n        steps: [{{ id: bad{group}, type: tool, tool: probe, action: check, inputs: {{ url: \"https://{{{{ .host }}}}/bad\" }} }}]"
        )?;
        count += 4;
        calls += 1;
    }
    writeln!(
        steps,
        "  - {{ id: each, type: tool, tool: probe, action: check, for_each: {{ as: item, over: \"{{{{ .items }}}}\" }}, inputs: {{ url: \"https://{{{{ .host }}}}/{{{{ .item }}}}\" }} }}"
    )?;
    writeln!(
        steps,
        "  - {{ id: done, type: end, outcome: {{ category: resolved, code: all_checked }} }}"
    )?;
    count += 2;
    calls += 100;
    let items: Vec<String> = (0..100).map(|i| format!("i{i}")).collect();
    let runbook = format!(
        "apiVersion: kernel/v0\nmeta:\n  name: big\n  inputs:\n    host: {{ type: string, required: true }}\n  constants:\n    items: [{}]\ntools: [probe]\nsteps:\n{steps}",
        items.join(", ")
    );
    fs_err::write(dir.join("runbooks/big.runbook.yaml"), runbook)?;
    let mut scenario =
        String::from("inputs: { host: srv.example }\ntool_responses:\n  \"probe:check\":\n");
    for _ in 0..calls {
        scenario.push_str("    - { exit_code: 0, outputs: { status_code: \"200\" } }\n");
    }
    fs_err::write(dir.join("runbooks/scenarios/big/pass/scenario.yaml"), scenario)?;
    fs_err::write(
        dir.join("runbooks/scenarios/big/pass/test.yaml"),
        "expected_status: completed\nexpected_outcome: resolved\nexpected_code: all_checked\n",
    )?;
    Ok(count)
}

/// The tool/v0 tool of the process comparison: `echo` of its input, in the tool sandbox.
const SAY: &str = "apiVersion: tool/v0\nmeta:\n  name: say\n  description: Echo a word.\n  transport: stdio\n  binary: echo\ncontract:\n  inputs:\n    word: { type: string, required: true }\n  outputs:\n    said: { type: string }\n  side_effects: false\n  deterministic: true\n  idempotent: true\nactions:\n  echo:\n    argv: [echo, \"{{ .word }}\"]\n    extract:\n      said: { from: stdout }\n";

/// A project for the overhead comparisons: `OVERHEAD_STEPS` small files and a runbook reading
/// each with `file_read` (a built-in, in process: a step's cost against the cheapest call), and
/// a runbook of as many steps of a tool/v0 action that starts a process (`echo`), as gert's
/// runbooks' steps do.
pub fn overhead_project(dir: &Path) -> anyhow::Result<()> {
    fs_err::write(dir.join("jig.yaml"), "name: bench\n")?;
    fs_err::create_dir_all(dir.join("files"))?;
    fs_err::create_dir_all(dir.join("runbooks"))?;
    fs_err::create_dir_all(dir.join("tools"))?;
    fs_err::write(dir.join("tools/say.tool.yaml"), SAY)?;
    let mut reads = String::new();
    let mut says = String::new();
    for i in 0..OVERHEAD_STEPS {
        fs_err::write(dir.join(format!("files/f{i}.txt")), format!("file {i}\n"))?;
        fs_err::write(dir.join(format!("files/g{i}.txt")), format!("file {i}\n"))?;
        writeln!(
            reads,
            "  - {{ id: r{i}, type: tool, tool: std/file_read, inputs: {{ path: files/f{i}.txt }} }}"
        )?;
        writeln!(
            says,
            "  - {{ id: s{i}, type: tool, tool: say, action: echo, inputs: {{ word: step{i} }} }}"
        )?;
    }
    let end = "  - { id: done, type: end, outcome: { category: resolved } }\n";
    fs_err::write(
        dir.join("runbooks/reads.runbook.yaml"),
        format!(
            "apiVersion: kernel/v0\nmeta: {{ name: reads }}\ntools: [std/file_read]\nsteps:\n{reads}{end}"
        ),
    )?;
    fs_err::write(
        dir.join("runbooks/says.runbook.yaml"),
        format!("apiVersion: kernel/v0\nmeta: {{ name: says }}\ntools: [say]\nsteps:\n{says}{end}"),
    )?;
    Ok(())
}
