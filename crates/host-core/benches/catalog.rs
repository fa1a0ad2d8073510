//! Remote catalog figures (issue 22 §4), every one measured in the same run:
//!
//! 1. metadata verification of a 1,000-release catalog (100 apps × 10 releases, each app's
//!    release file a signed target): `trusted::verify_state` (what every `search`/`install`
//!    does: signatures, the timestamp → snapshot → targets chain, each release file's hash,
//!    parsing) and a full `update::refresh` from an empty trusted state over an in-memory fetcher
//!    (what `catalog add` does, minus the network);
//! 2. a large package (default 200 MB) installed from a loopback catalog (`catalogs::add` once,
//!    then per repetition: refresh, download with the hash checked while streaming, install
//!    through the one driver) versus the same `.zip` installed from disk, interleaved, with the
//!    ratio per repetition.
//!
//! Run: `cargo bench -p host-core --bench catalog`. Knobs: `APPHOST_BENCH_REPS` (5),
//! `APPHOST_BENCH_MB` (200), `APPHOST_BENCH_DIR` (parent of the temporary folder).
//! Threads: verification is single-threaded; the install pipeline uses its four stage threads;
//! the download is one current-thread tokio runtime; the loopback server one thread per
//! connection.

use std::collections::BTreeMap;
use std::error::Error;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use host_core::foundation::limits::Limits;
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::install::inspect::InspectOptions;
use host_core::install::package::catalog::CatalogSelect;
use host_core::install::package::source::resolve;
use host_core::install::package::ResolvedSource;
use host_core::install::remote::catalogs;
use host_core::install::remote::publish::{self, Expiries, Keys};
use host_core::install::remote::releases::{Release, ReleasesFile, Wanted};
use host_core::install::remote::state::TrustedState;
use host_core::install::remote::tuf::metadata::TargetFile;
use host_core::install::remote::tuf::verify::sha256_hex;
use host_core::install::remote::{trusted, update};
use host_core::install::signature;
use host_core::install::store::{Given, InstallMode, ModeChoice, PlanOptions, Store};

type R<T> = Result<T, Box<dyn Error>>;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn stats(v: &mut [f64]) -> String {
    v.sort_by(|a, b| a.total_cmp(b));
    format!(
        "min {:.3}  median {:.3}  max {:.3}",
        v[0],
        v[v.len() / 2],
        v[v.len() - 1]
    )
}

fn target(bytes: &[u8]) -> TargetFile {
    TargetFile {
        length: bytes.len() as u64,
        hashes: BTreeMap::from([("sha256".to_owned(), sha256_hex(bytes))]),
        custom: None,
    }
}

/// Serves files from `root` (in memory) under `/`.
struct MemFetch(BTreeMap<String, Vec<u8>>);

impl update::Fetch for MemFetch {
    fn fetch(&self, path: &str, _max: u64) -> host_core::HostResult<Option<Vec<u8>>> {
        Ok(self.0.get(path).cloned())
    }
}

fn read_tree(root: &Path) -> R<BTreeMap<String, Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)? {
            let p = e?.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root)?.to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p)?);
            }
        }
    }
    Ok(out)
}

