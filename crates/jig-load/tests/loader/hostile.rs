//! Hostile input: every refusal has its diagnostic code, and refusing is cheap.

use std::time::{Duration, Instant};

use jig_model::diagnostic::codes;

use crate::support::{Project, toolpack, toolpack_with};

fn with_input_schema(schema: &str) -> Project {
    let project = Project::with_manifest("name: acme\n");
    project.file(
        "tools/t.tool.yaml",
        &toolpack_with("acme.t", "inputSchema", &format!("inputSchema: {schema}")),
    );
    project
}

#[test]
fn remote_refs_are_refused() {
    for reference in [
        "http://evil.example/s.json",
        "https://evil.example/s.json#/x",
        "file:///etc/passwd",
        "FILE:/etc/passwd",
        "//evil.example/s.json",
        "urn:uuid:5b2c",
    ] {
        let error =
            with_input_schema(&format!("{{ $ref: '{reference}' }}")).error(codes::REF_REMOTE);
        assert_eq!(error.pointer.as_deref(), Some("/inputSchema/$ref"), "{reference}");
        assert!(error.hint.as_deref().unwrap_or_default().starts_with("Jig never fetches schemas"));
    }
}

#[test]
fn refs_may_not_leave_the_package() {
    let project = with_input_schema("{ $ref: /etc/passwd }");
    assert_eq!(project.error(codes::REF_ESCAPE).message, "`$ref: /etc/passwd` is an absolute path");

    let project = with_input_schema("{ $ref: ../../../etc/passwd }");
    assert_eq!(
        project.error(codes::REF_ESCAPE).message,
        "`$ref: ../../../etc/passwd` leaves the package root"
    );

    // `..` that stays inside is fine.
    let project = with_input_schema("{ $ref: ../tools/../schemas/in.json }");
    project.file("schemas/in.json", r#"{"type": "object"}"#);
    project.snapshot();
}

#[cfg(unix)]
#[test]
fn a_symlink_pointing_out_of_the_package_is_refused() {
    let outside = tempfile::tempdir().expect("tmp");
    std::fs::write(outside.path().join("secret.json"), r#"{"type": "object"}"#).expect("write");
    let project = with_input_schema("{ $ref: ../schemas/link.json }");
    std::fs::create_dir_all(project.path("schemas")).expect("mkdir");
    std::os::unix::fs::symlink(
        outside.path().join("secret.json"),
        project.path("schemas/link.json"),
    )
    .expect("symlink");
    assert_eq!(
        project.error(codes::REF_ESCAPE).message,
        "`$ref: ../schemas/link.json` resolves outside the package root through a symlink"
    );
}

#[cfg(unix)]
#[test]
fn tool_files_linked_from_outside_the_package_are_refused() {
    let outside = tempfile::tempdir().expect("tmp");
    std::fs::write(outside.path().join("evil.tool.yaml"), toolpack("evil.tool")).expect("write");
    std::fs::create_dir_all(outside.path().join("more")).expect("mkdir");
    std::fs::write(outside.path().join("more/other.tool.yaml"), toolpack("evil.other"))
        .expect("write");
    let project = Project::with_manifest("name: acme\n");
    project.file("tools/ok.tool.yaml", &toolpack("acme.ok"));
    std::os::unix::fs::symlink(
        outside.path().join("evil.tool.yaml"),
        project.path("tools/evil.tool.yaml"),
    )
    .expect("link");
    std::os::unix::fs::symlink(outside.path().join("more"), project.path("tools/more"))
        .expect("link");
    let error = project.error(codes::PACKAGE_PATH);
    assert_eq!(error.file.as_deref(), Some("tools/evil.tool.yaml"));
    // The linked directory is not walked at all.
    assert!(
        !project
            .diagnostics()
            .iter()
            .any(|d| d.file.as_deref().is_some_and(|f| f.contains("more")))
    );
}

#[test]
fn ref_cycles_without_a_schema_are_refused_and_recursive_schemas_work() {
    let project = with_input_schema("{ $ref: ../schemas/a.json }");
    project
        .file("schemas/a.json", r#"{"$ref": "b.json"}"#)
        .file("schemas/b.json", r#"{"$ref": "a.json"}"#);
    let error = project.error(codes::REF_CYCLE);
    assert_eq!(error.message, "`$ref`s loop back to schemas/a.json without reaching a schema");

    // A tree defined across two files is recursive, not a cycle.
    let project = with_input_schema("{ $ref: ../schemas/tree.json }");
    project
        .file("schemas/tree.json", r#"{"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "node.json"}}}}"#)
        .file("schemas/node.json", r#"{"type": "object", "properties": {"name": {"type": "string"}, "sub": {"$ref": "tree.json"}}}"#);
    let snapshot = project.snapshot();
    let schema = &snapshot.get("acme.t").expect("tool").input_schema;
    assert_eq!(schema["$defs"]["tree.root"]["type"], "object");
    assert_eq!(
        schema["properties"]["children"]["items"]["properties"]["sub"]["$ref"],
        "#/$defs/tree.root"
    );
}

#[test]
fn a_ref_fragment_must_point_at_something() {
    let project = with_input_schema("{ $ref: '../schemas/a.json#/$defs/nope' }");
    project.file("schemas/a.json", r#"{"$defs": {"yes": {"type": "object"}}}"#);
    assert_eq!(
        project.error(codes::REF_POINTER).message,
        "`$ref: ../schemas/a.json#/$defs/nope`: `schemas/a.json` has nothing at `#/$defs/nope`"
    );
}

#[test]
fn oversized_files_are_refused_before_they_are_read() {
    let project = Project::with_manifest("name: acme\n");
    let big = format!("{}# {}\n", toolpack("acme.big"), "x".repeat(5 * 1024 * 1024));
    project.file("tools/big.tool.yaml", &big);
    let error = project.error(codes::FILE_TOO_LARGE);
    assert!(error.message.starts_with("file is 524"), "{}", error.message);

    let project = with_input_schema("{ $ref: ../schemas/big.json }");
    project.file(
        "schemas/big.json",
        &format!("{{\"type\": \"object\", \"description\": \"{}\"}}", "y".repeat(5 * 1024 * 1024)),
    );
    project.error(codes::FILE_TOO_LARGE);
}

#[test]
fn deep_nesting_is_refused() {
    let project = Project::with_manifest("name: acme\n");
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    project.file("tools/deep.tool.yaml", &format!("id: acme.deep\nextra: {deep}\n"));
    let started = Instant::now();
    assert_eq!(project.error(codes::YAML_TOO_DEEP).message, "nesting is deeper than 64 levels");
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[test]
fn an_alias_bomb_is_refused_within_a_second() {
    let mut bomb = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for (name, previous) in ["b", "c", "d", "e", "f", "g", "h", "i"]
        .iter()
        .zip(["a", "b", "c", "d", "e", "f", "g", "h"])
    {
        let refs = vec![format!("*{previous}"); 9].join(",");
        bomb.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    let project = Project::with_manifest("name: acme\n");
    project.file("tools/bomb.tool.yaml", &bomb);
    let started = Instant::now();
    let error = project.error(codes::YAML_ALIAS_BUDGET);
    assert!(started.elapsed() < Duration::from_secs(1), "took {:?}", started.elapsed());
    assert_eq!(error.file.as_deref(), Some("tools/bomb.tool.yaml"));
    assert!(error.line.is_some_and(|l| l <= 9));
}

#[test]
fn too_many_nodes_are_refused() {
    let project = Project::with_manifest("name: acme\n");
    let list = vec!["1"; 1_100_000].join(",");
    project.file("tools/wide.tool.yaml", &format!("id: acme.wide\nextra: [{list}]\n"));
    project.error(codes::YAML_TOO_MANY_NODES);
}

#[test]
fn duplicate_keys_are_refused_naming_both_lines() {
    let project = Project::with_manifest("name: acme\n");
    project.file("tools/t.tool.yaml", &format!("{}id: acme.again\n", toolpack("acme.t")));
    let error = project.error(codes::YAML_DUPLICATE_KEY);
    assert_eq!(error.message, "key `id` appears twice (lines 1 and 9)");
    assert_eq!(error.line, Some(9));
}

#[test]
fn yaml_that_is_not_json_data_is_refused() {
    for (text, code) in [
        ("id: acme.t\nratio: .nan\n", codes::YAML_NOT_JSON),
        ("id: !!python/object:os.system acme.t\n", codes::YAML_NOT_JSON),
        ("id: acme.t\n---\nid: acme.u\n", codes::YAML_MULTI_DOCUMENT),
        ("id: acme.t\n? [complex, key]\n: value\n", codes::YAML_KEY_NOT_STRING),
        ("id: acme.t\nlist: [1, 2\n", codes::YAML_SYNTAX),
        ("id: *nothing\n", codes::YAML_UNKNOWN_ANCHOR),
    ] {
        let project = Project::with_manifest("name: acme\n");
        project.file("tools/t.tool.yaml", text);
        let codes_found = project.error_codes();
        assert!(codes_found.contains(&code.to_owned()), "{text:?}: {codes_found:?}");
    }
}

#[test]
fn files_that_are_not_utf8_are_refused() {
    let project = Project::with_manifest("name: acme\n");
    std::fs::create_dir_all(project.path("tools")).expect("mkdir");
    std::fs::write(project.path("tools/t.tool.yaml"), b"id: acme.\xff\xfe\n").expect("write");
    assert_eq!(project.error(codes::FILE_ENCODING).message, "file is not valid UTF-8");
}

#[test]
fn a_manifest_that_is_not_a_map_is_refused() {
    let project = Project::with_manifest("- name: acme\n");
    assert_eq!(
        project.error(codes::FIELD_TYPE).message,
        "the manifest must be an object, not a list"
    );
}

#[test]
fn a_self_reference_inside_the_tool_schema_does_not_hang() {
    let project = with_input_schema("{ type: object, properties: { next: { $ref: '#' } } }");
    let started = Instant::now();
    let snapshot = project.snapshot();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(
        snapshot.get("acme.t").expect("tool").input_schema["properties"]["next"]["$ref"],
        "#"
    );
}

/// Security class 7: `$ref` fan-out. Twelve small schemas, each with ten properties that all
/// reference the next: inlining every use would be 10^12 nodes. Each target is resolved once
/// and shared through `$defs`, so the resolved schema stays small and still says the same.
#[test]
fn ref_fan_out_is_shared_not_inlined() {
    let project = with_input_schema("{ $ref: '../schemas/s0.json' }");
    for level in 0..12 {
        let schema = if level == 11 {
            serde_json::json!({ "type": "string", "maxLength": 3 })
        } else {
            let properties: serde_json::Map<String, serde_json::Value> = (0..10)
                .map(|p| {
                    (format!("p{p}"), serde_json::json!({ "$ref": format!("s{}.json", level + 1) }))
                })
                .collect();
            serde_json::json!({ "type": "object", "properties": properties })
        };
        project.file(&format!("schemas/s{level}.json"), &schema.to_string());
    }
    let snapshot = project.snapshot();
    let tool = snapshot.get("acme.t").expect("loaded");
    let resolved = serde_json::to_string(&tool.input_schema).expect("json");
    // Inlined at every use it would be some 10^12 nodes; shared, a few tens of kilobytes.
    assert!(resolved.len() < 100_000, "{} bytes", resolved.len());
    let validator = jsonschema::validator_for(&tool.input_schema).expect("a valid schema");
    let deep =
        |leaf: serde_json::Value| (0..11).fold(leaf, |inner, _| serde_json::json!({ "p3": inner }));
    assert!(validator.is_valid(&deep(serde_json::json!("abc"))));
    assert!(!validator.is_valid(&deep(serde_json::json!("too long"))), "the leaf still counts");
}

/// The resolved size is capped: two large distinct schemas together exceed it.
#[test]
fn a_schema_too_large_once_resolved_is_refused() {
    let project = with_input_schema(
        "{ type: object, properties: { a: { $ref: '../schemas/a.json' }, b: { $ref: '../schemas/b.json' } } }",
    );
    let items = vec!["{}"; 600_000].join(",");
    for name in ["a", "b"] {
        project.file(&format!("schemas/{name}.json"), &format!("{{\"prefixItems\": [{items}]}}"));
    }
    let error = project.error(codes::REF_TOO_LARGE);
    assert!(error.message.contains("1000000"), "{}", error.message);
}
