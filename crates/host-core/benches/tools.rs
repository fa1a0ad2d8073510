//! An MCP tool call through the `lime.tools` broker against the same call straight over rmcp,
//! in the same run.
//!
//! Run: `cargo bench -p host-core --bench tools` (see `docs/benchmarks.md`).
//!
//! Installs `fixtures/apps/notes` into a fresh data dir, adds `fixtures/mcp/test_server.py` as a
//! stdio server, grants `echo`, and then, interleaved and repeated, times single `echo` calls:
//!
//! - **broker**: `Broker::invoke` on the bridge's own connection (`Store::open_for_calls`): the
//!   argument check, the grant and policy checks (settings rows and the policy file read per
//!   call), the session lookup, the call through rmcp and the stdout guard, the result bound,
//!   and one audit record;
//! - **direct**: `peer.call_tool` on an rmcp client session of its own over `TokioChildProcess`
//!   to a second process of the same server (no guard, no checks, no audit).
//!
//! One calling thread on each side (the broker's sessions run on its own 1-worker tokio runtime;
//! the direct client on a current-thread runtime). The ratio is computed per repetition from the
//! medians. The binary exits non-zero only on errors, never for a missed target. Knobs:
//! `APPHOST_BENCH_REPS` (default 5), `APPHOST_BENCH_CALLS` (500 calls per step).

use std::collections::BTreeSet;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Instant;

use host_core::foundation::limits::Limits;
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::tools::{
    registry, Approval, Broker, Caller, Invocation, ServerSpec, ToolRef, Transport,
};
use host_core::install::inspect::InspectOptions;
use host_core::install::package::catalog::CatalogSelect;
use host_core::install::package::source::resolve;
use host_core::install::store::{InstallMode, Store};
use rmcp::model::CallToolRequestParams;
use rmcp::ServiceExt;
use serde_json::json;

type Res<T> = Result<T, Box<dyn Error>>;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
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

/// Per-call microseconds, sorted.
fn stats(mut v: Vec<f64>) -> (f64, f64, f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (v[0], at(0.5), at(0.95), v[v.len() - 1])
}

fn main() -> Res<()> {
    let reps = env_usize("APPHOST_BENCH_REPS", 5);
    let calls = env_usize("APPHOST_BENCH_CALLS", 500);
    let tmp = tempfile::tempdir()?;
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &repo().join("fixtures/apps/notes"))?;
    let server = repo()
        .join("fixtures/mcp/test_server.py")
        .display()
        .to_string();
    let spec = ServerSpec {
        transport: Transport::Stdio {
            command: "/usr/bin/python3".into(),
            args: vec![server.clone()],
            env: Default::default(),
        },
        secrets: Default::default(),
        timeout_ms: Some(30_000),
    };
    {
        let (store, _) = Store::open_locked(&dir)?;
        let broker = Broker::new(&dir)?;
        registry::add(&store, &broker.policy(), "bench", &spec)?;
        registry::grant(
            &store,
            &broker.policy(),
            "notes",
            &ToolRef::parse("bench/echo")?,
        )?;
    }
    let store = Store::open_for_calls(&dir)?;
    let broker = Broker::new(&dir)?;
    let tool = ToolRef::parse("bench/echo")?;
    let args = json!({"text": "hello from the bench"});
    let inv = Invocation {
        app: "notes",
        version: Some("1.0.0"),
        tool: &tool,
        arguments: &args,
        caller: Caller::Ui,
        approval: Approval::NotAsked,
        declared: None,
    };

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let direct = rt.block_on(async {
        let mut cmd = tokio::process::Command::new("/usr/bin/python3");
        cmd.arg(&server);
        let (t, _) = rmcp::transport::TokioChildProcess::builder(cmd)
            .stderr(std::process::Stdio::null())
            .spawn()?;
        Ok::<_, Box<dyn Error>>(().serve(t).await?)
    })?;
    let params = || {
        CallToolRequestParams::new("echo")
            .with_arguments(args.as_object().cloned().unwrap_or_default())
    };
    // Warm both (server start, first listing).
    for _ in 0..20 {
        broker.invoke(&store, &inv)?;
        rt.block_on(direct.peer().call_tool(params()))?;
    }

    println!("MCP tool call (echo), {calls} calls per step, {reps} repetitions, 1 calling thread per side");
    let mut ratios = Vec::new();
    let (mut all_b, mut all_d) = (Vec::new(), Vec::new());
    for rep in 0..reps {
        let mut b = Vec::with_capacity(calls);
        let mut d = Vec::with_capacity(calls);
        for _ in 0..calls {
            let t = Instant::now();
            broker.invoke(&store, &inv)?;
            b.push(t.elapsed().as_secs_f64() * 1e6);
            let t = Instant::now();
            rt.block_on(direct.peer().call_tool(params()))?;
            d.push(t.elapsed().as_secs_f64() * 1e6);
        }
        let (bmin, bp50, bp95, bmax) = stats(b.clone());
        let (dmin, dp50, dp95, dmax) = stats(d.clone());
        ratios.push(bp50 / dp50);
        println!(
            "rep {rep}: broker p50 {bp50:.0} µs p95 {bp95:.0} (min {bmin:.0} max {bmax:.0}) | direct p50 {dp50:.0} µs p95 {dp95:.0} (min {dmin:.0} max {dmax:.0}) | p50 ratio {:.2}",
            bp50 / dp50
        );
        all_b.extend(b);
        all_d.extend(d);
    }
    let (_, bp50, bp95, _) = stats(all_b);
    let (_, dp50, dp95, _) = stats(all_d);
    let (rmin, rmed, _, rmax) = stats(ratios);
    println!(
        "all: broker p50 {bp50:.0} µs p95 {bp95:.0} µs; direct p50 {dp50:.0} µs p95 {dp95:.0} µs"
    );
    println!(
        "broker / direct (p50 per repetition): min {rmin:.2} median {rmed:.2} max {rmax:.2} (target <= 1.30: {})",
        if rmed <= 1.3 { "met" } else { "missed" }
    );
    rt.block_on(direct.cancel())?;
    Ok(())
}
