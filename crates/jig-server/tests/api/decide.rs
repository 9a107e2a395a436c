//! One decision for several approvals: each recorded and run (or ended) on its own, the list
//! refused whole when it is wrong, and one decided meanwhile failing alone.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{ALICE, BOB, Served, send};

/// Alice asks to write `path` through the API: the call's request id.
async fn ask(served: &Served, path: &str) -> String {
    let call = json!({ "tool": "file_write", "args": { "path": path, "content": "x" } });
    let (status, started) = send(served.post("/api/calls", &call), Some(ALICE)).await;
    assert_eq!(status, 202, "{started}");
    started["request_id"].as_str().expect("id").to_owned()
}

/// The pending approvals, by the path each would write, once `n` of them wait.
async fn pending(served: &Served, n: usize) -> Vec<(String, String)> {
    for _ in 0..200 {
        let (_, queue) = send(served.get("/api/approvals"), Some(BOB)).await;
        let list = queue.as_array().expect("list");
        if list.len() >= n {
            return list
                .iter()
                .map(|a| {
                    let path = a["request"]["args"]["path"].as_str().expect("path");
                    (path.to_owned(), a["id"].as_str().expect("id").to_owned())
                })
                .collect();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{n} approvals never waited");
}

fn id_of(list: &[(String, String)], path: &str) -> String {
    list.iter().find(|(p, _)| p == path).expect(path).1.clone()
}

async fn state_of(served: &Served, request_id: &str) -> Value {
    for _ in 0..200 {
        let (_, state) = send(served.get(&format!("/api/calls/{request_id}")), Some(ALICE)).await;
        // `approved` is on the way: the call takes the state of the run the approval let run.
        if !["pending_approval", "approved", "running"]
            .contains(&state["state"].as_str().unwrap_or(""))
        {
            return state;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{request_id} never ended");
}

#[tokio::test]
async fn a_reviewer_denies_several_with_one_reason_and_approves_the_rest() {
    let served = Served::start().await;
    let first = ask(&served, "one.txt").await;
    let second = ask(&served, "two.txt").await;
    let third = ask(&served, "three.txt").await;
    let queue = pending(&served, 3).await;
    let (one, two, three) =
        (id_of(&queue, "one.txt"), id_of(&queue, "two.txt"), id_of(&queue, "three.txt"));

    // Refused whole, deciding nothing: a deny without a reason, an id twice, nothing, a runner.
    let decide = |ids: Vec<&str>, verdict: &str, note: Option<&str>| {
        served
            .post("/api/approvals/decide", &json!({ "ids": ids, "verdict": verdict, "note": note }))
    };
    let (status, error) = send(decide(vec![&one, &two], "deny", Some("  ")), Some(BOB)).await;
    assert_eq!((status, error["code"].as_str()), (400, Some("E_VALIDATION_FAIL")), "{error}");
    assert!(error["message"].as_str().expect("message").contains("`note`"), "{error}");
    let (status, error) = send(decide(vec![&one, &one], "deny", Some("no")), Some(BOB)).await;
    assert_eq!(status, 400, "{error}");
    assert!(error["message"].as_str().expect("message").contains("named twice"), "{error}");
    assert_eq!(send(decide(vec![], "approve", None), Some(BOB)).await.0, 400);
    let (status, error) = send(decide(vec![&one], "maybe", None), Some(BOB)).await;
    assert_eq!(status, 400, "{error}");
    assert_eq!(send(decide(vec![&one, &two], "approve", None), Some(ALICE)).await.0, 403);
    assert_eq!(pending(&served, 3).await.len(), 3, "nothing was decided");

    // One reason for two requests: each asker reads it, each call ends denied.
    let (status, outcomes) =
        send(decide(vec![&one, &two], "deny", Some("not before the release")), Some(BOB)).await;
    assert_eq!(status, 200, "{outcomes}");
    let told: Vec<(&str, &str)> = outcomes
        .as_array()
        .expect("outcomes")
        .iter()
        .map(|o| (o["id"].as_str().expect("id"), o["outcome"].as_str().expect("outcome")))
        .collect();
    assert_eq!(told, [(one.as_str(), "denied"), (two.as_str(), "denied")]);
    for request in [&first, &second] {
        let state = state_of(&served, request).await;
        assert_eq!(state["state"], "denied", "{state}");
    }
    let (_, all) = send(served.get("/api/approvals?all=true"), Some(BOB)).await;
    for id in [&one, &two] {
        let record = all.as_array().expect("list").iter().find(|a| a["id"] == id.as_str());
        let record = record.expect("listed");
        assert_eq!(record["decided_by"], "bob", "{record}");
        assert_eq!(record["note"], "not before the release", "{record}");
    }

    // Approving the third with one already denied: the third runs, the other fails alone.
    let (status, outcomes) = send(decide(vec![&three, &one], "approve", None), Some(BOB)).await;
    assert_eq!(status, 200, "{outcomes}");
    assert_eq!(outcomes[0]["outcome"], "approved", "{outcomes}");
    assert!(outcomes[0]["resumed_as"].is_string(), "{outcomes}");
    assert_eq!(outcomes[1]["outcome"], "error", "{outcomes}");
    assert_eq!(outcomes[1]["code"], "E_CONFLICT", "{outcomes}");
    assert_eq!(state_of(&served, &third).await["state"], "succeeded");
    assert!(served.dir.path().join("three.txt").exists());
    assert!(!served.dir.path().join("one.txt").exists());
    assert!(!served.dir.path().join("two.txt").exists());
}
