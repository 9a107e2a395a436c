//! The repository's own configuration, read before a `git` command runs: keys that make git run
//! a program (aliases starting with `!`, external diff and text conversion, filter and merge
//! drivers, editors, pagers, ssh and credential helpers, hooks, includes that could bring any of
//! these) are refused. Command-line `-c` guards cover the keys git lets the command line
//! override; this covers those it does not (an alias, a driver named by `.gitattributes`).
//! Inside the sandbox `.git/config` is read-only, so what was checked is what git reads.

use std::path::Path;

use jig_model::ErrorCode;
use serde_json::json;

use jig_exec::ToolError;

/// The rule id.
pub(crate) const RULE: &str = "sec.git.config";

/// Whether the (lower-cased) key `name` with `value` can make git run a program.
fn runs_code(name: &str, value: &str) -> bool {
    let parts: Vec<&str> = name.split('.').collect();
    let (section, last) = (parts[0], parts[parts.len() - 1]);
    match section {
        "alias" => value.trim_start().starts_with('!'),
        "include" | "includeif" => true,
        "filter" => matches!(last, "clean" | "smudge" | "process"),
        "diff" => matches!(last, "external" | "textconv" | "command"),
        "merge" => last == "driver",
        "core" => matches!(
            last,
            "sshcommand" | "editor" | "pager" | "fsmonitor" | "hookspath" | "gitproxy" | "askpass"
        ),
        "credential" => last == "helper",
        "gpg" => last == "program",
        "sequence" => last == "editor",
        "pager" | "difftool" | "mergetool" => true,
        "uploadpack" => last == "packobjectshook",
        "remote" => matches!(last, "uploadpack" | "receivepack" | "vcs"),
        _ => false,
    }
}

/// Refuse to run git in `root` when the repository's configuration can run a program.
pub(crate) fn check(root: &Path) -> Result<(), ToolError> {
    let file = root.join(".git").join("config");
    if !file.is_file() {
        return Ok(());
    }
    let refused = |what: String| {
        ToolError::new(ErrorCode::Policy, what).with_details(json!({ "rule": RULE }))
    };
    let config = git2::Config::open(&file)
        .map_err(|e| refused(format!("`.git/config` cannot be read: {}", e.message())))?;
    let mut entries =
        config.entries(None).map_err(|e| refused(format!("`.git/config`: {}", e.message())))?;
    while let Some(entry) = entries.next() {
        let Ok(entry) = entry else { continue };
        let name = entry.name().unwrap_or_default().to_ascii_lowercase();
        let value = entry.value().unwrap_or_default();
        if runs_code(&name, value) {
            return Err(refused(format!(
                "the repository's `.git/config` sets `{name}`, which makes git run a program; \
                 git commands are refused in this repository until it is removed"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::runs_code;

    #[test]
    fn code_running_keys_are_recognised() {
        for (name, value) in [
            ("alias.st", "!sh -c id"),
            ("diff.external", "x"),
            ("diff.foo.textconv", "x"),
            ("filter.lfs.smudge", "x"),
            ("core.sshcommand", "x"),
            ("include.path", "x"),
            ("includeif.gitdir:/x.path", "x"),
            ("pager.log", "x"),
        ] {
            assert!(runs_code(name, value), "{name}");
        }
        for (name, value) in [("alias.st", "status"), ("user.name", "x"), ("core.bare", "false")] {
            assert!(!runs_code(name, value), "{name}");
        }
    }
}
