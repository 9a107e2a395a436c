//! The manifest's `policy:` is checked at load: what cannot be enforced does not load.

use jig_model::diagnostic::codes;

use crate::support::Project;

#[test]
fn a_policy_that_cannot_be_enforced_does_not_load() {
    let project = Project::with_manifest(
        "name: app\npolicy:\n  shell_allow: ['^cargo(']\n  network: { allowed_domains: ['https://x.example', '*.ok.example'] }\n\
         \x20 validators: [{ rule: secret.scan, enforcement: blocking }]\n\
         \x20 rules:\n    - { effects: [write] }\n    - { default: allow, risk: low }\n",
    );
    let mut found: Vec<(String, Option<String>)> = project
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == codes::POLICY)
        .map(|d| (d.pointer.unwrap_or_default(), d.hint))
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            ("/policy/network/allowed_domains/0".to_owned(), None),
            ("/policy/rules/0".to_owned(), None),
            ("/policy/rules/1".to_owned(), None),
            ("/policy/shell_allow/0".to_owned(), None),
            (
                "/policy/validators/0/rule".to_owned(),
                Some("did you mean `secrets.scan`?".to_owned())
            ),
        ]
    );
}

#[test]
fn policy_fields_are_strict() {
    let project = Project::with_manifest(
        "name: app\npolicy:\n  networks: {}\n  git: { allow_pushes: true }\n",
    );
    let hints: Vec<Option<String>> = project
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == codes::FIELD_UNKNOWN)
        .map(|d| d.hint)
        .collect();
    assert_eq!(
        hints,
        [Some("did you mean `network`?".to_owned()), Some("did you mean `allow_push`?".to_owned())]
    );
}

#[test]
fn mcp_resources_must_be_uris_a_client_can_ask_for() {
    for (mcp, message, pointer) in [
        (
            "resources: [{ uri: 'static-text', tool: t }]",
            "no resource URI",
            "/policy/mcp/resources/0/uri",
        ),
        (
            "resources: [{ uri: 't://{id', tool: t }]",
            "no resource URI",
            "/policy/mcp/resources/0/uri",
        ),
        (
            "resources: [{ uri: 't://{a b}', tool: t }]",
            "no resource URI",
            "/policy/mcp/resources/0/uri",
        ),
        (
            "resources: [{ uri: 'jig://runs/x', tool: t }]",
            "the audit's own",
            "/policy/mcp/resources/0/uri",
        ),
        (
            "resources: [{ uri: 't://a', tool: t }, { uri: 't://a', tool: u }]",
            "served twice",
            "/policy/mcp/resources/1/uri",
        ),
        ("stream_hold: soon", "no duration", "/policy/mcp/stream_hold"),
        ("stream_hold: 0s", "no duration", "/policy/mcp/stream_hold"),
    ] {
        let project = Project::with_manifest(&format!("name: acme\npolicy:\n  mcp:\n    {mcp}\n"));
        let error = project.error(codes::POLICY);
        assert!(error.message.contains(message), "{message:?} not in {:?}", error.message);
        assert_eq!(error.pointer.as_deref(), Some(pointer));
    }
    let fine = "resources: [{ uri: 'test://template/{id}/data', tool: t }]\n    stream_hold: 30s";
    let project = Project::with_manifest(&format!("name: acme\npolicy:\n  mcp:\n    {fine}\n"));
    let snapshot = project.snapshot();
    let policy = snapshot.policy().expect("a policy");
    assert_eq!(policy.mcp.resources[0].parts(), ["id"]);
    assert_eq!(policy.mcp.stream_hold(), Some(std::time::Duration::from_secs(30)));
}
