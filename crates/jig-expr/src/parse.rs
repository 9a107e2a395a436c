//! Builds the syntax tree from the scanned items.

use crate::ast::{Command, Literal, Node, Nodes, Operand, OperandKind, Pipeline, Pos};
use crate::error::Located;
use crate::funcs;
use crate::lex::{self, Item, MAX_NESTING, Tok, Token};

pub(crate) fn parse(src: &str) -> Result<Nodes, Located> {
    let items = lex::scan(src)?;
    let mut parser = Parser { items: items.into_iter(), depth: 0 };
    let (nodes, end) = parser.list()?;
    match end {
        None => Ok(nodes),
        Some(Terminator { keyword, pos, .. }) => Err(Located::new(
            pos,
            format!("`{{{{ {keyword} }}}}` without a matching `if`, `range` or `with`"),
        )),
    }
}

/// What ended a list: `{{ end }}` or `{{ else … }}`.
struct Terminator {
    keyword: &'static str,
    pos: usize,
    /// After `else`: the rest of the action (`if …`, `with …`), if any.
    rest: Vec<Token>,
    close: usize,
}

struct Parser {
    items: std::vec::IntoIter<Item>,
    /// `if`/`range`/`with` blocks open around the current position.
    depth: usize,
}

impl Parser {
    fn list(&mut self) -> Result<(Nodes, Option<Terminator>), Located> {
        let mut nodes = Vec::new();
        while let Some(item) = self.items.next() {
            match item {
                Item::Text(text) => nodes.push(Node::Text(text)),
                Item::Comment(text) => nodes.push(Node::Comment(text)),
                Item::Action { tokens, pos, close } => {
                    let keyword = match tokens.first().map(|t| &t.tok) {
                        Some(Tok::Ident(word)) => word.as_str(),
                        _ => "",
                    };
                    match keyword {
                        "end" => {
                            if tokens.len() > 1 {
                                return Err(Located::new(
                                    tokens[1].start,
                                    "unexpected words after `end`",
                                ));
                            }
                            return Ok((
                                nodes,
                                Some(Terminator { keyword: "end", pos, rest: Vec::new(), close }),
                            ));
                        }
                        "else" => {
                            let rest = tokens[1..].to_vec();
                            return Ok((
                                nodes,
                                Some(Terminator { keyword: "else", pos, rest, close }),
                            ));
                        }
                        "if" | "range" | "with" => {
                            let keyword = keyword.to_owned();
                            nodes.push(self.control(&keyword, &tokens[1..], pos, close)?);
                        }
                        "define" | "template" | "block" | "break" | "continue" => {
                            return Err(Located::new(
                                pos,
                                format!("`{keyword}` is not supported in runbook templates"),
                            ));
                        }
                        _ => {
                            if tokens.is_empty() {
                                return Err(Located::new(pos, "empty action `{{ }}`"));
                            }
                            nodes.push(Node::Action(pipeline(&tokens, close, 0)?));
                        }
                    }
                }
            }
        }
        Ok((nodes, None))
    }

    /// `if`, `range` or `with`, its condition already read from the opening action.
    fn control(
        &mut self,
        keyword: &str,
        condition: &[Token],
        pos: usize,
        close: usize,
    ) -> Result<Node, Located> {
        if condition.is_empty() {
            return Err(Located::new(pos, format!("`{keyword}` needs a value to test")));
        }
        if self.depth >= MAX_NESTING {
            return Err(Located::new(pos, "`if`, `range` and `with` nested too deeply"));
        }
        self.depth += 1;
        let node = self.control_body(keyword, condition, pos, close);
        self.depth -= 1;
        node
    }

    fn control_body(
        &mut self,
        keyword: &str,
        condition: &[Token],
        pos: usize,
        close: usize,
    ) -> Result<Node, Located> {
        let condition = pipeline(condition, close, 0)?;
        let (body, end) = self.list()?;
        let Some(end) = end else {
            return Err(Located::new(pos, format!("`{keyword}` without `{{{{ end }}}}`")));
        };
        let mut arms = vec![(condition, body)];
        let mut otherwise = None;
        let mut end = end;
        loop {
            if end.keyword == "end" {
                break;
            }
            // `else`, `else if …`, `else with …`.
            let chained = match end.rest.first().map(|t| &t.tok) {
                Some(Tok::Ident(word)) if word == keyword && keyword != "range" => true,
                None => false,
                _ => {
                    return Err(Located::new(
                        end.pos,
                        format!(
                            "after `else` in `{keyword}`, only `else {keyword} …` or a plain `else`"
                        ),
                    ));
                }
            };
            let (nodes, next) = self.list()?;
            let Some(next) = next else {
                return Err(Located::new(end.pos, "`else` without `{{ end }}`"));
            };
            if chained {
                if end.rest.len() < 2 {
                    return Err(Located::new(
                        end.pos,
                        format!("`else {keyword}` needs a value to test"),
                    ));
                }
                arms.push((pipeline(&end.rest[1..], end.close, 0)?, nodes));
                end = next;
            } else {
                otherwise = Some(nodes);
                if next.keyword != "end" {
                    return Err(Located::new(next.pos, "a second `else` after a plain `else`"));
                }
                break;
            }
        }
        Ok(match keyword {
            "if" => Node::If { arms, otherwise },
            _ => nest(keyword, arms, otherwise),
        })
    }
}

