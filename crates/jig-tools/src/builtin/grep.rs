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
use serde::Serialize;
use serde_json::json;

use super::call::Call;
use super::walk::{Batch, Scope};
use jig_exec::{Output, ToolError};

/// Longest snippet kept of a matching line, in bytes.
const SNIPPET: usize = 400;

#[derive(Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
struct Match {
    file: String,
    line: u64,
    col: u64,
    snippet: String,
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
            let sink = Bytes(|line, bytes| {
                if count.fetch_add(1, Ordering::Relaxed) >= max {
                    truncated.store(true, Ordering::Relaxed);
                    return Ok(false);
                }
                batch.local.push(found_at(&matcher, &file, line, bytes));
                Ok(true)
            });
            // Unreadable files are skipped, as rg skips them.
            let _ = searcher.search_file(&matcher, &handle, sink);
            WalkState::Continue
        })
    });
    call.check_time()?;
    let mut matches = found.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    matches.sort_unstable();
    matches.truncate(max);
    let truncated = truncated.load(Ordering::Relaxed);
    Ok(Output::data(json!({ "matches": matches, "truncated": truncated })))
}

fn found_at(matcher: &RegexMatcher, file: &str, line: u64, bytes: &[u8]) -> Match {
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
    Match { file: file.to_owned(), line, col, snippet: snippet.to_owned() }
}
