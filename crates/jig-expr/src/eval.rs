//! Evaluates a syntax tree against JSON variables.

use std::cell::Cell;

use serde_json::Value;

use crate::ast::{Command, Node, Operand, OperandKind, Pipeline};
use crate::error::Located;
use crate::funcs;
use crate::value::{describe, text, truthy};

/// Output one template may produce: a `range` over a large list inside another must fail
/// rather than fill memory.
pub(crate) const MAX_OUTPUT: usize = 16 << 20;

/// Nodes one evaluation may visit: nested `range`s multiply, and a template must not be able
/// to spin for hours on small data.
const MAX_STEPS: u64 = 1_000_000;

pub(crate) struct Eval<'a> {
    root: &'a Value,
    steps: Cell<u64>,
}

impl<'a> Eval<'a> {
    pub(crate) fn new(root: &'a Value) -> Self {
        Self { root, steps: Cell::new(0) }
    }

    fn step(&self, at: usize) -> Result<(), Located> {
        let steps = self.steps.get() + 1;
        self.steps.set(steps);
        if steps > MAX_STEPS {
            return Err(Located::new(at, "the template does too much work (over a million steps)"));
        }
        Ok(())
    }

    pub(crate) fn nodes(
        &self,
        nodes: &[Node],
        dot: &Value,
        out: &mut String,
    ) -> Result<(), Located> {
        for node in nodes {
            self.step(0)?;
            match node {
                Node::Text(t) => out.push_str(t),
                Node::Comment(_) => {}
                Node::Action(pipeline) => {
                    let value = self.pipeline(pipeline, dot)?;
                    out.push_str(&text(&value));
                }
                Node::If { arms, otherwise } => {
                    let mut chosen = otherwise.as_deref();
                    for (condition, body) in arms {
                        if truthy(&self.pipeline(condition, dot)?) {
                            chosen = Some(body);
                            break;
                        }
                    }
                    if let Some(body) = chosen {
                        self.nodes(body, dot, out)?;
                    }
                }
                Node::With { pipeline, body, otherwise } => {
                    let value = self.pipeline(pipeline, dot)?;
                    if truthy(&value) {
                        self.nodes(body, &value, out)?;
                    } else if let Some(otherwise) = otherwise {
                        self.nodes(otherwise, dot, out)?;
                    }
                }
                Node::Range { pipeline, body, otherwise } => {
                    let value = self.pipeline(pipeline, dot)?;
                    let items: Vec<Value> = match value {
                        Value::Array(items) => items,
                        // Go ranges over a map's values in key order.
                        Value::Object(map) => {
                            let mut entries: Vec<_> = map.into_iter().collect();
                            entries.sort_by(|a, b| a.0.cmp(&b.0));
                            entries.into_iter().map(|(_, v)| v).collect()
                        }
                        Value::Number(ref n) if n.as_u64().is_some() => {
                            let count = n.as_u64().unwrap_or(0);
                            if count > 100_000 {
                                return Err(Located::new(
                                    pipeline.pos.0,
                                    format!("`range` over {count} is too many"),
                                ));
                            }
                            (0..count).map(Value::from).collect()
                        }
                        // Nothing to range over: an empty or unset value, as Go treats nil.
                        other if !truthy(&other) => Vec::new(),
                        other => {
                            return Err(Located::new(
                                pipeline.pos.0,
                                format!("cannot range over {}", describe(&other)),
                            ));
                        }
                    };
                    if items.is_empty()
                        && let Some(otherwise) = otherwise
                    {
                        self.nodes(otherwise, dot, out)?;
                    }
                    for item in &items {
                        self.nodes(body, item, out)?;
                        if out.len() > MAX_OUTPUT {
                            return Err(Located::new(
                                pipeline.pos.0,
                                "the template's output is larger than 16 MiB",
                            ));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    pub(crate) fn pipeline(&self, pipeline: &Pipeline, dot: &Value) -> Result<Value, Located> {
        self.step(pipeline.pos.0)?;
        let mut piped: Option<Value> = None;
        for command in &pipeline.commands {
            piped = Some(self.command(command, dot, piped)?);
        }
        Ok(piped.unwrap_or(Value::Null))
    }

    fn command(
        &self,
        command: &Command,
        dot: &Value,
        piped: Option<Value>,
    ) -> Result<Value, Located> {
        let first = &command.args[0];
        let OperandKind::Function(name) = &first.kind else {
            return self.operand(first, dot);
        };
        let given = command.args.len() - 1 + usize::from(piped.is_some());
        funcs::arity(name, given).map_err(|e| Located::new(first.pos.0, e))?;
        // `and` and `or` stop at the first argument that decides them, like Go's.
        if name == "and" || name == "or" {
            let wanted = name == "or";
            let mut last = Value::Null;
            for arg in &command.args[1..] {
                last = self.operand(arg, dot)?;
                if truthy(&last) == wanted {
                    return Ok(last);
                }
            }
            if let Some(piped) = piped {
                last = piped;
            }
            return Ok(last);
        }
        let mut args = command.args[1..]
            .iter()
            .map(|a| self.operand(a, dot))
            .collect::<Result<Vec<_>, _>>()?;
        args.extend(piped);
        funcs::call(name, &args).map_err(|e| Located::new(first.pos.0, format!("{name}: {e}")))
    }

    fn operand(&self, operand: &Operand, dot: &Value) -> Result<Value, Located> {
        let at = operand.pos.0;
        match &operand.kind {
            OperandKind::Dot => Ok(dot.clone()),
            OperandKind::Field(path) => walk(dot, path, ".", at),
            OperandKind::Root(path) => walk(self.root, path, "$.", at),
            OperandKind::Literal(literal) => Ok(crate::literal_value(literal)),
            OperandKind::Group(pipeline, path) => {
                let value = self.pipeline(pipeline, dot)?;
                if path.is_empty() { Ok(value) } else { walk(&value, path, "(…).", at) }
            }
            OperandKind::Function(name) => {
                // A function named where a value is expected, as in `(eq)`: call it bare.
                funcs::arity(name, 0).map_err(|e| Located::new(at, e))?;
                funcs::call(name, &[]).map_err(|e| Located::new(at, e))
            }
        }
    }
}

/// Follows `path` from `start`; a missing field is an error naming how far it got.
fn walk(start: &Value, path: &[String], prefix: &str, at: usize) -> Result<Value, Located> {
    let mut current = start;
    for (i, segment) in path.iter().enumerate() {
        let so_far = || format!("{prefix}{}", path[..i].join("."));
        current = match current {
            Value::Object(map) => match map.get(segment) {
                Some(value) => value,
                None if i == 0 => {
                    return Err(Located::new(
                        at,
                        format!("undefined variable `{prefix}{segment}`"),
                    ));
                }
                None => {
                    return Err(Located::new(
                        at,
                        format!("`{}` has no field `{segment}`", so_far()),
                    ));
                }
            },
            Value::Array(items) => match segment.parse::<usize>().ok().and_then(|n| items.get(n)) {
                Some(value) => value,
                None => {
                    return Err(Located::new(
                        at,
                        format!(
                            "`{}` is a list of {}; `{segment}` is not an index in it",
                            so_far(),
                            items.len()
                        ),
                    ));
                }
            },
            other if i == 0 => {
                return Err(Located::new(
                    at,
                    format!("undefined variable `{prefix}{segment}`: `.` is {}", describe(other)),
                ));
            }
            other => {
                return Err(Located::new(
                    at,
                    format!(
                        "`{}` is {}, which has no field `{segment}`",
                        so_far(),
                        describe(other)
                    ),
                ));
            }
        };
    }
    Ok(current.clone())
}
