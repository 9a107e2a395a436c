//! Diagnostics for a terminal: a header, the offending source line with a marker, and the hint.
//!
//! ```text
//! error[tool.id]: `id` "Acme.Deploy" does not match the pattern `^[a-z]…`
//!   --> tools/deploy.tool.yaml:2:5
//!    |
//!  2 | id: Acme.Deploy
//!    |     ^^^^^^^^^^^
//!    = hint: tool ids are dotted lowercase segments, e.g. `acme.deploy`
//! ```

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use jig_model::{Diagnostic, Severity};

use crate::vfs::{DiskFs, STD_ROOT, Vfs as _};
use crate::yaml::Caps;

/// Render `diagnostics` (file names relative to `root`) as text, with ANSI colours when `color`.
pub fn render(diagnostics: &[Diagnostic], root: &Path, color: bool) -> String {
    let paint = Paint { color };
    let mut sources: HashMap<String, Option<String>> = HashMap::new();
    let mut out = String::new();
    for diagnostic in diagnostics {
        let (label, tint) = match diagnostic.severity {
            Severity::Error => ("error", RED),
            Severity::Warning => ("warning", YELLOW),
        };
        let _ = writeln!(
            out,
            "{}: {}",
            paint.bold(tint, &format!("{label}[{}]", diagnostic.code)),
            paint.bold(WHITE, &diagnostic.message)
        );
        let gutter = diagnostic.line.map_or(1, |l| l.to_string().len());
        let pad = " ".repeat(gutter);
        if let Some(file) = &diagnostic.file {
            let location = match (diagnostic.line, diagnostic.column) {
                (Some(line), Some(column)) => format!("{file}:{line}:{column}"),
                (Some(line), None) => format!("{file}:{line}"),
                _ => file.clone(),
            };
            let _ = writeln!(out, "{pad}{} {location}", paint.bold(BLUE, "-->"));
            let source = sources.entry(file.clone()).or_insert_with(|| read_source(root, file));
            if let (Some(text), Some(line)) = (source.as_deref(), diagnostic.line)
                && let Some(code) = text.lines().nth(line.saturating_sub(1) as usize)
            {
                let column = diagnostic.column.unwrap_or(1).max(1) as usize;
                let bar = paint.bold(BLUE, "|");
                let _ = writeln!(out, "{pad} {bar}");
                let _ = writeln!(
                    out,
                    "{} {bar} {}",
                    paint.bold(BLUE, &line.to_string()),
                    code.trim_end()
                );
                let width = marker_width(code, column);
                let marker = format!("{}{}", " ".repeat(column - 1), "^".repeat(width));
                let _ = writeln!(out, "{pad} {bar} {}", paint.bold(tint, &marker));
            }
        }
        if let Some(hint) = &diagnostic.hint {
            let _ = writeln!(out, "{pad} {} {hint}", paint.bold(BLUE, "= hint:"));
        }
        out.push('\n');
    }
    out
}

fn read_source(root: &Path, file: &str) -> Option<String> {
    if file.starts_with(STD_ROOT) {
        return None;
    }
    // Through the loader's own read: a regular file, capped, and a FIFO or device named in a
    // diagnostic is skipped at once instead of holding the report up.
    let real = fs_err::canonicalize(root.join(file)).ok()?;
    DiskFs.read(&real, Caps::DEFAULT.max_bytes).ok().map(|t| t.to_string())
}

/// Underline the token at `column`: up to the next space (or the whole rest for a quoted
/// string), at least one character.
fn marker_width(line: &str, column: usize) -> usize {
    let rest: Vec<char> = line.chars().skip(column - 1).collect();
    let width = match rest.first() {
        Some(quote @ ('"' | '\'')) => {
            rest.iter().skip(1).position(|c| c == quote).map_or(rest.len(), |end| end + 2)
        }
        // A plain token ends at whitespace or at the flow punctuation around it.
        _ => rest
            .iter()
            .position(|c| c.is_whitespace() || matches!(c, ',' | ']' | '}'))
            .unwrap_or(rest.len()),
    };
    let width =
        rest.iter().take(width).collect::<String>().trim_end_matches([',', ':']).chars().count();
    width.clamp(1, 60)
}

const RED: &str = "31";
const YELLOW: &str = "33";
const BLUE: &str = "34";
const WHITE: &str = "39";

struct Paint {
    color: bool,
}

impl Paint {
    fn bold(&self, tint: &str, text: &str) -> String {
        if self.color { format!("\u{1b}[1;{tint}m{text}\u{1b}[0m") } else { text.to_owned() }
    }
}
