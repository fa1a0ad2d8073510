//! `lime.tools`' broker against a real stdio MCP server (`fixtures/mcp/test_server.py`, over
//! rmcp): a granted call works and is audited by hash; every attack is refused with its stable
//! code and reaches nothing it should not: a tool not granted or granted to another app, not
//! declared, denied by the admin, destructive without the user's answer; a server that hangs
//! (timeout, process group killed), floods stdout (bounded, refused) or stderr (ring kept
//! bounded), answers malformed JSON, dies mid-call (unavailable, restart after backoff) or exits
//! at once; a secret reaches the server's environment and nothing else.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::tools::{
    registry, Approval, Broker, Caller, Invocation, ServerSpec, ToolRef, Transport,
};
use host_core::install::readiness::Status;
use host_core::install::secrets::SecretValue;
use host_core::install::store::Store;
use host_core::ErrorCode;
use serde_json::{json, Value};
use support::{hello_app_as, install, repo_root};

const CANARY: &str = "tok-CANARY-5e1f-never-logged";

fn secret_env(tmp: &Path) {
    // One key file for the whole test binary (tests run on threads of one process).
    static ONCE: std::sync::Once = std::sync::Once::new();
    let key = std::env::temp_dir().join(format!("apphost-tools-test-{}.key", std::process::id()));
    let _ = tmp;
    ONCE.call_once(|| {
        std::env::set_var("APPHOST_SECRET_STORE", "file");
        std::env::set_var("APPHOST_SECRET_KEY_FILE", key);
    });
}

struct Fixture {
    _tmp: tempfile::TempDir,
    dir: DataDir,
    store: Store,
    broker: Broker,
}

fn server_spec(extra_args: &[&str], timeout_ms: u64) -> ServerSpec {
    let mut args = vec![repo_root()
        .join("fixtures/mcp/test_server.py")
        .display()
        .to_string()];
    args.extend(extra_args.iter().map(|s| s.to_string()));
    ServerSpec {
        transport: Transport::Stdio {
            command: "/usr/bin/python3".into(),
            args,
            env: Default::default(),
        },
        secrets: Default::default(),
        timeout_ms: Some(timeout_ms),
    }
}

/// Apps `alpha` and `beta` installed; server `t` added with `spec`.
fn fixture(spec: ServerSpec, alpha_md: &[(&str, &str)]) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    secret_env(tmp.path());
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &hello_app_as(tmp.path(), "alpha", alpha_md));
    install(&dir, &hello_app_as(tmp.path(), "beta", &[]));
    let (store, _) = Store::open_locked(&dir).unwrap();
    let broker = Broker::new(&dir).unwrap();
    registry::add(&store, &broker.policy(), "t", &spec).unwrap();
    Fixture {
        _tmp: tmp,
        dir,
        store,
        broker,
    }
}

impl Fixture {
    fn grant(&self, app: &str, tool: &str) {
        registry::grant(
            &self.store,
            &self.broker.policy(),
            app,
            &ToolRef::parse(tool).unwrap(),
        )
        .unwrap();
    }

    fn call_as(
        &self,
        app: &str,
        tool: &str,
        args: Value,
        approval: Approval,
        declared: Option<&BTreeSet<String>>,
    ) -> Result<Value, host_core::HostError> {
        let r = ToolRef::parse(tool).unwrap();
        self.broker.invoke(
            &self.store,
            &Invocation {
                app,
                version: Some("1.0.0"),
                tool: &r,
                arguments: &args,
                caller: Caller::Ui,
                approval,
                declared,
            },
        )
    }

    fn call(&self, tool: &str, args: Value) -> Result<Value, host_core::HostError> {
        self.call_as("alpha", tool, args, Approval::NotAsked, None)
    }

    fn code(&self, tool: &str, args: Value) -> ErrorCode {
        self.call(tool, args).expect_err("refused").code
    }

    fn stderr(&self) -> String {
        self.broker.status("t").stderr_tail
    }

    fn tool_audits(&self) -> Vec<Value> {
        self.store
            .audit_log(None, 1000)
            .unwrap()
            .into_iter()
            .filter(|r| r["action"] == "tools.call")
            .collect()
    }
}

fn text_of(v: &Value) -> &str {
    v["content"][0]["text"].as_str().unwrap_or("")
}

