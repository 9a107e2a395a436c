//! Seed 000's rules for toolpacks, its "Testing" list first.

use jig_model::diagnostic::codes;
use jig_model::tool_def::ToolExecution;
use jig_model::toolpack::Execution;
use jig_model::{Risk, SideEffect};
use proptest::prelude::*;
use serde_json::json;

use crate::support::{Project, toolpack, toolpack_with};

#[test]
fn loads_a_spec_compliant_toolpack_with_nested_ref_schemas() {
    let project = Project::with_manifest("name: acme\n");
    project
        .file(
            "tools/report.tool.yaml",
            "id: acme.report\n\
             version: 2.1.0-rc.1\n\
             description: Build the weekly report.\n\
             tags: [report]\n\
             deterministic: false\n\
             timeoutMs: 5000\n\
             limits: { maxInputBytes: 2048, maxOutputBytes: 4096 }\n\
             inputSchema: { $ref: ../schemas/input.json }\n\
             outputSchema: { $ref: ../schemas/common.yaml#/$defs/report }\n\
             execution: { kind: python, module: acme.reports.weekly:build }\n",
        )
        .file(
            "schemas/input.json",
            r#"{"type": "object", "properties": {"week": {"$ref": "common.yaml#/$defs/week"}}, "required": ["week"]}"#,
        )
        .file(
            "schemas/common.yaml",
            "$defs:\n  week: { type: string, pattern: '^[0-9]{4}-W[0-9]{2}$' }\n  report:\n    type: object\n    properties:\n      week: { $ref: '#/$defs/week' }\n",
        );
    let snapshot = project.snapshot();
    let tool = snapshot.get("acme.report").expect("registered");
    // Nested chains are resolved relative to the referencing file, and inlined.
    assert_eq!(
        tool.input_schema,
        json!({"type": "object", "properties": {"week": {"type": "string", "pattern": "^[0-9]{4}-W[0-9]{2}$"}}, "required": ["week"]})
    );
    assert_eq!(tool.output_schema["properties"]["week"]["pattern"], "^[0-9]{4}-W[0-9]{2}$");
    assert!(!tool.output_schema.to_string().contains("$ref"));
    assert_eq!(tool.version, "2.1.0-rc.1");
    assert_eq!(tool.timeout_ms, 5000);
    assert!(
        matches!(&tool.execution, ToolExecution::Toolpack(Execution::Python(p)) if p.module.as_deref() == Some("acme.reports.weekly:build"))
    );
    // Undeclared side effects of a process tool are assumed to be anything a program can do.
    assert_eq!(tool.side_effects, vec![SideEffect::Exec]);
    assert_eq!(tool.risk, Risk::High);
    assert_eq!(tool.source.file, "tools/report.tool.yaml");
}

#[test]
fn snake_case_metadata_is_rejected_with_the_camel_case_spelling() {
    let project = Project::with_manifest("name: acme\n");
    project.file(
        "tools/t.tool.yaml",
        &toolpack("acme.t")
            .replace("timeoutMs: 1000", "timeout_ms: 1000")
            .replace("inputSchema", "input_schema"),
    );
    let unknown: Vec<_> =
        project.diagnostics().into_iter().filter(|d| d.code == codes::FIELD_UNKNOWN).collect();
    assert_eq!(unknown.len(), 2);
    assert_eq!(unknown[0].hint.as_deref(), Some("did you mean `timeoutMs`?"));
    assert_eq!(unknown[0].line, Some(4));
    assert_eq!(unknown[0].column, Some(1));
    assert_eq!(unknown[1].hint.as_deref(), Some("did you mean `inputSchema`?"));
    // And the camelCase fields they stood for are reported missing.
    let missing: Vec<String> = project
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == codes::FIELD_MISSING)
        .map(|d| d.message)
        .collect();
    assert_eq!(
        missing,
        [
            "missing required field `inputSchema` in a toolpack",
            "missing required field `timeoutMs` in a toolpack"
        ]
    );
}

