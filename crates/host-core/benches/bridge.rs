//! Bridge and app-file hot paths, each against a baseline measured in the same run.
//!
//! Run: `cargo bench -p host-core --bench bridge` (see `docs/benchmarks.md`).
//!
//! Installs `fixtures/apps/notes` (as `apphost install --yes --sideload` does) into a fresh data
//! dir in a temporary folder, then measures, interleaved and repeated (every ratio is computed per
//! repetition against the baseline of the same repetition; one thread on each side):
//!
//! - **serving an app file** (`agentapp://notes/app.js`): the desktop's previous way (open the
//!   store, then `serve`, which scans the app names and reads the active app per request), the
//!   uncached `serve` on an open store, and the [`CachedServer`] the desktop now keeps, against
//!   the baseline `Store::read_file` (the verified read alone: one SQL lookup, the pack read and
//!   its SHA-256, which every path must still do);
//! - **`lime.storage.get` through [`BridgeHost::handle`]** (decode, dispatch with its audit
//!   record, the service, the reply envelope) on the bridge's own connection
//!   (`Store::open_for_calls`: audit records committed with `synchronous=NORMAL`) and on a plain
//!   `Store::open` connection (`synchronous=FULL`: one fsync per call, the desktop's previous
//!   way), against the baseline `AppStorage::get` on the same file;
//! - **`lime.storage.set` throughput** (small values, new keys) through `BridgeHost::handle`
//!   on the same two connections, against a raw rusqlite insert loop (autocommit, one
//!   transaction per insert, the same journal mode and `synchronous` as app storage) on a fresh
//!   file in the same folder.
//!
//! The binary exits non-zero only on errors, never for a missed target. Knobs:
//! `APPHOST_BENCH_REPS` (default 5), `APPHOST_BENCH_CALLS` (2000 calls per step),
//! `APPHOST_BENCH_DIR` (parent of the temporary folder; default the system temp dir).

use std::collections::BTreeSet;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Instant;

use host_core::api::{self, LinkOpener, Session, SessionConfig};
use host_core::foundation::limits::Limits;
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::bridge::host::{BridgeHost, Outgoing};
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::capability::services::Services;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::hosting::surface::serve::{serve, CachedServer, ServeContext};
use host_core::install::inspect::InspectOptions;
use host_core::install::package::catalog::CatalogSelect;
use host_core::install::package::source::resolve;
use host_core::install::store::{InstallMode, Store};
use runtime_core::app_storage::AppStorage;
use serde_json::{json, Value};

type Res<T> = Result<T, Box<dyn Error>>;

const APP: &str = "notes";
const ENTRY: &str = "notes";
const FILE: &str = "/app.js";

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
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

fn context() -> ServeContext {
    ServeContext {
        style: OriginStyle::Scheme,
        frame_ancestors: vec!["tauri://localhost".to_owned()],
    }
}

fn msg(id: &str, method: &str, args: Value) -> String {
    json!({"protocol": PROTOCOL, "version": 1, "type": "capability:invoke", "requestId": id,
           "appId": APP, "entryKey": ENTRY,
           "payload": {"capability": "lime.storage", "method": method, "args": args}})
    .to_string()
}

fn expect_response(out: &[Outgoing]) -> Res<()> {
    match out {
        [Outgoing::Post { message, .. }] if message["type"] == "host:response" => Ok(()),
        other => Err(format!("unexpected bridge answer: {other:?}").into()),
    }
}

/// Seconds per call of `f`, run `n` times.
fn per_call(n: usize, mut f: impl FnMut(usize) -> Res<()>) -> Res<f64> {
    let t = Instant::now();
    for i in 0..n {
        f(i)?;
    }
    Ok(t.elapsed().as_secs_f64() / n as f64)
}

struct Series {
    name: &'static str,
    threads: &'static str,
    secs: Vec<f64>,
}

impl Series {
    fn new(name: &'static str, threads: &'static str) -> Self {
        Series {
            name,
            threads,
            secs: Vec::new(),
        }
    }
}

fn spread(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2], v[v.len() - 1])
}

/// One Markdown table: per-call time and, per repetition, `measured / baseline` (the cost
/// relative to the baseline: 1.0 = as fast as the baseline).
fn table(title: &str, baseline: &Series, rows: &[&Series]) {
    println!("\n#### {title}\n");
    println!("| measurement | threads | µs per call, median [min … max] | calls/s (median) | cost vs baseline, median [min … max] |");
    println!("| --- | --- | --- | --- | --- |");
    for s in std::iter::once(baseline).chain(rows.iter().copied()) {
        let (lo, med, hi) = spread(s.secs.clone());
        let ratio = if std::ptr::eq(s, baseline) {
            "1 (baseline)".to_owned()
        } else {
            let r: Vec<f64> = s
                .secs
                .iter()
                .zip(&baseline.secs)
                .map(|(m, b)| m / b)
                .collect();
            let (rl, rm, rh) = spread(r);
            format!("{rm:.2}× [{rl:.2} … {rh:.2}]")
        };
        println!(
            "| {} | {} | {:.1} [{:.1} … {:.1}] | {:.0} | {} |",
            s.name,
            s.threads,
            med * 1e6,
            lo * 1e6,
            hi * 1e6,
            1.0 / med,
            ratio
        );
    }
}