fn alive(pid: u32) -> bool {
    // Reaped children are gone from /proc; a zombie would still be listed.
    Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn a_granted_call_works_and_is_audited_by_the_arguments_hash() {
    let f = fixture(server_spec(&[], 10_000), &[]);
    f.grant("alpha", "t/echo");
    let v = f.call("t/echo", json!({"text": "hello broker"})).unwrap();
    assert_eq!(text_of(&v), "hello broker");
    let audits = f.tool_audits();
    assert_eq!(audits.len(), 1);
    let d = &audits[0]["details"];
    assert_eq!(audits[0]["app"], "alpha");
    assert_eq!(
        (d["server"].as_str(), d["tool"].as_str()),
        (Some("t"), Some("echo"))
    );
    assert_eq!(d["outcome"], "ok");
    assert_eq!(d["caller"], "ui");
    assert_eq!(
        d["argumentsSha256"],
        host_core::hosting::tools::broker::arguments_sha256(&json!({"text": "hello broker"}))
    );
    assert!(d["durationMs"].is_u64());
    assert!(
        !audits[0].to_string().contains("hello broker"),
        "the arguments themselves are not audited"
    );
}

#[test]
fn the_broker_s_cached_grants_and_policy_follow_every_change_on_the_next_call() {
    let f = fixture(server_spec(&[], 10_000), &[]);
    f.grant("alpha", "t/echo");
    // The calls go through a connection of their own (as the bridge's), so the fixture's
    // locked store is another connection: its commits are foreign to the caller's.
    let bridge = Store::open(&f.dir).unwrap();
    let r = ToolRef::parse("t/echo").unwrap();
    let call = |text: &str| {
        f.broker.invoke(
            &bridge,
            &Invocation {
                app: "alpha",
                version: Some("1.0.0"),
                tool: &r,
                arguments: &json!({ "text": text }),
                caller: Caller::Ui,
                approval: Approval::NotAsked,
                declared: None,
            },
        )
    };
    for i in 0..3 {
        // Served from the cached facts (the broker's own audit row does not invalidate them).
        call(&format!("n{i}")).unwrap();
    }
    registry::revoke(&f.store, "alpha", &r).unwrap();
    assert_eq!(call("x").unwrap_err().code, ErrorCode::ToolsNotGranted);
    f.grant("alpha", "t/echo");
    call("back").unwrap();
    // A policy file written between two calls (no store change at all) applies too.
    let policy_dir = f.dir.root().join("policy");
    std::fs::create_dir_all(&policy_dir).unwrap();
    std::fs::write(policy_dir.join("tools.json"), r#"{"deny": ["t/echo"]}"#).unwrap();
    assert_eq!(call("x").unwrap_err().code, ErrorCode::ToolsDenied);
    std::fs::remove_file(policy_dir.join("tools.json")).unwrap();
    call("allowed again").unwrap();
    assert_eq!(f.tool_audits().len(), 7);
}

#[test]
fn a_tool_not_granted_or_granted_to_another_app_is_refused_before_any_server_starts() {
    let f = fixture(server_spec(&[], 10_000), &[]);
    f.grant("beta", "t/echo");
    assert_eq!(
        f.code("t/echo", json!({"text": "x"})),
        ErrorCode::ToolsNotGranted
    );
    assert_eq!(
        f.broker.status("t").starts,
        0,
        "nothing was started for a refused call"
    );
    f.grant("alpha", "t/add");
    f.grant("alpha", "t/echo");
    registry::revoke(&f.store, "alpha", &ToolRef::parse("t/echo").unwrap()).unwrap();
    assert_eq!(f.code("t/echo", json!({})), ErrorCode::ToolsNotGranted);
    assert_eq!(
        text_of(&f.call("t/add", json!({"a": 2, "b": 3})).unwrap()),
        "5"
    );
    let refused = f
        .tool_audits()
        .into_iter()
        .filter(|a| a["details"]["code"] == "tools.not_granted")
        .count();
    assert_eq!(refused, 2, "refusals are audited too");
}

#[test]
fn an_undeclared_tool_and_bad_arguments_are_refused_and_send_nothing() {
    let f = fixture(server_spec(&[], 10_000), &[]);
    f.grant("alpha", "t/echo");
    let declared: BTreeSet<String> = ["t/add".to_owned()].into();
    let e = f
        .call_as(
            "alpha",
            "t/echo",
            json!({}),
            Approval::NotAsked,
            Some(&declared),
        )
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ToolsNotDeclared);
    assert_eq!(
        f.code("t/echo", json!(["not", "an", "object"])),
        ErrorCode::ToolsInvalid
    );
    let big = "x".repeat(300 * 1024);
    assert_eq!(
        f.code("t/echo", json!({"text": big})),
        ErrorCode::ToolsInvalid
    );
    assert_eq!(f.broker.status("t").starts, 0);
}

#[test]
fn a_destructive_tool_needs_the_users_answer_and_the_app_cannot_give_it() {
    let f = fixture(server_spec(&[], 10_000), &[]);
    f.grant("alpha", "t/delete_note");
    let e = f.call("t/delete_note", json!({"id": "n1"})).unwrap_err();
    assert_eq!(e.code, ErrorCode::ToolsDenied);
    assert_eq!(e.details["needsApproval"], true);
    assert!(
        !f.stderr().contains("call delete_note"),
        "nothing reached the server"
    );
    let v = f
        .call_as(
            "alpha",
            "t/delete_note",
            json!({"id": "n1"}),
            Approval::ByUser,
            None,
        )
        .unwrap();
    assert_eq!(text_of(&v), "deleted n1");
    assert!(f.stderr().contains("call delete_note"));
    let approvals: Vec<_> = f
        .tool_audits()
        .iter()
        .rev()
        .map(|a| a["details"]["approval"].clone())
        .collect();
    assert_eq!(approvals, [json!("none"), json!("user")]);
}

#[test]
fn the_admin_policy_denies_tools_and_marks_others_destructive() {
    let f = fixture(server_spec(&[], 10_000), &[]);
    f.grant("alpha", "t/add");
    f.grant("alpha", "t/echo");
    let policy_dir = f.dir.root().join("policy");
    std::fs::create_dir_all(&policy_dir).unwrap();
    std::fs::write(
        policy_dir.join("tools.json"),
        r#"{"deny": ["t/add"], "destructive": ["t/echo"]}"#,
    )
    .unwrap();
    assert_eq!(
        f.code("t/add", json!({"a": 1, "b": 1})),
        ErrorCode::ToolsDenied
    );
    assert_eq!(
        f.code("t/echo", json!({"text": "x"})),
        ErrorCode::ToolsDenied
    );
    assert!(!f.stderr().contains("call "), "{}", f.stderr());
    // A policy file that does not parse denies everything rather than being ignored.
    std::fs::write(policy_dir.join("tools.json"), "{not json").unwrap();
    assert_eq!(
        f.call_as(
            "alpha",
            "t/echo",
            json!({"text": "x"}),
            Approval::ByUser,
            None
        )
        .unwrap_err()
        .code,
        ErrorCode::ToolsDenied
    );
}

#[test]
fn a_hanging_server_times_out_is_cancelled_and_its_process_group_is_killed() {
    let f = fixture(server_spec(&[], 700), &[]);
    f.grant("alpha", "t/hang");
    f.grant("alpha", "t/echo");
    f.call("t/echo", json!({"text": "warm"})).unwrap();
    let pid = f.broker.status("t").pid.expect("running");
    assert!(alive(pid));
    let started = Instant::now();
    let e = f.call("t/hang", json!({})).unwrap_err();
    assert_eq!(e.code, ErrorCode::ToolsTimeout);
    assert_eq!(e.details["timeoutMs"], 700);
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert!(!alive(pid), "the stuck server was killed and reaped");
    assert!(
        f.stderr().contains("cancelled"),
        "the server was sent notifications/cancelled: {}",
        f.stderr()
    );
    assert_ne!(f.broker.status("t").state, "running");
}

#[test]
fn malformed_json_is_a_bad_response_at_once_not_a_timeout() {
    let f = fixture(server_spec(&[], 20_000), &[]);
    f.grant("alpha", "t/malformed");
    let started = Instant::now();
    assert_eq!(
        f.code("t/malformed", json!({})),
        ErrorCode::ToolsBadResponse
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn floods_are_bounded_stdout_refused_and_stderr_kept_as_a_tail() {
    let f = fixture(server_spec(&[], 20_000), &[]);
    f.grant("alpha", "t/flood");
    f.grant("alpha", "t/spew_stderr");
    let e = f.call("t/flood", json!({})).unwrap_err();
    assert_eq!(e.code, ErrorCode::ToolsBadResponse);
    assert!(e.details["limit"].is_u64());
    std::thread::sleep(Duration::from_millis(400)); // the backoff after a broken session
    let v = f.call("t/spew_stderr", json!({})).unwrap();
    assert_eq!(text_of(&v), "spewed");
    let status = f.broker.status("t");
    assert!(status.stderr_tail.len() <= host_core::hosting::tools::stdio_pipes::STDERR_BYTES);
    assert!(
        status.stderr_dropped > 4 * 1024 * 1024,
        "{}",
        status.stderr_dropped
    );
}

#[test]
fn a_server_that_dies_mid_call_is_unavailable_then_restarted_after_a_backoff() {
    let f = fixture(server_spec(&[], 10_000), &[]);
    f.grant("alpha", "t/die");
    f.grant("alpha", "t/echo");
    assert_eq!(
        f.code("t/die", json!({})),
        ErrorCode::ToolsServerUnavailable
    );
    let e = f.call("t/echo", json!({"text": "again"})).unwrap_err();
    assert_eq!(e.code, ErrorCode::ToolsServerUnavailable);
    assert!(e.details["retryAfterMs"].is_u64(), "{e:?}");
    std::thread::sleep(Duration::from_millis(
        e.details["retryAfterMs"].as_u64().unwrap() + 50,
    ));
    assert_eq!(
        text_of(&f.call("t/echo", json!({"text": "again"})).unwrap()),
        "again"
    );
    assert_eq!(f.broker.status("t").starts, 2);
}

#[test]
fn a_server_that_exits_at_once_is_unavailable() {
    let f = fixture(server_spec(&["--exit-at-once"], 5_000), &[]);
    f.grant("alpha", "t/echo");
    assert_eq!(
        f.code("t/echo", json!({})),
        ErrorCode::ToolsServerUnavailable
    );
    let e = f.call("t/echo", json!({})).unwrap_err();
    assert_eq!(e.code, ErrorCode::ToolsServerUnavailable);
    assert!(e.details["retryAfterMs"].is_u64(), "backing off: {e:?}");
}

#[test]
fn a_secret_reaches_the_servers_environment_and_nothing_else() {
    let mut spec = server_spec(&[], 10_000);
    spec.secrets.insert("TOOL_TOKEN".into(), "canary".into());
    let f = fixture(spec, &[]);
    host_core::install::secrets::open_default(&f.dir)
        .unwrap()
        .set("tools/canary", &SecretValue::new(CANARY.into()))
        .unwrap();
    f.grant("alpha", "t/secret_digest");
    let v = f.call("t/secret_digest", json!({})).unwrap();
    use sha2::Digest;
    assert_eq!(
        text_of(&v),
        hex::encode(sha2::Sha256::digest(CANARY.as_bytes()))
    );
    let listing = serde_json::to_string(
        &registry::servers(&f.store.settings().unwrap(), &f.broker.policy())["t"]
            .spec
            .describe(),
    )
    .unwrap();
    assert!(listing.contains("canary") && !listing.contains(CANARY));
    for (name, bytes) in support_files(f.dir.root()) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(CANARY),
            "{name} holds the secret value"
        );
    }
    assert!(!f.stderr().contains(CANARY));
}

fn support_files(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.push((
                    e.path().display().to_string(),
                    std::fs::read(e.path()).unwrap(),
                ));
            }
        }
    }
    out
}

