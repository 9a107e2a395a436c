//! `jig doctor`: what this machine offers Jig — the sandbox every tool process runs in (the
//! verdict comes from starting that very sandbox, so it is the one calls reach), Landlock, the
//! interpreters of the execution kinds, formatters, language servers and the reference tools
//! of the benchmarks.

use std::io::Write;

use serde::Serialize;

use crate::cli::DoctorArgs;
use crate::exit::Code;

#[derive(Serialize)]
struct Report {
    sandbox: Sandbox,
    landlock: Landlock,
    programs: Vec<Program>,
}

/// Whether tool processes are confined here.
#[derive(Serialize)]
struct Sandbox {
    confined: bool,
    detail: String,
}

#[derive(Serialize)]
struct Landlock {
    abi: Option<i32>,
    detail: String,
}

#[derive(Serialize)]
struct Program {
    name: &'static str,
    purpose: &'static str,
    path: Option<String>,
}

/// Programs Jig uses when present.
const PROGRAMS: [(&str, &str); 13] = [
    ("python3", "kind: python"),
    ("node", "kind: node"),
    ("php", "kind: php"),
    ("git", "reference for git_status benchmarks"),
    ("rustfmt", "format_on_save for Rust"),
    ("gofmt", "format_on_save for Go"),
    ("black", "format_on_save for Python"),
    ("prettier", "format_on_save for JavaScript/TypeScript"),
    ("pylsp", "ast_external provider"),
    ("rust-analyzer", "ast_external provider"),
    ("rg", "grep benchmark reference"),
    ("fdfind", "fs_list benchmark reference"),
    ("fd", "fs_list benchmark reference"),
];

pub fn run(args: &DoctorArgs, out: &mut impl Write) -> anyhow::Result<Code> {
    let sandbox = match jig_exec::confine::sandbox_status() {
        Ok(detail) => Sandbox { confined: true, detail },
        Err(why) => Sandbox {
            confined: false,
            detail: format!(
                "{why}: calls that start a process are refused unless the policy sets `sandbox.enforce: best_effort` (then they run unconfined)"
            ),
        },
    };
    let landlock = match jig_exec::confine::landlock_abi() {
        Ok(abi) => Landlock {
            abi: Some(abi),
            detail: if abi >= 6 {
                format!("ABI {abi}: scopes keep signals and abstract sockets inside the sandbox")
            } else {
                format!(
                    "ABI {abi}: no scopes (ABI 6); the PID and network namespaces still isolate"
                )
            },
        },
        Err(why) => Landlock { abi: None, detail: why },
    };
    let programs: Vec<Program> = PROGRAMS
        .iter()
        .map(|(name, purpose)| Program {
            name,
            purpose,
            path: jig_exec::process::find_program(name).map(|p| p.display().to_string()),
        })
        .collect();
    let confined = sandbox.confined;
    let report = Report { sandbox, landlock, programs };
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
    } else {
        writeln!(out, "sandbox   {}", report.sandbox.detail)?;
        writeln!(out, "landlock  {}", report.landlock.detail)?;
        for program in &report.programs {
            let found = program.path.as_deref().unwrap_or("not found");
            writeln!(out, "{:<14}{:<44}{found}", program.name, program.purpose)?;
        }
    }
    Ok(if confined { Code::Ok } else { Code::Failed })
}