fn metadata_bench(tmp: &Path, reps: usize) -> R<()> {
    let keys = Keys::single(&signature::generate_key()?);
    let repo = tmp.join("meta-repo");
    let h = format!("sha256:{}", "ab".repeat(32));
    let mut targets = BTreeMap::new();
    for app in 0..100 {
        let app_id = format!("app-{app:03}");
        let releases: Vec<Release> = (0..10)
            .map(|v| Release {
                app_id: app_id.clone(),
                version: format!("1.{v}.0"),
                package_url: format!("packages/{app_id}-1.{v}.0.zip"),
                package_hash: h.clone(),
                manifest_hash: h.clone(),
                signature: None,
                compatibility: serde_json::json!({"lime": {"appRuntime": ">=0.10.0 <1.0.0"}}),
                channel: "stable".into(),
                rollback_target: (v > 0).then(|| format!("1.{}.0", v - 1)),
                revoked: None,
                display_name: Some(format!("App {app}")),
                description: Some("A generated app for the catalog benchmark.".into()),
                publisher: Some("Bench".into()),
                permissions: vec!["notes_storage".into()],
            })
            .collect();
        for r in &releases {
            targets.insert(
                r.package_url.clone(),
                TargetFile {
                    length: 1_000_000,
                    hashes: BTreeMap::from([("sha256".to_owned(), "cd".repeat(32))]),
                    custom: None,
                },
            );
        }
        let bytes = serde_json::to_vec_pretty(&ReleasesFile {
            app_id: app_id.clone(),
            releases,
        })?;
        let path = format!("releases/{app_id}.json");
        std::fs::create_dir_all(repo.join("targets/releases"))?;
        std::fs::write(repo.join("targets").join(&path), &bytes)?;
        targets.insert(path, target(&bytes));
    }
    publish::sign_repository(&repo, targets, &keys, &Expiries::from_now(Some("30d"))?)?;
    let files = read_tree(&repo)?;
    let empty = TrustedState {
        name: "bench".into(),
        url: "http://127.0.0.1/".into(),
        added_at: String::new(),
        root: String::from_utf8(files["metadata/1.root.json"].clone())?,
        timestamp: None,
        snapshot: None,
        targets: None,
        files: BTreeMap::new(),
    };
    let fetch = MemFetch(files);
    let now = catalogs::now();
    let full = update::refresh(&empty, &fetch, now)?;
    let mut verify = Vec::new();
    let mut refresh = Vec::new();
    for _ in 0..reps.max(5) * 2 {
        let t = Instant::now();
        let v = trusted::verify_state(&full)?;
        verify.push(t.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(v.releases.len(), 1000);
        let t = Instant::now();
        update::refresh(&empty, &fetch, now)?;
        refresh.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    let size: usize = full.files.values().map(String::len).sum::<usize>()
        + full.targets.as_ref().map_or(0, String::len);
    println!(
        "1,000-release catalog ({} KiB of targets + release files), {} runs, 1 thread:",
        size / 1024,
        verify.len()
    );
    println!("  verify trusted state (ms):     {}", stats(&mut verify));
    println!("  full refresh from root (ms):   {}", stats(&mut refresh));
    Ok(())
}

/// A one-thread-per-connection HTTP server for `root` with Range support (streams from disk).
fn serve(root: PathBuf) -> R<String> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}/", listener.local_addr()?);
    let root = Arc::new(root);
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let root = root.clone();
            std::thread::spawn(move || -> std::io::Result<()> {
                let mut reader = BufReader::new(conn.try_clone()?);
                let mut out = conn;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line)? == 0 {
                        return Ok(());
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
                    loop {
                        let mut h = String::new();
                        reader.read_line(&mut h)?;
                        if h.trim().is_empty() {
                            break;
                        }
                    }
                    let file = root.join(path.trim_start_matches('/'));
                    match std::fs::File::open(&file) {
                        Ok(mut f) if file.is_file() => {
                            let len = f.metadata()?.len();
                            write!(out, "HTTP/1.1 200 OK\r\nContent-Length: {len}\r\n\r\n")?;
                            std::io::copy(&mut f, &mut out)?;
                        }
                        _ => write!(out, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")?,
                    }
                    out.flush()?;
                }
            });
        }
    });
    Ok(url)
}

fn big_package(dir: &Path, mb: u64) -> R<PathBuf> {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/packages/good/hello-app");
    let zip_path = dir.join("packages/hello-app.zip");
    std::fs::create_dir_all(zip_path.parent().unwrap())?;
    let file = std::fs::File::create(&zip_path)?;
    let mut zip = zip::ZipWriter::new(file);
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (rel, bytes) in read_tree(&fixture)? {
        zip.start_file(rel, stored)?;
        zip.write_all(&bytes)?;
    }
    // Incompressible data in 8 MiB files (xorshift).
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let per = 8u64 << 20;
    for i in 0..mb.div_ceil(8) {
        zip.start_file(format!("dist/blob-{i:03}.bin"), stored)?;
        let mut buf = vec![0u8; per as usize];
        for c in buf.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            c.copy_from_slice(&x.to_le_bytes()[..c.len()]);
        }
        zip.write_all(&buf)?;
    }
    zip.finish()?;
    Ok(zip_path)
}

