//! The index on real source in each language: symbols, exports, docs, errors, refresh and
//! rename.

use std::collections::HashMap;

use jig_ast::{EditError, Filter, Index, Language, Source, Stamp, check_syntax, parse, rename};

fn kinds(language: Language, file: &str, source: &str) -> Vec<(String, &'static str, bool, bool)> {
    let parsed = parse(language, file, source.as_bytes());
    assert!(parsed.error.is_none(), "{file}: {:?}", parsed.error);
    parsed
        .symbols
        .iter()
        .map(|s| (s.name.clone(), s.kind.as_str(), s.exported, s.has_doc))
        .collect()
}

fn row(
    name: &str,
    kind: &'static str,
    exported: bool,
    doc: bool,
) -> (String, &'static str, bool, bool) {
    (name.to_owned(), kind, exported, doc)
}

#[test]
fn rust_symbols_with_visibility_and_docs() {
    let source = r#"
/// Logs in.
#[inline]
pub fn auth_login() {}
fn helper() {}
pub(crate) struct Session;
/// Kinds.
pub enum Kind { A }
pub trait Store { fn get(&self); }
impl Store for Session { fn get(&self) {} }
pub const LIMIT: u32 = 3;
mod inner {}
"#;
    assert_eq!(
        kinds(Language::Rust, "src/lib.rs", source),
        [
            row("auth_login", "fn", true, true),
            row("helper", "fn", false, false),
            row("Session", "struct", false, false),
            row("Kind", "enum", true, true),
            row("Store", "trait", true, false),
            row("get", "method", false, false),
            row("Session", "impl", false, false),
            row("get", "method", false, false),
            row("LIMIT", "const", true, false),
            row("inner", "module", false, false),
        ]
    );
}

#[test]
fn python_javascript_typescript_and_go_symbols() {
    let python = "def public():\n    \"\"\"Docs.\"\"\"\n    return 1\n\ndef _private():\n    pass\n\nclass Thing:\n    def method(self):\n        pass\n";
    assert_eq!(
        kinds(Language::Python, "a.py", python),
        [
            row("public", "fn", true, true),
            row("_private", "fn", false, false),
            row("Thing", "class", true, false),
            row("method", "method", true, false)
        ]
    );
    let js = "/** Adds. */\nexport function add(a, b) { return a + b; }\nconst sub = (a, b) => a - b;\nexport class Calc { run() {} }\n";
    assert_eq!(
        kinds(Language::JavaScript, "a.js", js),
        [
            row("add", "fn", true, true),
            row("sub", "fn", false, false),
            row("Calc", "class", true, false),
            row("run", "method", false, false)
        ]
    );
    let ts = "export interface Shape { area(): number }\nexport type Id = string;\nenum Color { Red }\nexport const make = (): Id => 'x';\n";
    assert_eq!(
        kinds(Language::TypeScript, "a.ts", ts),
        [
            row("Shape", "interface", true, false),
            row("Id", "type", true, false),
            row("Color", "enum", false, false),
            row("make", "fn", true, false)
        ]
    );
    let go = "package main\n\n// Serve serves.\nfunc Serve() {}\nfunc helper() {}\n\ntype Server struct{}\n\nfunc (s *Server) Start() {}\n\ntype Handler interface{ Handle() }\n";
    assert_eq!(
        kinds(Language::Go, "main.go", go),
        [
            row("Serve", "fn", true, true),
            row("helper", "fn", false, false),
            row("Server", "struct", true, false),
            row("Start", "method", true, false),
            row("Handler", "interface", true, false)
        ]
    );
}

#[test]
fn syntax_errors_are_found_with_their_line() {
    let error =
        check_syntax("src/x.rs", b"fn ok() {}\nfn broken( {\n").expect("rust").expect_err("broken");
    assert_eq!(error.line, 2, "{error:?}");
    assert!(check_syntax("src/x.rs", b"fn ok() {}\n").expect("rust").is_ok());
    assert!(check_syntax("notes.md", b"# not code (").is_none());
    assert!(check_syntax("a.py", b"def f(:\n").expect("python").is_err());
}

