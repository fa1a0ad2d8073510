//! RuntimeCore benchmarks (`cargo bench -p runtime-core --bench runtime`; see
//! `docs/benchmarks.md`). Figures are min/median/max over repetitions; targets are ratios
//! against a baseline measured in the same run; the binary fails only on errors.
//!
//! 1. Durable append: `EventLog::append` of steps of 10 events (one transaction each) vs a raw
//!    rusqlite loop inserting the same rows (pre-serialized) into the same table with the same
//!    pragmas (WAL, synchronous=FULL), one transaction per step. Target >= 0.5x. The log runs
//!    with group commit off here (every step durable, like the raw loop); a second line shows
//!    the default group commit (steps of deltas only are batched).
//! 2. Rebuild of every session's read models from 1,000,000 events (1,000 sessions), in a fresh
//!    child process: wall time and peak RSS (VmHWM).
//! 3. Runtime overhead per turn step with the scripted backend (no sleeps): a turn of 200
//!    deltas through `Runtime::start_turn` to `turn.completed`.
//! 4. Delta-to-stdout latency: a backend emitting a delta every 2 ms, `serve_stdio` over an
//!    in-process pipe; time from the backend handing over a delta to its `agentSession/event`
//!    line arriving at the client.
//!
//! 5. `agentSession/list` over 10,000 sessions (see `bench_list`).
//!
//! Knobs: `APPHOST_BENCH_REPS` (5), `APPHOST_BENCH_DIR` (parent of temp dirs; default the
//! system temp dir), `APPHOST_BENCH_EVENTS` (1000000), `APPHOST_BENCH_SESSIONS` (10000),
//! `APPHOST_BENCH_ONLY` (comma-separated subset of `append,steps,latency,rebuild,list`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use runtime_core::backend::*;
use runtime_core::clock::SystemClock;
use runtime_core::event::*;
use runtime_core::ids::*;
use runtime_core::log::{configure_connection, EventLog, GroupCommit};
use runtime_core::read_model::SessionReadModel;
use runtime_core::runtime::{Runtime, RuntimeConfig};
use tokio::sync::mpsc;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn tmp() -> tempfile::TempDir {
    match std::env::var("APPHOST_BENCH_DIR") {
        Ok(d) => tempfile::tempdir_in(d).unwrap(),
        Err(_) => tempfile::tempdir().unwrap(),
    }
}

