//! From a syntax tree to symbols and syntax errors, per language.

use tree_sitter::{Node, Tree};

use crate::{Kind, Language, Span, Symbol};

/// A syntax error: where the parser gave up or inserted a missing token.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SyntaxError {
    /// The file.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// A definition found in the tree: its kind, the node holding its name, and the node whose
/// surroundings tell whether it is exported and documented.
struct Definition<'t> {
    kind: Kind,
    name: Node<'t>,
    anchor: Node<'t>,
}

/// Every symbol defined in `tree`.
pub(crate) fn symbols(language: Language, tree: &Tree, source: &[u8], file: &str) -> Vec<Symbol> {
    let mut out: Vec<Symbol> = Vec::new();
    let mut seen: std::collections::HashMap<(Kind, String), usize> =
        std::collections::HashMap::new();
    let mut cursor = tree.walk();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if let Some(definition) = classify(language, node, source) {
            let name = text(definition.name, source).to_owned();
            let count = seen.entry((definition.kind, name.clone())).or_insert(0);
            *count += 1;
            let mut id = format!("{file}:{}:{name}", definition.kind.as_str());
            if *count > 1 {
                id.push_str(&format!("#{count}"));
            }
            out.push(Symbol {
                id,
                kind: definition.kind,
                exported: exported(language, &definition, &name, source),
                has_doc: documented(language, &definition, source),
                name,
                file: file.to_owned(),
                span: Span { start: node.start_byte(), end: node.end_byte() },
                line: node.start_position().row + 1,
                language,
            });
        }
        // Children in reverse, so the stack pops them in source order.
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    out
}

/// The first syntax error of `tree`, if any.
pub(crate) fn first_error(tree: &Tree, source: &[u8], file: &str) -> Option<SyntaxError> {
    let root = tree.root_node();
    if !root.has_error() {
        return None;
    }
    let mut cursor = tree.walk();
    let mut node = root;
    'descend: loop {
        if node.is_error() || node.is_missing() {
            break;
        }
        for child in node.children(&mut cursor) {
            if child.has_error() || child.is_missing() {
                node = child;
                continue 'descend;
            }
        }
        break;
    }
    let line = node.start_position().row + 1;
    let message = if node.is_missing() {
        format!("missing `{}`", node.kind())
    } else {
        let snippet: String = text(node, source).chars().take(40).collect();
        format!("syntax error at `{}`", snippet.replace('\n', " "))
    };
    Some(SyntaxError { file: file.to_owned(), line, message })
}

fn classify<'t>(language: Language, node: Node<'t>, source: &[u8]) -> Option<Definition<'t>> {
    let named = |kind: Kind| {
        node.child_by_field_name("name").map(|name| Definition { kind, name, anchor: node })
    };
    match language {
        Language::Rust => match node.kind() {
            "function_item" | "function_signature_item" => {
                let in_impl = node
                    .parent()
                    .filter(|p| p.kind() == "declaration_list")
                    .and_then(|p| p.parent())
                    .is_some_and(|g| matches!(g.kind(), "impl_item" | "trait_item"));
                named(if in_impl { Kind::Method } else { Kind::Fn })
            }
            "struct_item" | "union_item" => named(Kind::Struct),
            "enum_item" => named(Kind::Enum),
            "trait_item" => named(Kind::Trait),
            "type_item" => named(Kind::Type),
            "const_item" | "static_item" => named(Kind::Const),
            "mod_item" => named(Kind::Module),
            "impl_item" => node.child_by_field_name("type").map(|name| Definition {
                kind: Kind::Impl,
                name,
                anchor: node,
            }),
            _ => None,
        },
        Language::Python => match node.kind() {
            "function_definition" => {
                let in_class = node
                    .parent()
                    .filter(|p| p.kind() == "block")
                    .and_then(|p| p.parent())
                    .is_some_and(|g| g.kind() == "class_definition");
                named(if in_class { Kind::Method } else { Kind::Fn })
            }
            "class_definition" => named(Kind::Class),
            _ => None,
        },
        Language::JavaScript | Language::TypeScript | Language::Tsx => match node.kind() {
            "function_declaration" | "generator_function_declaration" => named(Kind::Fn),
            "class_declaration" | "abstract_class_declaration" => named(Kind::Class),
            "method_definition" => named(Kind::Method),
            "interface_declaration" => named(Kind::Interface),
            "type_alias_declaration" => named(Kind::Type),
            "enum_declaration" => named(Kind::Enum),
            "variable_declarator" => {
                let value = node.child_by_field_name("value")?;
                if !matches!(value.kind(), "arrow_function" | "function_expression" | "function") {
                    return None;
                }
                let name = node.child_by_field_name("name").filter(|n| n.kind() == "identifier")?;
                // The declaration statement carries `export` and the doc comment.
                let anchor = node
                    .parent()
                    .filter(|p| matches!(p.kind(), "lexical_declaration" | "variable_declaration"))
                    .unwrap_or(node);
                Some(Definition { kind: Kind::Fn, name, anchor })
            }
            _ => None,
        },
        Language::Go => match node.kind() {
            "function_declaration" => named(Kind::Fn),
            "method_declaration" => named(Kind::Method),
            "type_spec" | "type_alias" => {
                let kind = match node.child_by_field_name("type").map(|t| t.kind()) {
                    Some("struct_type") => Kind::Struct,
                    Some("interface_type") => Kind::Interface,
                    _ => Kind::Type,
                };
                let anchor = node
                    .parent()
                    .filter(|p| p.kind() == "type_declaration" && p.named_child_count() == 1)
                    .unwrap_or(node);
                node.child_by_field_name("name").map(|name| Definition { kind, name, anchor })
            }
            "const_spec" => {
                let name = node.child_by_field_name("name")?;
                let _ = source;
                Some(Definition { kind: Kind::Const, name, anchor: node })
            }
            _ => None,
        },
    }
}

