//! The workflow driver's threads share the session's one tool broker: runs in flight at once,
//! on several driver threads, calling the same stdio MCP tool start its server once (each
//! thread had its own broker before, so the server ran twice in one process).

mod support;

use std::time::{Duration, Instant};

use host_core::foundation::paths::DataDir;
use host_core::hosting::capability::services::Services;
use host_core::hosting::tools::{registry, ServerSpec, ToolRef, Transport};
use host_core::install::store::Store;
use runtime_core::workflow::machine::RunStatus;
use serde_json::json;
use support::agent::set_placeholder_model;
use support::{copy_dir, install, repo_root};

const APP: &str = "reply-workflow";
const WF: &str = "draft-review-publish";

/// The sample app declaring `t/echo` and a workflow of one tool-call step.
fn tool_app(tmp: &std::path::Path) -> std::path::PathBuf {
    let pkg = tmp.join("pkg");
    copy_dir(&repo_root().join("fixtures/apps").join(APP), &pkg);
    let md = pkg.join("APP.md");
    let text = std::fs::read_to_string(&md).unwrap();
    let start = text.find("workflows:\n").unwrap();
    let end = text.find("---\n\n# Reply").unwrap();
    let wf = format!(
        "workflows:\n  - key: {WF}\n    recovery: {{onError: fail, onTimeout: fail}}\n    states:\n      - {{key: start, kind: start, next: echo}}\n      - {{key: echo, kind: tool-call, uses: t/echo, arguments: {{text: \"input.topic\"}}, output: echoed, next: done}}\n      - {{key: done, kind: end, result: \"outputs.echoed\"}}\n"
    );
    let text = format!("{}{}{}", &text[..start], wf, &text[end..])
        .replace(
            "    lime.agent: \"^0.10.0\"\n",
            "    lime.agent: \"^0.10.0\"\n    lime.tools: \"^0.10.0\"\n",
        )
        .replace(
            "[lime.storage, lime.artifacts, lime.agent]",
            "[lime.storage, lime.tools]",
        )
        .replacen(
            "runtimePackage:",
            "toolRefs:\n  - {key: t/echo}\nruntimePackage:",
            1,
        );
    std::fs::write(&md, text).unwrap();
    pkg
}

#[test]
fn two_concurrent_runs_calling_one_mcp_tool_start_its_server_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &tool_app(tmp.path()));
    // The app requires lime.agent, which needs a model set up (the workflow makes no agent step).
    set_placeholder_model(&dir);
    let starts = tmp.path().join("starts.log");
    {
        let (store, _) = Store::open_locked(&dir).unwrap();
        let policy = host_core::hosting::tools::policy::AdminPolicy::default();
        // Each start of the server appends a line to `starts`.
        let script = format!(
            "echo started >> '{}'; exec /usr/bin/python3 '{}'",
            starts.display(),
            repo_root().join("fixtures/mcp/test_server.py").display()
        );
        let spec = ServerSpec {
            transport: Transport::Stdio {
                command: "/bin/sh".into(),
                args: vec!["-c".into(), script],
                env: Default::default(),
            },
            secrets: Default::default(),
            timeout_ms: Some(10_000),
        };
        registry::add(&store, &policy, "t", &spec).unwrap();
        registry::grant(&store, &policy, APP, &ToolRef::parse("t/echo").unwrap()).unwrap();
        // The tools' listing (what `lime.tools` knows of the server), by a broker of its own.
        host_core::hosting::tools::Broker::new(&dir)
            .unwrap()
            .list_server(&store, "t")
            .unwrap();
    }
    std::fs::remove_file(&starts).unwrap();

    let store = Store::open(&dir).unwrap();
    let mut services = Services::new(dir.apps_data());
    let runs = services.workflow_runs(&store).unwrap();
    // As many runs as driver threads, started together: the threads take one each.
    let topics = ["one", "two", "three", "four"];
    let started: Vec<_> = topics
        .iter()
        .map(|t| {
            runs.start(&store, APP, WF, json!({"topic": t}), None, None)
                .unwrap()
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    for (s, topic) in started.iter().zip(topics) {
        let v = loop {
            let v = runs.get(&s.run_id).unwrap();
            if v.finished {
                break v;
            }
            assert!(Instant::now() < deadline, "{v:#?}");
            std::thread::sleep(Duration::from_millis(10));
        };
        let RunStatus::Succeeded { result } = &v.state.status else {
            panic!("{v:#?}")
        };
        assert!(result.to_string().contains(topic), "{result}");
    }
    let lines = std::fs::read_to_string(&starts).unwrap();
    assert_eq!(lines.lines().count(), 1, "the server started: {lines:?}");
    services.shutdown_tools();
}
