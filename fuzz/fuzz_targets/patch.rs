//! The patch applier of `file_patch`. Oracle: for any two texts, a unified diff between them
//! (written here from a longest-common-subsequence edit script, independently of the parser),
//! parsed and applied to the first, gives the second exactly — final newline included — at every
//! context radius. Any other input (a diff and a text made of arbitrary bytes) is refused or
//! applied without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Lines a diff parser can mistake for its own syntax, so the fuzzer combines them.
const LINES: [&str; 12] =
    ["a", "b", "c", "", " ", "-- x", "++ y", "@@ -1 +1 @@", "\\ n", "--- a/x", "+++ b/x", "a b"];

fn text(bytes: &[u8], newline_at_end: bool) -> String {
    let mut text: String =
        bytes.iter().map(|b| LINES[usize::from(*b) % LINES.len()]).collect::<Vec<_>>().join("\n");
    if newline_at_end && !bytes.is_empty() {
        text.push('\n');
    }
    text
}

/// One line of an edit script: kept, removed or added.
#[derive(Clone, Copy, PartialEq)]
enum Edit<'a> {
    Keep(&'a str),
    Remove(&'a str),
    Add(&'a str),
}

/// A shortest edit script by longest common subsequence (quadratic; inputs are small).
fn script<'a>(old: &[&'a str], new: &[&'a str]) -> Vec<Edit<'a>> {
    let (n, m) = (old.len(), new.len());
    let mut lcs = vec![vec![0u16; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut edits) = (0, 0, Vec::new());
    while i < n || j < m {
        if i < n && j < m && old[i] == new[j] {
            edits.push(Edit::Keep(old[i]));
            (i, j) = (i + 1, j + 1);
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            edits.push(Edit::Add(new[j]));
            j += 1;
        } else {
            edits.push(Edit::Remove(old[i]));
            i += 1;
        }
    }
    edits
}

/// `diff -u` of `old` and `new` with `radius` lines of context, written independently of the
/// parser under test.
fn unified(old: &str, new: &str, radius: usize) -> String {
    let split =
        |text: &str| -> Vec<String> { text.split_inclusive('\n').map(str::to_owned).collect() };
    let (old, new) = (split(old), split(new));
    let old: Vec<&str> = old.iter().map(String::as_str).collect();
    let new: Vec<&str> = new.iter().map(String::as_str).collect();
    let edits = script(&old, &new);
    // Which edits a hunk shows: every change and `radius` kept lines either side.
    let near_change = |at: usize| {
        let from = at.saturating_sub(radius);
        let to = (at + radius + 1).min(edits.len());
        edits[from..to].iter().any(|e| !matches!(e, Edit::Keep(_)))
    };
    let mut out = String::from("--- a/x\n+++ b/x\n");
    let (mut old_line, mut new_line, mut at) = (0, 0, 0);
    while at < edits.len() {
        if !near_change(at) {
            if let Edit::Keep(_) = edits[at] {
                (old_line, new_line) = (old_line + 1, new_line + 1);
            }
            at += 1;
            continue;
        }
        let start = at;
        while at < edits.len() && near_change(at) {
            at += 1;
        }
        let hunk = &edits[start..at];
        let old_len = hunk.iter().filter(|e| !matches!(e, Edit::Add(_))).count();
        let new_len = hunk.iter().filter(|e| !matches!(e, Edit::Remove(_))).count();
        let range = |line: usize, len: usize| {
            if len == 0 { format!("{line},0") } else { format!("{},{len}", line + 1) }
        };
        out += &format!("@@ -{} +{} @@\n", range(old_line, old_len), range(new_line, new_len));
        for edit in hunk {
            let (sign, line) = match edit {
                Edit::Keep(line) => (' ', line),
                Edit::Remove(line) => ('-', line),
                Edit::Add(line) => ('+', line),
            };
            match line.strip_suffix('\n') {
                Some(line) => out += &format!("{sign}{line}\n"),
                None => out += &format!("{sign}{line}\n\\ No newline at end of file\n"),
            }
        }
        (old_line, new_line) = (old_line + old_len, new_line + new_len);
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    if mode & 1 == 1 {
        // Arbitrary bytes: no panic, and a refusal is an error value.
        let text = String::from_utf8_lossy(rest);
        let (diff, file) = text.split_at(text.find('\u{0}').unwrap_or(text.len()));
        if let Ok(hunks) = jig_patch::parse(diff) {
            let _ = jig_patch::apply(file, &hunks);
        }
        return;
    }
    let rest = &rest[..rest.len().min(400)];
    let split = rest.iter().position(|b| *b == 0xff).unwrap_or(rest.len());
    let old = text(&rest[..split], mode & 2 == 2);
    let new = text(rest.get(split + 1..).unwrap_or_default(), mode & 4 == 4);
    if old == new {
        return;
    }
    let radius = usize::from(mode >> 3) % 4;
    let diff = unified(&old, &new, radius);
    let hunks = jig_patch::parse(&diff)
        .unwrap_or_else(|e| panic!("{diff:?} is refused: {e}\nold {old:?}\nnew {new:?}"));
    let patched = jig_patch::apply(&old, &hunks)
        .unwrap_or_else(|e| panic!("{diff:?} does not apply: {e}\nold {old:?}\nnew {new:?}"));
    assert_eq!(patched, new, "diff {diff:?} applied to {old:?}");
});
