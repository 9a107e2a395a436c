//! Unified diffs (`diff -u`, `git diff`): parsing one file's hunks and applying them exactly.
//!
//! A hunk applies where its context and removed lines match the file line for line — at the
//! line its header names, or, when earlier edits moved things, at the nearest place after the
//! previous hunk. Nothing is fuzzed: a hunk whose context is not in the file refuses the whole
//! patch, naming the hunk and the first line that differs.
//!
//! A crate of its own, with no dependencies, so the fuzz target that checks it (`fuzz/`) builds
//! without the built-ins.

use std::fmt;

/// One hunk: the lines it expects and the lines it leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// 1-based line of the old file the hunk starts at (0 for an insertion into an empty file).
    pub old_start: usize,
    /// The lines it expects (context and removed), without their newlines.
    pub old: Vec<String>,
    /// The lines it leaves (context and added).
    pub new: Vec<String>,
    /// `\ No newline at end of file` after the old side's last line.
    pub old_no_eol: bool,
    /// Likewise for the new side.
    pub new_no_eol: bool,
}

/// Why a patch was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchError {
    /// The text is not a unified diff of one file.
    Malformed(String),
    /// A hunk's context is not in the file.
    Mismatch {
        /// Which hunk, 1-based.
        hunk: usize,
        /// The 1-based line of the file where it differs.
        line: usize,
        /// What the hunk expects there.
        expected: String,
        /// What the file has there (`None` past its end).
        found: Option<String>,
    },
}

impl std::error::Error for PatchError {}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed(why) => write!(f, "the patch is not a unified diff: {why}"),
            Self::Mismatch { hunk, line, expected, found: Some(found) } => write!(
                f,
                "hunk {hunk} does not apply: line {line} is {found:?}, the patch expects {expected:?}"
            ),
            Self::Mismatch { hunk, line, expected, found: None } => write!(
                f,
                "hunk {hunk} does not apply: the file ends before line {line} ({expected:?} expected)"
            ),
        }
    }
}

/// The hunks of a diff of one file; a diff of several files is refused.
pub fn parse(diff: &str) -> Result<Vec<Hunk>, PatchError> {
    let mut hunks = Vec::new();
    let mut files = 0;
    let mut lines = diff.lines().peekable();
    while let Some(line) = lines.next() {
        if line.starts_with("--- ") {
            files += 1;
            if files > 1 {
                return Err(PatchError::Malformed(
                    "it changes more than one file; `file_patch` applies a diff of one file"
                        .to_owned(),
                ));
            }
            continue;
        }
        let Some(header) = line.strip_prefix("@@ ") else { continue };
        let (old_start, old_len, new_len) = hunk_header(header)
            .ok_or_else(|| PatchError::Malformed(format!("bad hunk header `{line}`")))?;
        let mut hunk = Hunk {
            old_start,
            old: Vec::new(),
            new: Vec::new(),
            old_no_eol: false,
            new_no_eol: false,
        };
        let mut last_side = ' ';
        while hunk.old.len() < old_len
            || hunk.new.len() < new_len
            || lines.peek().is_some_and(|l| l.starts_with('\\'))
        {
            let Some(body) = lines.next() else {
                return Err(PatchError::Malformed(format!(
                    "hunk {} ends early: its header promises {old_len} old and {new_len} new lines",
                    hunks.len() + 1
                )));
            };
            // The marker is the first character, whatever its width (a line may start with any
            // character, and a bad one is refused below, not split inside).
            let (marker, text) = body.split_at(body.chars().next().map_or(0, char::len_utf8));
            match marker {
                " " | "" => {
                    hunk.old.push(text.to_owned());
                    hunk.new.push(text.to_owned());
                }
                "-" => hunk.old.push(text.to_owned()),
                "+" => hunk.new.push(text.to_owned()),
                "\\" => {
                    match last_side {
                        '-' => hunk.old_no_eol = true,
                        '+' => hunk.new_no_eol = true,
                        _ => {
                            hunk.old_no_eol = true;
                            hunk.new_no_eol = true;
                        }
                    }
                    continue;
                }
                _ => {
                    return Err(PatchError::Malformed(format!(
                        "hunk {}: line {body:?} starts with neither ' ', '-' nor '+'",
                        hunks.len() + 1
                    )));
                }
            }
            last_side = marker.chars().next().unwrap_or(' ');
            if hunk.old.len() > old_len || hunk.new.len() > new_len {
                return Err(PatchError::Malformed(format!(
                    "hunk {} has more lines than its header says",
                    hunks.len() + 1
                )));
            }
        }
        hunks.push(hunk);
    }
    if hunks.is_empty() {
        return Err(PatchError::Malformed("it has no `@@` hunk".to_owned()));
    }
    Ok(hunks)
}

/// `-a,b +c,d @@…` → (a, b, d); a missing count is 1.
fn hunk_header(header: &str) -> Option<(usize, usize, usize)> {
    let (ranges, _) = header.split_once(" @@")?;
    let (old, new) = ranges.split_once(' ')?;
    let range = |text: &str, sign: char| -> Option<(usize, usize)> {
        let text = text.strip_prefix(sign)?;
        match text.split_once(',') {
            Some((start, len)) => Some((start.parse().ok()?, len.parse().ok()?)),
            None => Some((text.parse().ok()?, 1)),
        }
    };
    let (old_start, old_len) = range(old, '-')?;
    let (_, new_len) = range(new, '+')?;
    Some((old_start, old_len, new_len))
}

