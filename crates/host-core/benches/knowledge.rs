//! `lime.knowledge` against baselines measured in the same run (`cargo bench -p host-core
//! --bench knowledge`; see `docs/benchmarks.md`). One thread on each side.
//!
//! 1. **Indexing**: `KnowledgeIndex::reindex` of a fresh index over a folder of N Markdown
//!    documents (walk with `openat(O_NOFOLLOW)`, read, SHA-256, section chunking, chunk rows and
//!    FTS5 rows, one transaction) vs a plain loop that reads the same files and inserts each
//!    file's text as one row into an FTS5 table with the same tokenizer, in one transaction, on
//!    a connection with the same pragmas. Target: throughput >= 0.7x the plain loop.
//! 2. **Search**: `lime.knowledge.search` through `BridgeHost::handle` (decode, dispatch with its
//!    audit record on the bridge's own connection, the service, the reply envelope) vs the raw
//!    FTS5 query (`SEARCH_SQL`, the same expression, prepared once) on the same index file;
//!    p50/p95 per call of both.
//!
//! Knobs: `APPHOST_BENCH_REPS` (3), `APPHOST_BENCH_DOCS` (10000), `APPHOST_BENCH_CALLS` (500),
//! `APPHOST_BENCH_DIR` (parent of the temporary folder). Exits non-zero only on errors.

use std::collections::BTreeSet;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Instant;

use host_core::foundation::limits::Limits;
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::hosting::app_knowledge;
use host_core::hosting::bridge::host::{BridgeHost, Outgoing};
use host_core::hosting::bridge::message::PROTOCOL;
use host_core::hosting::capability::services::Services;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::install::inspect::InspectOptions;
use host_core::install::package::catalog::CatalogSelect;
use host_core::install::package::source::resolve;
use host_core::install::store::{InstallMode, Store};
use runtime_core::app_area::AppArea;
use runtime_core::knowledge::{self, KnowledgeIndex};
use runtime_core::sqlite::SqliteOpen;
use serde_json::{json, Value};

type Res<T> = Result<T, Box<dyn Error>>;

const APP: &str = "notes";
const ENTRY: &str = "notes";
const TEMPLATE: &str = "handbook";

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
        let dest = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_dir(&e.path(), &dest)?;
        } else {
            std::fs::copy(e.path(), dest)?;
        }
    }
    Ok(())
}

/// The notes sample declaring `lime.knowledge` and the template, installed.
fn install(root: &Path, dir: &DataDir) -> Res<()> {
    let pkg = root.join("pkg");
    copy_dir(&repo_root().join("fixtures/apps/notes"), &pkg)?;
    let md = std::fs::read_to_string(pkg.join("APP.md"))?
        .replacen(
            "    lime.storage: \"^0.10.0\"\n",
            "    lime.storage: \"^0.10.0\"\n    lime.knowledge: \"^0.10.0\"\n",
            1,
        )
        .replacen(
            "storage:\n  namespace",
            &format!("knowledgeTemplates:\n  - {{key: {TEMPLATE}, standard: agentknowledge, type: pack, required: true}}\nstorage:\n  namespace"),
            1,
        );
    std::fs::write(pkg.join("APP.md"), md)?;
    let (store, _) = Store::open_locked(dir)?;
    let profile = HostProfile::current();
    let opts = InspectOptions::preview(Limits::default(), &profile, &[]);
    let source = resolve(&pkg, &CatalogSelect::default())?;
    let staged = store.stage(&source, &opts, &mut |_, _| {})?;
    let plan = store.plan(&staged, InstallMode::Install, true)?;
    let consent: BTreeSet<String> = plan.needs_consent().iter().cloned().collect();
    store.commit(staged, &plan, &consent)?;
    Ok(())
}

/// A deterministic word generator (xorshift), so every run indexes the same text.
struct Words(u64);

const VOCAB: &[&str] = &[
    "refund", "shipping", "invoice", "customer", "policy", "return", "warranty", "parcel",
    "account", "password", "billing", "delivery", "support", "order", "payment", "discount",
    "voucher", "address", "contract", "service", "product", "storage", "backup", "network",
    "printer", "laptop", "meeting", "holiday", "travel", "expense", "report", "budget",
];

impl Words {
    fn next(&mut self) -> &'static str {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        VOCAB[(self.0 % VOCAB.len() as u64) as usize]
    }

    fn sentence(&mut self, n: usize) -> String {
        (0..n).map(|_| self.next()).collect::<Vec<_>>().join(" ")
    }
}