/// An in-memory workspace for refresh and rename.
struct Files(HashMap<String, String>);

impl Files {
    fn read(&self, path: &str) -> std::io::Result<Vec<u8>> {
        self.0
            .get(path)
            .map(|t| t.as_bytes().to_vec())
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
    }

    fn sources(&self, stamp: u128) -> Vec<Source> {
        self.0
            .keys()
            .map(|p| Source { path: p.clone(), stamp: Stamp { modified_ns: stamp, len: 0 } })
            .collect()
    }
}

#[test]
fn refresh_parses_only_changed_files() {
    let mut files = Files(HashMap::new());
    files.0.insert("a.rs".into(), "pub fn a() {}\n".into());
    files.0.insert("b.rs".into(), "pub fn b() {}\n".into());
    files.0.insert("README.md".into(), "text".into());
    let mut index = Index::new();
    let first = index.refresh(&files.sources(1), true, &|p| files.read(p));
    assert_eq!(first.parsed, 2, "markdown is not parsed");
    let again = index.refresh(&files.sources(1), true, &|p| files.read(p));
    assert_eq!(again.parsed, 0);
    let mut sources = files.sources(1);
    files.0.insert("a.rs".into(), "pub fn a2() {}\n".into());
    sources.iter_mut().filter(|s| s.path == "a.rs").for_each(|s| s.stamp.modified_ns = 2);
    assert_eq!(index.refresh(&sources, true, &|p| files.read(p)).parsed, 1);
    assert!(index.symbol("a.rs:fn:a2").is_some());
    assert_eq!(index.refresh(&sources, false, &|p| files.read(p)).parsed, 2);
    let filter = Filter::new(Some("fn"), Some("a*"), Some("*.rs"), Some(true)).expect("filter");
    let names: Vec<&str> =
        index.symbols().filter(|s| filter.matches(s)).map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a2"]);
    assert!(Filter::new(Some("function"), None, None, None).is_err());
}

#[test]
fn rename_updates_definition_and_references_but_not_strings_or_comments() {
    let mut files = Files(HashMap::new());
    files.0.insert(
        "src/auth.rs".into(),
        "pub fn auth_login() -> u8 { 1 }\n// auth_login is old\n".into(),
    );
    files.0.insert(
        "src/main.rs".into(),
        "fn main() { let s = \"auth_login\"; crate::auth::auth_login(); }\n".into(),
    );
    files.0.insert("app.py".into(), "def auth_login():\n    pass\n".into());
    let mut index = Index::new();
    index.refresh(&files.sources(1), true, &|p| files.read(p));
    let edits = rename(&index, "src/auth.rs:fn:auth_login", "auth_signin", &|p| files.read(p))
        .expect("rename");
    let by_file: HashMap<&str, &str> =
        edits.iter().map(|e| (e.file.as_str(), e.after.as_str())).collect();
    assert_eq!(by_file.len(), 2, "python is another language: {by_file:?}");
    assert_eq!(by_file["src/auth.rs"], "pub fn auth_signin() -> u8 { 1 }\n// auth_login is old\n");
    assert_eq!(
        by_file["src/main.rs"],
        "fn main() { let s = \"auth_login\"; crate::auth::auth_signin(); }\n"
    );
    assert!(matches!(
        rename(&index, "src/auth.rs:fn:main", "x", &|p| files.read(p)),
        Err(EditError::NotFound(_))
    ));
    assert!(matches!(
        rename(&index, "src/auth.rs:fn:auth_login", "main", &|p| files.read(p)),
        Err(EditError::Conflict { .. })
    ));
    let broken = rename(&index, "src/auth.rs:fn:auth_login", "fn", &|p| files.read(p));
    assert!(matches!(broken, Err(EditError::InvalidName(_))), "a keyword: {broken:?}");
    assert!(matches!(
        rename(&index, "src/auth.rs:fn:auth_login", "a-b", &|p| files.read(p)),
        Err(EditError::InvalidName(_))
    ));
}
