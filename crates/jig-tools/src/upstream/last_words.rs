//! What a server that died said, for its error: the lines that name the failure, not merely
//! the last one (Node prints its version after the error; Python its traceback's frames
//! before), and, when it could not read its own program, the grant that would let it.
//!
//! The server is a sandboxed process: a file outside its grants does not exist for it, so
//! "cannot find module '/home/…/node_modules/…'" is almost always a missing grant, not a
//! missing file. The hint names the directory to grant and the field that grants it.

use std::path::Path;
use std::sync::OnceLock;

use regex::Regex;

/// At most this many lines of the failure go into the message (all lines go in the details).
const MOST_LINES: usize = 4;
/// And at most this many characters.
const MOST_CHARS: usize = 600;

/// The message's part for `tail` (the last stderr lines, oldest first) of a server run in the
/// workspace `root`: the lines that say what failed, then the grant that is missing, if any.
pub(super) fn explain(tail: &[String], root: &Path) -> Option<String> {
    let failing: Vec<&str> = tail
        .iter()
        .map(String::as_str)
        .filter(|line| says_failure(line) && !is_stack_frame(line))
        .collect();
    let chosen: Vec<&str> = if failing.is_empty() {
        tail.iter().rev().take(MOST_LINES).rev().map(String::as_str).collect()
    } else {
        failing.into_iter().take(MOST_LINES).collect()
    };
    if chosen.is_empty() {
        return None;
    }
    let mut said = chosen.iter().map(|l| l.trim()).collect::<Vec<_>>().join(" | ");
    if said.chars().count() > MOST_CHARS {
        said = said.chars().take(MOST_CHARS).collect::<String>() + "…";
    }
    match chosen.iter().find_map(|line| unreadable_path(line)) {
        Some(path) => Some(format!("{said}; {}", grant_hint(Path::new(&path), root))),
        None => Some(said),
    }
}

/// A line that names an error (rather than a banner, a version or a frame).
fn says_failure(line: &str) -> bool {
    static FAILURE: OnceLock<Regex> = OnceLock::new();
    FAILURE
        .get_or_init(|| {
            Regex::new(r"(?i)\b(error|errno|cannot|can't|could not|not found|no such file|permission denied|denied|traceback|exception|fatal|panicked)\b")
                .unwrap_or_else(|e| panic!("{e}"))
        })
        .is_match(line)
}

/// `    at Module._load (node:internal/…)`, `  File "x.py", line 3, in <module>`.
fn is_stack_frame(line: &str) -> bool {
    let trimmed = line.trim_start();
    line.starts_with(char::is_whitespace)
        && (trimmed.starts_with("at ") || trimmed.starts_with("File \""))
}

/// The absolute path a line says could not be found or opened.
fn unreadable_path(line: &str) -> Option<String> {
    static MISSING: OnceLock<Regex> = OnceLock::new();
    let missing = MISSING.get_or_init(|| {
        Regex::new(r#"(?i)(?:cannot find module|can't open file|no such file or directory|enoent|permission denied|eacces)[^'"]*['"](/[^'"]+)['"]|['"](/[^'"]+)['"][^'"]*(?:no such file|errno 2|enoent|permission denied)"#)
            .unwrap_or_else(|e| panic!("{e}"))
    });
    let found = missing.captures(line)?;
    found.get(1).or_else(|| found.get(2)).map(|m| m.as_str().to_owned())
}

/// Which grant would let the server read `path`: a workspace path is `grants.read`; anything
/// else is where the server is installed, `grants.programs` (its package directory: the one
/// holding `node_modules` or `site-packages`, else the file's own directory).
fn grant_hint(path: &Path, root: &Path) -> String {
    if let Ok(inside) = path.strip_prefix(root) {
        let shown = inside.display();
        return format!(
            "the server cannot read `{shown}` in the workspace: grant it with `grants.read: [\"{shown}\"]` in its `mcp_servers` entry"
        );
    }
    let install = path
        .ancestors()
        .find(|dir| dir.file_name().is_some_and(|n| n == "node_modules" || n == "site-packages"))
        .and_then(Path::parent)
        .or_else(|| path.parent())
        .unwrap_or(path);
    format!(
        "the server cannot read `{}`, outside the workspace: grant where it is installed with `grants.programs: [\"{}\"]` in its `mcp_servers` entry",
        path.display(),
        install.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_owned).collect()
    }

    #[test]
    fn nodes_missing_module_names_the_error_and_the_grant_not_the_version() {
        let tail = lines(
            "node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\n\
             Error: Cannot find module '/opt/mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js'\n\
             \x20   at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)\n\
             \x20 code: 'MODULE_NOT_FOUND',\n  requireStack: []\n}\n\nNode.js v20.20.2",
        );
        let said = explain(&tail, Path::new("/work/project")).expect("said");
        assert!(said.contains("Cannot find module"), "{said}");
        assert!(!said.contains("Node.js v20"), "{said}");
        assert!(!said.contains("_resolveFilename"), "{said}");
        assert!(said.contains("grants.programs: [\"/opt/mcp\"]"), "{said}");
    }

    #[test]
    fn pythons_missing_script_in_the_workspace_is_a_read_grant() {
        let tail = lines(
            "/usr/bin/python3: can't open file '/work/project/srv/server.py': [Errno 2] No such file or directory",
        );
        let said = explain(&tail, Path::new("/work/project")).expect("said");
        assert!(said.contains("grants.read: [\"srv/server.py\"]"), "{said}");
    }

    #[test]
    fn without_an_error_line_the_last_lines_are_said_and_bounded() {
        let tail: Vec<String> = (0..10).map(|i| format!("line {i} {}", "x".repeat(300))).collect();
        let said = explain(&tail, Path::new("/w")).expect("said");
        assert!(said.contains("line 6") && !said.contains("line 5"), "{said}");
        assert!(said.chars().count() <= MOST_CHARS + 1, "{}", said.len());
        assert!(explain(&[], Path::new("/w")).is_none());
    }
}