fn exported(language: Language, definition: &Definition<'_>, name: &str, source: &[u8]) -> bool {
    match language {
        Language::Rust => {
            let mut cursor = definition.anchor.walk();
            definition
                .anchor
                .named_children(&mut cursor)
                .any(|child| child.kind() == "visibility_modifier" && text(child, source) == "pub")
        }
        Language::Python => !name.starts_with('_'),
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            definition.anchor.parent().is_some_and(|p| p.kind() == "export_statement")
        }
        Language::Go => name.chars().next().is_some_and(char::is_uppercase),
    }
}

fn documented(language: Language, definition: &Definition<'_>, source: &[u8]) -> bool {
    match language {
        Language::Python => definition
            .anchor
            .child_by_field_name("body")
            .and_then(|body| body.named_child(0))
            .filter(|first| first.kind() == "expression_statement")
            .and_then(|first| first.named_child(0))
            .is_some_and(|value| value.kind() == "string"),
        Language::Rust => {
            let mut previous = definition.anchor.prev_named_sibling();
            while let Some(node) = previous {
                match node.kind() {
                    "attribute_item" if text(node, source).starts_with("#[doc") => return true,
                    "attribute_item" => previous = node.prev_named_sibling(),
                    "line_comment" => {
                        let comment = text(node, source);
                        return comment.starts_with("///") && !comment.starts_with("////");
                    }
                    "block_comment" => return text(node, source).starts_with("/**"),
                    _ => return false,
                }
            }
            false
        }
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            let statement = definition
                .anchor
                .parent()
                .filter(|p| p.kind() == "export_statement")
                .unwrap_or(definition.anchor);
            statement.prev_named_sibling().is_some_and(|c| {
                c.kind() == "comment"
                    && text(c, source).starts_with("/**")
                    && adjacent(c, statement)
            })
        }
        Language::Go => {
            let declaration = match definition.anchor.kind() {
                "type_spec" | "type_alias" => definition
                    .anchor
                    .parent()
                    .filter(|p| p.named_child_count() == 1)
                    .unwrap_or(definition.anchor),
                _ => definition.anchor,
            };
            declaration
                .prev_named_sibling()
                .is_some_and(|c| c.kind() == "comment" && adjacent(c, declaration))
        }
    }
}

/// Whether `comment` ends on the line just above `node`.
fn adjacent(comment: Node<'_>, node: Node<'_>) -> bool {
    comment.end_position().row + 1 >= node.start_position().row
}

pub(crate) fn text<'s>(node: Node<'_>, source: &'s [u8]) -> &'s str {
    std::str::from_utf8(&source[node.byte_range()]).unwrap_or_default()
}
