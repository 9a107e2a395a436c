//! A strict YAML 1.2 reader that produces JSON values and remembers where every node came from.
//!
//! Jig files are data, so the reader accepts only what maps onto JSON: one document, string-like
//! keys, no duplicate keys, no `.nan`/`.inf`, no application tags. It enforces the caps of
//! [`Caps`] while it reads, which is what makes hostile input cheap to refuse: a file that is
//! too large is refused before it is read, nesting is checked at each opening bracket, and an
//! alias bomb is refused as soon as its expansion would pass the budget, without expanding it.
//!
//! Positions are kept in a side table in document pre-order (a map contributes its own
//! position, then for each entry the key's position followed by the value's subtree), so a
//! JSON pointer can be turned back into a line and column when, and only when, a diagnostic
//! needs one.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};
use serde_json::{Map, Number, Value};

use jig_model::diagnostic::codes;

mod scalar;

use scalar::scalar;

/// Limits applied while reading one file.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    /// Largest file accepted, in bytes.
    pub max_bytes: u64,
    /// Deepest nesting of maps and lists.
    pub max_depth: usize,
    /// Most nodes in the document, aliases expanded.
    pub max_nodes: usize,
    /// Most nodes produced by expanding aliases.
    pub max_alias_nodes: usize,
}

impl Caps {
    /// The caps for every Jig file.
    pub const DEFAULT: Caps = Caps {
        max_bytes: 4 * 1024 * 1024,
        max_depth: 64,
        max_nodes: 1_000_000,
        max_alias_nodes: 100_000,
    };
}

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
}

impl Pos {
    fn from_span(span: &Span) -> Self {
        let start = span.start;
        Pos {
            line: u32::try_from(start.line()).unwrap_or(u32::MAX),
            column: u32::try_from(start.col() + 1).unwrap_or(u32::MAX),
        }
    }
}

/// A parsed document: its JSON value and the positions of its nodes.
#[derive(Debug, Clone)]
pub struct Document {
    /// The document as JSON.
    pub value: Value,
    positions: Vec<Pos>,
}

/// Why a file could not be read as a Jig document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// A diagnostic code from [`codes`].
    pub code: &'static str,
    /// What went wrong.
    pub message: String,
    /// Where, when known.
    pub pos: Option<Pos>,
    /// How to fix it.
    pub hint: Option<String>,
}

impl YamlError {
    fn new(code: &'static str, message: impl Into<String>, pos: Option<Pos>) -> Self {
        Self { code, message: message.into(), pos, hint: None }
    }

    fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// A value under construction.
enum Frame {
    Seq {
        items: Vec<Value>,
        anchor: usize,
        first_pos: usize,
    },
    Map {
        map: Map<String, Value>,
        key_positions: Vec<Pos>,
        key: Option<String>,
        anchor: usize,
        first_pos: usize,
    },
}

struct Anchored {
    value: Value,
    positions: Vec<Pos>,
}

/// Read `text` as one YAML (or JSON) document within `caps`.
pub fn parse(text: &str, caps: &Caps) -> Result<Document, YamlError> {
    if text.len() as u64 > caps.max_bytes {
        return Err(too_large(text.len() as u64, caps));
    }
    Reader {
        caps,
        positions: Vec::new(),
        stack: Vec::new(),
        anchors: HashMap::new(),
        alias_nodes: 0,
    }
    .read(text)
}

/// The error for a file over the size cap (shared with callers that check the size on disk).
pub fn too_large(size: u64, caps: &Caps) -> YamlError {
    YamlError::new(
        codes::FILE_TOO_LARGE,
        format!("file is {size} bytes; Jig reads files of at most {} bytes", caps.max_bytes),
        None,
    )
    .with_hint("split the file, or move large schemas into separate $ref files")
}

struct Reader<'c> {
    caps: &'c Caps,
    positions: Vec<Pos>,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Anchored>,
    alias_nodes: usize,
}

