//! gert's own example runbook, loaded by Jig's loader from the reference files unchanged, passes
//! its three recorded scenarios.

use std::path::Path;
use std::sync::Arc;

use jig_runbook::scenario::{ReplayHost, check, play, resolver};

/// gert's example project, loaded with its runbook named by path, and the runbook.
fn example() -> (Arc<jig_load::Snapshot>, jig_load::RunbookEntry) {
    let root = Path::new(
        std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR").as_str(),
    )
    .join("../../tests/fixtures/gert-reference/examples");
    let options = jig_load::LoadOptions {
        with_std: false,
        extra_runbooks: vec![root.join("service-health-check.yaml")],
    };
    let snapshot =
        jig_load::Loader::with_options(&root, options).load().expect("the example loads");
    let entry = snapshot.runbook("service-health-check").expect("runbook").as_ref().clone();
    (snapshot, entry)
}

#[tokio::test]
async fn gert_service_health_check_passes_its_three_scenarios() {
    let (snapshot, entry) = example();
    let mut names = Vec::new();
    for scenario in &entry.scenarios {
        let (Some(given), Some(test)) = (&scenario.scenario, &scenario.test) else {
            panic!("{} is incomplete", scenario.name)
        };
        let host = ReplayHost::new(given, resolver(Arc::clone(&snapshot), &entry));
        let progress =
            play(&entry.runbook, &entry.name, &entry.hash, given, &host).await.expect("plays");
        let mismatches = check(test, &progress);
        assert!(mismatches.is_empty(), "{}: {mismatches:#?}\n{progress:#?}", scenario.name);
        names.push(scenario.name.clone());
    }
    names.sort();
    assert_eq!(names, ["degraded", "healthy", "unknown"]);
}

#[tokio::test]
async fn a_scenario_that_disagrees_with_its_test_reports_each_difference() {
    let (snapshot, entry) = example();
    let healthy = entry.scenarios.iter().find(|s| s.name == "healthy").expect("healthy");
    let degraded = entry.scenarios.iter().find(|s| s.name == "degraded").expect("degraded");
    // The healthy scenario's responses against the degraded scenario's expectations.
    let given = healthy.scenario.as_ref().expect("scenario");
    let host = ReplayHost::new(given, resolver(Arc::clone(&snapshot), &entry));
    let progress =
        play(&entry.runbook, &entry.name, &entry.hash, given, &host).await.expect("plays");
    let fields: Vec<String> = check(degraded.test.as_ref().expect("test"), &progress)
        .into_iter()
        .map(|m| m.field)
        .collect();
    assert!(fields.contains(&"expected_outcome".to_owned()), "{fields:?}");
    assert!(fields.contains(&"expected_code".to_owned()));
    assert!(fields.contains(&"must_reach".to_owned()));
    assert!(fields.contains(&"must_not_reach".to_owned()));
}