#[test]
fn every_missing_required_field_is_reported_at_once() {
    let project = Project::with_manifest("name: acme\n");
    project.file("tools/t.tool.yaml", "description: nothing else\n");
    let missing: Vec<String> = project
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == codes::FIELD_MISSING)
        .map(|d| d.message)
        .collect();
    for field in [
        "id",
        "version",
        "deterministic",
        "timeoutMs",
        "limits",
        "inputSchema",
        "outputSchema",
        "execution",
    ] {
        assert!(
            missing.contains(&format!("missing required field `{field}` in a toolpack")),
            "{field}: {missing:?}"
        );
    }
}

#[test]
fn duplicate_ids_are_rejected_naming_both_files() {
    let project = Project::with_manifest("name: acme\n");
    project
        .file("tools/a.tool.yaml", &toolpack("acme.same"))
        .file("tools/nested/b.tool.yaml", &toolpack("acme.same"));
    let error = project.error(codes::TOOL_DUPLICATE);
    assert!(error.message.contains("tools/a.tool.yaml"), "{}", error.message);
    assert!(error.message.contains("tools/nested/b.tool.yaml"), "{}", error.message);
    assert_eq!(error.file.as_deref(), Some("tools/nested/b.tool.yaml"));
    assert_eq!(error.line, Some(1));
}

#[test]
fn ids_must_be_dotted_lowercase_and_single_segments_are_reserved() {
    for (id, code) in [
        ("Acme.Deploy", codes::TOOL_ID),
        ("acme..deploy", codes::TOOL_ID),
        ("acme.deploy.", codes::TOOL_ID),
        ("1acme.x", codes::TOOL_ID),
        ("deploy", codes::TOOL_ID_RESERVED),
    ] {
        let project = Project::with_manifest("name: acme\n");
        project.file("tools/t.tool.yaml", &toolpack(id));
        let error = project.error(code);
        assert_eq!((error.line, error.pointer.as_deref()), (Some(1), Some("/id")), "{id}");
    }
}

#[test]
fn versions_must_be_semver() {
    for bad in ["\"1.0\"", "v1.0.0", "1.0.0.0", "latest"] {
        let project = Project::with_manifest("name: acme\n");
        project.file(
            "tools/t.tool.yaml",
            &toolpack_with("acme.t", "version", &format!("version: {bad}")),
        );
        let error = project.error(codes::TOOL_VERSION);
        assert_eq!(error.hint.as_deref(), Some("use MAJOR.MINOR.PATCH, e.g. `1.0.0`"));
    }
    let project = Project::with_manifest("name: acme\n");
    project.file(
        "tools/t.tool.yaml",
        &toolpack_with("acme.t", "version", "version: 3.0.0-beta.2+build.7"),
    );
    project.snapshot();
}

#[test]
fn timeout_and_limits_must_be_positive_integers() {
    for (key, line, pointer) in [
        ("timeoutMs", "timeoutMs: 0", "/timeoutMs"),
        ("timeoutMs", "timeoutMs: -1", "/timeoutMs"),
        ("limits", "limits: { maxInputBytes: 0, maxOutputBytes: 1 }", "/limits/maxInputBytes"),
        ("limits", "limits: { maxInputBytes: 1, maxOutputBytes: -3 }", "/limits/maxOutputBytes"),
    ] {
        let project = Project::with_manifest("name: acme\n");
        project.file("tools/t.tool.yaml", &toolpack_with("acme.t", key, line));
        assert_eq!(project.error(codes::FIELD_RANGE).pointer.as_deref(), Some(pointer));
    }
    let project = Project::with_manifest("name: acme\n");
    project.file("tools/t.tool.yaml", &toolpack_with("acme.t", "timeoutMs", "timeoutMs: 1.5"));
    assert_eq!(
        project.error(codes::FIELD_TYPE).message,
        "`timeoutMs` must be an integer, not `1.5`"
    );
}

#[test]
fn execution_kinds_are_whitelisted() {
    let project = Project::with_manifest("name: acme\n");
    project.file(
        "tools/t.tool.yaml",
        &toolpack_with("acme.t", "execution", "execution: { kind: pyhton, module: a:b }"),
    );
    let error = project.error(codes::FIELD_ENUM);
    assert_eq!(
        error.message,
        "`execution.kind` must be one of builtin, python, node, php, cli, http, docker, slurm, hybrid, not \"pyhton\""
    );
    assert_eq!(error.hint.as_deref(), Some("did you mean `python`?"));
    assert_eq!(error.pointer.as_deref(), Some("/execution/kind"));
}

