//! `proc_list`: the process table (sysinfo), filtered, busiest first, with secrets in command
//! lines redacted.

use std::ffi::OsString;

use jig_model::ErrorCode;
use jig_policy::redact::{MARK, is_secret_key, redact_text};
use regex::RegexBuilder;
use serde_json::json;
use sysinfo::{ProcessRefreshKind, ProcessesToUpdate, System, UpdateKind};

use super::call::Call;
use jig_exec::{Output, ToolError};

pub(super) fn list(call: &Call) -> Result<Output, ToolError> {
    let limit = call.count("limit", 50);
    let filter = match call.opt_str("filter") {
        Some(pattern) => {
            Some(RegexBuilder::new(pattern).size_limit(1 << 20).build().map_err(|e| {
                ToolError::new(ErrorCode::ValidationFail, format!("argument `filter`: {e}"))
                    .with_details(json!({ "argument": "filter" }))
            })?)
        }
        None => None,
    };
    let mut system = System::new().map_err(|e| {
        ToolError::new(ErrorCode::Internal, format!("cannot read the process table: {e}"))
    })?;
    let kind =
        ProcessRefreshKind::nothing().with_cpu().with_memory().with_cmd(UpdateKind::OnlyIfNotSet);
    // CPU usage is a rate: two samples, the minimum interval apart.
    system.refresh_processes_specifics(ProcessesToUpdate::All, true, kind);
    std::thread::sleep(sysinfo::MINIMUM_CPU_UPDATE_INTERVAL);
    call.check_time()?;
    system.refresh_processes_specifics(ProcessesToUpdate::All, true, kind);
    let mut rows: Vec<(f32, u32, String, f64)> = system
        .processes()
        .values()
        .filter(|p| p.thread_kind().is_none())
        .filter_map(|process| {
            let cmd = if process.cmd().is_empty() {
                format!("[{}]", process.name().to_string_lossy())
            } else {
                command_line(process.cmd())
            };
            if filter.as_ref().is_some_and(|f| !f.is_match(&cmd)) {
                return None;
            }
            let mem_mb = process.memory() as f64 / (1024.0 * 1024.0);
            Some((process.cpu_usage(), process.pid().as_u32(), cmd, mem_mb))
        })
        .collect();
    rows.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let matched = rows.len();
    let processes: Vec<_> = rows
        .into_iter()
        .take(limit)
        .map(|(cpu, pid, cmd, mem_mb)| {
            json!({ "pid": pid, "cmd": cmd, "cpu": round(f64::from(cpu)), "mem_mb": round(mem_mb) })
        })
        .collect();
    Ok(Output::data(
        json!({ "processes": processes, "matched": matched, "truncated": matched > limit }),
    ))
}

/// The words joined, with secrets replaced: known token formats, `name=value` where the name
/// is secret-like, and the word after a secret-like flag (`--password hunter2`).
fn command_line(words: &[OsString]) -> String {
    let mut out = Vec::with_capacity(words.len());
    let mut hide_next = false;
    for word in words {
        let word = word.to_string_lossy();
        if std::mem::take(&mut hide_next) {
            out.push(MARK.to_owned());
            continue;
        }
        let bare = word.trim_start_matches('-');
        if let Some((name, _)) = bare.split_once('=') {
            if is_secret_key(name) {
                let prefix = &word[..word.len() - bare.len() + name.len() + 1];
                out.push(format!("{prefix}{MARK}"));
                continue;
            }
        } else if word.starts_with('-') && is_secret_key(bare) {
            hide_next = true;
        }
        out.push(redact_text(&word).into_owned());
    }
    out.iter().map(|w| quoted(w)).collect::<Vec<_>>().join(" ")
}

/// A word with spaces or quotes in it, single-quoted so the line reads as the argv it was.
fn quoted(word: &str) -> std::borrow::Cow<'_, str> {
    if word.is_empty() || word.contains([' ', '\t', '\'', '"']) {
        format!("'{}'", word.replace('\'', r"'\''")).into()
    } else {
        word.into()
    }
}

fn round(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_in_command_lines_are_hidden() {
        let words: Vec<OsString> = [
            "deploy",
            "--token",
            "abc123secret",
            "--api-key=zzz999",
            "DB_PASSWORD=hunter22",
            "plain",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        let line = command_line(&words);
        assert_eq!(
            line,
            "deploy --token [REDACTED] --api-key=[REDACTED] DB_PASSWORD=[REDACTED] plain"
        );
    }
}
