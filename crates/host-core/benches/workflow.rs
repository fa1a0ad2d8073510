//! Workflow runs on the host, each against a baseline measured in the same run.
//!
//! Run: `cargo bench -p host-core --bench workflow` (see `docs/benchmarks.md`).
//!
//! Installs a generated app (the `crash-workflow` fixture with two generated workflows) into a
//! fresh data dir in a temporary folder, then measures, repeated (every ratio is computed per
//! repetition against the baseline of the same repetition; one thread on each side):
//!
//! - **step overhead**: a run of [`CHAIN`] `storage-write` steps driven by `WorkflowRuns::drive`
//!   through `HostSteps` (the step's start and result in one commit, the machine, the dispatch
//!   with its audit record, the service), per step (the interval between consecutive steps'
//!   calls), against the same `lime.storage.set` call made directly (`dispatch` +
//!   `Services::call`, the same caller and store), per call; medians and p95s; both on one
//!   thread with the expression stack, as the host's driver threads;
//! - **resume**: a run with at least 1,000 completed steps (a loop of read, write, 1 ms wait,
//!   branch), then the runs closed and reopened as after a restart (`open_runs`: open the log and
//!   rebuild every run from its first fact and the tail after its latest checkpoint), against
//!   opening the same event log alone;
//! - **readiness**: `Store::readiness` of the app, with the workflow checks remembered by
//!   content (now) and checked on every call (before: `workflow_cache::check_now`).
//!
//! The binary exits non-zero only on errors, never for a missed target. Knobs:
//! `APPHOST_BENCH_REPS` (default 5), `APPHOST_BENCH_DIR` (parent of the temporary folder).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use host_core::foundation::limits::Limits;
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::capability::call::{Call, Caller};
use host_core::hosting::capability::dispatch::{dispatch, SessionAnswers, Verdict};
use host_core::hosting::capability::services::Services;
use host_core::hosting::workflow::{self, executor::HostSteps};
use host_core::install::inspect::InspectOptions;
use host_core::install::package::catalog::CatalogSelect;
use host_core::install::package::source::resolve;
use host_core::install::readiness::workflow_cache;
use host_core::install::store::{InstallMode, Store};
use runtime_core::workflow::runs::{StepCall, StepError, StepExecutor, WorkflowRuns};
use serde_json::{json, Map, Value};
use std::sync::Arc;

use host_core::hosting::model_settings::{self, KeyChange};
use runtime_core::agent_task::{SessionPolicy, StartTask};
use runtime_core::backend::{BackendEvent, ExecutionBackend, ScriptStep, ScriptedBackend};
use runtime_core::ids::AppId;

type Res<T> = Result<T, Box<dyn Error>>;

const APP: &str = "crash-workflow";
const ENTRY: &str = "publish";
/// Steps of the chain workflow.
const CHAIN: usize = 100;
/// Iterations of the loop workflow (4 steps each: read, write, wait, branch).
const LOOPS: usize = 250;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn copy_dir(from: &Path, to: &Path) -> Res<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let target = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_dir(&e.path(), &target)?;
        } else {
            std::fs::copy(e.path(), target)?;
        }
    }
    Ok(())
}

