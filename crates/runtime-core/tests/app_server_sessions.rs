//! `agentSession/list` and `agentSession/update` (issue 19 §3): a client finds the sessions
//! another client started, names and archives them; each change is a `session.updated` fact
//! (valid against the Lime profile), streamed to followers and kept across a restart. Bad
//! params are refused with stable codes and record nothing.

mod support_client;
mod support_schema;

use std::sync::Arc;

use runtime_core::backend::*;
use serde_json::{json, Value};
use support_client::*;

fn backend() -> Option<Arc<dyn ExecutionBackend>> {
    let b = ScriptedBackend::new();
    for _ in 0..4 {
        b.push_text(&["ok"]);
    }
    Some(Arc::new(b))
}

async fn start(c: &mut Client, app: &str, workspace: &str) -> String {
    let r = c
        .ok(
            "agentSession/start",
            json!({"appId": app, "workspaceId": workspace}),
        )
        .await;
    r["session"]["sessionId"].as_str().unwrap().to_owned()
}

fn ids(list: &Value) -> Vec<String> {
    list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap().to_owned())
        .collect()
}

async fn last_sequence(c: &mut Client, s: &str) -> u64 {
    c.ok("agentSession/read", json!({"sessionId": s})).await["session"]["lastSequence"]
        .as_u64()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_filters_sorts_and_pages() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = Client::start(runtime(tmp.path(), backend()));
    c.init().await;
    assert_eq!(
        ids(&c.ok("agentSession/list", json!({})).await),
        Vec::<String>::new()
    );
    let a = start(&mut c, "app.one", "w1").await;
    let b = start(&mut c, "app.two", "w1").await;
    let d = start(&mut c, "app.one", "w2").await;
    // A turn makes `a` the most recently updated.
    c.ok(
        "agentSession/turn/start",
        json!({"sessionId": a, "input": {"text": "hi"}}),
    )
    .await;
    c.wait_type("turn.completed").await;

    let all = c.ok("agentSession/list", json!({})).await;
    assert_eq!(ids(&all)[0], a, "most recently updated first: {all}");
    let mut sorted = ids(&all);
    sorted.sort();
    let mut want = vec![a.clone(), b.clone(), d.clone()];
    want.sort();
    assert_eq!(sorted, want);
    let first = &all["sessions"][0];
    assert_eq!(first["appId"], "app.one");
    assert_eq!(first["workspaceId"], "w1");
    assert_eq!(first["turnCount"], 1);
    assert_eq!(first["status"], "completed");
    assert!(all.get("nextCursor").is_none());

    let w1 = c
        .ok("agentSession/list", json!({"workspaceId": "w1"}))
        .await;
    let mut got = ids(&w1);
    got.sort();
    let mut want = vec![a.clone(), b.clone()];
    want.sort();
    assert_eq!(got, want, "only w1");
    let one = c.ok("agentSession/list", json!({"appId": "app.one"})).await;
    let mut got = ids(&one);
    got.sort();
    let mut want = vec![a.clone(), d.clone()];
    want.sort();
    assert_eq!(got, want, "only app.one");
    assert!(ids(&c
        .ok("agentSession/list", json!({"workspaceId": "nope"}))
        .await)
    .is_empty());

    // Pages of 2 then 1, in the same order as the whole list.
    let p1 = c.ok("agentSession/list", json!({"limit": 2})).await;
    assert_eq!(ids(&p1).len(), 2);
    let cursor = p1["nextCursor"].as_str().unwrap().to_owned();
    let p2 = c
        .ok("agentSession/list", json!({"limit": 2, "cursor": cursor}))
        .await;
    assert!(p2.get("nextCursor").is_none(), "{p2}");
    let paged: Vec<String> = ids(&p1).into_iter().chain(ids(&p2)).collect();
    assert_eq!(paged, ids(&all));
    // Bounds: a cursor this server did not hand out, a zero limit clamped to one.
    assert_eq!(
        c.err("agentSession/list", json!({"cursor": "zz"})).await,
        -32602
    );
    assert_eq!(
        ids(&c.ok("agentSession/list", json!({"limit": 0})).await).len(),
        1
    );
    let r = c
        .call("agentSession/list", json!({"workspaceId": "a\u{7}b"}))
        .await;
    assert_eq!(r["error"]["data"]["code"], "appserver.invalid_field", "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_names_and_archives_with_one_fact_each_and_survives_a_restart() {
    let tmp = tempfile::tempdir().unwrap();
    let validator = support_schema::profile_event_validator();
    let s;
    let other;
    {
        let mut c = Client::start(runtime(tmp.path(), backend()));
        c.init().await;
        s = start(&mut c, "app.one", "w1").await;
        other = start(&mut c, "app.one", "w1").await;
        let before = last_sequence(&mut c, &s).await;
        let r = c
            .ok(
                "agentSession/update",
                json!({"sessionId": s, "title": "March invoices"}),
            )
            .await;
        assert_eq!(r["session"]["title"], "March invoices", "{r}");
        let fact = c.wait_type("session.updated").await;
        assert_eq!(fact["payload"]["title"], "March invoices");
        assert!(fact["payload"].get("archived").is_none(), "partial: {fact}");
        assert!(validator.is_valid(&fact), "profile-valid: {fact}");
        assert_eq!(last_sequence(&mut c, &s).await, before + 1);
        // The same title again: nothing to record.
        c.ok(
            "agentSession/update",
            json!({"sessionId": s, "title": "March invoices"}),
        )
        .await;
        assert_eq!(last_sequence(&mut c, &s).await, before + 1, "idempotent");

        // Archive: out of the default list, in includeArchived and archivedOnly.
        let r = c
            .ok(
                "agentSession/update",
                json!({"sessionId": s, "archived": true}),
            )
            .await;
        assert!(r["session"]["archivedAt"].is_string(), "{r}");
        assert_eq!(
            ids(&c.ok("agentSession/list", json!({})).await),
            vec![other.clone()]
        );
        assert_eq!(
            ids(&c
                .ok("agentSession/list", json!({"archivedOnly": true}))
                .await),
            vec![s.clone()]
        );
        assert_eq!(
            ids(&c
                .ok("agentSession/list", json!({"includeArchived": true}))
                .await)
            .len(),
            2
        );
        // An archived session still reads and takes turns.
        c.ok(
            "agentSession/turn/start",
            json!({"sessionId": s, "input": {"text": "hi"}}),
        )
        .await;
        c.wait_type("turn.completed").await;
        c.shutdown().await;
    }
    // After a restart: the title and the archive state are read back from the log.
    let mut c = Client::start(runtime(tmp.path(), backend()));
    c.init().await;
    let archived = c
        .ok("agentSession/list", json!({"archivedOnly": true}))
        .await;
    assert_eq!(ids(&archived), vec![s.clone()]);
    assert_eq!(archived["sessions"][0]["title"], "March invoices");
    let read = c.ok("agentSession/read", json!({"sessionId": s})).await;
    assert_eq!(read["detail"]["session"]["title"], "March invoices");
    // Restore and clear the title in one update: one fact.
    let before = last_sequence(&mut c, &s).await;
    let r = c
        .ok(
            "agentSession/update",
            json!({"sessionId": s, "archived": false, "title": ""}),
        )
        .await;
    assert!(r["session"].get("archivedAt").is_none(), "{r}");
    assert!(r["session"].get("title").is_none(), "{r}");
    assert_eq!(last_sequence(&mut c, &s).await, before + 1);
    assert_eq!(ids(&c.ok("agentSession/list", json!({})).await).len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_updates_are_refused_with_stable_codes_and_record_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let mut c = Client::start(runtime(tmp.path(), backend()));
    c.init().await;
    let s = start(&mut c, "app.one", "w1").await;
    let before = last_sequence(&mut c, &s).await;
    let cases = [
        (
            json!({"sessionId": s}),
            -32602,
            Some("appserver.nothing_to_update"),
        ),
        (
            json!({"sessionId": s, "title": "x".repeat(201)}),
            -32602,
            Some("appserver.invalid_field"),
        ),
        (
            json!({"sessionId": s, "title": "a\nb"}),
            -32602,
            Some("appserver.invalid_field"),
        ),
        // A setting this server does not keep is refused, never silently dropped.
        (
            json!({"sessionId": s, "title": "t", "providerSelector": "x"}),
            -32602,
            None,
        ),
        (json!({"sessionId": s, "archived": "yes"}), -32602, None),
        (
            json!({"sessionId": s, "workspaceId": "w2", "title": "t"}),
            -32010,
            Some("appserver.workspace_mismatch"),
        ),
        (json!({"sessionId": "nope", "title": "t"}), -32010, None),
    ];
    for (params, code, data_code) in cases {
        let r = c.call("agentSession/update", params.clone()).await;
        assert_eq!(r["error"]["code"], code, "{params}: {r}");
        if let Some(dc) = data_code {
            assert_eq!(r["error"]["data"]["code"], dc, "{params}: {r}");
        }
        // A refusal never echoes the value it refused.
        assert!(!r.to_string().contains(&"x".repeat(201)));
    }
    assert_eq!(last_sequence(&mut c, &s).await, before, "nothing recorded");
    let read = c.ok("agentSession/read", json!({"sessionId": s})).await;
    assert!(read["session"].get("title").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_client_sees_the_first_clients_sessions_and_their_updates() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = runtime(tmp.path(), backend());
    let mut one = Client::start(rt.clone());
    let mut two = Client::start(rt);
    one.init().await;
    two.init().await;
    let s = start(&mut one, "app.one", "w1").await;
    let listed = two
        .ok("agentSession/list", json!({"workspaceId": "w1"}))
        .await;
    assert_eq!(ids(&listed), vec![s.clone()]);
    // The second client follows it (read), the first renames it: the second sees the fact.
    two.ok("agentSession/read", json!({"sessionId": s})).await;
    one.ok(
        "agentSession/update",
        json!({"sessionId": s, "title": "Shared"}),
    )
    .await;
    let fact = two.wait_type("session.updated").await;
    assert_eq!(fact["payload"]["title"], "Shared");
    assert_eq!(
        two.ok("agentSession/list", json!({})).await["sessions"][0]["title"],
        "Shared"
    );
}
