//! `startTask`'s runtime half (`AgentTasks::start`: the task row, then `agentSession/read`,
//! `agentSession/start` and `agentSession/turn/start` through the App Server method layer since
//! issue 19 §3; direct `Runtime` calls before). The bridge's half of `startTask` →
//! `host:response` (decode, dispatch, audit, reply) is the same code on both sides, so this
//! ratio bounds the whole path's ratio from above.
//!
//! Run the same source before and after (`docs/benchmarks.md`): `cargo bench -p runtime-core
//! --bench agent_start`. Prints min/median/max and p50/p95 per call over
//! `APPHOST_BENCH_REPS` (5) repetitions of `APPHOST_BENCH_CALLS` (500) new tasks each (each
//! task its own new session, its turn answered by a scripted backend in the background).

use std::sync::Arc;
use std::time::Instant;

use runtime_core::agent_task::{AgentTasks, StartTask};
use runtime_core::backend::*;
use runtime_core::ids::AppId;
use runtime_core::runtime::{Runtime, RuntimeConfig};

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let reps = env_or("APPHOST_BENCH_REPS", 5);
    let calls = env_or("APPHOST_BENCH_CALLS", 500);
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut medians = Vec::new();
    let mut all = Vec::new();
    for rep in 0..reps {
        let tmp = tempfile::tempdir().unwrap();
        let backend = ScriptedBackend::new();
        for _ in 0..calls {
            backend.push_text(&["ok"]);
        }
        let tasks = {
            let _g = tokio.enter();
            let rt = Runtime::open(
                RuntimeConfig::new(tmp.path()),
                Some(Arc::new(backend) as Arc<dyn ExecutionBackend>),
            )
            .unwrap();
            AgentTasks::open(rt).unwrap()
        };
        let app = AppId::new("bench.app").unwrap();
        let mut times: Vec<u128> = (0..calls)
            .map(|i| {
                let req = StartTask {
                    input: format!("task {i}"),
                    ..StartTask::default()
                };
                let t = Instant::now();
                tasks.start(&app, req).unwrap();
                t.elapsed().as_nanos()
            })
            .collect();
        times.sort_unstable();
        let p = |q: usize| times[(times.len() * q / 100).min(times.len() - 1)] as f64 / 1000.0;
        println!(
            "rep {rep}: n={calls} min={:.1}us p50={:.1}us p95={:.1}us max={:.1}us",
            p(0),
            p(50),
            p(95),
            times[times.len() - 1] as f64 / 1000.0
        );
        medians.push(p(50));
        all.extend(times);
    }
    medians.sort_by(f64::total_cmp);
    all.sort_unstable();
    let q = |x: usize| all[(all.len() * x / 100).min(all.len() - 1)] as f64 / 1000.0;
    println!(
        "AgentTasks::start: medians over {reps} reps min={:.1}us median={:.1}us max={:.1}us; all calls p50={:.1}us p95={:.1}us",
        medians[0],
        medians[medians.len() / 2],
        medians[medians.len() - 1],
        q(50),
        q(95)
    );
}
