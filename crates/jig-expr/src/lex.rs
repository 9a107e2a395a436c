//! Splits a template into text and actions, and an action into tokens.
//!
//! Go's text/template rules: an action is `{{ … }}`; `{{- ` trims the whitespace before it and
//! ` -}}` the whitespace after; `{{/* … */}}` is a comment. Strings inside an action may contain
//! `}}`, so actions are tokenized, not searched for their end.

use crate::error::Located;

/// A token of an action.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// `.` on its own.
    Dot,
    /// `.a.b`.
    Field(Vec<String>),
    /// `$` or `$.a.b`.
    Root(Vec<String>),
    /// `$name`: template variables, which runbook templates do not have.
    Variable(String),
    /// A bare word: a function name or a keyword.
    Ident(String),
    Str(String),
    Int(i64),
    Float(f64),
    LParen,
    RParen,
    Pipe,
    /// `:=` or `=`.
    Assign,
}

#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

/// A piece of the template.
#[derive(Debug)]
pub(crate) enum Item {
    Text(String),
    /// An action's tokens; `pos` is where `{{` is.
    Action {
        tokens: Vec<Token>,
        pos: usize,
        close: usize,
    },
    /// `{{/* … */}}`, kept so that printing gives the template back.
    Comment(String),
}

/// Nested parentheses allowed in one action: deep enough for any real template, shallow enough
/// that a hostile one cannot exhaust the stack.
pub(crate) const MAX_NESTING: usize = 64;

pub(crate) fn scan(src: &str) -> Result<Vec<Item>, Located> {
    let mut items = Vec::new();
    let mut rest = 0;
    let mut trim_next = false;
    while rest < src.len() {
        let Some(found) = src[rest..].find("{{") else {
            push_text(&mut items, &src[rest..], trim_next, false);
            break;
        };
        // In a run of braces the action starts at the last two (`{{{ .x }}` is the text `{`,
        // then an action), so text that ends with `{` before an action prints back as it reads.
        let mut open = rest + found;
        while src[open + 2..].starts_with('{') {
            open += 1;
        }
        let after_open = open + 2;
        let trim_before = src[after_open..].starts_with('-')
            && src[after_open + 1..].starts_with(|c: char| c.is_ascii_whitespace());
        push_text(&mut items, &src[rest..open], trim_next, trim_before);
        let mut lexer = Lexer { src, at: if trim_before { after_open + 2 } else { after_open } };
        lexer.skip_space();
        if lexer.rest().starts_with("/*") {
            // The closing `*/` comes after the opening one (`/*/` does not close itself).
            let Some(end) = lexer.rest()[2..].find("*/") else {
                return Err(Located::new(open, "unclosed comment: `/*` without `*/`"));
            };
            items.push(Item::Comment(lexer.rest()[2..2 + end].to_owned()));
            lexer.at += end + 4;
            let (close, trim_after) = lexer.close(open)?;
            trim_next = trim_after;
            rest = close;
            continue;
        }
        let mut tokens = Vec::new();
        loop {
            lexer.skip_space();
            if let Some((close, trim_after)) = lexer.try_close() {
                items.push(Item::Action { tokens, pos: open, close: lexer.at });
                trim_next = trim_after;
                rest = close;
                break;
            }
            if lexer.at >= src.len() {
                return Err(Located::new(open, "unclosed action: `{{` without `}}`"));
            }
            tokens.push(lexer.token()?);
        }
    }
    Ok(items)
}

fn push_text(items: &mut Vec<Item>, text: &str, trim_start: bool, trim_end: bool) {
    let mut text = text;
    if trim_start {
        text = text.trim_start_matches(|c: char| c.is_ascii_whitespace());
    }
    if trim_end {
        text = text.trim_end_matches(|c: char| c.is_ascii_whitespace());
    }
    if !text.is_empty() {
        items.push(Item::Text(text.to_owned()));
    }
}

struct Lexer<'a> {
    src: &'a str,
    at: usize,
}