fn stats(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (v[0], v[v.len() / 2], v[v.len() - 1])
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// One turn's worth of drafts (~45 events): lifecycle, two model requests, one tool call.
fn turn_drafts(t: u64) -> Vec<EventDraft> {
    let th = ThreadId::new("thread_b").unwrap();
    let turn = TurnId::new(format!("turn_{t}")).unwrap();
    let ts = Scope::turn(&th, &turn);
    let task = Scope {
        task_id: Some(TaskId::new(format!("task_{t}")).unwrap()),
        ..ts.clone()
    };
    let run = Scope {
        run_id: Some(RunId::new(format!("run_{t}")).unwrap()),
        ..task.clone()
    };
    let tool = Scope {
        step_id: Some(StepId::new(format!("step_{t}")).unwrap()),
        tool_call_id: Some(ToolCallId::new(format!("call_{t}")).unwrap()),
        ..ts.clone()
    };
    let mut d = vec![
        EventDraft::new(
            ts.clone(),
            EventBody::TurnSubmitted(
                EventType::TurnSubmitted,
                runtime_core::event::TurnSubmitted {
                    status: Some("accepted".into()),
                    input_ref: Some(format!("input://turn_{t}/user")),
                    ..Default::default()
                },
            ),
        ),
        EventDraft::new(
            ts.clone(),
            EventBody::TurnStarted(EventType::TurnStarted, Default::default()),
        ),
        EventDraft::new(
            task.clone(),
            EventBody::Task(EventType::TaskCreated, Default::default()),
        ),
        EventDraft::new(
            run.clone(),
            EventBody::TaskAttempt(EventType::TaskAttemptStarted, Default::default()),
        ),
        EventDraft::new(
            ts.clone(),
            EventBody::ModelRequested(
                EventType::ModelRequested,
                ModelRequested {
                    model_name: Some("m".into()),
                    ..Default::default()
                },
            ),
        ),
    ];
    for i in 0..20 {
        d.push(EventDraft::new(
            ts.clone(),
            EventBody::Delta(
                EventType::ModelDelta,
                TextDelta {
                    text: Some(format!("word{i} ")),
                    ..Default::default()
                },
            ),
        ));
    }
    d.push(EventDraft::new(
        ts.clone(),
        EventBody::ModelCompleted(
            EventType::ModelCompleted,
            ModelCompleted {
                input_tokens: Some(100),
                output_tokens: Some(20),
                ..Default::default()
            },
        ),
    ));
    d.push(EventDraft::new(
        tool.clone(),
        EventBody::ToolStarted(
            EventType::ToolStarted,
            ToolStarted {
                tool_name: Some("storage_read".into()),
                ..Default::default()
            },
        ),
    ));
    d.push(EventDraft::new(
        tool.clone(),
        EventBody::ToolArgs(
            EventType::ToolArgs,
            ToolArgs {
                arguments: Some(serde_json::json!({"path": "a.txt"})),
                ..Default::default()
            },
        ),
    ));
    d.push(EventDraft::new(
        tool.clone(),
        EventBody::ToolResult(
            EventType::ToolResult,
            ToolResult {
                output_preview: Some("x".repeat(200)),
                output_bytes: Some(200),
                ..Default::default()
            },
        ),
    ));
    d.push(EventDraft::new(
        ts.clone(),
        EventBody::ModelRequested(EventType::ModelRequested, Default::default()),
    ));
    for i in 0..10 {
        d.push(EventDraft::new(
            ts.clone(),
            EventBody::Delta(
                EventType::ModelDelta,
                TextDelta {
                    text: Some(format!("more{i} ")),
                    ..Default::default()
                },
            ),
        ));
    }
    d.push(EventDraft::new(
        ts.clone(),
        EventBody::ModelCompleted(EventType::ModelCompleted, Default::default()),
    ));
    d.push(EventDraft::new(
        run,
        EventBody::TaskAttempt(EventType::TaskAttemptCompleted, Default::default()),
    ));
    d.push(EventDraft::new(
        task,
        EventBody::Task(EventType::TaskCompleted, Default::default()),
    ));
    d.push(EventDraft::new(
        ts,
        EventBody::TurnCompleted(EventType::TurnCompleted, Default::default()),
    ));
    d
}

fn bench_append(reps: usize) {
    const STEPS: usize = 300;
    const PER_STEP: usize = 10;
    let n = STEPS * PER_STEP;
    let mut drafts = Vec::new();
    let mut t = 0;
    while drafts.len() < n {
        drafts.extend(turn_drafts(t));
        t += 1;
    }
    drafts.truncate(n);
    // The exact rows for the raw loop: stamp once through a scratch log.
    let scratch = tmp();
    let log = EventLog::open(&scratch.path().join("events.db")).unwrap();
    let s = SessionId::new("sess_bench").unwrap();
    let mut rows = Vec::new();
    for chunk in drafts.chunks(PER_STEP) {
        for e in log.append(&s, chunk.to_vec()).unwrap() {
            rows.push((
                e.sequence as i64,
                e.event_id.as_str().to_owned(),
                e.kind().as_str(),
                e.to_json_string(),
            ));
        }
    }
    let (mut ours, mut grouped, mut raw) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        // ours, every step durable; then with the default group commit (until all is durable)
        for (group, out) in [
            (GroupCommit::OFF, &mut ours),
            (GroupCommit::default(), &mut grouped),
        ] {
            let dir = tmp();
            let log =
                EventLog::open_with(&dir.path().join("events.db"), Arc::new(SystemClock), group)
                    .unwrap();
            let steps: Vec<Vec<EventDraft>> = drafts.chunks(PER_STEP).map(|c| c.to_vec()).collect();
            let t0 = Instant::now();
            for step in steps {
                log.append(&s, step).unwrap();
            }
            log.flush().unwrap();
            out.push(n as f64 / t0.elapsed().as_secs_f64());
        }
        // raw
        let dir = tmp();
        let conn = rusqlite::Connection::open(dir.path().join("raw.db")).unwrap();
        configure_connection(&conn).unwrap();
        conn.execute_batch("CREATE TABLE events(session_id TEXT NOT NULL, sequence INTEGER NOT NULL, event_id TEXT NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY(session_id, sequence)) WITHOUT ROWID;").unwrap();
        let mut conn = conn;
        let t0 = Instant::now();
        for chunk in rows.chunks(PER_STEP) {
            let tx = conn.transaction().unwrap();
            {
                let mut st = tx.prepare_cached("INSERT INTO events(session_id, sequence, event_id, type, body) VALUES(?1, ?2, ?3, ?4, ?5)").unwrap();
                for (seq, id, ty, body) in chunk {
                    st.execute(rusqlite::params!["sess_bench", seq, id, ty, body])
                        .unwrap();
                }
            }
            tx.commit().unwrap();
        }
        raw.push(n as f64 / t0.elapsed().as_secs_f64());
    }
    let (a, b, c) = stats(ours.clone());
    let (g, h, i) = stats(grouped.clone());
    let (d, e, f) = stats(raw.clone());
    println!("append: {n} events in steps of {PER_STEP} (one transaction per step), WAL + synchronous=FULL, 1 thread, {reps} reps");
    println!("  EventLog::append  events/s min {a:.0} median {b:.0} max {c:.0} (group commit off)");
    println!("  EventLog::append  events/s min {g:.0} median {h:.0} max {i:.0} (default group commit, steps of deltas batched)");
    println!("  raw rusqlite loop events/s min {d:.0} median {e:.0} max {f:.0}");
    println!("  ratio of medians {:.2}x (target >= 0.5x)", b / e);
}