#[test]
fn builtin_execution_is_only_for_the_std_package() {
    let project = Project::with_manifest("name: acme\n");
    project.file(
        "tools/t.tool.yaml",
        &toolpack_with("acme.t", "execution", "execution: { kind: builtin }"),
    );
    assert_eq!(project.error(codes::TOOL_BUILTIN).pointer.as_deref(), Some("/execution/kind"));
}

fn execution_errors(execution: &str) -> Vec<(String, String)> {
    let project = Project::with_manifest("name: acme\n");
    project.file(
        "tools/t.tool.yaml",
        &toolpack_with("acme.t", "execution", &format!("execution: {execution}")),
    );
    project.diagnostics().into_iter().map(|d| (d.code, d.message)).collect()
}

#[test]
fn each_execution_kind_has_its_contract() {
    let cases = [
        (
            "{ kind: python, module: acme.tools }",
            codes::TOOL_EXECUTION,
            "python `module` must be `package.module:callable`, not `acme.tools`",
        ),
        (
            "{ kind: python }",
            codes::TOOL_EXECUTION,
            "python execution needs `module: package.module:callable` or a non-empty `script`",
        ),
        (
            "{ kind: python, script: '  ' }",
            codes::TOOL_EXECUTION,
            "python execution needs `module: package.module:callable` or a non-empty `script`",
        ),
        (
            "{ kind: python, script: run.py }",
            codes::TOOL_EXECUTION,
            "script `run.py` does not exist",
        ),
        (
            "{ kind: python, script: ../../outside.py }",
            codes::TOOL_EXECUTION,
            "script `../../outside.py` is outside the package",
        ),
        (
            "{ kind: cli, cmd: 'echo hi' }",
            codes::FIELD_TYPE,
            "`execution.cmd` must be an array, not \"echo hi\"",
        ),
        ("{ kind: cli, cmd: [] }", codes::FIELD_RANGE, "`execution.cmd` needs at least 1 item(s)"),
        (
            "{ kind: cli, cmd: [echo, 3] }",
            codes::FIELD_TYPE,
            "`execution.cmd[1]` must be a string, not `3`",
        ),
        (
            "{ kind: http, url: ftp://x.example/ }",
            codes::TOOL_EXECUTION,
            "http `url` must start with http:// or https://, not `ftp://x.example/`",
        ),
        ("{ kind: http }", codes::FIELD_MISSING, "missing required field `url` in `execution`"),
        (
            "{ kind: http, url: 'https://x.example', headers: { X-N: 1 } }",
            codes::FIELD_TYPE,
            "`execution.headers.X-N` must be a string, not `1`",
        ),
        (
            "{ kind: http, url: 'https://x.example', method: FETCH }",
            codes::FIELD_ENUM,
            "`execution.method` must be one of GET, POST, PUT, PATCH, DELETE, HEAD, not \"FETCH\"",
        ),
        (
            "{ kind: node }",
            codes::TOOL_EXECUTION,
            "node execution needs a `script`, `module` or inline `node` program",
        ),
        (
            "{ kind: php }",
            codes::TOOL_EXECUTION,
            "php execution needs a `script` or an inline `php` program",
        ),
        (
            "{ kind: php, php: 'echo 1;', script: x.php }",
            codes::TOOL_EXECUTION,
            "php execution has both `php` and `script`",
        ),
    ];
    for (execution, code, message) in cases {
        let errors = execution_errors(execution);
        assert!(errors.contains(&(code.to_owned(), message.to_owned())), "{execution}: {errors:?}");
    }
}

#[test]
fn scripts_next_to_the_tool_file_are_accepted() {
    let project = Project::with_manifest("name: acme\n");
    project
        .file("tools/t.tool.yaml", &toolpack_with("acme.t", "execution", "execution: { kind: python, script: scripts/run.py }"))
        .file("tools/scripts/run.py", "print('{}')\n")
        .file("tools/n.tool.yaml", &toolpack_with("acme.n", "execution", "execution: { kind: node, node: 'console.log(1)' }"))
        .file("tools/p.tool.yaml", &toolpack_with("acme.p", "execution", "execution: { kind: php, php: 'echo 1;' }"))
        .file("tools/h.tool.yaml", &toolpack_with("acme.h", "execution", "execution: { kind: http, url: 'https://x.example', method: POST, headers: { X-A: b } }"));
    assert_eq!(project.snapshot().len(), 4);
}

