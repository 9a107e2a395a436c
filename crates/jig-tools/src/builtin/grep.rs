//! `grep`: ripgrep's own searcher over the workspace. Binary files are skipped (a NUL byte ends
//! the search of a file, as in rg), vendored trees too unless asked; each matching line is
//! reported once with the column of its first match.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use grep_matcher::Matcher as _;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::sinks::Bytes;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use ignore::WalkState;
use jig_model::ErrorCode;
use jig_model::prepared::PreparedJson;
use serde::Serialize;
use serde_json::json;

use super::call::Call;
use super::walk::{Batch, Scope};
use jig_exec::{Output, ToolError};

/// Longest snippet kept of a matching line, in bytes.
const SNIPPET: usize = 400;

/// The matching lines of one file, as the walker found them (in line order), each redacted.
struct FileMatches {
    /// The path relative to the root, redacted.
    file: String,
    lines: Vec<Line>,
}

/// One matching line: its number, the column of its first match, and its text (cut to
/// [`SNIPPET`] bytes, then redacted).
struct Line {
    line: u64,
    col: u64,
    snippet: String,
}

/// One match as the result reports it. Fields are declared in sorted order, so that serde's
/// compact JSON of the result is its canonical JSON (see [`PreparedJson`]).
#[derive(Serialize)]
struct Match<'a> {
    col: u64,
    file: &'a str,
    line: u64,
    snippet: &'a str,
}

/// The result as canonical JSON, `{"matches":[…],"truncated":…}` (its keys in sorted order),
/// written on two threads, each taking about half the matches: a large result is mostly
/// escaping text, and both cores are free once the walk is done.
fn canonical(files: &[FileMatches], truncated: bool) -> Result<PreparedJson, ToolError> {
    let failed = |e: serde_json::Error| {
        ToolError::new(ErrorCode::Internal, format!("writing the result of `grep`: {e}"))
    };
    let total: usize = files.iter().map(|f| f.lines.len()).sum();
    let mut seen = 0;
    let half = files
        .iter()
        .position(|f| {
            seen += f.lines.len();
            seen * 2 >= total
        })
        .map_or(files.len(), |i| i + 1);
    let (first, second) = files.split_at(half);
    let (first, second) = std::thread::scope(|scope| {
        let first = scope.spawn(|| elements(first));
        let second = elements(second);
        (first.join(), second)
    });
    let first = first
        .map_err(|_| ToolError::new(ErrorCode::Internal, "writing the result of `grep` failed"))?
        .map_err(failed)?;
    let second = second.map_err(failed)?;
    let mut text = String::with_capacity(first.len() + second.len() + 32);
    text.push_str("{\"matches\":[");
    text.push_str(&first);
    if !first.is_empty() && !second.is_empty() {
        text.push(',');
    }
    text.push_str(&second);
    text.push_str(if truncated { "],\"truncated\":true}" } else { "],\"truncated\":false}" });
    Ok(PreparedJson::from_canonical_text(text))
}

/// The matches of `files` as JSON array elements, comma-separated.
fn elements(files: &[FileMatches]) -> serde_json::Result<String> {
    let size: usize = files
        .iter()
        .flat_map(|f| f.lines.iter().map(|l| f.file.len() + l.snippet.len() + 48))
        .sum();
    let mut out = Vec::with_capacity(size);
    for (i, m) in files
        .iter()
        .flat_map(|f| {
            f.lines.iter().map(|l| Match {
                col: l.col,
                file: &f.file,
                line: l.line,
                snippet: &l.snippet,
            })
        })
        .enumerate()
    {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, &m)?;
    }
    // serde_json writes UTF-8.
    String::from_utf8(out).map_err(|e| serde::ser::Error::custom(e.to_string()))
}