fn build_million(path: &std::path::Path, total: usize) {
    let log = EventLog::open(path).unwrap();
    let sessions = 1000;
    let per = total / sessions;
    let turn = turn_drafts(0).len();
    let t0 = Instant::now();
    for s in 0..sessions {
        let sid = SessionId::new(format!("sess_{s:04}")).unwrap();
        let mut batch = Vec::new();
        let mut t = 0;
        let mut done = 0;
        while done < per {
            let mut d = turn_drafts(t);
            t += 1;
            d.truncate((per - done).min(turn));
            done += d.len();
            batch.extend(d);
            if batch.len() >= 2000 {
                log.append(&sid, std::mem::take(&mut batch)).unwrap();
            }
        }
        if !batch.is_empty() {
            // A trailing partial turn is fine: it just stays open.
            log.append(&sid, batch).unwrap();
        }
    }
    eprintln!(
        "  (generated {} events in {:.1} s)",
        sessions * per,
        t0.elapsed().as_secs_f64()
    );
}

fn rebuild_child(path: &str) {
    let log = EventLog::open(std::path::Path::new(path)).unwrap();
    let t0 = Instant::now();
    let mut models: HashMap<SessionId, SessionReadModel> = HashMap::new();
    let n = log
        .for_each(|e| {
            models.entry(e.session_id.clone()).or_default().apply(&e);
        })
        .unwrap();
    let secs = t0.elapsed().as_secs_f64();
    println!("{n} {} {secs} {}", models.len(), peak_rss_kib());
}

