//! Test-only: the App Server over stdio on a data directory, with a scripted backend.
//! `scripted_app_server <data-dir> <slow|fast>`: `slow` streams 1,000 deltas 20 ms apart per
//! request (so a test can kill it mid-stream); `fast` answers "ok" at once. Logs go to stderr.

use std::sync::Arc;
use std::time::Duration;

use runtime_core::app_server::{serve_stdio, ServeConfig};
use runtime_core::backend::{BackendEvent, ExecutionBackend, ScriptStep, ScriptedBackend};
use runtime_core::runtime::{Runtime, RuntimeConfig};

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .expect("usage: scripted_app_server <data-dir> <slow|fast>");
    let mode = args.next().unwrap_or_else(|| "fast".into());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let backend = ScriptedBackend::new();
        let script = if mode == "slow" {
            let mut s = Vec::new();
            for i in 0..1000 {
                s.push(ScriptStep::Sleep(Duration::from_millis(20)));
                s.push(ScriptStep::Emit(BackendEvent::TextDelta(format!("d{i} "))));
            }
            s.push(ScriptStep::Emit(BackendEvent::Finished {
                reason: "stop".into(),
            }));
            s
        } else {
            vec![
                ScriptStep::Emit(BackendEvent::TextDelta("ok".into())),
                ScriptStep::Emit(BackendEvent::Finished {
                    reason: "stop".into(),
                }),
            ]
        };
        backend.set_fallback(script);
        let runtime = Runtime::open(
            RuntimeConfig::new(dir),
            Some(Arc::new(backend) as Arc<dyn ExecutionBackend>),
        )
        .expect("open runtime");
        let stdin = tokio::io::BufReader::new(tokio::io::stdin());
        serve_stdio(stdin, tokio::io::stdout(), ServeConfig::new(runtime))
            .await
            .expect("serve");
    });
}