impl Reader<'_> {
    fn read(mut self, text: &str) -> Result<Document, YamlError> {
        let mut parser = Parser::new_from_str(text);
        let mut root: Option<Value> = None;
        let mut documents = 0usize;
        while let Some(next) = parser.next_event() {
            let (event, span) = next.map_err(|e| scan_error(&e, self.caps))?;
            let pos = Pos::from_span(&span);
            match event {
                Event::StreamStart | Event::StreamEnd | Event::Nothing | Event::DocumentEnd => {}
                Event::DocumentStart(_) => {
                    documents += 1;
                    if documents > 1 {
                        return Err(YamlError::new(
                            codes::YAML_MULTI_DOCUMENT,
                            "the file holds more than one YAML document",
                            Some(pos),
                        )
                        .with_hint("Jig files hold exactly one document; remove the extra `---`"));
                    }
                }
                Event::Alias(id) => {
                    let value = self.expand_alias(id, pos)?;
                    if let Some(done) = self.push_value(value, 0, pos, 0)? {
                        root = Some(done);
                    }
                }
                Event::Scalar(text, style, anchor, tag) => {
                    let tag = tag.map(|t| (t.handle.clone(), t.suffix.clone()));
                    let value = scalar(&text, style, tag.as_ref(), pos)?;
                    let first = self.positions.len();
                    self.count_node(pos)?;
                    if let Some(done) = self.push_value(value, anchor, pos, first)? {
                        root = Some(done);
                    }
                }
                Event::SequenceStart(anchor, tag) => {
                    check_collection_tag(
                        tag.as_deref().map(|t| (&t.handle, &t.suffix)),
                        "seq",
                        pos,
                    )?;
                    self.open(pos)?;
                    let first_pos = self.positions.len() - 1;
                    self.stack.push(Frame::Seq { items: Vec::new(), anchor, first_pos });
                }
                Event::MappingStart(anchor, tag) => {
                    check_collection_tag(
                        tag.as_deref().map(|t| (&t.handle, &t.suffix)),
                        "map",
                        pos,
                    )?;
                    self.open(pos)?;
                    let first_pos = self.positions.len() - 1;
                    self.stack.push(Frame::Map {
                        map: Map::new(),
                        key_positions: Vec::new(),
                        key: None,
                        anchor,
                        first_pos,
                    });
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    let (value, anchor, first) = match self.stack.pop() {
                        Some(Frame::Seq { items, anchor, first_pos }) => {
                            (Value::Array(items), anchor, first_pos)
                        }
                        Some(Frame::Map { map, anchor, first_pos, .. }) => {
                            (Value::Object(map), anchor, first_pos)
                        }
                        None => continue,
                    };
                    if let Some(done) = self.finish_value(value, anchor, first)? {
                        root = Some(done);
                    }
                }
            }
        }
        Ok(Document { value: root.unwrap_or(Value::Null), positions: self.positions })
    }

    fn count_node(&mut self, pos: Pos) -> Result<(), YamlError> {
        self.positions.push(pos);
        if self.positions.len() > self.caps.max_nodes {
            return Err(YamlError::new(
                codes::YAML_TOO_MANY_NODES,
                format!("the document has more than {} nodes", self.caps.max_nodes),
                Some(pos),
            ));
        }
        Ok(())
    }

    fn open(&mut self, pos: Pos) -> Result<(), YamlError> {
        if self.stack.len() >= self.caps.max_depth {
            return Err(YamlError::new(
                codes::YAML_TOO_DEEP,
                format!("nesting is deeper than {} levels", self.caps.max_depth),
                Some(pos),
            ));
        }
        self.count_node(pos)
    }

    fn expand_alias(&mut self, id: usize, pos: Pos) -> Result<Value, YamlError> {
        let Some(anchored) = self.anchors.get(&id) else {
            return Err(YamlError::new(
                codes::YAML_UNKNOWN_ANCHOR,
                "alias to an undefined anchor",
                Some(pos),
            ));
        };
        let size = anchored.positions.len();
        self.alias_nodes = self.alias_nodes.saturating_add(size);
        if self.alias_nodes > self.caps.max_alias_nodes
            || self.positions.len() + size > self.caps.max_nodes
        {
            return Err(YamlError::new(
                codes::YAML_ALIAS_BUDGET,
                format!(
                    "aliases expand to more than {} nodes (an alias bomb?)",
                    self.caps.max_alias_nodes
                ),
                Some(pos),
            )
            .with_hint("use fewer aliases, or write the repeated parts out"));
        }
        // Check depth of the expansion too: an alias may splice a deep subtree in.
        let depth = self.stack.len() + value_depth(&anchored.value);
        if depth > self.caps.max_depth + 1 {
            return Err(YamlError::new(
                codes::YAML_TOO_DEEP,
                format!("nesting is deeper than {} levels", self.caps.max_depth),
                Some(pos),
            ));
        }
        self.positions.extend_from_slice(&anchored.positions);
        Ok(anchored.value.clone())
    }

    /// A scalar or alias value is complete: place it in its parent.
    fn push_value(
        &mut self,
        value: Value,
        anchor: usize,
        pos: Pos,
        first: usize,
    ) -> Result<Option<Value>, YamlError> {
        // A scalar in key position is a key, not a value.
        if let Some(Frame::Map { key, .. }) = self.stack.last()
            && key.is_none()
        {
            let Some(Frame::Map { map, key, key_positions, .. }) = self.stack.last_mut() else {
                unreachable!("checked above")
            };
            let name = match value {
                Value::String(s) => s,
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                Value::Null => {
                    return Err(YamlError::new(
                        codes::YAML_KEY_NOT_STRING,
                        "a mapping key is null",
                        Some(pos),
                    ));
                }
                Value::Array(_) | Value::Object(_) => {
                    return Err(YamlError::new(
                        codes::YAML_KEY_NOT_STRING,
                        "a mapping key is a list or a map; Jig files use string keys",
                        Some(pos),
                    ));
                }
            };
            if map.contains_key(&name) {
                let index = map.keys().position(|k| *k == name).unwrap_or(0);
                let first_line = key_positions.get(index).map_or(0, |p| p.line);
                return Err(YamlError::new(
                    codes::YAML_DUPLICATE_KEY,
                    format!("key `{name}` appears twice (lines {first_line} and {})", pos.line),
                    Some(pos),
                )
                .with_hint("each key may appear once; remove or rename one of them"));
            }
            key_positions.push(pos);
            *key = Some(name);
            return Ok(None);
        }
        self.finish_value(value, anchor, first)
    }

    /// A value is complete: remember its anchor, then attach it to the parent (or return it as
    /// the root).
    fn finish_value(
        &mut self,
        value: Value,
        anchor: usize,
        first: usize,
    ) -> Result<Option<Value>, YamlError> {
        if anchor > 0 {
            let positions = self.positions[first..].to_vec();
            self.anchors.insert(anchor, Anchored { value: value.clone(), positions });
        }
        match self.stack.last_mut() {
            None => Ok(Some(value)),
            Some(Frame::Seq { items, .. }) => {
                items.push(value);
                Ok(None)
            }
            Some(Frame::Map { map, key, .. }) => match key.take() {
                Some(name) => {
                    map.insert(name, value);
                    Ok(None)
                }
                // A collection in key position: YAML allows it, JSON cannot.
                None => Err(YamlError::new(
                    codes::YAML_KEY_NOT_STRING,
                    "a mapping key is a list or a map; Jig files use string keys",
                    self.positions.get(first).copied(),
                )),
            },
        }
    }
}