fn bench_rebuild(reps: usize) {
    let total: usize = env_or("APPHOST_BENCH_EVENTS", 1_000_000);
    let dir = tmp();
    let path = dir.path().join("events.db");
    build_million(&path, total);
    let (mut secs, mut rss) = (Vec::new(), Vec::new());
    let mut n = 0;
    for _ in 0..reps.min(3) {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .arg("--rebuild-child")
            .arg(&path)
            .output()
            .unwrap();
        let line = String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .unwrap_or("")
            .to_owned();
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            f.len(),
            4,
            "child output {line:?} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        n = f[0].parse().unwrap();
        secs.push(f[2].parse::<f64>().unwrap());
        rss.push(f[3].parse::<f64>().unwrap() / 1024.0);
    }
    let (a, b, c) = stats(secs);
    let (d, e, f) = stats(rss);
    println!("rebuild: {n} events, 1000 sessions, all six read models per session, fresh process, 1 thread, {} reps", reps.min(3));
    println!(
        "  time s min {a:.2} median {b:.2} max {c:.2} ({:.0} events/s at the median)",
        n as f64 / b
    );
    println!("  peak RSS MiB min {d:.0} median {e:.0} max {f:.0} (whole process, VmHWM)");
}

/// 5. `agentSession/list` (`Runtime::list_sessions`): the first page (50) of 10,000 sessions of
///    ~40 events each, all of them and one workspace's tenth, vs the smallest query that knows
///    which sessions exist (`EventLog::sessions`: `MAX(sequence)` per session) on the same log.
fn bench_list(reps: usize) {
    use runtime_core::event::facts;
    use runtime_core::runtime::SessionFilter;
    let sessions: usize = env_or("APPHOST_BENCH_SESSIONS", 10_000);
    let dir = tmp();
    let t0 = Instant::now();
    {
        let log = EventLog::open(&dir.path().join("events.db")).unwrap();
        let th = ThreadId::new("thread_b").unwrap();
        for s in 0..sessions {
            let sid = SessionId::new(format!("sess_{s:05}")).unwrap();
            let mut d = vec![
                facts::session_created("bench.app", Some(format!("w{}", s % 10)), None),
                facts::thread_started(Scope::thread(&th)),
            ];
            d.extend(turn_drafts(0));
            d.extend(turn_drafts(1));
            if s % 7 == 0 {
                d.push(facts::session_updated(Some(format!("title {s}")), None));
            }
            log.append_unsynced(&sid, d).unwrap();
        }
    }
    let tokio_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let _enter = tokio_rt.enter();
    let rt = Runtime::open(RuntimeConfig::new(dir.path()), None).unwrap();
    let per = rt
        .log()
        .read_all(&SessionId::new("sess_00001").unwrap())
        .unwrap()
        .len();
    eprintln!(
        "  (generated {sessions} sessions of {per} events in {:.1} s)",
        t0.elapsed().as_secs_f64()
    );
    let ws = SessionFilter {
        workspace_id: Some("w3".into()),
        ..Default::default()
    };
    let (mut base, mut all, mut one) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        let t = Instant::now();
        let n = rt.log().sessions().unwrap().len();
        base.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(n, sessions);
        let t = Instant::now();
        let page = rt.list_sessions(&SessionFilter::default(), 0, 50).unwrap();
        all.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!((page.sessions.len(), page.total), (50, sessions));
        let t = Instant::now();
        let page = rt.list_sessions(&ws, 0, 50).unwrap();
        one.push(t.elapsed().as_secs_f64() * 1e3);
        assert_eq!(page.total, sessions / 10);
    }
    let (b0, b1, b2) = stats(base);
    let (a0, a1, a2) = stats(all);
    let (o0, o1, o2) = stats(one);
    println!("list: {sessions} sessions of {per} events, first page of 50, 1 thread, {reps} reps (ms min/median/max)");
    println!("  baseline EventLog::sessions   {b0:.1} / {b1:.1} / {b2:.1}");
    println!("  list, every session          {a0:.1} / {a1:.1} / {a2:.1}  ({:.2}x the baseline at the median)", a1 / b1);
    println!(
        "  list, one workspace (1/10)   {o0:.1} / {o1:.1} / {o2:.1}  ({:.2}x)",
        o1 / b1
    );
}

