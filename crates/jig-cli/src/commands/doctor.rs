//! `jig doctor`: what this machine offers Jig — Landlock (which enforces tools' caps), the
//! interpreters of the execution kinds, formatters, language servers and the reference tools
//! of the benchmarks.

use std::io::Write;

use serde::Serialize;

use crate::cli::DoctorArgs;
use crate::exit::Code;

#[derive(Serialize)]
struct Report {
    landlock: Landlock,
    programs: Vec<Program>,
}

#[derive(Serialize)]
struct Landlock {
    available: bool,
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
    let landlock = match jig_tools::confine::landlock_abi() {
        Ok(abi) => Landlock {
            available: true,
            abi: Some(abi),
            detail: format!("Landlock ABI {abi}: tools' caps are enforced by the kernel"),
        },
        Err(why) => Landlock {
            available: false,
            abi: None,
            detail: format!(
                "{why}: calls of tools with caps are refused unless the policy sets `sandbox.enforce: best_effort`"
            ),
        },
    };
    let programs: Vec<Program> = PROGRAMS
        .iter()
        .map(|(name, purpose)| Program {
            name,
            purpose,
            path: jig_tools::process::find_program(name).map(|p| p.display().to_string()),
        })
        .collect();
    let available = landlock.available;
    let report = Report { landlock, programs };
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &report)?;
        writeln!(out)?;
    } else {
        writeln!(out, "landlock  {}", report.landlock.detail)?;
        for program in &report.programs {
            let found = program.path.as_deref().unwrap_or("not found");
            writeln!(out, "{:<14}{:<44}{found}", program.name, program.purpose)?;
        }
    }
    Ok(if available { Code::Ok } else { Code::Failed })
}