/// The fixture without its agent step, with the `chain` and `loop` workflows.
fn package(tmp: &Path) -> Res<PathBuf> {
    let pkg = tmp.join("pkg");
    copy_dir(&repo_root().join("fixtures/apps").join(APP), &pkg)?;
    let md = pkg.join("APP.md");
    let text = std::fs::read_to_string(&md)?;
    let (head, _) = text.split_once("workflows:\n").ok_or("no workflows")?;
    let head = head
        .replace("    lime.agent: \"^0.10.0\"\n", "")
        .replace(
            "[lime.storage, lime.artifacts, lime.evidence, lime.agent]",
            "[lime.storage, lime.artifacts, lime.evidence]",
        )
        .replace("workflow: publish-twice", "workflow: chain")
        .replace(
            "    permissions: [crash_storage, crash_artifacts]\n",
            "    permissions: [crash_storage, crash_artifacts]\n  - key: looper\n    kind: workflow\n    title: Loop\n    workflow: loop\n    requiredCapabilities: [lime.storage]\n    permissions: [crash_storage]\n",
        );
    let mut wf = String::from("workflows:\n  - key: chain\n    recovery: {onError: fail, onTimeout: fail}\n    states:\n      - {key: start, kind: start, next: s0}\n");
    for i in 0..CHAIN {
        let next = if i + 1 == CHAIN {
            "done".to_owned()
        } else {
            format!("s{}", i + 1)
        };
        wf.push_str(&format!(
            "      - {{key: s{i}, kind: storage-write, storageKey: k{i}, value: \"input.v\", next: {next}}}\n"
        ));
    }
    wf.push_str("      - {key: done, kind: end}\n");
    wf.push_str(&format!(
        "  - key: loop\n    recovery: {{onError: fail, onTimeout: fail}}\n    states:\n      - {{key: start, kind: start, next: read}}\n      - {{key: read, kind: tool-call, uses: lime.storage.get, arguments: {{key: \"'n'\"}}, output: n, next: bump}}\n      - {{key: bump, kind: storage-write, storageKey: n, value: \"outputs.n == null ? 'x' : outputs.n + 'x'\", next: pause}}\n      - {{key: pause, kind: wait, duration: 1ms, next: decide}}\n      - key: decide\n        kind: branch\n        cases:\n          - {{when: \"outputs.n != null && size(outputs.n) >= {}\", next: done}}\n        default: read\n      - {{key: done, kind: end}}\n",
        LOOPS - 1
    ));
    std::fs::write(
        &md,
        format!("{head}{wf}---\n\n# Bench workflow\n\nGenerated by the workflow bench.\n"),
    )?;
    Ok(pkg)
}

fn install(dir: &DataDir, pkg: &Path) -> Res<()> {
    let (store, _) = Store::open_locked(dir)?;
    let profile = HostProfile::current();
    let opts = InspectOptions::preview(Limits::default(), &profile, &[]);
    let source = resolve(pkg, &CatalogSelect::default())?;
    let staged = store.stage(&source, &opts, &mut |_, _| {})?;
    let plan = store.plan(&staged, InstallMode::Install, true)?;
    let consent: BTreeSet<String> = plan.needs_consent().iter().cloned().collect();
    store.commit(staged, &plan, &consent)?;
    Ok(())
}

/// Records when each step's call starts (the interval between two is one whole step).
struct Timed<'a> {
    inner: HostSteps<'a>,
    starts: RefCell<Vec<Instant>>,
}

impl StepExecutor for Timed<'_> {
    fn call(&self, step: &StepCall<'_>) -> Result<Value, StepError> {
        self.starts.borrow_mut().push(Instant::now());
        self.inner.call(step)
    }

    fn reissue_is_safe(&self, call: &runtime_core::workflow::machine::Call) -> bool {
        self.inner.reissue_is_safe(call)
    }
}

/// A spread in µs: median [min … max].
fn us(v: (f64, f64, f64, f64)) -> String {
    format!("{:.0} [{:.0} … {:.0}]", v.1 * 1e6, v.0 * 1e6, v.3 * 1e6)
}

fn spread(mut v: Vec<f64>) -> (f64, f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let p95 = v[((v.len() as f64 * 0.95).ceil() as usize).clamp(1, v.len()) - 1];
    (v[0], v[v.len() / 2], p95, v[v.len() - 1])
}

fn caller(store: &Store) -> Res<Caller> {
    let a = store.active_app(APP)?;
    Ok(Caller {
        app_id: a.name,
        entry_key: ENTRY.into(),
        version: a.version,
        session_id: "bench".into(),
        package_hash: a.package_hash,
        manifest_hash: a.manifest_hash,
    })
}

