//! Properties over generated templates: printing then parsing gives the same tree, and no input
//! makes the parser or the evaluator panic.

use jig_expr::{Command, Literal, Node, Operand, OperandKind, Pipeline, Pos, Template};
use proptest::prelude::*;
use serde_json::json;

fn ident() -> impl Strategy<Value = String> {
    "[a-zA-Z_][a-zA-Z0-9_]{0,5}|[0-9]{1,2}"
}

fn path(min: usize) -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(ident(), min..3)
}

fn literal() -> impl Strategy<Value = Literal> {
    prop_oneof![
        any::<String>().prop_map(Literal::Str),
        any::<i64>().prop_map(Literal::Int),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Literal::Float),
        any::<bool>().prop_map(Literal::Bool),
        Just(Literal::Nil),
    ]
}

fn function() -> impl Strategy<Value = String> {
    let names: Vec<&'static str> = jig_expr::function_names().collect();
    prop::sample::select(names).prop_map(str::to_owned)
}

fn operand(pipeline: BoxedStrategy<Pipeline>) -> impl Strategy<Value = Operand> {
    prop_oneof![
        Just(OperandKind::Dot),
        path(1).prop_map(OperandKind::Field),
        path(0).prop_map(OperandKind::Root),
        literal().prop_map(OperandKind::Literal),
        (pipeline, path(0)).prop_map(|(p, f)| OperandKind::Group(Box::new(p), f)),
    ]
    .prop_map(|kind| Operand { kind, pos: Pos(0) })
}

fn call(pipeline: BoxedStrategy<Pipeline>) -> impl Strategy<Value = Command> {
    (function(), prop::collection::vec(operand(pipeline), 0..3)).prop_map(|(name, mut args)| {
        args.insert(0, Operand { kind: OperandKind::Function(name), pos: Pos(0) });
        Command { args, pos: Pos(0) }
    })
}

fn pipeline() -> BoxedStrategy<Pipeline> {
    let leaf =
        prop_oneof![path(1).prop_map(OperandKind::Field), literal().prop_map(OperandKind::Literal)]
            .prop_map(|kind| Pipeline {
                commands: vec![Command { args: vec![Operand { kind, pos: Pos(0) }], pos: Pos(0) }],
                pos: Pos(0),
            })
            .boxed();
    leaf.prop_recursive(3, 12, 3, |inner| {
        let first = prop_oneof![
            operand(inner.clone()).prop_map(|o| Command { args: vec![o], pos: Pos(0) }),
            call(inner.clone()),
        ];
        (first, prop::collection::vec(call(inner), 0..2))
            .prop_map(|(first, rest)| {
                let mut commands = vec![first];
                commands.extend(rest);
                Pipeline { commands, pos: Pos(0) }
            })
            .boxed()
    })
    .boxed()
}

fn nodes() -> impl Strategy<Value = Vec<Node>> {
    let leaf = prop_oneof!["[^{]{1,8}".prop_map(Node::Text), pipeline().prop_map(Node::Action)];
    prop::collection::vec(leaf, 0..4)
        .prop_recursive(2, 16, 4, |inner| {
            prop::collection::vec(
                prop_oneof![
                    "[^{]{1,8}".prop_map(Node::Text),
                    pipeline().prop_map(Node::Action),
                    (
                        prop::collection::vec((pipeline(), inner.clone()), 1..3),
                        prop::option::of(inner.clone())
                    )
                        .prop_map(|(arms, otherwise)| Node::If { arms, otherwise }),
                    (pipeline(), inner.clone(), prop::option::of(inner.clone())).prop_map(
                        |(pipeline, body, otherwise)| Node::Range { pipeline, body, otherwise }
                    ),
                    (pipeline(), inner.clone(), prop::option::of(inner)).prop_map(
                        |(pipeline, body, otherwise)| Node::With { pipeline, body, otherwise }
                    ),
                ],
                0..4,
            )
        })
        .prop_map(merge_text)
}

/// Adjacent pieces of text are one piece once printed.
fn merge_text(nodes: Vec<Node>) -> Vec<Node> {
    let mut out: Vec<Node> = Vec::new();
    for node in nodes {
        let node = match node {
            Node::If { arms, otherwise } => Node::If {
                arms: arms.into_iter().map(|(p, b)| (p, merge_text(b))).collect(),
                otherwise: otherwise.map(merge_text),
            },
            Node::Range { pipeline, body, otherwise } => Node::Range {
                pipeline,
                body: merge_text(body),
                otherwise: otherwise.map(merge_text),
            },
            Node::With { pipeline, body, otherwise } => Node::With {
                pipeline,
                body: merge_text(body),
                otherwise: otherwise.map(merge_text),
            },
            other => other,
        };
        match (out.last_mut(), node) {
            (Some(Node::Text(previous)), Node::Text(text)) => previous.push_str(&text),
            (_, node) => out.push(node),
        }
    }
    out
}

struct Printed(Vec<Node>);

impl std::fmt::Display for Printed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Print through a template holding these nodes: parse an empty one and compare trees.
        let template = Template::from_nodes(self.0.clone());
        write!(f, "{template}")
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn printing_then_parsing_gives_the_same_tree(tree in nodes()) {
        let printed = Printed(tree.clone()).to_string();
        let parsed = Template::parse(&printed).map_err(|e| TestCaseError::fail(format!("{printed}: {e}")))?;
        prop_assert_eq!(parsed.nodes(), tree.as_slice(), "{}", printed);
    }

    #[test]
    fn any_text_parses_or_fails_cleanly_and_round_trips(source in any::<String>()) {
        if let Ok(template) = Template::parse(&source) {
            let again = Template::parse(&template.to_string()).expect("canonical form parses");
            prop_assert_eq!(again.nodes(), template.nodes());
            let _ = template.render(&json!({"a": [1, {"b": "c"}], "d": null}));
        }
    }

    #[test]
    fn template_like_text_never_panics(source in "(\\{\\{|\\}\\}|[ .$()|\"`a-z0-9-]|if |else |end|range |with ){0,40}") {
        if let Ok(template) = Template::parse(&source) {
            let _ = template.render(&json!({"a": [1, 2], "b": {"c": true}}));
            let again = Template::parse(&template.to_string()).expect("canonical form parses");
            prop_assert_eq!(again.nodes(), template.nodes());
        }
    }
}
