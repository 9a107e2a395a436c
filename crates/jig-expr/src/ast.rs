//! The syntax tree of a template.
//!
//! Positions ([`Pos`]) do not take part in equality: two trees are equal when they mean the
//! same, which is what the printer's round trip is checked against.

/// A byte offset into the template source.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pos(pub usize);

impl PartialEq for Pos {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// A sequence of text and actions.
pub type Nodes = Vec<Node>;

/// One piece of a template.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// Text copied to the output.
    Text(String),
    /// `{{/* … */}}`: renders nothing.
    Comment(String),
    /// `{{ pipeline }}`: its value, printed.
    Action(Pipeline),
    /// `{{ if p }} … {{ else if q }} … {{ else }} … {{ end }}`.
    If {
        /// Each condition with what it renders, in order.
        arms: Vec<(Pipeline, Nodes)>,
        /// The `else` part.
        otherwise: Option<Nodes>,
    },
    /// `{{ range p }} … {{ else }} … {{ end }}`: the body once per element, with `.` bound to it.
    Range {
        /// The list, map or count.
        pipeline: Pipeline,
        /// Rendered per element.
        body: Nodes,
        /// Rendered when there is no element.
        otherwise: Option<Nodes>,
    },
    /// `{{ with p }} … {{ else }} … {{ end }}`: the body with `.` bound to a value that is set.
    With {
        /// The value.
        pipeline: Pipeline,
        /// Rendered when it is truthy.
        body: Nodes,
        /// Rendered when it is not.
        otherwise: Option<Nodes>,
    },
}

/// Commands joined by `|`: each command's value is passed as the last argument of the next.
#[derive(Debug, Clone, PartialEq)]
pub struct Pipeline {
    /// At least one.
    pub commands: Vec<Command>,
    /// Where it starts.
    pub pos: Pos,
}

/// A function call (`eq .a "b"`) or a single operand (`.a`).
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// The function or operand first, then the arguments.
    pub args: Vec<Operand>,
    /// Where it starts.
    pub pos: Pos,
}

/// An operand.
#[derive(Debug, Clone, PartialEq)]
pub struct Operand {
    /// What it is.
    pub kind: OperandKind,
    /// Where it is.
    pub pos: Pos,
}

/// The kinds of operand.
#[derive(Debug, Clone, PartialEq)]
pub enum OperandKind {
    /// `.`: the current value.
    Dot,
    /// `.a.b`: a field path from the current value.
    Field(Vec<String>),
    /// `$` or `$.a.b`: a field path from the variables the template was given.
    Root(Vec<String>),
    /// The name of a function (`eq`, `index` …).
    Function(String),
    /// A constant.
    Literal(Literal),
    /// `( pipeline )`, optionally followed by a field path: `(index .x 0).name`.
    Group(Box<Pipeline>, Vec<String>),
}

/// A constant.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// `"text"` or `` `raw` ``.
    Str(String),
    /// `42`, `-1`, `0x1f`.
    Int(i64),
    /// `1.5`, `1e3`.
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
    /// `nil`.
    Nil,
}