fn main() -> Res<()> {
    let reps = env_usize("APPHOST_BENCH_REPS", 5).max(1);
    let parent = std::env::var_os("APPHOST_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let tmp = tempfile::Builder::new()
        .prefix("apphost-bench-workflow")
        .tempdir_in(&parent)?;
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &package(tmp.path())?)?;
    println!(
        "workflow bench: {reps} repetitions, data dir on {} (debug assertions: {})",
        parent.display(),
        cfg!(debug_assertions)
    );
    // Steps and resume on a thread with the expression stack, as the host's driver threads
    // drive runs (a step's expressions run inline there).
    let on_driver = dir.clone();
    runtime_core::workflow::expr::spawn_expr_thread("bench-driver".into(), move || {
        steps_and_resume(&on_driver, reps).map_err(|e| e.to_string())
    })?
    .join()
    .map_err(|_| "the driver thread panicked")??;
    let profile = HostProfile::current();
    let store = Store::open(&dir)?;

    // 3. Readiness with and without the remembered workflow checks.
    let n = 50;
    let active = store.active_app(APP)?;
    let view = active.manifest.view();
    let items: Vec<&Value> = view.workflows().map(|w| w.raw()).collect();
    let declared: BTreeSet<String> = view.requires().capability_names();
    let mut cached = Vec::new();
    let mut uncached = Vec::new();
    let mut check_only = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        for _ in 0..n {
            store.readiness(APP, &profile)?;
        }
        cached.push(t.elapsed().as_secs_f64() / n as f64);
        let t = Instant::now();
        for _ in 0..n {
            workflow_cache::check_now(&items, &declared);
        }
        let c = t.elapsed().as_secs_f64() / n as f64;
        check_only.push(c);
        uncached.push(cached.last().copied().unwrap_or(0.0) + c);
    }
    println!(
        "\n#### Readiness of the app (2 workflows, {} states; 1 thread + the expression thread)\n",
        CHAIN + 8
    );
    println!("| measurement | µs per call, median [min … max] |");
    println!("| --- | --- |");
    println!(
        "| `Store::readiness`, workflow checks remembered (now) | {} |",
        us(spread(cached))
    );
    println!("| the workflow checks alone (`check_now`: CEL parse on a 64 MiB-stack thread), what each readiness added before | {} |", us(spread(check_only)));
    println!(
        "| `Store::readiness` before (now + the checks) | {} |",
        us(spread(uncached))
    );

    cancel_bench(tmp.path(), reps)
}