/// `n` Markdown documents of about 1 KiB (two sections of two paragraphs) in 100 folders.
fn corpus(root: &Path, n: usize) -> Res<(PathBuf, u64)> {
    let docs = root.join("docs");
    let mut w = Words(0x9E37_79B9_7F4A_7C15);
    let mut bytes = 0;
    for i in 0..n {
        let folder = docs.join(format!("d{:02}", i % 100));
        std::fs::create_dir_all(&folder)?;
        let text = format!(
            "# {} {i}\n{}.\n\n{}.\n\n## {}\n{}.\n\n{}.\n",
            w.sentence(3),
            w.sentence(40),
            w.sentence(40),
            w.sentence(2),
            w.sentence(40),
            w.sentence(30)
        );
        bytes += text.len() as u64;
        std::fs::write(folder.join(format!("doc{i:05}.md")), text)?;
    }
    Ok((docs, bytes))
}

/// The plain baseline: read every file, one FTS5 row each, one transaction.
fn plain_fts_loop(db: &Path, docs: &Path) -> Res<usize> {
    let conn = SqliteOpen::private_durable().open(db)?;
    conn.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5 (path UNINDEXED, body, tokenize = 'unicode61 remove_diacritics 2');",
    )?;
    let tx = conn.unchecked_transaction()?;
    let mut n = 0;
    {
        let mut ins = tx.prepare("INSERT INTO t (path, body) VALUES (?1, ?2)")?;
        let mut folders: Vec<_> = std::fs::read_dir(docs)?.collect::<Result<_, _>>()?;
        folders.sort_by_key(|e| e.file_name());
        for f in folders {
            let mut files: Vec<_> = std::fs::read_dir(f.path())?.collect::<Result<_, _>>()?;
            files.sort_by_key(|e| e.file_name());
            for e in files {
                let text = std::fs::read_to_string(e.path())?;
                ins.execute(rusqlite::params![e.path().to_string_lossy(), text])?;
                n += 1;
            }
        }
    }
    tx.commit()?;
    Ok(n)
}

