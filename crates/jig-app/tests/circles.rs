//! No import circles between the modules of a crate (docs/architecture.md, "Size and
//! circles"). Two sibling modules that each name the other can be neither read nor changed
//! alone; a circle is a sign that something both need belongs in a third, lower module.
//!
//! The check reads every crate's sources as text: for each module, the paths it names
//! (`use` trees, and `crate::`, `super::`, `self::` paths in code) resolved to the module they
//! end in; then, at every level, the graph between the children of one module. A child naming
//! its ancestor (`super::Thing`) or a parent re-exporting its child is how Rust modules are
//! built, not a circle, and is not counted. Test modules (`#[cfg(test)]` onward, `tests/`
//! directories) are skipped: a test may reach anywhere.

#![allow(clippy::disallowed_methods, clippy::unwrap_used)] // a test reads the workspace's files as they are

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Circles there are and must be, as `crate: module, module, …` under their parent, with why.
/// Empty: none is needed today.
const ALLOWED: [&str; 0] = [];

type Module = Vec<String>;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The crates' directories that hold sources.
fn crates() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    found.push(root().join("src-tauri"));
    found.sort();
    found
}

/// Every module file under `src`, by its module path.
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<Module, PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "tests") {
                    walk(&path, src, out);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Module =
                relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            if parts == ["lib"] || parts == ["main"] {
                parts.clear();
            }
            if parts.last().is_some_and(|p| p == "tests" || p.ends_with("_tests")) {
                continue;
            }
            out.insert(parts, path);
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

/// `text` with comments, string and character literals blanked, up to its first test module.
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let rest = &chars[i..];
        if rest.starts_with(&['/', '/']) {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if rest.starts_with(&['/', '*']) {
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if chars[i] == 'r' && matches!(rest.get(1), Some('"' | '#')) && is_start(&chars, i) {
            let hashes = rest[1..].iter().take_while(|c| **c == '#').count();
            if rest.get(1 + hashes) != Some(&'"') {
                out.push(chars[i]);
                i += 1;
                continue;
            }
            i += 2 + hashes;
            while i < chars.len() {
                if chars[i] == '"'
                    && chars[i + 1..].iter().take(hashes).filter(|c| **c == '#').count() == hashes
                {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
            out.push_str("\"\"");
        } else if chars[i] == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if chars[i] == '\'' && (rest.get(2) == Some(&'\'') || rest.get(1) == Some(&'\\')) {
            // A character literal (a lifetime has no closing quote right after one character).
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

fn is_start(chars: &[char], i: usize) -> bool {
    i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// The paths a `use` tree (the text between `use` and `;`) names, each as its segments.
fn use_tree(tree: &str) -> Vec<Vec<String>> {
    fn expand(prefix: &[String], list: &str, out: &mut Vec<Vec<String>>) {
        let mut depth = 0;
        let mut start = 0;
        let mut items = Vec::new();
        for (i, c) in list.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(&list[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        items.push(&list[start..]);
        for item in items.into_iter().filter(|i| !i.is_empty()) {
            let segments = |text: &str| -> Vec<String> {
                let text = text.split(" as ").next().unwrap_or_default();
                text.split("::").filter(|s| !s.is_empty()).map(str::to_owned).collect()
            };
            let mut path = prefix.to_vec();
            match (item.find('{'), item.rfind('}')) {
                (Some(open), Some(close)) => {
                    path.extend(segments(&item[..open]));
                    expand(&path, &item[open + 1..close], out);
                }
                _ => {
                    path.extend(segments(item));
                    out.push(path);
                }
            }
        }
    }
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let tree = tree.replace(" ::", "::").replace(":: ", "::").replace(", ", ",");
    let tree = tree.replace("{ ", "{").replace(" }", "}");
    let mut out = Vec::new();
    expand(&[], &tree, &mut out);
    out
}

/// Every path `code` names that starts at `crate`, `super` or `self`.
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for (i, _) in code.match_indices("use ") {
        let boundary =
            code[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric() && c != '_');
        if let (true, Some(end)) = (boundary, code[i..].find(';')) {
            found.extend(use_tree(&code[i + 4..i + end]));
        }
    }
    let bytes = code.as_bytes();
    for start in ["crate::", "super::", "self::"] {
        for (i, _) in code.match_indices(start) {
            if i > 0
                && (bytes[i - 1].is_ascii_alphanumeric()
                    || bytes[i - 1] == b'_'
                    || bytes[i - 1] == b':')
            {
                continue;
            }
            let end = code[i..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| i + e);
            found.push(
                code[i..end].split("::").filter(|s| !s.is_empty()).map(str::to_owned).collect(),
            );
        }
    }
    found
}

/// The module `path`, named from module `me`, ends in (the longest prefix that is a module).
fn resolve(me: &Module, path: &[String], known: &BTreeMap<Module, PathBuf>) -> Option<Module> {
    let (mut base, rest) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("super" | "self") => (me.clone(), path),
        _ => return None,
    };
    let mut rest = rest;
    while let Some(first) = rest.first().map(String::as_str) {
        match first {
            "super" => {
                base.pop();
            }
            "self" => {}
            _ => break,
        }
        rest = &rest[1..];
    }
    for segment in rest {
        base.push(segment.clone());
        if !known.contains_key(&base) {
            base.pop();
            break;
        }
    }
    Some(base)
}

/// The strongly connected groups (of two or more) of `graph`.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Reachability is enough at these sizes (a few dozen siblings at most).
    let reaches = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(node) = todo.pop() {
            for next in graph.get(&node).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|k| (k, reaches(k))).collect();
    let mut groups: BTreeSet<Vec<String>> = BTreeSet::new();
    for (node, from) in &reach {
        let group: Vec<String> = from
            .iter()
            .filter(|other| reach.get(other).is_some_and(|back| back.contains(*node)))
            .cloned()
            .collect();
        if group.len() > 1 {
            groups.insert(group);
        }
    }
    groups.into_iter().collect()
}

/// Every circle in the crate at `dir`, as `crate: parent: a, b, …` and what names what.
fn circles_in(dir: &Path) -> Vec<(String, String)> {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let known = modules(&dir.join("src"));
    let mut edges: BTreeSet<(Module, Module)> = BTreeSet::new();
    for (me, file) in &known {
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        for path in paths(&code) {
            if let Some(target) = resolve(me, &path, &known).filter(|t| t != me) {
                edges.insert((me.clone(), target));
            }
        }
    }
    let parents: BTreeSet<Module> =
        known.keys().filter(|m| !m.is_empty()).map(|m| m[..m.len() - 1].to_vec()).collect();
    let mut found = Vec::new();
    for parent in parents {
        let child = |m: &Module| {
            (m.len() > parent.len() && m.starts_with(&parent)).then(|| m[parent.len()].clone())
        };
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, to) in &edges {
            if let (Some(a), Some(b)) = (child(from), child(to))
                && a != b
            {
                graph.entry(a).or_default().insert(b);
            }
        }
        for group in circles(&graph) {
            let at = if parent.is_empty() { "crate".to_owned() } else { parent.join("::") };
            let why: Vec<String> = edges
                .iter()
                .filter(|(f, t)| {
                    child(f).is_some_and(|a| group.contains(&a))
                        && child(t).is_some_and(|b| group.contains(&b))
                        && child(f) != child(t)
                })
                .map(|(f, t)| format!("{} -> {}", f.join("::"), t.join("::")))
                .collect();
            found.push((format!("{name}: {at}: {}", group.join(", ")), why.join("; ")));
        }
    }
    found
}

#[test]
fn no_module_of_a_crate_imports_a_sibling_that_imports_it_back() {
    let found: Vec<(String, String)> = crates().iter().flat_map(|dir| circles_in(dir)).collect();
    let unexpected: Vec<String> = found
        .iter()
        .filter(|(circle, _)| !ALLOWED.iter().any(|allowed| allowed.starts_with(circle.as_str())))
        .map(|(circle, why)| format!("{circle}\n    {why}"))
        .collect();
    assert!(unexpected.is_empty(), "import circles:\n{}", unexpected.join("\n"));
}

#[test]
fn the_check_sees_a_circle_when_there_is_one() {
    // The reader above, on a crate made here: a → b by a `use` tree, b → a by a path in code.
    let dir = std::env::temp_dir().join(format!("jig-circles-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\nmod c;\n").unwrap();
    std::fs::write(src.join("a/mod.rs"), "mod inner;\nuse crate::{b::{self, Thing as T}, c};\n")
        .unwrap();
    std::fs::write(src.join("a/inner.rs"), "use super::super::c::C; // crate::b::X in a comment\n")
        .unwrap();
    std::fs::write(src.join("b.rs"), "fn f() { let _ = \"crate::c\"; crate::a::go(); }\n").unwrap();
    std::fs::write(src.join("c.rs"), "pub struct C;\n").unwrap();
    let found = circles_in(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, format!("{name}: crate: a, b"), "{found:?}");
    assert!(found[0].1.contains("a -> b") && found[0].1.contains("b -> a"), "{found:?}");
}
