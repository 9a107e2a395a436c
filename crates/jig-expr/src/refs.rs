//! The variables a template reads, for static checks: which names must be defined before the
//! template is evaluated.

use crate::ast::{Command, Node, OperandKind, Pipeline};

/// A variable the template reads: `.a.b` (or `$.a.b`) is the path `["a", "b"]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// The field path from the variables.
    pub path: Vec<String>,
    /// Byte offset of the reference in the template.
    pub offset: usize,
}

pub(crate) fn collect(nodes: &[Node], at_root: bool, out: &mut Vec<Reference>) {
    for node in nodes {
        match node {
            Node::Text(_) | Node::Comment(_) => {}
            Node::Action(pipeline) => self::pipeline(pipeline, at_root, out),
            Node::If { arms, otherwise } => {
                for (condition, body) in arms {
                    self::pipeline(condition, at_root, out);
                    collect(body, at_root, out);
                }
                if let Some(otherwise) = otherwise {
                    collect(otherwise, at_root, out);
                }
            }
            // Inside the body `.` is the element, not the variables: only `$…` counts there.
            Node::Range { pipeline, body, otherwise }
            | Node::With { pipeline, body, otherwise } => {
                self::pipeline(pipeline, at_root, out);
                collect(body, false, out);
                if let Some(otherwise) = otherwise {
                    collect(otherwise, at_root, out);
                }
            }
        }
    }
}

fn pipeline(pipeline: &Pipeline, at_root: bool, out: &mut Vec<Reference>) {
    for Command { args, .. } in &pipeline.commands {
        for arg in args {
            match &arg.kind {
                OperandKind::Field(path) if at_root => {
                    out.push(Reference { path: path.clone(), offset: arg.pos.0 })
                }
                OperandKind::Root(path) if !path.is_empty() => {
                    out.push(Reference { path: path.clone(), offset: arg.pos.0 });
                }
                OperandKind::Group(inner, _) => self::pipeline(inner, at_root, out),
                _ => {}
            }
        }
    }
}