fn main() -> Res<()> {
    let reps = env_usize("APPHOST_BENCH_REPS", 5).max(1);
    let calls = env_usize("APPHOST_BENCH_CALLS", 2000).max(1);
    let parent = std::env::var_os("APPHOST_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let tmp = tempfile::Builder::new()
        .prefix("apphost-bench-bridge")
        .tempdir_in(&parent)?;
    let dir = DataDir::at(tmp.path().join("data"));
    install(&dir, &repo_root().join("fixtures/apps/notes"))?;
    println!(
        "bridge bench: {reps} repetitions × {calls} calls, data dir on {} (debug assertions: {})",
        parent.display(),
        cfg!(debug_assertions)
    );

    let ctx = context();
    let store = Store::open(&dir)?;
    // The bridge's own connection (as the desktop opens it) and the previous one (FULL).
    let calls_store = Store::open_for_calls(&dir)?;
    let app = store.active_app(APP)?;
    let ui_file = format!("ui{FILE}");
    let mut server = CachedServer::new(Store::open(&dir)?, ctx.clone());

    // One mount for the get calls, one for the set calls.
    let mut host = BridgeHost::new(
        Services::new(dir.apps_data()),
        HostProfile::current(),
        OriginStyle::Scheme,
    );
    let mount = host.mount(&store, APP, ENTRY)?;
    let ready = json!({"protocol": PROTOCOL, "version": 1, "type": "app:ready", "requestId": "r0",
                       "appId": APP, "entryKey": ENTRY, "payload": {}});
    match host
        .handle(&store, &mount.mount_id, &mount.origin, &ready.to_string())
        .as_slice()
    {
        [Outgoing::Post { message, .. }] if message["type"] == "host:snapshot" => {}
        other => return Err(format!("handshake: {other:?}").into()),
    }
    expect_response(&host.handle(
        &store,
        &mount.mount_id,
        &mount.origin,
        &msg("seed", "set", json!({"key": "k", "value": "a small note"})),
    ))?;
    let raw_get = AppStorage::open(&dir.apps_data().join(APP), u64::MAX)?;

    // The command layer as the desktop calls it: `bridge_message` on a `Session` (its bridge
    // mutex and store connection), alone and with the host UI's `next_events` long poll running
    // beside it (the mount watcher looks at the store every 100 ms while it waits).
    let session = std::sync::Arc::new(Session::new(
        dir.clone(),
        SessionConfig {
            serve: ctx.clone(),
            links: LinkOpener::Page,
            launch: None,
        },
    ));
    let s_mount = api::call(
        &session,
        "mount_entry",
        json!({"appId": APP, "entryKey": ENTRY}),
    )?;
    let (s_mount_id, s_origin) = (
        s_mount["mountId"].as_str().ok_or("mountId")?.to_owned(),
        s_mount["origin"].as_str().ok_or("origin")?.to_owned(),
    );
    let session_call = |id: &str| -> Res<()> {
        let out = api::call(
            &session,
            "bridge_message",
            json!({"mountId": s_mount_id, "origin": s_origin,
                   "data": msg(id, "get", json!({"key": "k"}))}),
        )?;
        match out[0]["message"]["type"].as_str() {
            Some("host:response") => Ok(()),
            _ => Err(format!("expected a host:response, got {out}").into()),
        }
    };
    api::call(
        &session,
        "bridge_message",
        json!({"mountId": s_mount_id, "origin": s_origin, "data": ready.to_string()}),
    )?;
    let mut c_session = Series::new(
        "`api::call(\"bridge_message\")` storage.get on a `Session` (the desktop's command path, no IPC)",
        "1",
    );
    let mut c_session_polled = Series::new(
        "the same, with a `next_events` long poll running on another thread (as the host UI keeps one)",
        "1 + poller",
    );

    let mut s_read = Series::new("`Store::read_file` (baseline: verified read)", "1");
    let mut s_open_serve = Series::new("open the store + `serve` (previous desktop path)", "1");
    let mut s_serve = Series::new("`serve` on an open store (uncached)", "1");
    let mut s_cached = Series::new("`CachedServer::serve` (desktop now)", "1");

    let mut g_raw = Series::new("`AppStorage::get` (baseline)", "1");
    let mut g_bridge = Series::new(
        "`BridgeHost::handle` storage.get, bridge connection (`open_for_calls`, audit NORMAL)",
        "1",
    );
    let mut g_bridge_full = Series::new(
        "`BridgeHost::handle` storage.get, `Store::open` (audit FULL, previous)",
        "1",
    );

    let mut w_raw = Series::new("rusqlite insert, autocommit (baseline)", "1");
    let mut w_bridge = Series::new(
        "`BridgeHost::handle` storage.set, bridge connection (audit NORMAL)",
        "1",
    );
    let mut w_bridge_full = Series::new(
        "`BridgeHost::handle` storage.set, `Store::open` (audit FULL, previous)",
        "1",
    );

    let mut seq = 0usize;
    for rep in 0..reps {
        s_read.secs.push(per_call(calls, |_| {
            store.read_file(APP, &app.version, &ui_file)?;
            Ok(())
        })?);
        s_open_serve.secs.push(per_call(calls, |_| {
            let s = Store::open(&dir)?;
            let r = serve(&s, &ctx, APP, FILE);
            if r.status != 200 {
                return Err(format!("serve: {}", r.status).into());
            }
            Ok(())
        })?);
        s_serve.secs.push(per_call(calls, |_| {
            let r = serve(&store, &ctx, APP, FILE);
            if r.status != 200 {
                return Err(format!("serve: {}", r.status).into());
            }
            Ok(())
        })?);
        s_cached.secs.push(per_call(calls, |_| {
            let r = server.serve(APP, FILE);
            if r.status != 200 {
                return Err(format!("cached serve: {}", r.status).into());
            }
            Ok(())
        })?);

        g_raw.secs.push(per_call(calls, |_| {
            raw_get.get("k")?.ok_or("missing key")?;
            Ok(())
        })?);
        g_bridge.secs.push(per_call(calls, |_| {
            seq += 1;
            let m = msg(&format!("g{seq}"), "get", json!({"key": "k"}));
            expect_response(&host.handle(&calls_store, &mount.mount_id, &mount.origin, &m))
        })?);
        c_session.secs.push(per_call(calls, |_| {
            seq += 1;
            session_call(&format!("c{seq}"))
        })?);
        {
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let poller = {
                let (session, stop) = (session.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut after = 0u64;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        if let Ok(b) = api::call(
                            &session,
                            "next_events",
                            json!({"after": after, "timeoutMs": 300}),
                        ) {
                            after = b["next"].as_u64().unwrap_or(after);
                        }
                    }
                })
            };
            c_session_polled.secs.push(per_call(calls, |_| {
                seq += 1;
                session_call(&format!("p{seq}"))
            })?);
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            poller.join().map_err(|_| "poller panicked")?;
        }
        g_bridge_full.secs.push(per_call(calls, |_| {
            seq += 1;
            let m = msg(&format!("g{seq}"), "get", json!({"key": "k"}));
            expect_response(&host.handle(&store, &mount.mount_id, &mount.origin, &m))
        })?);

        // Writes: fresh keys each repetition; the raw side gets a fresh file in the same folder.
        let raw_path = tmp.path().join(format!("raw-{rep}.sqlite"));
        let raw = rusqlite::Connection::open(&raw_path)?;
        raw.pragma_update(None, "journal_mode", "WAL")?;
        raw.pragma_update(None, "synchronous", "NORMAL")?;
        raw.execute_batch(
            "CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at TEXT)",
        )?;
        let mut insert = raw.prepare(
            "INSERT INTO kv (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )?;
        w_raw.secs.push(per_call(calls, |i| {
            insert.execute(rusqlite::params![format!("note-{i}"), "\"a small note\""])?;
            Ok(())
        })?);
        drop(insert);
        w_bridge.secs.push(per_call(calls, |i| {
            seq += 1;
            let m = msg(
                &format!("s{seq}"),
                "set",
                json!({"key": format!("note-{rep}-{i}"), "value": "a small note"}),
            );
            expect_response(&host.handle(&calls_store, &mount.mount_id, &mount.origin, &m))
        })?);
        w_bridge_full.secs.push(per_call(calls, |i| {
            seq += 1;
            let m = msg(
                &format!("s{seq}"),
                "set",
                json!({"key": format!("full-{rep}-{i}"), "value": "a small note"}),
            );
            expect_response(&host.handle(&store, &mount.mount_id, &mount.origin, &m))
        })?);
    }

    table(
        "Serving one app file (`agentapp://notes/app.js`, 2.4 KB)",
        &s_read,
        &[&s_open_serve, &s_serve, &s_cached],
    );
    table(
        "`lime.storage.get` through the bridge host (no IPC)",
        &g_raw,
        &[&g_bridge, &c_session, &c_session_polled, &g_bridge_full],
    );
    table(
        "`lime.storage.set` throughput, small values",
        &w_raw,
        &[&w_bridge, &w_bridge_full],
    );
    Ok(())
}
