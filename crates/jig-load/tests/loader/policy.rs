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