fn spread(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2], v[v.len() - 1])
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn main() -> Res<()> {
    let reps = env_usize("APPHOST_BENCH_REPS", 3).max(1);
    let n_docs = env_usize("APPHOST_BENCH_DOCS", 10_000).max(1);
    let calls = env_usize("APPHOST_BENCH_CALLS", 500).max(2);
    let parent = std::env::var("APPHOST_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| std::env::temp_dir());
    let tmp = tempfile::Builder::new()
        .prefix("apphost-knowledge-bench-")
        .tempdir_in(&parent)?;
    let root = tmp.path();
    let dir = DataDir::at(root.join("data"));
    install(root, &dir)?;
    let (docs, bytes) = corpus(root, n_docs)?;
    println!(
        "knowledge bench: {n_docs} documents ({:.1} MiB), {reps} repetitions, {calls} searches each, on {} (debug assertions: {})",
        bytes as f64 / 1048576.0,
        parent.display(),
        cfg!(debug_assertions)
    );

    // 1. Indexing vs the plain FTS5 loop, interleaved, each on a fresh file.
    let area = AppArea::open(&dir.apps_data().join("bench-index"))?;
    let (mut ours, mut plain, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for rep in 0..reps {
        let t = Instant::now();
        let n = plain_fts_loop(&root.join(format!("plain{rep}.sqlite")), &docs)?;
        let p = t.elapsed().as_secs_f64();
        assert_eq!(n, n_docs);
        let template = format!("rep{rep}");
        let t = Instant::now();
        let mut idx = KnowledgeIndex::open(&area, &template)?;
        let r = idx.reindex(&docs, &knowledge::Limits::default(), "bench")?;
        let o = t.elapsed().as_secs_f64();
        assert_eq!(r.files, n_docs, "{:?}", r.problems);
        plain.push(n_docs as f64 / p);
        ours.push(n_docs as f64 / o);
        ratios.push(p / o);
        if rep == 0 {
            println!("index: {} chunks for {} files", r.chunks, r.files);
        }
    }
    let (pl, pm, ph) = spread(plain);
    let (ol, om, oh) = spread(ours);
    let (rl, rm, rh) = spread(ratios);
    println!("\n| indexing {n_docs} documents (1 thread) | docs/s median [min … max] | throughput vs plain, median [min … max] |");
    println!("| --- | --- | --- |");
    println!("| plain FTS5 insert loop (baseline) | {pm:.0} [{pl:.0} … {ph:.0}] | 1 (baseline) |");
    println!("| `KnowledgeIndex::reindex` (fresh) | {om:.0} [{ol:.0} … {oh:.0}] | {rm:.2}× [{rl:.2} … {rh:.2}] (target ≥ 0.7×) |");

    // An unchanged re-index (mtime/size match: nothing is read).
    let mut idx = KnowledgeIndex::open(&area, "rep0")?;
    let t = Instant::now();
    let r = idx.reindex(&docs, &knowledge::Limits::default(), "bench")?;
    println!(
        "\nunchanged re-index of {} files: {:.1} ms ({} unchanged)",
        r.files,
        t.elapsed().as_secs_f64() * 1e3,
        r.unchanged
    );

    // 2. Search through the bridge vs the raw FTS5 query on the same index.
    {
        let (store, _) = Store::open_locked(&dir)?;
        app_knowledge::bind(&store, APP, TEMPLATE, &docs)?;
    }
    let store = Store::open(&dir)?;
    let calls_store = Store::open_for_calls(&dir)?;
    let mut host = BridgeHost::new(
        Services::new(dir.apps_data()),
        HostProfile::current(),
        OriginStyle::Scheme,
    );
    let mount = host.mount(&store, APP, ENTRY)?;
    let ready = json!({"protocol": PROTOCOL, "version": 1, "type": "app:ready", "requestId": "r0",
                       "appId": APP, "entryKey": ENTRY, "payload": {}});
    host.handle(&store, &mount.mount_id, &mount.origin, &ready.to_string());
    let app_area = AppArea::open(&dir.apps_data().join(APP))?;
    let raw_path = KnowledgeIndex::open_existing(&app_area, TEMPLATE)?
        .ok_or("no index")?
        .path()
        .to_owned();
    let raw = SqliteOpen::app_reader().open(&raw_path)?;
    let queries = [
        "refund policy",
        "shipping parcel delivery",
        "invoice",
        "laptop backup network",
        "holiday travel expense",
    ];
    let (mut bridge_us, mut raw_us, mut ratio_med) = (Vec::new(), Vec::new(), Vec::new());
    for rep in 0..reps {
        let mut b = Vec::with_capacity(calls);
        let mut r = Vec::with_capacity(calls);
        for i in 0..calls {
            let q = queries[i % queries.len()];
            let m = json!({"protocol": PROTOCOL, "version": 1, "type": "capability:invoke",
                "requestId": format!("q{rep}-{i}"), "appId": APP, "entryKey": ENTRY,
                "payload": {"capability": "lime.knowledge", "method": "search",
                            "args": {"template": TEMPLATE, "query": q, "topK": 5}}})
            .to_string();
            let t = Instant::now();
            let out = host.handle(&calls_store, &mount.mount_id, &mount.origin, &m);
            b.push(t.elapsed().as_secs_f64() * 1e6);
            match out.as_slice() {
                [Outgoing::Post { message, .. }]
                    if message["type"] == "host:response"
                        && message["payload"]["value"]["hits"]
                            .as_array()
                            .is_some_and(|h| h.len() == 5) => {}
                other => return Err(format!("unexpected answer: {other:?}").into()),
            }
            let expr = knowledge::query::fts_expression(q).map_err(|e| e.0)?;
            let t = Instant::now();
            let mut stmt = raw.prepare_cached(knowledge::SEARCH_SQL)?;
            let rows: Vec<(String, f64)> = stmt
                .query_map(rusqlite::params![expr, 5], |row| {
                    Ok((row.get(0)?, row.get(5)?))
                })?
                .collect::<Result<_, _>>()?;
            r.push(t.elapsed().as_secs_f64() * 1e6);
            assert_eq!(rows.len(), 5);
        }
        let (mut bs, mut rs) = (b.clone(), r.clone());
        ratio_med.push(pct(&mut bs, 0.5) / pct(&mut rs, 0.5));
        bridge_us.extend(b);
        raw_us.extend(r);
    }
    let (p50b, p95b) = (pct(&mut bridge_us, 0.5), pct(&mut bridge_us, 0.95));
    let (p50r, p95r) = (pct(&mut raw_us, 0.5), pct(&mut raw_us, 0.95));
    let (ql, qm, qh) = spread(ratio_med);
    println!("\n| search, top 5 of {n_docs} documents (1 thread) | p50 µs | p95 µs | p50 cost vs raw, median [min … max] over repetitions |");
    println!("| --- | --- | --- | --- |");
    println!("| raw FTS5 query (`SEARCH_SQL`, prepared) (baseline) | {p50r:.0} | {p95r:.0} | 1 (baseline) |");
    println!("| `lime.knowledge.search` through `BridgeHost::handle` | {p50b:.0} | {p95b:.0} | {qm:.2}× [{ql:.2} … {qh:.2}] |");
    let _: Value = json!(null);
    Ok(())
}