/// A backend that emits `n` deltas, optionally spaced, stamping the hand-over time of each.
#[derive(Clone)]
struct TimedBackend {
    n: usize,
    every: Option<Duration>,
    sent: Arc<Mutex<Vec<Instant>>>,
}

impl ExecutionBackend for TimedBackend {
    fn info(&self) -> BackendInfo {
        BackendInfo {
            provider_name: "timed".into(),
            model_name: "timed".into(),
        }
    }
    fn stream(&self, _req: ModelRequest, _cancel: CancelSignal) -> mpsc::Receiver<BackendEvent> {
        let (tx, rx) = mpsc::channel(1024);
        let me = self.clone();
        tokio::spawn(async move {
            for i in 0..me.n {
                if let Some(d) = me.every {
                    tokio::time::sleep(d).await;
                }
                me.sent.lock().unwrap().push(Instant::now());
                if tx
                    .send(BackendEvent::TextDelta(format!("t{i}")))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            let _ = tx
                .send(BackendEvent::Finished {
                    reason: "stop".into(),
                })
                .await;
        });
        rx
    }
}

fn bench_step_overhead(reps: usize) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut per_step = Vec::new();
    let mut events_per_turn = 0;
    for _ in 0..reps {
        let dir = tmp();
        let backend = TimedBackend {
            n: 200,
            every: None,
            sent: Arc::default(),
        };
        let r = rt.block_on(async {
            let runtime = Runtime::open(
                RuntimeConfig::new(dir.path()),
                Some(Arc::new(backend) as Arc<dyn ExecutionBackend>),
            )
            .unwrap();
            let m = runtime
                .start_session(AppId::new("bench").unwrap(), None, None)
                .unwrap();
            let sid = m.session.session_id.unwrap();
            let before = runtime.log().last_sequence(&sid).unwrap();
            let mut sub = runtime.log().subscribe(&sid, before);
            let t0 = Instant::now();
            runtime
                .start_turn(&sid, None, "go".into(), None, false)
                .unwrap();
            let mut n = 0u64;
            loop {
                let e = sub.next().await.unwrap();
                n += 1;
                if e.kind().is_turn_terminal() {
                    break;
                }
            }
            (t0.elapsed(), n)
        });
        events_per_turn = r.1;
        per_step.push(r.0.as_secs_f64() * 1e6 / r.1 as f64);
    }
    let (a, b, c) = stats(per_step);
    println!("turn step overhead: a 200-delta turn with the scripted backend, {events_per_turn} events appended one step at a time, tokio 2 worker threads, {reps} reps");
    println!("  per step (event) us min {a:.0} median {b:.0} max {c:.0}");
}