#[test]
fn readiness_of_a_tool_ref_follows_the_grant_and_the_servers_listing() {
    let refs = "toolRefs:\n  - {key: echo, provider: t, required: true}\nruntimePackage:";
    let f = fixture(server_spec(&[], 10_000), &[("runtimePackage:", refs)]);
    let status = || {
        Store::open(&f.dir)
            .unwrap()
            .readiness("alpha", &HostProfile::current())
            .unwrap()
    };
    let r = status();
    assert_eq!(r.status, Status::NeedsSetup);
    let action = r
        .setup_actions
        .iter()
        .find(|a| a.kind == "grant-tool")
        .expect("Grant tool");
    assert_eq!(action.target.as_deref(), Some("t/echo"));
    f.grant("alpha", "t/echo");
    // registry::add listed nothing yet (no server started): not ready until listed.
    assert_eq!(status().status, Status::NeedsSetup);
    f.broker.list_server(&f.store, "t").unwrap();
    let r = status();
    let check = r.checks.iter().find(|c| c.kind == "tool").unwrap();
    assert_eq!(
        check.outcome,
        host_core::install::readiness::Outcome::Pass,
        "{r:#?}"
    );
    registry::revoke(&f.store, "alpha", &ToolRef::parse("t/echo").unwrap()).unwrap();
    assert_eq!(status().status, Status::NeedsSetup);
}