#[test]
fn caps_env_and_templating_follow_their_contracts() {
    let cases = [
        ("caps", "caps: { network: [ftp] }", codes::FIELD_ENUM, "/caps/network/0"),
        (
            "caps",
            "caps: { filesystem: { read: [/etc] } }",
            codes::TOOL_CAPS,
            "/caps/filesystem/read/0",
        ),
        (
            "caps",
            "caps: { filesystem: { write: [../up] } }",
            codes::TOOL_CAPS,
            "/caps/filesystem/write/0",
        ),
        ("caps", "caps: { subprocess: 'yes' }", codes::FIELD_TYPE, "/caps/subprocess"),
        ("env", "env: { passthrough: [home] }", codes::FIELD_PATTERN, "/env/passthrough/0"),
        ("env", "env: { set: { lower_case: x } }", codes::FIELD_PATTERN, "/env/set/lower_case"),
        ("env", "env: { set: { OK: 1 } }", codes::FIELD_TYPE, "/env/set/OK"),
        ("templating", "templating: { engine: mustache }", codes::FIELD_ENUM, "/templating/engine"),
    ];
    for (key, line, code, pointer) in cases {
        let project = Project::with_manifest("name: acme\n");
        project.file("tools/t.tool.yaml", &toolpack_with("acme.t", key, line));
        let error = project.error(code);
        assert_eq!(error.pointer.as_deref(), Some(pointer), "{line}");
    }
    let project = Project::with_manifest("name: acme\n");
    project.file(
        "tools/t.tool.yaml",
        &(toolpack("acme.t")
            + "caps: { network: [https], filesystem: { read: [src], write: [out/reports] }, subprocess: true }\n\
               env: { passthrough: [HOME, CARGO_HOME], set: { LC_ALL: C } }\n\
               templating: { engine: jinja2, context: { region: eu, retries: [1, 2] } }\n"),
    );
    let snapshot = project.snapshot();
    let tool = snapshot.get("acme.t").expect("tool");
    assert_eq!(tool.env.as_ref().map(|e| e.passthrough.len()), Some(2));
    assert_eq!(tool.templating.as_ref().map(|t| t.context["retries"].clone()), Some(json!([1, 2])));
}

#[test]
fn templates_must_parse_and_use_declared_variables() {
    let base = "id: acme.t\nversion: 1.0.0\ndeterministic: true\ntimeoutMs: 1000\n\
                limits: { maxInputBytes: 1024, maxOutputBytes: 1024 }\n\
                inputSchema: { type: object, properties: { path: { type: string } } }\n\
                outputSchema: { type: object }\n";
    let project = Project::with_manifest("name: acme\n");
    project.file("tools/t.tool.yaml", &format!("{base}templating: {{ engine: jinja2, context: {{ flag: -v }} }}\nexecution: {{ kind: cli, cmd: [cat, '{{{{ flag }}}}', '{{{{ pth }}}}'] }}\n"));
    let error = project.error(codes::TOOL_TEMPLATE);
    assert_eq!(
        error.message,
        "template uses `pth`, which is neither in `inputSchema.properties` nor in `templating.context`"
    );
    assert_eq!(error.hint.as_deref(), Some("did you mean `path`?"));
    assert_eq!(error.pointer.as_deref(), Some("/execution/cmd/2"));

    let project = Project::with_manifest("name: acme\n");
    project.file("tools/t.tool.yaml", &format!("{base}templating: {{ engine: jinja2 }}\nexecution: {{ kind: cli, cmd: [cat, '{{{{ path '] }}\n"));
    assert!(project.error(codes::TOOL_TEMPLATE).message.starts_with("template does not parse"));

    // Without `templating`, braces are literal text; the loader says so.
    let project = Project::with_manifest("name: acme\n");
    project.file(
        "tools/t.tool.yaml",
        &format!("{base}execution: {{ kind: cli, cmd: [cat, '{{{{ path }}}}'] }}\n"),
    );
    let snapshot = project.snapshot();
    assert_eq!(snapshot.warnings().len(), 1);
    assert_eq!(snapshot.warnings()[0].code, codes::TOOL_TEMPLATE);
}

