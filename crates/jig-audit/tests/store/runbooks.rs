//! A runbook run's journal is read back only as the chain vouches for it, on both stores.

use jig_audit::{Dialect, Op};
use serde_json::json;

use crate::stores;

#[tokio::test]
async fn a_journal_row_changed_behind_the_chain_is_refused_on_read() {
    for (store, _dir) in stores().await {
        let run = format!("run-{}", uuid());
        let ops = ["start", "done:read", "evidence:look"]
            .iter()
            .map(|key| Op::Journal {
                run_id: run.clone(),
                key: (*key).to_owned(),
                entry: json!({ "entry": "done", "say": format!("row {key}") }),
                packet: None,
            })
            .collect();
        store.apply(ops).await.expect("apply");
        let journal = store.runbook_journal_checked(&run).await.expect("vouched for");
        assert_eq!(journal.len(), 3, "{:?}", store.dialect());

        store
            .execute_raw(&format!(
                "UPDATE runbook_journal SET entry = replace(entry, 'row done:read', 'row forged') WHERE run_id = '{run}'"
            ))
            .await
            .expect("tamper");
        let error = store.runbook_journal_checked(&run).await.expect_err("refused");
        let message = error.to_string();
        assert!(
            message.contains("`done:read`") && message.contains(&run),
            "{:?}: {message}",
            store.dialect()
        );
        assert!(matches!(store.dialect(), Dialect::Sqlite | Dialect::Postgres));
    }
}

fn uuid() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("{nanos:x}")
}

/// Consecutive entries are recorded together: each new one once, sealed in order; a key
/// already recorded, or repeated in the batch, keeps what was there first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_journal_entries_keeps_first_writers_and_seals_each_new_one() {
    for (store, _dir) in stores().await {
        let run = format!("run-{}", uuid());
        let entry = |key: &str, say: &str| Op::Journal {
            run_id: run.clone(),
            key: key.to_owned(),
            entry: json!({ "entry": "done", "say": say }),
            packet: None,
        };
        let reading = store.reading_commits();
        store.apply(vec![entry("start", "first")]).await.expect("first");
        assert_eq!(store.reading_commits(), reading, "a new entry is a blind write");
        let outcomes = store
            .apply(vec![
                entry("start", "second"),
                entry("step:a", "a"),
                entry("step:a", "a again"),
                entry("step:b", "b"),
            ])
            .await
            .expect("batch");
        let seen: Vec<(bool, String)> = outcomes
            .iter()
            .map(|o| match o {
                jig_audit::Outcome::Journaled { inserted, entry } => {
                    (*inserted, entry["say"].as_str().unwrap_or("").to_owned())
                }
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            seen,
            [
                (false, "first".to_owned()),
                (true, "a".to_owned()),
                (false, "a".to_owned()),
                (true, "b".to_owned()),
            ],
            "{:?}",
            store.dialect()
        );
        assert_eq!(store.reading_commits(), reading + 1, "a taken key is read back");
        let journal = store.runbook_journal_checked(&run).await.expect("every row sealed");
        assert_eq!(journal.len(), 3);
        let sealed = store.packets_of_run(&run).await.expect("packets");
        let keys: Vec<&str> =
            sealed.iter().filter_map(|p| p.data["journal"]["key"].as_str()).collect();
        assert_eq!(keys, ["start", "step:a", "step:b"], "one seal each, in order");
    }
}
