//! The template language as runbook authors use it: gert's own templates, Go's rules, and
//! errors that say where.

use jig_expr::{Phase, Template, render};
use serde_json::{Value, json};

fn vars() -> Value {
    json!({
        "hostname": "srv1.example.com",
        "health_endpoint": "/healthz",
        "status_code": "503",
        "max_retries": 2,
        "nodes": ["a", "b", "c"],
        "check_node": [{"status_code": 200}, {"status_code": 503}],
        "agents": {"skeptic": {"answer": "no"}},
        "empty": "",
        "flag": false,
        "scope": {"round": {"0": {"var": "x"}}},
    })
}

fn ok(source: &str) -> String {
    render(source, &vars()).unwrap_or_else(|e| panic!("{source}: {e}"))
}

fn err(source: &str) -> jig_expr::Error {
    match render(source, &vars()) {
        Ok(out) => panic!("{source} rendered {out:?}, expected an error"),
        Err(e) => e,
    }
}

#[test]
fn gert_example_templates_render() {
    assert_eq!(
        ok("https://{{ .hostname }}{{ .health_endpoint }}"),
        "https://srv1.example.com/healthz"
    );
    assert_eq!(ok(r#"{{ eq .status_code "503" }}"#), "true");
    assert_eq!(ok(r#"{{ ne .status_code "200" }}"#), "true");
    assert_eq!(
        ok("Unexpected status {{ .status_code }} for {{ .hostname }}."),
        "Unexpected status 503 for srv1.example.com."
    );
    assert_eq!(ok(r#"{{ index .check_node 1 "status_code" }}"#), "503");
    assert_eq!(ok("{{ .agents.skeptic.answer }}"), "no");
    assert_eq!(ok("{{ .scope.round.0.var }}"), "x");
}

#[test]
fn text_without_actions_is_itself_even_with_braces() {
    assert_eq!(ok("plain { text } here"), "plain { text } here");
    assert!(Template::parse("no actions").expect("parse").is_literal());
}

#[test]
fn a_value_containing_template_syntax_is_data_not_a_template() {
    let out = render("{{ .x }}", &json!({"x": "{{ .secret }}"})).expect("render");
    assert_eq!(out, "{{ .secret }}");
}

#[test]
fn undefined_variables_are_errors_with_their_position() {
    let e = err("a\n  {{ .missing }}");
    assert_eq!(e.phase, Phase::Evaluate);
    assert!(e.message.contains("undefined variable `.missing`"), "{e}");
    assert_eq!((e.line, e.column), (2, 6));
    let e = err("{{ .agents.critic.answer }}");
    assert!(e.message.contains("`.agents` has no field `critic`"), "{e}");
    let e = err("{{ .hostname.port }}");
    assert!(e.message.contains("is the string"), "{e}");
}

#[test]
fn comparisons_follow_gert_for_text_and_numbers() {
    assert_eq!(ok("{{ eq .max_retries 2 }}"), "true");
    assert_eq!(ok(r#"{{ eq .max_retries "2" }}"#), "true", "numbers equal their text, as in gert");
    assert_eq!(ok(r#"{{ eq .status_code "200" "503" }}"#), "true", "eq with several candidates");
    assert_eq!(ok(r#"{{ gt "10" "9" }}"#), "true", "numeric text orders as numbers");
    assert_eq!(ok(r#"{{ lt "apple" "banana" }}"#), "true");
    assert_eq!(ok("{{ le 2 2.0 }} {{ ge 1 3 }}"), "true false");
    assert!(err(r#"{{ lt 1 "x" }}"#).message.contains("cannot order"));
}

#[test]
fn and_or_stop_at_the_deciding_argument() {
    assert_eq!(ok("{{ and .flag .undefined }}"), "false");
    assert_eq!(ok("{{ or .hostname .undefined }}"), "srv1.example.com");
    assert_eq!(ok("{{ or .empty .flag }}"), "false");
    assert!(err("{{ and .hostname .undefined }}").message.contains("undefined"));
    assert_eq!(ok("{{ not .flag }} {{ not .nodes }}"), "true false");
}

#[test]
fn pipes_pass_the_value_as_the_last_argument() {
    assert_eq!(ok("{{ .nodes | len }}"), "3");
    assert_eq!(ok(r#"{{ .empty | default "none" | upper }}"#), "NONE");
    assert_eq!(
        ok(r#"{{ hasSuffix .hostname ".com" }}"#),
        "true",
        "gert's order: the text, then the suffix"
    );
    assert_eq!(ok(r#"{{ "a,b" | split "," | len }}"#), "2");
}

#[test]
fn functions_over_lists_maps_and_text() {
    assert_eq!(ok(r#"{{ contains .nodes "b" }} {{ contains .hostname "example" }}"#), "true true");
    assert_eq!(ok(r#"{{ join "+" .nodes }}"#), "a+b+c");
    assert_eq!(ok(r#"{{ .nodes | join "-" }}"#), "a-b-c");
    assert_eq!(
        ok(r#"{{ printf "%s:%d %q %%" .hostname 8080 "x" }}"#),
        r#"srv1.example.com:8080 "x" %"#
    );
    assert_eq!(ok("{{ toJson .check_node }}"), r#"[{"status_code":200},{"status_code":503}]"#);
    assert_eq!(ok(r#"{{ urlquery "a b&c" }}"#), "a%20b%26c");
    assert_eq!(ok("{{ (index .check_node 0).status_code }}"), "200");
    assert_eq!(ok("{{ .nodes }}"), r#"["a","b","c"]"#, "lists print as JSON");
    assert!(err("{{ index .nodes 5 }}").message.contains("out of range"));
    assert!(err(r#"{{ index .agents "critic" }}"#).message.contains("no key `critic`"));
}

#[test]
fn control_structures() {
    assert_eq!(
        ok(
            "{{ if eq .status_code \"200\" }}up{{ else if eq .status_code \"503\" }}degraded{{ else }}?{{ end }}"
        ),
        "degraded"
    );
    assert_eq!(ok("{{ range .nodes }}[{{ . }}]{{ end }}"), "[a][b][c]");
    assert_eq!(
        ok("{{ range .check_node }}{{ .status_code }},{{ $.hostname }};{{ end }}"),
        "200,srv1.example.com;503,srv1.example.com;"
    );
    assert_eq!(ok("{{ range .empty }}x{{ else }}none{{ end }}"), "none");
    assert_eq!(ok("{{ range 3 }}{{ . }}{{ end }}"), "012");
    assert_eq!(ok("{{ with .agents.skeptic }}{{ .answer }}{{ end }}"), "no");
    assert_eq!(ok("{{ with .empty }}set{{ else }}unset{{ end }}"), "unset");
}

#[test]
fn trim_markers_and_comments() {
    assert_eq!(ok("a  {{- .max_retries -}}  b"), "a2b");
    assert_eq!(ok("a {{/* a note */}}b"), "a b");
    assert_eq!(ok("a {{- /* trimmed */ -}} b"), "ab");
    assert!(Template::parse("{{/*/}}").is_err(), "`/*/` does not close itself, as in Go");
    let t = Template::parse("{{{{{/*/*/}}x").expect("parse");
    assert_eq!(
        Template::parse(&t.to_string()).expect("reparse").nodes(),
        t.nodes(),
        "found by fuzzing"
    );
    assert_eq!(ok("{{ -1 }}"), "-1", "a dash followed by a digit is a number, not a trim marker");
}

#[test]
fn braces_before_an_action_are_text() {
    assert_eq!(ok("{{{ .max_retries }}}"), "{2}");
    let t = Template::parse("{\n{{- 0 }}").expect("parse");
    assert_eq!(
        Template::parse(&t.to_string()).expect("reparse").nodes(),
        t.nodes(),
        "found by fuzzing"
    );
}

#[test]
fn strings_may_contain_closing_braces() {
    assert_eq!(ok(r#"{{ "}}" }}"#), "}}");
    assert_eq!(ok("{{ `raw \\n }}` }}"), "raw \\n }}");
    assert_eq!(ok(r#"{{ "tab\there \u00e9" }}"#), "tab\there é");
}

#[test]
fn evaluate_keeps_the_type_of_a_single_action() {
    let vars = vars();
    let t = |s: &str| Template::parse(s).expect("parse").evaluate(&vars).expect("evaluate");
    assert_eq!(t("{{ .nodes }}"), json!(["a", "b", "c"]));
    assert_eq!(t("{{ .max_retries }}"), json!(2));
    assert_eq!(t(" {{ .max_retries }}"), json!(" 2"), "text around an action makes text");
    let cond = |s: &str| Template::parse(s).expect("parse").condition(&vars).expect("condition");
    assert!(cond(r#"{{ eq .status_code "503" }}"#));
    assert!(!cond("{{ .flag }}"));
    assert!(!cond("false"), "the text `false` is false, as in gert");
}

#[test]
fn parse_errors_name_the_problem_and_place() {
    let cases = [
        ("{{ .a ", "unclosed action"),
        ("{{ nope .a }}", "unknown function `nope`"),
        ("{{ .a .b }}", "only a function takes arguments"),
        ("{{ .a | .b }}", "only a function can follow `|`"),
        ("{{ $x := 1 }}", "template variables"),
        ("{{ if .a }}x", "without `{{ end }}`"),
        ("{{ end }}", "without a matching"),
        ("{{ \"open }}", "unclosed string"),
        ("{{ define \"x\" }}{{ end }}", "not supported"),
        ("{{ (eq .a }}", "unclosed `(`"),
        ("{{ }}", "empty action"),
        ("{{ 12ab }}", "bad number"),
        ("{{ .a | }}", "missing value"),
    ];
    for (source, expected) in cases {
        let e = Template::parse(source).expect_err(source);
        assert_eq!(e.phase, Phase::Parse);
        assert!(e.message.contains(expected), "{source}: {e}");
    }
    let e = Template::parse("line one\nline two {{ nope }}").expect_err("unknown");
    assert_eq!((e.line, e.column), (2, 13));
}

#[test]
fn wrong_argument_counts_are_errors() {
    assert!(err("{{ eq .a }}").message.contains("`eq` takes at least 2"));
    assert!(err("{{ not 1 2 }}").message.contains("`not` takes 1"));
}

#[test]
fn deep_nesting_is_refused_not_a_stack_overflow() {
    let deep = format!("{{{{ {}1{} }}}}", "(".repeat(10_000), ")".repeat(10_000));
    assert!(Template::parse(&deep).expect_err("deep").message.contains("nested too deeply"));
    let deep = "{{ if 1 }}".repeat(10_000);
    assert!(Template::parse(&deep).expect_err("deep").message.contains("nested too deeply"));
}

#[test]
fn references_are_the_variables_read_at_the_top_level() {
    let t = Template::parse(r#"{{ eq .a.b "x" }}{{ range .items }}{{ .inner }}{{ $.outer }}{{ end }}{{ (index .c 0).d }}"#)
        .expect("parse");
    let paths: Vec<String> = t.references().into_iter().map(|r| r.path.join(".")).collect();
    assert_eq!(paths, ["a.b", "items", "outer", "c"]);
}

#[test]
fn canonical_printing() {
    let t = Template::parse("x{{- .a|len -}} {{if .b}}y{{else}}z{{end}}").expect("parse");
    assert_eq!(t.to_string(), "x{{ .a | len }}{{ if .b }}y{{ else }}z{{ end }}");
}
