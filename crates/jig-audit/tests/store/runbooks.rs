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