/// A scanner error as a diagnostic. The scanner enforces its own nesting limit and anchor
/// lookup before events reach the reader; those are reported under the reader's codes.
fn scan_error(error: &saphyr_parser::ScanError, caps: &Caps) -> YamlError {
    let marker = error.marker();
    let pos = Pos {
        line: u32::try_from(marker.line()).unwrap_or(u32::MAX),
        column: u32::try_from(marker.col() + 1).unwrap_or(u32::MAX),
    };
    let info = error.info();
    if info.contains("recursion limit") {
        YamlError::new(
            codes::YAML_TOO_DEEP,
            format!("nesting is deeper than {} levels", caps.max_depth),
            Some(pos),
        )
    } else if info.contains("unknown anchor") {
        YamlError::new(codes::YAML_UNKNOWN_ANCHOR, "alias to an undefined anchor", Some(pos))
    } else {
        YamlError::new(codes::YAML_SYNTAX, format!("YAML syntax error: {info}"), Some(pos))
    }
}

fn value_depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(value_depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(value_depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn check_collection_tag(
    tag: Option<(&String, &String)>,
    expected: &str,
    pos: Pos,
) -> Result<(), YamlError> {
    match tag {
        None => Ok(()),
        Some((handle, suffix)) if handle == "tag:yaml.org,2002:" && suffix == expected => Ok(()),
        Some((handle, suffix)) => Err(unsupported_tag(handle, suffix, pos)),
    }
}

fn unsupported_tag(handle: &str, suffix: &str, pos: Pos) -> YamlError {
    let shown = if handle == "tag:yaml.org,2002:" {
        format!("!!{suffix}")
    } else {
        format!("{handle}{suffix}")
    };
    YamlError::new(codes::YAML_NOT_JSON, format!("tag `{shown}` has no JSON equivalent"), Some(pos))
        .with_hint("Jig files are plain data; remove the tag")
}

impl Document {
    /// A document built from a value with no source (embedded data, tests).
    pub fn from_value(value: Value) -> Self {
        let mut positions = Vec::new();
        fill_positions(&value, &mut positions);
        Self { value, positions }
    }

    /// The position of the value at `pointer`, or of its nearest ancestor that exists.
    pub fn position(&self, pointer: &str) -> Option<Pos> {
        self.locate(pointer).map(|(value_pos, _)| value_pos)
    }

    /// The position of the key whose value is at `pointer` (falls back to the value, then to
    /// the nearest ancestor).
    pub fn key_position(&self, pointer: &str) -> Option<Pos> {
        self.locate(pointer).map(|(value_pos, key_pos)| key_pos.unwrap_or(value_pos))
    }

    fn locate(&self, pointer: &str) -> Option<(Pos, Option<Pos>)> {
        let mut index = 0usize;
        let mut current = &self.value;
        let mut key_pos = None;
        for token in pointer_tokens(pointer) {
            match current {
                Value::Object(map) => {
                    let mut i = index + 1;
                    let mut found = None;
                    for (key, child) in map {
                        if *key == token {
                            found = Some((i, child));
                            break;
                        }
                        i += 1 + subtree_size(child);
                    }
                    let Some((key_index, child)) = found else { break };
                    key_pos = self.positions.get(key_index).copied();
                    index = key_index + 1;
                    current = child;
                }
                Value::Array(items) => {
                    let Ok(n) = token.parse::<usize>() else { break };
                    if n >= items.len() {
                        break;
                    }
                    index = index + 1 + items[..n].iter().map(subtree_size).sum::<usize>();
                    key_pos = None;
                    current = &items[n];
                }
                _ => break,
            }
        }
        self.positions.get(index).map(|p| (*p, key_pos))
    }
}

fn fill_positions(value: &Value, out: &mut Vec<Pos>) {
    out.push(Pos::default());
    match value {
        Value::Array(items) => items.iter().for_each(|v| fill_positions(v, out)),
        Value::Object(map) => map.values().for_each(|v| {
            out.push(Pos::default());
            fill_positions(v, out);
        }),
        _ => {}
    }
}

/// Nodes in the position table for `value`: itself, and for maps one per key.
fn subtree_size(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(subtree_size).sum::<usize>(),
        Value::Object(map) => 1 + map.values().map(|v| 1 + subtree_size(v)).sum::<usize>(),
        _ => 1,
    }
}

/// Split an RFC 6901 pointer into unescaped tokens.
pub fn pointer_tokens(pointer: &str) -> impl Iterator<Item = String> + '_ {
    pointer.split('/').skip(1).map(|t| t.replace("~1", "/").replace("~0", "~"))
}

/// Append an escaped token to a pointer.
pub fn pointer_push(pointer: &str, token: &str) -> String {
    let escaped = token.replace('~', "~0").replace('/', "~1");
    format!("{pointer}/{escaped}")
}