/// Measurements 1 (step overhead) and 2 (resume), on the calling thread.
fn steps_and_resume(dir: &DataDir, reps: usize) -> Res<()> {
    let profile = HostProfile::current();
    let store = Store::open(dir)?;
    let mut services = Services::new(dir.apps_data());
    let who = caller(&store)?;

    // 1. Step overhead.
    let mut step_med = Vec::new();
    let mut step_p95 = Vec::new();
    let mut call_med = Vec::new();
    let mut call_p95 = Vec::new();
    let mut ratios = Vec::new();
    let mut all_steps = Vec::new();
    let mut all_calls = Vec::new();
    for rep in 0..reps {
        // Direct: the same call, the same caller, through the choke point.
        let mut direct = Vec::with_capacity(CHAIN);
        for i in 0..CHAIN {
            let mut options = Map::new();
            options.insert("idempotencyKey".into(), json!(format!("direct:{rep}:{i}")));
            let call = Call {
                request_id: format!("direct:{rep}:{i}"),
                capability: "lime.storage".into(),
                method: "set".into(),
                args: json!({"key": format!("k{i}"), "value": rep}),
                options,
            };
            let t = Instant::now();
            let mut answers = SessionAnswers::default();
            match dispatch(&store, &profile, &who, &call, "trace_bench", &mut answers) {
                Verdict::Allowed(proof) => {
                    services
                        .call(&store, &proof, &call.args)
                        .map_err(|e| format!("direct call: {e:?}"))?;
                }
                other => return Err(format!("direct call not allowed: {other:?}").into()),
            }
            direct.push(t.elapsed().as_secs_f64());
        }
        // Through a run.
        let runs = workflow::open_runs(dir)?;
        let v = workflow::start(&store, &runs, APP, "chain", json!({"v": rep}), None)?;
        let timed = Timed {
            inner: HostSteps::new(&store, &profile, &mut services),
            starts: RefCell::new(Vec::new()),
        };
        let end = {
            let view = runs.drive(&v.run_id, &timed)?;
            if !view.finished {
                return Err(format!("chain run did not finish: {view:?}").into());
            }
            Instant::now()
        };
        let mut starts = timed.starts.into_inner();
        starts.push(end);
        let steps: Vec<f64> = starts
            .windows(2)
            .map(|w| (w[1] - w[0]).as_secs_f64())
            .collect();
        drop(runs);
        let (_, sm, sp, _) = spread(steps.clone());
        let (_, cm, cp, _) = spread(direct.clone());
        step_med.push(sm);
        step_p95.push(sp);
        call_med.push(cm);
        call_p95.push(cp);
        ratios.push(sm / cm);
        all_steps.extend(steps);
        all_calls.extend(direct);
    }
    println!("\n#### Step overhead ({CHAIN} storage-write steps per run, 1 thread)\n");
    println!("| measurement | per-rep median µs, median [min … max] | per-rep p95 µs, median [min … max] | all samples p95 µs |");
    println!("| --- | --- | --- | --- |");
    println!(
        "| `lime.storage.set` direct (baseline: dispatch + service) | {} | {} | {:.0} |",
        us(spread(call_med.clone())),
        us(spread(call_p95.clone())),
        spread(all_calls).2 * 1e6
    );
    println!(
        "| the same call as a workflow step (facts, machine, call) | {} | {} | {:.0} |",
        us(spread(step_med.clone())),
        us(spread(step_p95.clone())),
        spread(all_steps).2 * 1e6
    );
    let r = spread(ratios);
    println!(
        "\nstep / direct (per-rep medians): {:.2}× [{:.2} … {:.2}] (target ≤ 1.2×)",
        r.1, r.0, r.3
    );

    // 2. Resume of a run with ≥ 1,000 completed steps.
    let run_id = {
        let runs = workflow::open_runs(dir)?;
        let v = workflow::start(&store, &runs, APP, "loop", json!({}), None)?;
        let steps = HostSteps::new(&store, &profile, &mut services);
        let mut view = runs.drive(&v.run_id, &steps)?;
        while !view.finished {
            std::thread::sleep(Duration::from_millis(1));
            runs.drive_due(&steps)?;
            view = runs.show(&v.run_id)?;
        }
        if view.state.steps < 1000 {
            return Err(format!("only {} steps", view.state.steps).into());
        }
        println!(
            "\n#### Resume after a restart (a run with {} completed steps, 1 thread)\n",
            view.state.steps
        );
        v.run_id
    };
    let events = dir.root().join("runtime/workflows/events.db");
    let mut open_only = Vec::new();
    let mut resume = Vec::new();
    let mut rratio = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        let log = runtime_core::log::EventLog::open(&events)?;
        let o = t.elapsed().as_secs_f64();
        drop(log);
        let t = Instant::now();
        let runs: WorkflowRuns = workflow::open_runs(dir)?;
        let shown = runs.show(&run_id)?;
        let r = t.elapsed().as_secs_f64();
        if !shown.finished {
            return Err("the replayed run is not finished".into());
        }
        drop(runs);
        open_only.push(o);
        resume.push(r);
        rratio.push(r / o);
    }
    let ms =
        |v: (f64, f64, f64, f64)| format!("{:.1} [{:.1} … {:.1}]", v.1 * 1e3, v.0 * 1e3, v.3 * 1e3);
    println!("| measurement | ms, median [min … max] | vs baseline, median [min … max] |");
    println!("| --- | --- | --- |");
    println!(
        "| open the event log (baseline) | {} | 1 |",
        ms(spread(open_only))
    );
    let rr = spread(rratio);
    println!(
        "| `open_runs` (open + replay every run) + show | {} | {:.1}× [{:.1} … {:.1}] |",
        ms(spread(resume)),
        rr.1,
        rr.0,
        rr.3
    );
    println!("\ntarget: < 200 ms");

    Ok(())
}