fn install(source: &ResolvedSource, data: &Path) -> R<()> {
    let dir = DataDir::at(data);
    let (store, _) = Store::open_locked(&dir)?;
    let keys = store.trusted_keys()?;
    let profile = HostProfile::current();
    let opts = InspectOptions::preview(Limits::default(), &profile, &keys);
    store.drive_install(
        source,
        &opts,
        ModeChoice::Fixed(InstallMode::Install),
        PlanOptions {
            sideload: true,
            accept_new_publisher: false,
        },
        &mut |_, _| {},
        &mut Given,
    )?;
    Ok(())
}

fn download_bench(tmp: &Path, reps: usize, mb: u64) -> R<()> {
    let zip = big_package(tmp, mb)?;
    let size = std::fs::metadata(&zip)?.len();
    let repo = tmp.join("repo");
    let keys = Keys::single(&signature::generate_key()?);
    let profile = HostProfile::current();
    let opts = InspectOptions::preview(Limits::default(), &profile, &[]);
    publish::build(
        zip.parent().unwrap(),
        &repo,
        &keys,
        &Expiries::from_now(Some("1d"))?,
        &opts,
    )?;
    let url = serve(repo.clone())?;
    let root = std::fs::read(repo.join("metadata/1.root.json"))?;
    let disk_source = resolve(&zip, &CatalogSelect::default())?;
    let (mut disk, mut remote, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    for rep in 0..reps {
        let d = tmp.join(format!("disk-{rep}"));
        let t = Instant::now();
        install(&disk_source, &d)?;
        let a = t.elapsed().as_secs_f64();
        std::fs::remove_dir_all(&d)?;

        let c = tmp.join(format!("catalog-{rep}"));
        let dir = DataDir::at(&c);
        catalogs::add(&dir, "bench", &url, &root, catalogs::now())?;
        let t = Instant::now();
        let wanted = Wanted {
            app: "hello-app".into(),
            version: None,
            channel: None,
        };
        let fetched =
            catalogs::fetch_release(&dir, &wanted, None, catalogs::now(), &mut |_, _| true)?;
        install(&fetched.source, &c)?;
        drop(fetched);
        let b = t.elapsed().as_secs_f64();
        std::fs::remove_dir_all(&c)?;
        disk.push(a);
        remote.push(b);
        ratio.push(b / a);
    }
    println!(
        "{:.0} MB package (stored zip), {reps} interleaved runs:",
        size as f64 / 1e6
    );
    println!(
        "  install from disk (s):                      {}",
        stats(&mut disk)
    );
    println!(
        "  refresh + download + install, loopback (s): {}",
        stats(&mut remote)
    );
    println!(
        "  ratio catalog / disk:                       {}",
        stats(&mut ratio)
    );
    Ok(())
}

fn main() -> R<()> {
    let reps: usize = env_or("APPHOST_BENCH_REPS", 5);
    let mb: u64 = env_or("APPHOST_BENCH_MB", 200);
    let parent: PathBuf = env_or("APPHOST_BENCH_DIR", std::env::temp_dir());
    let tmp = tempfile::Builder::new()
        .prefix("apphost-catalog-bench")
        .tempdir_in(parent)?;
    println!(
        "cpus: {}",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    metadata_bench(tmp.path(), reps)?;
    download_bench(tmp.path(), reps, mb)?;
    let mut s = String::new();
    let _ = std::fs::File::open("/proc/loadavg").and_then(|mut f| f.read_to_string(&mut s));
    println!("loadavg: {}", s.trim());
    Ok(())
}