impl Lexer<'_> {
    fn rest(&self) -> &str {
        &self.src[self.at..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn skip_space(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_whitespace()).len();
    }

    /// At `}}` or ` -}}` (the whitespace already skipped): the offset after it and whether it
    /// trims the text that follows.
    fn try_close(&mut self) -> Option<(usize, bool)> {
        let rest = self.rest();
        if rest.starts_with("}}") {
            return Some((self.at + 2, false));
        }
        let spaced = self.at > 0 && self.src.as_bytes()[self.at - 1].is_ascii_whitespace();
        if spaced && rest.starts_with("-}}") {
            return Some((self.at + 3, true));
        }
        None
    }

    fn close(&mut self, open: usize) -> Result<(usize, bool), Located> {
        self.skip_space();
        self.try_close().ok_or_else(|| Located::new(open, "a comment must end its action: `*/}}`"))
    }

    fn token(&mut self) -> Result<Token, Located> {
        let start = self.at;
        let c = self.peek().unwrap_or(' ');
        let tok = match c {
            '(' => {
                self.at += 1;
                Tok::LParen
            }
            ')' => {
                self.at += 1;
                Tok::RParen
            }
            '|' => {
                self.at += 1;
                Tok::Pipe
            }
            '=' => {
                self.at += 1;
                Tok::Assign
            }
            ':' if self.rest().starts_with(":=") => {
                self.at += 2;
                Tok::Assign
            }
            '.' => {
                let path = self.path();
                if path.is_empty() {
                    self.at += 1;
                    Tok::Dot
                } else {
                    Tok::Field(path)
                }
            }
            '$' => {
                self.at += 1;
                if self.peek().is_some_and(is_word) {
                    Tok::Variable(self.word().to_owned())
                } else {
                    Tok::Root(self.path())
                }
            }
            '"' => Tok::Str(self.quoted()?),
            '`' => {
                let Some(end) = self.src[start + 1..].find('`') else {
                    return Err(Located::new(start, "unclosed raw string"));
                };
                self.at = start + 1 + end + 1;
                Tok::Str(self.src[start + 1..start + 1 + end].to_owned())
            }
            '-' | '+' | '0'..='9' => self.number()?,
            c if is_word(c) => Tok::Ident(self.word().to_owned()),
            c => return Err(Located::new(start, format!("unexpected `{c}` in an action"))),
        };
        Ok(Token { tok, start, end: self.at })
    }

    fn word(&mut self) -> &str {
        let start = self.at;
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start_matches(is_word).len();
        &self.src[start..self.at]
    }

    /// `.a.b.0`: segments while a `.` is followed by a word character.
    fn path(&mut self) -> Vec<String> {
        let mut path = Vec::new();
        while self.rest().starts_with('.') && self.rest()[1..].starts_with(is_word) {
            self.at += 1;
            path.push(self.word().to_owned());
        }
        path
    }

    fn quoted(&mut self) -> Result<String, Located> {
        let start = self.at;
        let mut out = String::new();
        let mut chars = self.src[start + 1..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.at = start + 1 + i + 1;
                    return Ok(out);
                }
                '\n' => break,
                '\\' => {
                    let Some((j, e)) = chars.next() else { break };
                    let escape_at = start + 1 + j;
                    match e {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        '0' => out.push('\0'),
                        '\\' | '"' | '\'' => out.push(e),
                        'x' | 'u' | 'U' => {
                            let digits = match e {
                                'x' => 2,
                                'u' => 4,
                                _ => 8,
                            };
                            let hex: String = chars.by_ref().take(digits).map(|(_, h)| h).collect();
                            let code = (hex.len() == digits)
                                .then(|| u32::from_str_radix(&hex, 16).ok())
                                .flatten()
                                .and_then(char::from_u32)
                                .ok_or_else(|| {
                                    Located::new(escape_at, format!("bad escape `\\{e}{hex}`"))
                                })?;
                            out.push(code);
                        }
                        other => {
                            return Err(Located::new(
                                escape_at,
                                format!("unknown escape `\\{other}`"),
                            ));
                        }
                    }
                }
                c => out.push(c),
            }
        }
        Err(Located::new(start, "unclosed string"))
    }

    fn number(&mut self) -> Result<Tok, Located> {
        let start = self.at;
        let bytes = self.src.as_bytes();
        let mut i = start;
        if matches!(bytes.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        if !bytes.get(i).is_some_and(u8::is_ascii_digit) {
            return Err(Located::new(
                start,
                format!("unexpected `{}` in an action", bytes[start] as char),
            ));
        }
        let hex = bytes.get(i) == Some(&b'0') && matches!(bytes.get(i + 1), Some(b'x' | b'X'));
        let mut float = false;
        if hex {
            i += 2;
            while bytes.get(i).is_some_and(|b| b.is_ascii_hexdigit() || *b == b'_') {
                i += 1;
            }
        } else {
            while let Some(&b) = bytes.get(i) {
                match b {
                    b'0'..=b'9' | b'_' => i += 1,
                    b'.' if !float && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                        float = true;
                        i += 1;
                    }
                    b'e' | b'E' => {
                        float = true;
                        i += 1;
                        if matches!(bytes.get(i), Some(b'-' | b'+')) {
                            i += 1;
                        }
                    }
                    _ => break,
                }
            }
        }
        self.at = i;
        if self.peek().is_some_and(is_word) {
            let bad = self.word().to_owned();
            return Err(Located::new(start, format!("bad number `{}{bad}`", &self.src[start..i])));
        }
        let text: String = self.src[start..i].chars().filter(|c| *c != '_').collect();
        let bad = || Located::new(start, format!("bad number `{}`", &self.src[start..i]));
        if hex {
            let (negative, digits) = match text.strip_prefix('-') {
                Some(d) => (true, d),
                None => (false, text.trim_start_matches('+')),
            };
            let value = i64::from_str_radix(&digits[2..], 16).map_err(|_| bad())?;
            return Ok(Tok::Int(if negative { -value } else { value }));
        }
        if !float && let Ok(value) = text.parse::<i64>() {
            return Ok(Tok::Int(value));
        }
        match text.parse::<f64>() {
            Ok(value) if value.is_finite() => Ok(Tok::Float(value)),
            _ => Err(bad()),
        }
    }
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}