/// Polls `f` every millisecond until it holds (10 s at most).
fn until(what: &str, mut f: impl FnMut() -> Res<bool>) -> Res<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !f()? {
        if Instant::now() > deadline {
            return Err(format!("timed out waiting for {what}").into());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

/// A model that answers after a minute (the agent step stays in flight).
fn slow_model(backend: &ScriptedBackend) {
    backend.push(vec![
        ScriptStep::Sleep(Duration::from_secs(60)),
        ScriptStep::Emit(BackendEvent::TextDelta("late".into())),
        ScriptStep::Emit(BackendEvent::Finished {
            reason: "stop".into(),
        }),
    ]);
}

/// Cancel of a run whose agent step is in flight (measurement 4) (the host driver `HostRuns`, a scripted
/// model that answers after a minute) until the step's agent task has ended, against cancelling
/// such a task directly (`AgentTasks::cancel`) until it has ended.
fn cancel_bench(tmp: &Path, reps: usize) -> Res<()> {
    const SAMPLE: &str = "reply-workflow";
    let dir = DataDir::at(tmp.join("data-cancel"));
    install(&dir, &repo_root().join("fixtures/apps").join(SAMPLE))?;
    {
        let (locked, _) = Store::open_locked(&dir)?;
        model_settings::set(&locked, "http://127.0.0.1:9/v1", "m", KeyChange::Keep)?;
    }
    let store = Store::open(&dir)?;
    let backend = ScriptedBackend::new();
    let mut services = Services::new(dir.apps_data());
    services.set_agent_backend(Arc::new(backend.clone()) as Arc<dyn ExecutionBackend>);
    let tasks = services.agent_tasks(&store)?;
    let app = AppId::new(SAMPLE)?;
    let mut via_run = Vec::new();
    let mut direct = Vec::new();
    let mut ratio = Vec::new();
    for rep in 0..reps {
        // Baseline: a task started and cancelled directly.
        slow_model(&backend);
        let started = tasks.start(
            &app,
            StartTask {
                input: format!("direct {rep}"),
                idempotency_key: None,
                request_id: None,
                output_schema: None,
                session: SessionPolicy::default(),
                max_tokens: None,
            },
        )?;
        let id = started.task_id;
        until("the direct task to run", || {
            Ok(tasks.get(&app, &id)?["status"] == "running")
        })?;
        let t = Instant::now();
        tasks.cancel(&app, &id)?;
        until("the direct task to end", || {
            Ok(!tasks.get(&app, &id)?["result"].is_null())
        })?;
        let d = t.elapsed().as_secs_f64();
        // Through a run's agent step.
        slow_model(&backend);
        let runs = services.workflow_runs(&store)?;
        let v = runs.start(
            &store,
            SAMPLE,
            "draft-review-publish",
            json!({"topic": format!("run {rep}")}),
            None,
            None,
        )?;
        let mut task_id = String::new();
        until("the step's task to run", || {
            let recent = tasks.recent(Some(&app), 1)?;
            match recent.first() {
                Some(t) if t["taskId"] != id.as_str() && t["status"] == "running" => {
                    task_id = t["taskId"].as_str().unwrap_or_default().to_owned();
                    Ok(true)
                }
                _ => Ok(false),
            }
        })?;
        let t = Instant::now();
        runs.cancel(&v.run_id)?;
        until("the step's task to end", || {
            Ok(!tasks.get(&app, &task_id)?["result"].is_null())
        })?;
        let r = t.elapsed().as_secs_f64();
        direct.push(d);
        via_run.push(r);
        ratio.push(r / d);
    }
    let ms =
        |v: (f64, f64, f64, f64)| format!("{:.1} [{:.1} … {:.1}]", v.1 * 1e3, v.0 * 1e3, v.3 * 1e3);
    println!("\n#### Cancel → in-flight agent task ended (scripted model answering after 60 s)\n");
    println!(
        "| measurement | threads | ms, median [min … max] | vs baseline, median [min … max] |"
    );
    println!("| --- | --- | --- | --- |");
    println!("| `AgentTasks::cancel` of a running task until it ended (baseline) | caller + agent runtime | {} | 1 |", ms(spread(direct)));
    let r = spread(ratio);
    println!(
        "| `HostRuns::cancel` of a run in its agent step until the task ended | caller + 4 driver threads + agent runtime | {} | {:.1}× [{:.1} … {:.1}] |",
        ms(spread(via_run)),
        r.1,
        r.0,
        r.3
    );
    println!("\ntarget: < 500 ms");
    Ok(())
}