/// Apply `hunks` to `text`, all or nothing.
pub fn apply(text: &str, hunks: &[Hunk]) -> Result<String, PatchError> {
    let mut eol = text.is_empty() || text.ends_with('\n');
    let mut lines: Vec<&str> = text.split('\n').collect();
    if text.ends_with('\n') || text.is_empty() {
        lines.pop();
    }
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    let mut cursor = 0; // next unconsumed line of the old file
    let mut drift: isize = 0; // how far from their headers' lines earlier hunks applied
    for (index, hunk) in hunks.iter().enumerate() {
        // An insertion (no old lines) goes after its header's line; anything else at it.
        let anchor =
            if hunk.old.is_empty() { hunk.old_start } else { hunk.old_start.saturating_sub(1) };
        let wanted =
            usize::try_from((anchor as isize + drift).max(cursor as isize)).unwrap_or(cursor);
        let at = find(&lines, &hunk.old, wanted, cursor)
            .ok_or_else(|| mismatch(&lines, hunk, index + 1, wanted))?;
        out.extend_from_slice(&lines[cursor..at]);
        out.extend(hunk.new.iter().map(String::as_str));
        cursor = at + hunk.old.len();
        drift = at as isize - anchor as isize;
        if cursor == lines.len() {
            if hunk.new_no_eol {
                eol = false;
            } else if hunk.old_no_eol || !hunk.new.is_empty() {
                eol = true;
            }
        }
    }
    out.extend_from_slice(&lines[cursor..]);
    let mut result = out.join("\n");
    if eol && !out.is_empty() {
        result.push('\n');
    }
    Ok(result)
}

/// Where `old` matches `lines` at or after `floor`, nearest to `wanted` first.
fn find(lines: &[&str], old: &[String], wanted: usize, floor: usize) -> Option<usize> {
    let fits = |at: usize| {
        at + old.len() <= lines.len()
            && lines[at..at + old.len()].iter().zip(old).all(|(a, b)| *a == b)
    };
    if fits(wanted) {
        return Some(wanted);
    }
    let last = lines.len().checked_sub(old.len())?;
    (1..=lines.len()).find_map(|distance| {
        let after = wanted + distance;
        let before = wanted.checked_sub(distance).filter(|b| *b >= floor);
        if after <= last && fits(after) { Some(after) } else { before.filter(|b| fits(*b)) }
    })
}

/// The first differing line at the place the hunk was meant to go.
fn mismatch(lines: &[&str], hunk: &Hunk, number: usize, wanted: usize) -> PatchError {
    for (i, expected) in hunk.old.iter().enumerate() {
        let found = lines.get(wanted + i);
        if found.is_none_or(|f| f != expected) {
            return PatchError::Mismatch {
                hunk: number,
                line: wanted + i + 1,
                expected: expected.clone(),
                found: found.map(|f| (*f).to_owned()),
            };
        }
    }
    PatchError::Mismatch { hunk: number, line: wanted + 1, expected: String::new(), found: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch(text: &str, diff: &str) -> Result<String, PatchError> {
        apply(text, &parse(diff)?)
    }

    #[test]
    fn hunks_apply_in_order_with_offsets() {
        let text = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let diff =
            "--- a/x\n+++ b/x\n@@ -1,3 +1,4 @@\n a\n+a2\n b\n c\n@@ -6,3 +7,2 @@\n f\n-g\n h\n";
        assert_eq!(patch(text, diff).expect("applies"), "a\na2\nb\nc\nd\ne\nf\nh\n");
    }

    #[test]
    fn a_hunk_finds_its_context_when_lines_moved() {
        let text = "new first\na\nb\nc\n";
        let diff = "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n";
        assert_eq!(patch(text, diff).expect("applies"), "new first\na\nB\nc\n");
    }

    #[test]
    fn mismatched_context_is_refused_with_the_line() {
        let error = patch("a\nx\nc\n", "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n").expect_err("refused");
        assert_eq!(
            error,
            PatchError::Mismatch {
                hunk: 1,
                line: 2,
                expected: "b".into(),
                found: Some("x".into())
            }
        );
    }

    #[test]
    fn missing_final_newline_is_honoured_both_ways() {
        let diff = "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n";
        assert_eq!(patch("a\nb", diff).expect("adds newline"), "a\nb\n");
        let diff = "@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n";
        assert_eq!(patch("a\nb\n", diff).expect("drops newline"), "a\nb");
    }

    #[test]
    fn malformed_diffs_are_refused() {
        assert!(matches!(parse("just text"), Err(PatchError::Malformed(_))));
        assert!(matches!(parse("@@ -1,3 +1,3 @@\n a\n"), Err(PatchError::Malformed(_))));
        let two = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n";
        assert!(matches!(parse(two), Err(PatchError::Malformed(_))));
        assert!(matches!(parse("@@ -1,1 +1,1 @@\n*a\n"), Err(PatchError::Malformed(_))));
        // Found by the fuzz target: a multi-byte first character used to panic.
        assert!(matches!(parse("@@ -1 +1 @@\n\u{fffd}b+c\n"), Err(PatchError::Malformed(_))));
    }

    #[test]
    fn insertion_into_an_empty_file() {
        assert_eq!(patch("", "@@ -0,0 +1,2 @@\n+a\n+b\n").expect("applies"), "a\nb\n");
    }
}