pub(super) fn grep(call: &Call) -> Result<Output, ToolError> {
    let pattern = call.str("pattern")?;
    let max = call.count("max_results", 1000);
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(!call.bool("case_sensitive", true))
        // A line-oriented search may skip straight to candidate lines, as rg does.
        .line_terminator(Some(b'\n'))
        // Hostile patterns get a bounded automaton, not a memory blow-up.
        .size_limit(16 * 1024 * 1024)
        .dfa_size_limit(16 * 1024 * 1024)
        .build(pattern)
        .map_err(|e| {
            ToolError::new(ErrorCode::ValidationFail, format!("argument `pattern`: {e}"))
                .with_details(json!({ "argument": "pattern" }))
        })?;
    let scope = Scope::new(call, call.opt_str("glob"))?;
    let Some(start) = &scope.start else {
        return Ok(Output::data(json!({ "matches": [], "truncated": false })));
    };
    let found = Mutex::new(Vec::new());
    let (count, truncated) = (AtomicUsize::new(0), AtomicBool::new(false));
    let include_vendor = call.bool("include_vendor", false);
    scope.walker(start, call.bool("include_hidden", false), !include_vendor).run(|| {
        let mut batch = Batch::new(&found);
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(true)
            .build();
        let (scope, count, truncated, matcher) = (&scope, &count, &truncated, matcher.clone());
        Box::new(move |entry| {
            if truncated.load(Ordering::Relaxed) || call.should_stop() {
                return WalkState::Quit;
            }
            let Some(file) = entry.ok().and_then(|e| scope.selects(&e)) else {
                return WalkState::Continue;
            };
            // Opened beneath the root by the kernel: a file swapped for a symlink after the walk
            // saw it cannot lead out.
            let Ok(handle) = call.workspace.open_file(&file) else { return WalkState::Continue };
            let mut lines = Vec::new();
            let sink = Bytes(|line, bytes| {
                if count.fetch_add(1, Ordering::Relaxed) >= max {
                    truncated.store(true, Ordering::Relaxed);
                    return Ok(false);
                }
                lines.push(line_at(&matcher, line, bytes));
                Ok(true)
            });
            // Unreadable files are skipped, as rg skips them.
            let _ = searcher.search_file(&matcher, &handle, sink);
            if !lines.is_empty() {
                // What files say may hold secrets: redacted here, string by string, as the
                // engine redacts a result's value (no key of this result is a secret's name),
                // on the walker's threads.
                batch.local.push(FileMatches { file: redacted(file), lines });
            }
            WalkState::Continue
        })
    });
    call.check_time()?;
    let mut files = found.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    // Each file's lines are in order already: ordering the files orders the matches.
    files.sort_unstable_by(|a, b| a.file.cmp(&b.file));
    let mut left = max;
    files.retain_mut(|f| {
        f.lines.truncate(left);
        left -= f.lines.len();
        !f.lines.is_empty()
    });
    // Written once as canonical JSON: the engine hashes, stores and prints these bytes.
    Ok(Output::prepared(canonical(&files, truncated.load(Ordering::Relaxed))?))
}

fn redacted(text: String) -> String {
    match jig_policy::redact::redact_text(&text) {
        std::borrow::Cow::Owned(redacted) => redacted,
        std::borrow::Cow::Borrowed(_) => text,
    }
}

fn line_at(matcher: &RegexMatcher, line: u64, bytes: &[u8]) -> Line {
    let col = matcher.find(bytes).ok().flatten().map_or(1, |m| m.start() as u64 + 1);
    let text = String::from_utf8_lossy(bytes);
    let mut snippet = text.trim_end_matches(['\n', '\r']);
    if snippet.len() > SNIPPET {
        let mut cut = SNIPPET;
        while !snippet.is_char_boundary(cut) {
            cut -= 1;
        }
        snippet = &snippet[..cut];
    }
    Line { line, col, snippet: jig_policy::redact::redact_text(snippet).into_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(counts: &[usize]) -> Vec<FileMatches> {
        counts
            .iter()
            .enumerate()
            .map(|(i, n)| FileMatches {
                file: format!("dir/f\"{i}\".rs"),
                lines: (0..*n)
                    .map(|l| Line {
                        line: l as u64 + 1, col: 3, snippet: format!("a\tb \\ é {l}")
                    })
                    .collect(),
            })
            .collect()
    }

    /// However the matches split between the two writers, the text is the canonical JSON of
    /// the result (what the audit hashes).
    #[test]
    fn the_result_written_in_two_halves_is_its_canonical_json() {
        for counts in [&[][..], &[1], &[3], &[1, 1], &[5, 1, 2], &[0, 4, 0]] {
            for truncated in [false, true] {
                let files = files(counts);
                let text = canonical(&files, truncated).expect("written");
                let matches: Vec<serde_json::Value> = files
                    .iter()
                    .flat_map(|f| {
                        f.lines.iter().map(|l| {
                            json!({ "file": f.file, "line": l.line, "col": l.col, "snippet": l.snippet })
                        })
                    })
                    .collect();
                let value = json!({ "truncated": truncated, "matches": matches });
                assert_eq!(text.text(), jig_model::canonical::canonical_json(&value), "{counts:?}");
            }
        }
    }
}