#[test]
fn declared_outputs_reserve_the_log_role_and_reject_repeats() {
    let project = Project::with_manifest("name: acme\n");
    project.file("tools/t.tool.yaml", &(toolpack("acme.t") + "outputs:\n  - { role: log, type: text/plain }\n  - { role: csv, type: text/csv }\n  - { role: csv, type: text/csv }\n"));
    let errors: Vec<String> = project.diagnostics().into_iter().map(|d| d.message).collect();
    assert_eq!(
        errors,
        [
            "output role `log` is reserved: every run produces it",
            "output role `csv` is declared twice"
        ]
    );
}

#[test]
fn schemas_must_be_valid_json_schema_describing_objects() {
    let project = Project::with_manifest("name: acme\n");
    project.file(
        "tools/t.tool.yaml",
        &toolpack_with("acme.t", "outputSchema", "outputSchema: { type: strnig }"),
    );
    let error = project.error(codes::SCHEMA_INVALID);
    assert_eq!(
        error.message,
        "`outputSchema` is not a valid JSON Schema: `strnig` is not a JSON Schema type"
    );
    assert_eq!(error.hint.as_deref(), Some("did you mean `string`?"));
    assert_eq!((error.line, error.column), (Some(7), Some(23)));

    let project = Project::with_manifest("name: acme\n");
    project.file(
        "tools/t.tool.yaml",
        &toolpack_with("acme.t", "inputSchema", "inputSchema: { type: array }"),
    );
    assert_eq!(
        project.error(codes::SCHEMA_INVALID).message,
        "`inputSchema` must describe an object (`type: object`)"
    );

    // A pattern that does not compile is caught at load, not at the first call.
    let project = Project::with_manifest("name: acme\n");
    project.file(
        "tools/t.tool.yaml",
        &toolpack_with(
            "acme.t",
            "outputSchema",
            "outputSchema: { type: string, pattern: '([a-z' }",
        ),
    );
    assert!(
        project
            .error(codes::SCHEMA_INVALID)
            .message
            .starts_with("`outputSchema` is not a valid JSON Schema")
    );

    // Internal references must point somewhere.
    let project = Project::with_manifest("name: acme\n");
    project.file(
        "tools/t.tool.yaml",
        &toolpack_with("acme.t", "outputSchema", "outputSchema: { $ref: '#/$defs/missing' }"),
    );
    project.error(codes::SCHEMA_INVALID);
}

#[test]
fn side_effects_and_risk_are_kept_or_derived() {
    let project = Project::with_manifest("name: acme\n");
    project
        .file("tools/a.tool.yaml", &(toolpack("acme.a") + "sideEffects: [none]\n"))
        .file("tools/b.tool.yaml", &(toolpack("acme.b") + "sideEffects: [network]\n"))
        .file(
            "tools/c.tool.yaml",
            &(toolpack("acme.c") + "sideEffects: [write, read]\nrisk: critical\n"),
        )
        .file(
            "tools/d.tool.yaml",
            &toolpack_with(
                "acme.d",
                "execution",
                "execution: { kind: http, url: 'https://x.example' }",
            ),
        );
    let snapshot = project.snapshot();
    let effects = |id: &str| snapshot.get(id).map(|t| (t.side_effects.clone(), t.risk));
    assert_eq!(effects("acme.a"), Some((vec![], Risk::Low)));
    assert_eq!(effects("acme.b"), Some((vec![SideEffect::Network], Risk::Medium)));
    assert_eq!(
        effects("acme.c"),
        Some((vec![SideEffect::Read, SideEffect::Write], Risk::Critical))
    );
    assert_eq!(effects("acme.d"), Some((vec![SideEffect::Network], Risk::Medium)));

    let project = Project::with_manifest("name: acme\n");
    project.file("tools/t.tool.yaml", &(toolpack("acme.t") + "sideEffects: [none, write]\n"));
    assert_eq!(project.error(codes::FIELD_INVALID).pointer.as_deref(), Some("/sideEffects"));
}