/// `with a}}…{{else with b}}…` is `with a}}…{{else}}{{with b}}…{{end}}`.
fn nest(keyword: &str, mut arms: Vec<(Pipeline, Nodes)>, otherwise: Option<Nodes>) -> Node {
    let (pipeline, body) = arms.remove(0);
    let otherwise =
        if arms.is_empty() { otherwise } else { Some(vec![nest(keyword, arms, otherwise)]) };
    if keyword == "range" {
        Node::Range { pipeline, body, otherwise }
    } else {
        Node::With { pipeline, body, otherwise }
    }
}

/// A pipeline from the tokens of an action (or of a parenthesized group).
fn pipeline(tokens: &[Token], end: usize, depth: usize) -> Result<Pipeline, Located> {
    if depth > MAX_NESTING {
        return Err(Located::new(
            tokens.first().map_or(end, |t| t.start),
            "parentheses nested too deeply",
        ));
    }
    let pos = tokens.first().map_or(end, |t| t.start);
    if let Some(t) = tokens.iter().find(|t| matches!(t.tok, Tok::Variable(_) | Tok::Assign)) {
        return Err(Located::new(
            t.start,
            "template variables (`$x := …`) are not supported; refer to values as `.name`",
        ));
    }
    let mut commands = Vec::new();
    let mut command: Vec<Operand> = Vec::new();
    let mut command_pos = pos;
    let mut i = 0;
    while i < tokens.len() {
        let token = &tokens[i];
        let operand = match &token.tok {
            Tok::Pipe => {
                finish(&mut commands, &mut command, command_pos, token.start)?;
                command_pos = tokens.get(i + 1).map_or(token.end, |t| t.start);
                i += 1;
                continue;
            }
            Tok::LParen => {
                let close = matching(tokens, i)?;
                let inner = pipeline(&tokens[i + 1..close], tokens[close].start, depth + 1)?;
                i = close;
                let mut path = Vec::new();
                if let Some(Token { tok: Tok::Field(fields), start, .. }) = tokens.get(i + 1)
                    && *start == tokens[close].end
                {
                    path.clone_from(fields);
                    i += 1;
                }
                OperandKind::Group(Box::new(inner), path)
            }
            Tok::RParen => return Err(Located::new(token.start, "unexpected `)`")),
            Tok::Dot => OperandKind::Dot,
            Tok::Field(path) => OperandKind::Field(path.clone()),
            Tok::Root(path) => OperandKind::Root(path.clone()),
            Tok::Str(s) => OperandKind::Literal(Literal::Str(s.clone())),
            Tok::Int(n) => OperandKind::Literal(Literal::Int(*n)),
            Tok::Float(f) => OperandKind::Literal(Literal::Float(*f)),
            Tok::Ident(word) => match word.as_str() {
                "true" => OperandKind::Literal(Literal::Bool(true)),
                "false" => OperandKind::Literal(Literal::Bool(false)),
                "nil" => OperandKind::Literal(Literal::Nil),
                name if funcs::exists(name) => OperandKind::Function(name.to_owned()),
                "if" | "else" | "end" | "range" | "with" => {
                    return Err(Located::new(
                        token.start,
                        format!("`{word}` must start its own action"),
                    ));
                }
                name => {
                    return Err(Located::new(
                        token.start,
                        format!("unknown function `{name}` (a variable is written `.{name}`)"),
                    ));
                }
            },
            Tok::Variable(_) | Tok::Assign => unreachable_token(token)?,
        };
        command.push(Operand { kind: operand, pos: Pos(token.start) });
        i += 1;
    }
    finish(&mut commands, &mut command, command_pos, end)?;
    if let Some(command) =
        commands.iter().skip(1).find(|c| !matches!(c.args[0].kind, OperandKind::Function(_)))
    {
        return Err(Located::new(
            command.pos.0,
            "only a function can follow `|`, as in `.name | len`",
        ));
    }
    Ok(Pipeline { commands, pos: Pos(pos) })
}

fn unreachable_token(token: &Token) -> Result<OperandKind, Located> {
    Err(Located::new(token.start, "unexpected token"))
}

fn finish(
    commands: &mut Vec<Command>,
    command: &mut Vec<Operand>,
    pos: usize,
    at: usize,
) -> Result<(), Located> {
    if command.is_empty() {
        return Err(Located::new(
            at,
            "missing value in a pipeline (an empty command before or after `|`)",
        ));
    }
    let args = std::mem::take(command);
    if args.len() > 1 && !matches!(args[0].kind, OperandKind::Function(_)) {
        return Err(Located::new(
            args[1].pos.0,
            "only a function takes arguments; put the function first, as in `eq .a \"b\"`",
        ));
    }
    commands.push(Command { args, pos: Pos(pos) });
    Ok(())
}

/// The index of the `)` that closes the `(` at `open`.
fn matching(tokens: &[Token], open: usize) -> Result<usize, Located> {
    let mut depth = 0usize;
    for (i, token) in tokens.iter().enumerate().skip(open) {
        match token.tok {
            Tok::LParen => depth += 1,
            Tok::RParen => {
                depth -= 1;
                if depth == 0 {
                    return Ok(i);
                }
            }
            _ => {}
        }
    }
    Err(Located::new(tokens[open].start, "unclosed `(`"))
}
