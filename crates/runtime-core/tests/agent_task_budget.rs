//! Token budgets (issue 19 §2): the host's per-app budget (`ToolPolicy::token_budget`) ends a
//! task whose model calls used more with `error_max_budget`; another app's tasks, without a
//! budget, run on; and every model call's usage is recorded as `cost.recorded`.

use std::sync::Arc;
use std::time::Duration;

use runtime_core::agent_task::{AgentTasks, StartTask};
use runtime_core::backend::*;
use runtime_core::event::{EventBody, EventType};
use runtime_core::ids::AppId;
use runtime_core::runtime::{Runtime, RuntimeConfig};
use runtime_core::tools::ToolPolicy;
use serde_json::Value;

/// The host's setting: only `capped` has a budget (20 tokens per task).
#[derive(Debug)]
struct Budgets;

impl ToolPolicy for Budgets {
    fn token_budget(&self, app: &AppId) -> Option<u64> {
        (app.as_str() == "capped").then_some(20)
    }
}

fn open(dir: &std::path::Path, runtime_max: Option<u64>) -> AgentTasks {
    let b = ScriptedBackend::new();
    b.set_fallback(vec![
        ScriptStep::Emit(BackendEvent::TextDelta("answer".into())),
        ScriptStep::Emit(BackendEvent::Usage {
            input_tokens: 15,
            output_tokens: 10,
        }),
        ScriptStep::Emit(BackendEvent::Finished {
            reason: "stop".into(),
        }),
    ]);
    let mut cfg = RuntimeConfig::new(dir);
    cfg.tool_policy = Arc::new(Budgets);
    cfg.limits.max_tokens = runtime_max;
    let rt = Runtime::open(cfg, Some(Arc::new(b) as Arc<dyn ExecutionBackend>)).unwrap();
    AgentTasks::open(rt).unwrap()
}

async fn result_subtype(t: &AgentTasks, a: &AppId, task: &str) -> String {
    let mut s = t.subscribe(a, task, 0).unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let e = tokio::time::timeout_at(deadline, s.next())
            .await
            .expect("task events in time")
            .unwrap();
        let j: Value = serde_json::to_value(&e).unwrap();
        if j["type"] == "result" {
            return j["subtype"].as_str().unwrap_or_default().to_owned();
        }
    }
}

fn cost_facts(t: &AgentTasks) -> Vec<(u64, Option<u64>, String)> {
    let log = t.runtime().log();
    let mut out = Vec::new();
    for (s, _) in log.sessions().unwrap() {
        for e in log.read_all(&s).unwrap() {
            if let EventBody::Limit(EventType::CostRecorded, l) = &e.body {
                out.push((
                    l.used_tokens.unwrap_or(0),
                    l.max_tokens,
                    l.status.clone().unwrap_or_default(),
                ));
            }
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_budget_ends_its_task_with_error_max_budget_and_spares_other_apps() {
    let tmp = tempfile::tempdir().unwrap();
    let t = open(tmp.path(), None);
    let (capped, free) = (AppId::new("capped").unwrap(), AppId::new("free").unwrap());
    let req = || StartTask {
        input: "go".into(),
        ..Default::default()
    };
    let over = t.start(&capped, req()).unwrap().task_id;
    assert_eq!(result_subtype(&t, &capped, &over).await, "error_max_budget");
    let fine = t.start(&free, req()).unwrap().task_id;
    assert_eq!(result_subtype(&t, &free, &fine).await, "success");
    assert_eq!(
        cost_facts(&t),
        [
            (25, None, "unbudgeted".to_owned()),
            (25, Some(20), "over_budget".to_owned())
        ]
    );
}

/// The app budget only lowers the runtime's: a higher app budget does not lift a lower runtime
/// limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_budget_never_raises_the_runtime_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let t = open(tmp.path(), Some(10));
    let capped = AppId::new("capped").unwrap();
    let id = t
        .start(
            &capped,
            StartTask {
                input: "go".into(),
                ..Default::default()
            },
        )
        .unwrap()
        .task_id;
    assert_eq!(result_subtype(&t, &capped, &id).await, "error_max_budget");
    assert_eq!(cost_facts(&t), [(25, Some(10), "over_budget".to_owned())]);
}

/// A task's own budget (`startTask({budget: {maxTokens}})`) ends it `error_max_budget` when its
/// run uses more, is kept with the task (a retry has it), and never lifts the app's budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_budget_ends_the_task_and_never_lifts_the_apps() {
    let tmp = tempfile::tempdir().unwrap();
    let t = open(tmp.path(), None);
    let (capped, free) = (AppId::new("capped").unwrap(), AppId::new("free").unwrap());
    let with = |n: u64| StartTask {
        input: "go".into(),
        max_tokens: Some(n),
        ..Default::default()
    };
    let small = t.start(&free, with(5)).unwrap().task_id;
    assert_eq!(result_subtype(&t, &free, &small).await, "error_max_budget");
    let roomy = t.start(&free, with(1000)).unwrap().task_id;
    assert_eq!(result_subtype(&t, &free, &roomy).await, "success");
    // The task's view shows its usage and its budget.
    let v = t.get(&free, &roomy).unwrap();
    assert_eq!(
        v["usage"],
        serde_json::json!({"inputTokens": 15, "outputTokens": 10, "totalTokens": 25}),
        "{v}"
    );
    assert_eq!(v["budget"]["maxTokens"], 1000);
    // The app's 20 wins over a task's 1000.
    let lifted = t.start(&capped, with(1000)).unwrap().task_id;
    assert_eq!(
        result_subtype(&t, &capped, &lifted).await,
        "error_max_budget"
    );
    assert_eq!(
        cost_facts(&t),
        [
            (25, Some(5), "over_budget".to_owned()),
            (25, Some(20), "over_budget".to_owned()),
            (25, Some(1000), "within_budget".to_owned()),
        ]
    );
    // A retry runs under the same task budget.
    t.retry(&free, &small).unwrap();
    let budgets: Vec<Option<u64>> = cost_facts(&t).iter().map(|c| c.1).collect();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut facts = budgets;
    while facts.len() < 4 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        facts = cost_facts(&t).iter().map(|c| c.1).collect();
    }
    assert_eq!(
        facts.iter().filter(|b| **b == Some(5)).count(),
        2,
        "{facts:?}"
    );
}
