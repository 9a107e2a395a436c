//! Prints a syntax tree back as template source, in one canonical spelling: parsing what is
//! printed gives the same tree.

use std::fmt::{self, Display, Formatter, Write};

use crate::ast::{Command, Literal, Node, Operand, OperandKind, Pipeline};

/// Writes `nodes` as template source.
pub(crate) fn nodes(out: &mut Formatter<'_>, nodes: &[Node]) -> fmt::Result {
    for node in nodes {
        match node {
            Node::Text(text) => out.write_str(text)?,
            Node::Comment(text) => write!(out, "{{{{/*{text}*/}}}}")?,
            Node::Action(pipeline) => write!(out, "{{{{ {pipeline} }}}}")?,
            Node::If { arms, otherwise } => {
                for (i, (condition, body)) in arms.iter().enumerate() {
                    let keyword = if i == 0 { "if" } else { "else if" };
                    write!(out, "{{{{ {keyword} {condition} }}}}")?;
                    self::nodes(out, body)?;
                }
                tail(out, otherwise.as_deref())?;
            }
            Node::Range { pipeline, body, otherwise }
            | Node::With { pipeline, body, otherwise } => {
                let keyword = if matches!(node, Node::Range { .. }) { "range" } else { "with" };
                write!(out, "{{{{ {keyword} {pipeline} }}}}")?;
                self::nodes(out, body)?;
                tail(out, otherwise.as_deref())?;
            }
        }
    }
    Ok(())
}

fn tail(out: &mut Formatter<'_>, otherwise: Option<&[Node]>) -> fmt::Result {
    if let Some(otherwise) = otherwise {
        out.write_str("{{ else }}")?;
        nodes(out, otherwise)?;
    }
    out.write_str("{{ end }}")
}

impl Display for Pipeline {
    fn fmt(&self, out: &mut Formatter<'_>) -> fmt::Result {
        for (i, command) in self.commands.iter().enumerate() {
            if i > 0 {
                out.write_str(" | ")?;
            }
            write!(out, "{command}")?;
        }
        Ok(())
    }
}

impl Display for Command {
    fn fmt(&self, out: &mut Formatter<'_>) -> fmt::Result {
        for (i, arg) in self.args.iter().enumerate() {
            if i > 0 {
                out.write_char(' ')?;
            }
            write!(out, "{arg}")?;
        }
        Ok(())
    }
}

impl Display for Operand {
    fn fmt(&self, out: &mut Formatter<'_>) -> fmt::Result {
        match &self.kind {
            OperandKind::Dot => out.write_char('.'),
            OperandKind::Field(path) => path_of(out, path),
            OperandKind::Root(path) => {
                out.write_char('$')?;
                path_of(out, path)
            }
            OperandKind::Function(name) => out.write_str(name),
            OperandKind::Literal(literal) => write!(out, "{literal}"),
            OperandKind::Group(pipeline, path) => {
                write!(out, "({pipeline})")?;
                path_of(out, path)
            }
        }
    }
}

fn path_of(out: &mut Formatter<'_>, path: &[String]) -> fmt::Result {
    for segment in path {
        write!(out, ".{segment}")?;
    }
    Ok(())
}

impl Display for Literal {
    fn fmt(&self, out: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Self::Str(text) => quote(out, text),
            Self::Int(n) => write!(out, "{n}"),
            // `{:?}` keeps a `.0` or an exponent, so the number reads back as a float.
            Self::Float(f) => write!(out, "{f:?}"),
            Self::Bool(b) => write!(out, "{b}"),
            Self::Nil => out.write_str("nil"),
        }
    }
}

fn quote(out: &mut Formatter<'_>, text: &str) -> fmt::Result {
    out.write_char('"')?;
    for c in text.chars() {
        match c {
            '"' => out.write_str("\\\"")?,
            '\\' => out.write_str("\\\\")?,
            '\n' => out.write_str("\\n")?,
            '\t' => out.write_str("\\t")?,
            '\r' => out.write_str("\\r")?,
            c if c.is_control() => write!(out, "\\u{:04x}", u32::from(c))?,
            c => out.write_char(c)?,
        }
    }
    out.write_char('"')
}