fn bench_delta_latency(reps: usize) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // Per delta: hand-over -> published (an in-process log subscriber sees it) and
    // hand-over -> stdout line read back; the difference is the App Server's share.
    let (mut all, mut published, mut serialized) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        let dir = tmp();
        let sent: Arc<Mutex<Vec<Instant>>> = Arc::default();
        let backend = TimedBackend {
            n: 100,
            every: Some(Duration::from_millis(2)),
            sent: sent.clone(),
        };
        let (lat, publ) = rt.block_on(async {
            use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
            let runtime = Runtime::open(RuntimeConfig::new(dir.path()), Some(Arc::new(backend) as Arc<dyn ExecutionBackend>)).unwrap();
            let sid = runtime_core::ids::SessionId::new("sess_lat").unwrap();
            let (mut cw, sr) = tokio::io::duplex(1 << 20);
            let (sw, cr) = tokio::io::duplex(1 << 20);
            tokio::spawn(runtime_core::app_server::serve_stdio(BufReader::new(sr), sw, runtime_core::app_server::ServeConfig::new(runtime.clone())));
            let mut lines = BufReader::new(cr).lines();
            async fn send(cw: &mut tokio::io::DuplexStream, l: &str) {
                cw.write_all(l.as_bytes()).await.unwrap();
                cw.write_all(b"\n").await.unwrap();
            }
            for l in [
                r#"{"id":1,"method":"initialize","params":{"clientInfo":{"name":"bench"}}}"#,
                r#"{"method":"initialized"}"#,
                r#"{"id":2,"method":"agentSession/start","params":{"appId":"bench","sessionId":"sess_lat"}}"#,
            ] {
                send(&mut cw, l).await;
            }
            // Wait for the session before subscribing in process.
            while let Some(line) = lines.next_line().await.unwrap() {
                if line.contains(r#""id":2"#) {
                    break;
                }
            }
            let from = runtime.log().last_sequence(&sid).unwrap();
            let mut sub = runtime.log().subscribe(&sid, from);
            let watcher = tokio::spawn(async move {
                let mut seen = HashMap::new();
                loop {
                    let e = sub.next().await.unwrap();
                    let now = Instant::now();
                    let v = serde_json::to_value(&e).unwrap();
                    if v["type"] == "model.delta" {
                        let i: usize = v["payload"]["text"].as_str().unwrap()[1..].parse().unwrap();
                        seen.insert(i, now);
                    }
                    if e.kind().is_turn_terminal() {
                        return seen;
                    }
                }
            });
            send(&mut cw, r#"{"id":3,"method":"agentSession/turn/start","params":{"sessionId":"sess_lat","input":{"text":"go"}}}"#).await;
            let mut arrived = HashMap::new();
            while let Some(line) = lines.next_line().await.unwrap() {
                let now = Instant::now();
                let v: serde_json::Value = serde_json::from_str(&line).unwrap();
                let ev = &v["params"]["event"];
                if ev["type"] == "model.delta" {
                    let i: usize = ev["payload"]["text"].as_str().unwrap()[1..].parse().unwrap();
                    arrived.insert(i, now);
                }
                if ev["type"] == "turn.completed" {
                    break;
                }
            }
            let seen = watcher.await.unwrap();
            let sent = sent.lock().unwrap().clone();
            let ms = |a: Instant, b: Instant| a.saturating_duration_since(b).as_secs_f64() * 1e3;
            (
                (0..sent.len()).map(|i| ms(arrived[&i], sent[i])).collect::<Vec<f64>>(),
                (0..sent.len()).map(|i| (ms(seen[&i], sent[i]), ms(arrived[&i], seen[&i]))).collect::<Vec<(f64, f64)>>(),
            )
        });
        all.extend(lat);
        for (p, s) in publ {
            published.push(p);
            serialized.push(s);
        }
    }
    let summary = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let p = |q: f64| v[((v.len() - 1) as f64 * q) as usize];
        format!(
            "min {:.3} p50 {:.3} p99 {:.3} max {:.3}",
            v[0],
            p(0.5),
            p(0.99),
            v[v.len() - 1]
        )
    };
    println!("delta -> stdout line latency: {} deltas 2 ms apart over {reps} turns, serve_stdio on an in-process pipe, tokio 2 worker threads", all.len());
    println!("  ms {} (target p99 < 1 ms)", summary(all));
    println!(
        "  stage: hand-over -> published to a log subscriber, ms {}",
        summary(published)
    );
    println!(
        "  stage: published -> stdout line read back, ms {}",
        summary(serialized)
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--rebuild-child") {
        rebuild_child(&args[i + 1]);
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let reps: usize = env_or("APPHOST_BENCH_REPS", 5);
    let dir = std::env::var("APPHOST_BENCH_DIR")
        .unwrap_or_else(|_| std::env::temp_dir().display().to_string());
    println!(
        "runtime-core benchmarks (temp dir under {dir}, {} CPUs)",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0)
    );
    let only = std::env::var("APPHOST_BENCH_ONLY").unwrap_or_default();
    let run = |name: &str| only.is_empty() || only.split(',').any(|o| o == name);
    if run("append") {
        bench_append(reps);
    }
    if run("steps") {
        bench_step_overhead(reps);
    }
    if run("latency") {
        bench_delta_latency(reps);
    }
    if run("rebuild") {
        bench_rebuild(reps);
    }
    if run("list") {
        bench_list(reps);
    }
}
