//! The expression language of gert's runbooks and tool files: Go's `text/template` syntax over
//! JSON values.
//!
//! ```text
//! https://{{ .hostname }}{{ .health_endpoint }}
//! {{ eq .status_code "200" }}
//! {{ index .check_node 0 "status_code" }}
//! {{ .name | default "anonymous" | upper }}
//! {{ if gt (len .nodes) 3 }}many{{ else }}few{{ end }}
//! ```
//!
//! A template is parsed once into a tree ([`Template::parse`]) with positions, then evaluated
//! against variables ([`Template::render`] for text, [`Template::evaluate`] for a typed value).
//! Nothing is done by string replacement: a value containing `{{` is data, never a template.
//!
//! Where this differs from Go, it is stricter or more useful on a command line, never looser:
//! an undefined variable is an error (Go's `missingkey=error`), template variables (`$x := …`)
//! and `define`/`template` are refused, ordering comparisons are numeric for numeric text, and
//! lists and maps print as JSON.

mod ast;
mod error;
mod eval;
mod funcs;
mod lex;
mod parse;
mod print;
mod refs;
mod value;

use std::fmt;

use serde_json::Value;

pub use ast::{Command, Literal, Node, Nodes, Operand, OperandKind, Pipeline, Pos};
pub use error::{Error, Phase};
pub use funcs::names as function_names;
pub use refs::Reference;
pub use value::{text, truthy};

/// A parsed template.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    source: String,
    nodes: Nodes,
}

impl Template {
    /// Parses `source`. Errors carry the line and column.
    pub fn parse(source: &str) -> Result<Self, Error> {
        let nodes = parse::parse(source)
            .map_err(|e| Error::at(Phase::Parse, source, e.offset, e.message))?;
        Ok(Self { source: source.to_owned(), nodes })
    }

    /// A template from a tree built in code; its source is the canonical printing.
    pub fn from_nodes(nodes: Nodes) -> Self {
        let mut template = Self { source: String::new(), nodes };
        template.source = template.to_string();
        template
    }

    /// The source it was parsed from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The tree.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Whether the template has no actions (it renders to its text, whatever the variables).
    pub fn is_literal(&self) -> bool {
        self.nodes.iter().all(|n| matches!(n, Node::Text(_) | Node::Comment(_)))
    }

    /// Renders the template as text.
    pub fn render(&self, variables: &Value) -> Result<String, Error> {
        let mut out = String::new();
        eval::Eval::new(variables)
            .nodes(&self.nodes, variables, &mut out)
            .map_err(|e| self.error(e))?;
        Ok(out)
    }

    /// Evaluates the template to a value: a template that is exactly one action (`{{ .nodes }}`)
    /// gives that action's value with its type (a list stays a list, a number a number);
    /// anything else gives its rendered text.
    pub fn evaluate(&self, variables: &Value) -> Result<Value, Error> {
        if let [Node::Action(pipeline)] = self.nodes.as_slice() {
            return eval::Eval::new(variables)
                .pipeline(pipeline, variables)
                .map_err(|e| self.error(e));
        }
        self.render(variables).map(Value::String)
    }

    /// Evaluates the template as a condition: its value's truth, with the text `"false"` false
    /// as well (gert's conditions render to text).
    pub fn condition(&self, variables: &Value) -> Result<bool, Error> {
        Ok(match self.evaluate(variables)? {
            Value::String(s) => {
                let s = s.trim();
                !s.is_empty() && s != "false"
            }
            other => truthy(&other),
        })
    }

    /// The variables the template reads, in order of appearance.
    pub fn references(&self) -> Vec<Reference> {
        let mut out = Vec::new();
        refs::collect(&self.nodes, true, &mut out);
        out
    }

    fn error(&self, located: error::Located) -> Error {
        Error::at(Phase::Evaluate, &self.source, located.offset, located.message)
    }
}

/// Prints the template in its canonical spelling.
impl fmt::Display for Template {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        print::nodes(out, &self.nodes)
    }
}

/// Renders `source` once; for templates used once. Parse it with [`Template::parse`] to reuse it.
pub fn render(source: &str, variables: &Value) -> Result<String, Error> {
    Template::parse(source)?.render(variables)
}

/// Whether a string holds template syntax at all.
pub fn is_template(source: &str) -> bool {
    source.contains("{{")
}

pub(crate) fn literal_value(literal: &Literal) -> Value {
    match literal {
        Literal::Str(s) => Value::String(s.clone()),
        Literal::Int(n) => Value::from(*n),
        Literal::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        Literal::Bool(b) => Value::Bool(*b),
        Literal::Nil => Value::Null,
    }
}