#[test]
fn removing_a_server_drops_its_grants_and_stopping_the_host_kills_every_server() {
    let f = fixture(server_spec(&[], 10_000), &[]);
    f.grant("alpha", "t/echo");
    f.call("t/echo", json!({"text": "x"})).unwrap();
    let pid = f.broker.status("t").pid.unwrap();
    let Fixture {
        _tmp,
        dir,
        store,
        broker,
    } = f;
    drop(broker);
    assert!(!alive(pid), "host exit kills and reaps the server");
    let broker = Broker::new(&dir).unwrap();
    registry::remove(&store, &broker.policy(), "t").unwrap();
    assert!(registry::grants(&store.settings().unwrap(), "alpha").is_empty());
    registry::add(&store, &broker.policy(), "t", &server_spec(&[], 10_000)).unwrap();
    let r = ToolRef::parse("t/echo").unwrap();
    let e = broker
        .invoke(
            &store,
            &Invocation {
                app: "alpha",
                version: None,
                tool: &r,
                arguments: &json!({}),
                caller: Caller::Ui,
                approval: Approval::NotAsked,
                declared: None,
            },
        )
        .unwrap_err();
    assert_eq!(
        e.code,
        ErrorCode::ToolsNotGranted,
        "a re-added server starts with no grants"
    );
}
