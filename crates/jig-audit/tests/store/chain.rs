//! The packet chain: appends, verification, tampering, group commit.

use jig_audit::{Dialect, GENESIS, Op, Outcome, RunRecord, RunState};
use serde_json::json;

use crate::{packet, stores};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appended_packets_form_a_verifiable_chain() {
    for (store, _dir) in stores().await {
        assert_eq!(store.head().await.expect("head"), (0, GENESIS.to_owned()));
        let outcomes = store
            .apply((1..=5).map(|n| Op::Append(packet("r1", n))).collect())
            .await
            .expect("apply");
        let seqs: Vec<i64> = outcomes
            .iter()
            .map(|o| match o {
                Outcome::Appended { seq, .. } => *seq,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(seqs, [1, 2, 3, 4, 5]);
        let packets = store.packets(0, 100).await.expect("packets");
        assert_eq!(packets.len(), 5);
        assert_eq!(packets[0].prev_hash, GENESIS);
        assert!(packets.windows(2).all(|w| w[1].prev_hash == w[0].hash));
        assert_eq!(packets[2].data, json!({ "n": 3, "args": { "path": "src/lib.rs" } }));
        let verification = store.verify().await.expect("verify");
        assert_eq!((verification.checked, verification.first_broken), (5, None));
        assert_eq!(verification.head, (5, packets[4].hash.clone()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn packets_cannot_be_updated_or_deleted() {
    for (store, _dir) in stores().await {
        store.apply(vec![Op::Append(packet("r1", 1))]).await.expect("apply");
        for sql in
            ["UPDATE packets SET payload = '{}' WHERE seq = 1", "DELETE FROM packets WHERE seq = 1"]
        {
            let error = store.execute_raw(sql).await.expect_err("refused");
            assert!(error.to_string().contains("append-only"), "{error}");
        }
        assert_eq!(store.verify().await.expect("verify").first_broken, None);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tampered_packet_is_found_by_its_seq() {
    for (store, _dir) in stores().await {
        store.apply((1..=6).map(|n| Op::Append(packet("r1", n))).collect()).await.expect("apply");
        // Someone with direct access to the database gets past the trigger and edits seq 4.
        let (disable, enable) = match store.dialect() {
            Dialect::Sqlite => ("DROP TRIGGER packets_no_update", None),
            Dialect::Postgres => (
                "ALTER TABLE packets DISABLE TRIGGER packets_no_update",
                Some("ALTER TABLE packets ENABLE TRIGGER packets_no_update"),
            ),
        };
        store.execute_raw(disable).await.expect("disable the trigger");
        store
            .execute_raw("UPDATE packets SET payload = '{\"n\":40}' WHERE seq = 4")
            .await
            .expect("tamper");
        if let Some(enable) = enable {
            store.execute_raw(enable).await.expect("enable");
        }
        let verification = store.verify().await.expect("verify");
        let (seq, reason) = verification.first_broken.expect("broken");
        assert_eq!(seq, 4);
        assert!(reason.contains("altered"), "{reason}");
        assert_eq!(verification.checked, 3);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_share_commits_and_keep_the_chain_gapless() {
    for (store, _dir) in stores().await {
        let before = store.commits();
        let tasks: Vec<_> = (0..200)
            .map(|n| {
                let store = store.clone();
                tokio::spawn(async move {
                    store
                        .apply(vec![
                            Op::Append(packet(&format!("r{n}"), n)),
                            Op::Append(packet(&format!("r{n}"), n)),
                        ])
                        .await
                })
            })
            .collect();
        for task in tasks {
            task.await.expect("join").expect("apply");
        }
        let verification = store.verify().await.expect("verify");
        assert_eq!((verification.checked, verification.first_broken), (400, None));
        // Group commit groups: 200 callers waiting together share far fewer transactions.
        let commits = store.commits() - before;
        assert!(commits < 100, "200 batches took {commits} commits");
        // Each batch's packets are adjacent: batches are never interleaved.
        let packets = store.packets(0, 1000).await.expect("packets");
        assert!(packets.chunks(2).all(|pair| pair[0].request_id == pair[1].request_id));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_batch_is_rolled_back_alone() {
    for (store, _dir) in stores().await {
        let run = RunRecord {
            request_id: "dup".into(),
            run_id: "run".into(),
            tool: "t".into(),
            version: "1".into(),
            session_id: None,
            thread_id: None,
            principal: None,
            params_hash: "p".into(),
            policy_hash: "h".into(),
            deterministic: false,
            state: RunState::Created,
            rule: None,
            created_us: 0,
            updated_us: 0,
            duration_ms: None,
            response: None,
            error: None,
            replayed_from: None,
            owner: None,
            deadline_us: None,
            person: None,
            definition: None,
            resumed_as: None,
            resumes: None,
        };
        store.apply(vec![Op::CreateRun(Box::new(run.clone()))]).await.expect("first");
        let (a, b) = tokio::join!(
            store.apply(vec![Op::Append(packet("bad", 1)), Op::CreateRun(Box::new(run.clone()))]),
            store.apply(vec![Op::Append(packet("good", 2))])
        );
        assert!(a.is_err(), "the duplicate run is refused");
        assert!(b.is_ok());
        let packets = store.packets(0, 10).await.expect("packets");
        let requests: Vec<Option<&str>> = packets.iter().map(|p| p.request_id.as_deref()).collect();
        assert_eq!(requests, [Some("good")], "nothing of the failed batch was kept");
        assert_eq!(store.verify().await.expect("verify").first_broken, None);
    }
}

/// Two stores on one SQLite file stand for two processes: each writer remembers the head of its
/// last commit, and must notice when the other has appended since.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writers_of_two_processes_interleave_without_breaking_the_chain() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("audit.db").display().to_string();
    let a = jig_audit::Store::open(&path).await.expect("a");
    let b = jig_audit::Store::open(&path).await.expect("b");
    for round in 0..20 {
        let (first, second) = if round % 3 == 0 { (&b, &a) } else { (&a, &b) };
        first
            .apply(vec![Op::Append(packet("x", round)), Op::Append(packet("x", round))])
            .await
            .expect("first");
        second.apply(vec![Op::Append(packet("y", round))]).await.expect("second");
    }
    let verification = a.verify().await.expect("verify");
    assert_eq!((verification.checked, verification.first_broken), (60, None));
    assert_eq!(b.head().await.expect("head"), verification.head);
}