#[test]
fn every_problem_of_a_file_is_reported_in_one_load() {
    let project = Project::with_manifest("name: acme\n");
    project.file(
        "tools/t.tool.yaml",
        "id: Acme\nversion: 1.0.0\ndeterministic: yes\ntimeoutMs: 0\nlimits: { maxInputBytes: 1 }\n\
         inputSchema: { $ref: missing.json }\noutputSchema: { type: nope }\nexecution: { kind: ruby }\nextra: 1\n",
    );
    let mut found = project.error_codes();
    found.sort();
    let mut expected = vec![
        codes::TOOL_ID,
        codes::FIELD_TYPE,
        codes::FIELD_RANGE,
        codes::FIELD_MISSING,
        codes::REF_NOT_FOUND,
        codes::SCHEMA_INVALID,
        codes::FIELD_ENUM,
        codes::FIELD_UNKNOWN,
    ];
    expected.sort();
    assert_eq!(found, expected);
}

/// Strings that are not one of JSON Schema's seven type names.
fn not_a_type() -> impl Strategy<Value = String> {
    "[a-zA-Z]{1,12}".prop_filter("a real type name", |s| {
        !["array", "boolean", "integer", "null", "number", "object", "string"].contains(&s.as_str())
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn invalid_schema_type_values_are_rejected(name in not_a_type(), as_list in any::<bool>(), number in any::<i32>()) {
        // A type that is an unknown name, a number, or a list holding either.
        let bad = if as_list { format!("[string, {name}]") } else if number % 3 == 0 { number.to_string() } else { format!("'{name}'") };
        let project = Project::with_manifest("name: acme\n");
        project.file("tools/t.tool.yaml", &toolpack_with("acme.t", "outputSchema", &format!("outputSchema: {{ type: {bad} }}")));
        let codes_found = project.error_codes();
        prop_assert_eq!(codes_found, vec![codes::SCHEMA_INVALID.to_owned()]);
    }
}

#[test]
fn a_buffer_can_be_checked_without_a_project() {
    // What an editor does while the file is being typed.
    assert!(jig_load::check_tool_source("t.tool.yaml", &toolpack("acme.t")).is_empty());
    let diagnostics = jig_load::check_tool_source(
        "t.tool.yaml",
        &toolpack_with("acme.t", "timeoutMs", "timeoutMs: 0"),
    );
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(
        (diagnostics[0].file.as_deref(), diagnostics[0].line),
        (Some("tools/t.tool.yaml"), Some(4))
    );
    let with_ref = jig_load::check_tool_source(
        "t.tool.yaml",
        &toolpack_with("acme.t", "inputSchema", "inputSchema: { $ref: other.json }"),
    );
    assert_eq!(with_ref[0].code, codes::REF_NOT_FOUND);
}

#[test]
fn who_gives_an_input_is_a_person_or_the_model_with_a_prompt() {
    for (schema, message, pointer) in [
        (
            "inputSchema: { type: object, properties: { ok: { type: string, x-jig-from: persn } } }",
            "`x-jig-from` of `ok` is \"persn\": write `person` or `model`",
            "/inputSchema/properties/ok/x-jig-from",
        ),
        (
            "inputSchema: { type: object, properties: { notes: { type: string, x-jig-from: model } } }",
            "`notes` is written by the model but has no `x-jig-prompt`",
            "/inputSchema/properties/notes/x-jig-from",
        ),
        (
            "inputSchema: { type: object, properties: { n: { type: integer, x-jig-from: model, x-jig-prompt: 'pick' } } }",
            "`n` is written by the model: it must be `type: string`",
            "/inputSchema/properties/n/type",
        ),
    ] {
        let project = Project::with_manifest("name: acme\n");
        project.file("tools/t.tool.yaml", &toolpack_with("acme.t", "inputSchema", schema));
        let error = project.error(codes::SCHEMA_INVALID);
        assert_eq!(error.message, message);
        assert_eq!(error.pointer.as_deref(), Some(pointer));
    }
    let project = Project::with_manifest("name: acme\n");
    project.file(
        "tools/t.tool.yaml",
        &toolpack_with(
            "acme.t",
            "inputSchema",
            "inputSchema: { type: object, properties: { ok: { type: string, enum: [ship, hold], x-jig-from: person } } }",
        ),
    );
    assert!(project.snapshot().get("acme.t").is_some());
}
