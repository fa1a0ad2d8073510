//! Install throughput against a single-stream SHA-256 baseline measured in the same run.
//!
//! Run: `cargo bench -p host-core --bench install` (see `docs/benchmarks.md`).
//!
//! Generates a deterministic package (~200 MB in 5,000 files under nested folders, plus the
//! `hello-app` fixture's `APP.md` and metadata) in a temporary folder, then measures,
//! interleaved and repeated (every figure is a ratio against a baseline of the same repetition):
//!
//! - baseline: `openssl dgst -sha256 <every file>` (one process, one thread, reads each file and
//!   hashes it: the same read+hash work the install's per-file content address needs), and for
//!   reference `cat <every file> | openssl dgst -sha256` (one stream, like the packageHash);
//! - the durable-write bound: `cat <every file> > out && sync out`;
//! - install of the folder through the public API (`Store::open_locked` → `stage` → `plan`
//!   (sideload) → `commit`, durable: the pack is fsynced before the commit) into a fresh data
//!   dir on the same file system, with a phase breakdown; it is uninstalled (timed separately)
//!   afterwards;
//! - the same install from a stored and from a deflated `.zip` of the package;
//! - `inspect` (no staging) of the big package and of `fixtures/packages/good/hello-app`;
//! - context: in-process single-thread read+sha2 over the same files, in-memory sha2 vs
//!   `openssl speed`, and a plain 200 MB write+fsync to show the disk's flush rate.
//!
//! Each step gets its wall-clock and CPU time (getrusage: this process, or its children); before
//! each step the file system is synced (`syncfs`), and with `APPHOST_BENCH_CACHE=cold` the page
//! cache is dropped too (needs root).
//!
//! Performance targets are reported as ratios against the baseline of the same run; the binary
//! exits non-zero only on errors, never for a missed target.
//!
//! Environment knobs: `APPHOST_BENCH_REPS` (default 5), `APPHOST_BENCH_MB` (200),
//! `APPHOST_BENCH_FILES` (5000), `APPHOST_BENCH_DIR` (parent of the temporary folder; default
//! the system temp dir), `APPHOST_BENCH_ZIP=0` to skip the zip sources, `APPHOST_BENCH_CACHE`
//! (`warm`, the default, or `cold`).

use std::collections::{BTreeMap, BTreeSet};
use std::error::Error;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use host_core::foundation::limits::Limits;
use host_core::foundation::paths::DataDir;
use host_core::foundation::profile::HostProfile;
use host_core::install::inspect::{inspect, InspectOptions};
use host_core::install::package::catalog::CatalogSelect;
use host_core::install::package::source::resolve;
use host_core::install::package::ResolvedSource;
use host_core::install::store::{InstallMode, Store};
use sha2::{Digest, Sha256};

type R<T> = Result<T, Box<dyn Error>>;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

// ---------------------------------------------------------------------------------------------
// Deterministic package generation

/// SplitMix64: tiny, seeded, good enough that the content neither compresses nor dedupes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: &[&str] = &[
    "const",
    "function",
    "return",
    "import",
    "export",
    "default",
    "class",
    "extends",
    "this",
    "window",
    "document",
    "render",
    "state",
    "props",
    "value",
    "async",
    "await",
    "promise",
    "storage",
    "notes",
    "entry",
    "route",
    "settings",
    "title",
    "button",
    "onClick",
    "div",
    "span",
    "style",
    "color",
    "margin",
    "padding",
    "null",
    "undefined",
    "true",
    "false",
    "let",
    "if",
    "else",
    "for",
    "while",
    "=>",
    "{",
    "}",
    "(",
    ")",
    ";",
    "=",
    "+",
    "\n",
    "  ",
];

fn fill_binary(rng: &mut Rng, buf: &mut Vec<u8>, size: usize) {
    buf.clear();
    while buf.len() < size {
        buf.extend_from_slice(&rng.next().to_le_bytes());
    }
    buf.truncate(size);
}

/// Source-like text: random words, compresses about 3:1 with deflate but never repeats.
fn fill_text(rng: &mut Rng, buf: &mut Vec<u8>, size: usize) {
    buf.clear();
    while buf.len() < size {
        let r = rng.next();
        for k in 0..4 {
            let w = WORDS[((r >> (k * 16)) & 0xffff) as usize % WORDS.len()];
            buf.extend_from_slice(w.as_bytes());
            buf.push(b' ');
        }
        // An identifier that makes every line unique.
        buf.extend_from_slice(format!("v{:x}", rng.below(1 << 20)).as_bytes());
        buf.push(b'\n');
    }
    buf.truncate(size);
}

fn copy_tree(from: &Path, to: &Path) -> R<()> {
    fs::create_dir_all(to)?;
    for item in fs::read_dir(from)? {
        let item = item?;
        let dest = to.join(item.file_name());
        if item.file_type()?.is_dir() {
            copy_tree(&item.path(), &dest)?;
        } else {
            fs::copy(item.path(), &dest)?;
        }
    }
    Ok(())
}

/// Every regular file under `root`, sorted (for the openssl baselines and zips).
fn list_files(root: &Path) -> R<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for item in fs::read_dir(&dir)? {
            let item = item?;
            if item.file_type()?.is_dir() {
                stack.push(item.path());
            } else {
                out.push(item.path());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The big package: the hello-app fixture (a valid manifest with metadata files), renamed, plus
/// `files` generated files of average size `total / files` under `assets/dNN/eNN/`. One file in
/// four is source-like text, the rest are random bytes (like images and fonts).
fn generate(root: &Path, fixture: &Path, total: u64, files: usize) -> R<u64> {
    copy_tree(fixture, root)?;
    let app_md = fs::read_to_string(root.join("APP.md"))?;
    fs::write(
        root.join("APP.md"),
        app_md.replacen("name: hello-app", "name: bench-app", 1),
    )?;
    let mut rng = Rng(0x05EE_DA99_0057_2026);
    let mean = (total / files as u64).max(1);
    let mut buf = Vec::new();
    let mut written = 0u64;
    for i in 0..files {
        // Uniform in [mean/5, 9*mean/5): mean `mean`, sizes from ~8 KB to ~72 KB at 40 KB.
        let size = (mean / 5 + rng.below(mean * 8 / 5)) as usize;
        if i % 4 == 0 {
            fill_text(&mut rng, &mut buf, size);
        } else {
            fill_binary(&mut rng, &mut buf, size);
        }
        let dir = root
            .join("assets")
            .join(format!("d{:02}", i % 10))
            .join(format!("e{:02}", (i / 10) % 10));
        fs::create_dir_all(&dir)?;
        let ext = if i % 4 == 0 { "js" } else { "bin" };
        fs::write(dir.join(format!("f{i:05}.{ext}")), &buf)?;
        written += size as u64;
    }
    Ok(written)
}

fn write_zip(root: &Path, files: &[PathBuf], dest: &Path, deflate: bool) -> R<u64> {
    use zip::write::SimpleFileOptions;
    let method = if deflate {
        zip::CompressionMethod::Deflated
    } else {
        zip::CompressionMethod::Stored
    };
    let opts = SimpleFileOptions::default()
        .compression_method(method)
        .unix_permissions(0o644);
    let mut zw = zip::ZipWriter::new(std::io::BufWriter::new(File::create(dest)?));
    for f in files {
        let rel = f.strip_prefix(root)?.to_string_lossy().into_owned();
        zw.start_file(rel, opts)?;
        zw.write_all(&fs::read(f)?)?;
    }
    zw.finish()?.flush()?;
    Ok(fs::metadata(dest)?.len())
}

fn warm(paths: &[PathBuf]) -> R<()> {
    let mut buf = vec![0u8; 1 << 20];
    for p in paths {
        let mut f = File::open(p)?;
        while f.read(&mut buf)? > 0 {}
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Measurements

fn run(cmd: &mut Command) -> R<Duration> {
    let t = Instant::now();
    let out = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).output()?;
    let d = t.elapsed();
    if !out.status.success() {
        return Err(format!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(d)
}

fn openssl_files(files: &[PathBuf]) -> R<Duration> {
    run(Command::new("openssl")
        .args(["dgst", "-sha256", "-r"])
        .args(files))
}

fn cat_openssl(files: &[PathBuf]) -> R<Duration> {
    // `cat` runs as its own process; the pipe adds one copy on the other core.
    let t = Instant::now();
    let mut cat = Command::new("cat")
        .args(files)
        .stdout(Stdio::piped())
        .spawn()?;
    let out = Command::new("openssl")
        .args(["dgst", "-sha256"])
        .stdin(cat.stdout.take().ok_or("no cat stdout")?)
        .stdout(Stdio::null())
        .status()?;
    let cat_ok = cat.wait()?.success();
    let d = t.elapsed();
    if !out.success() || !cat_ok {
        return Err("cat | openssl dgst failed".into());
    }
    Ok(d)
}

/// What openssl does for the file list, in process with the sha2 crate: one thread, per file.
fn sha2_files(files: &[PathBuf]) -> R<Duration> {
    let t = Instant::now();
    let mut buf = vec![0u8; 256 * 1024];
    let mut acc = 0u8;
    for p in files {
        let mut f = File::open(p)?;
        let mut h = Sha256::new();
        loop {
            let n = f.read(&mut buf)?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
        }
        acc ^= h.finalize()[0];
    }
    std::hint::black_box(acc);
    Ok(t.elapsed())
}

#[derive(Default)]
struct Phases {
    open: Duration,
    stage: Duration,
    plan: Duration,
    commit: Duration,
}

impl Phases {
    fn install_total(&self) -> Duration {
        self.open + self.stage + self.plan + self.commit
    }
}

/// One full install into a fresh data dir.
fn install_once(source: &ResolvedSource, data_root: &Path, expect_files: usize) -> R<Phases> {
    if data_root.exists() {
        return Err(format!("{} exists already", data_root.display()).into());
    }
    let dir = DataDir::at(data_root);
    let mut ph = Phases::default();

    let t = Instant::now();
    let (store, _recovered) = Store::open_locked(&dir)?;
    let keys = store.trusted_keys()?;
    let profile = HostProfile::current();
    let opts = InspectOptions::preview(Limits::default(), &profile, &keys);
    ph.open = t.elapsed();

    let t = Instant::now();
    let staged = store.stage(source, &opts, &mut |_, _| {})?;
    ph.stage = t.elapsed();

    let t = Instant::now();
    let plan = store.plan(&staged, InstallMode::Install, true)?;
    ph.plan = t.elapsed();

    let t = Instant::now();
    let consent: BTreeSet<String> = plan.needs_consent().iter().cloned().collect();
    store.commit(staged, &plan, &consent)?;
    ph.commit = t.elapsed();
    if plan.new_blobs() < expect_files {
        return Err(format!(
            "expected {expect_files} new blobs, the plan has {}",
            plan.new_blobs()
        )
        .into());
    }
    Ok(ph)
}

/// Uninstalls the app installed in `data_root` (deleting its data and its blobs).
fn uninstall_once(data_root: &Path) -> R<Duration> {
    let dir = DataDir::at(data_root);
    let (store, _) = Store::open_locked(&dir)?;
    let names = store.app_names()?;
    let t = Instant::now();
    for name in names {
        store.uninstall(&name, host_core::install::store::DataMode::DeleteData, None)?;
    }
    Ok(t.elapsed())
}

/// CPU seconds (user + system) used so far by (this process, all threads; its waited-for
/// children), from `getrusage` (microsecond resolution).
fn cpu_times() -> (f64, f64) {
    use nix::sys::resource::{getrusage, UsageWho};
    let secs = |who| {
        getrusage(who).map_or(f64::NAN, |u| {
            let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
            t(u.user_time()) + t(u.system_time())
        })
    };
    (secs(UsageWho::RUSAGE_SELF), secs(UsageWho::RUSAGE_CHILDREN))
}

/// The durable-write bound: `cat <every file> > out && sync out` (one stream, fsynced), the
/// least any durable install of these bytes must do. The output is removed afterwards.
fn cat_sync(files: &[PathBuf], dir: &Path) -> R<Duration> {
    let out = dir.join("cat-sync.out");
    let t = Instant::now();
    let status = Command::new("cat")
        .args(files)
        .stdout(File::create(&out)?)
        .status()?;
    let synced = Command::new("sync").arg(&out).status()?;
    let d = t.elapsed();
    if !status.success() || !synced.success() {
        return Err("cat > out && sync out failed".into());
    }
    fs::remove_file(&out)?;
    Ok(d)
}

/// Cache state before each timed step: `warm` (everything read is in the page cache) or `cold`
/// (`sync; echo 3 > /proc/sys/vm/drop_caches` first: needs root).
#[derive(Clone, Copy, PartialEq)]
enum Cache {
    Warm,
    Cold,
}

impl Cache {
    fn prepare(self, dir: &Path) -> R<()> {
        sync_dir(dir)?;
        if self == Cache::Cold {
            fs::write("/proc/sys/vm/drop_caches", "3\n")
                .map_err(|e| format!("cannot drop the page cache (needs root): {e}"))?;
        }
        Ok(())
    }
}

fn sync_dir(p: &Path) -> R<()> {
    rustix::fs::syncfs(File::open(p)?)?;
    Ok(())
}

fn inspect_once(source: &ResolvedSource) -> R<Duration> {
    let profile = HostProfile::current();
    let opts = InspectOptions::preview(Limits::default(), &profile, &[]);
    let t = Instant::now();
    let insp = inspect(source, &opts, None, &mut |_, _| {})?;
    let d = t.elapsed();
    if insp.install_blocker(true).is_some() {
        return Err(format!(
            "the package is not installable: {:?}",
            insp.install_blocker(true)
        )
        .into());
    }
    Ok(d)
}

fn sha2_memory(buf: &[u8]) -> Duration {
    let t = Instant::now();
    std::hint::black_box(Sha256::digest(buf));
    t.elapsed()
}

/// `openssl speed -evp sha256` at 16 KiB blocks, in bytes per second (one core).
fn openssl_speed() -> Option<f64> {
    let out = Command::new("openssl")
        .args([
            "speed", "-seconds", "2", "-bytes", "16384", "-evp", "sha256",
        ])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // Last line: "sha256   1234567.89k" (thousands of bytes per second).
    let line = text
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with("sha256"))?;
    let v = line.split_whitespace().last()?.trim_end_matches('k');
    v.parse::<f64>().ok().map(|k| k * 1000.0)
}

/// Writes `bytes` of incompressible data into one file, then fsyncs it: the disk's flush rate.
fn write_fsync(dir: &Path, bytes: u64) -> R<(Duration, Duration)> {
    let p = dir.join("fsync-probe.bin");
    let mut rng = Rng(7);
    let mut chunk = Vec::new();
    fill_binary(&mut rng, &mut chunk, 1 << 20);
    let t = Instant::now();
    let mut f = File::create(&p)?;
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    let write = t.elapsed();
    let t = Instant::now();
    f.sync_all()?;
    let sync = t.elapsed();
    drop(f);
    fs::remove_file(&p)?;
    rustix::fs::syncfs(File::open(dir)?)?;
    Ok((write, sync))
}

// ---------------------------------------------------------------------------------------------
// Reporting

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// The mount holding `dir`: (device, type, options), from /proc/mounts (longest prefix).
fn mount_of(dir: &Path) -> (String, String, String) {
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mounts = fs::read_to_string("/proc/mounts").unwrap_or_default();
    let mut best: Option<(usize, (String, String, String))> = None;
    for line in mounts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 || !dir.starts_with(f[1]) {
            continue;
        }
        if best.as_ref().is_none_or(|(l, _)| f[1].len() >= *l) {
            best = Some((f[1].len(), (f[0].into(), f[2].into(), f[3].into())));
        }
    }
    best.map(|b| b.1).unwrap_or_default()
}

fn loadavg() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn machine(bench_dir: &Path) -> Vec<(String, String)> {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |k: &str| {
        cpuinfo
            .lines()
            .find(|l| l.split(':').next().map(str::trim) == Some(k))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_owned())
            .unwrap_or_else(|| "?".into())
    };
    let flags = field("flags");
    let has = |f: &str| flags.split_whitespace().any(|x| x == f);
    let cores = std::thread::available_parallelism()
        .map(|n| n.get().to_string())
        .unwrap_or_else(|_| "?".into());
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "?".into());
    let (device, fs_type, options) = mount_of(bench_dir);
    // ext4 without a journal shows `<none>` here; it changes how inodes are allocated.
    let journal = Path::new(&device)
        .file_name()
        .and_then(|d| {
            fs::read_to_string(Path::new("/sys/fs/ext4").join(d).join("journal_task")).ok()
        })
        .map(|j| {
            let j = j.trim().to_owned();
            if j == "<none>" {
                "none (no journal)".to_owned()
            } else {
                j
            }
        });
    let mem = fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| format!("{:.1} GiB", kb as f64 / 1024.0 / 1024.0))
        .unwrap_or_else(|| "?".into());
    let openssl = Command::new("openssl")
        .arg("version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|_| "?".into());
    let mut out = vec![
        (
            "cpu".into(),
            format!(
                "{} (family {}, model {})",
                field("model name"),
                field("cpu family"),
                field("model")
            ),
        ),
        (
            "sha_ni flag".into(),
            if has("sha_ni") { "yes" } else { "no" }.into(),
        ),
        ("cores".into(), cores),
        ("memory".into(), mem),
        ("kernel".into(), kernel),
        (
            "filesystem".into(),
            format!("{fs_type} on {device} ({options})"),
        ),
        ("bench dir".into(), bench_dir.display().to_string()),
        ("openssl".into(), openssl),
    ];
    if let Some(j) = journal {
        out.push(("ext4 journal".into(), j));
    }
    out.push(("load average".into(), loadavg()));
    out
}

/// The baselines of one repetition: openssl's wall and CPU seconds, and the durable-write
/// bound's wall seconds.
#[derive(Clone, Copy)]
struct Base {
    wall: f64,
    cpu: f64,
    durable: f64,
}

#[derive(Default)]
struct Table {
    wall: BTreeMap<&'static str, Vec<f64>>,
    cpu: BTreeMap<&'static str, Vec<f64>>,
    /// openssl wall / measured wall, per repetition.
    ratio: BTreeMap<&'static str, Vec<f64>>,
    /// openssl CPU / measured CPU, per repetition (how much CPU each byte costs, relatively).
    cpu_ratio: BTreeMap<&'static str, Vec<f64>>,
    /// `cat > out && sync out` wall / measured wall, per repetition (installs only).
    durable_ratio: BTreeMap<&'static str, Vec<f64>>,
    phases: BTreeMap<&'static str, Vec<Phases>>,
}

impl Table {
    fn add(&mut self, name: &'static str, wall: f64, cpu: f64, base: Option<Base>) {
        self.wall.entry(name).or_default().push(wall);
        self.cpu.entry(name).or_default().push(cpu);
        if let Some(b) = base {
            self.ratio.entry(name).or_default().push(b.wall / wall);
            self.cpu_ratio.entry(name).or_default().push(b.cpu / cpu);
            if name.starts_with("install") {
                self.durable_ratio
                    .entry(name)
                    .or_default()
                    .push(b.durable / wall);
            }
        }
    }
}

/// Threads (or processes) each measurement uses.
fn threads(name: &str) -> &'static str {
    match name {
        "openssl dgst (file list)" => "1 (one process)",
        "cat | openssl dgst" => "2 processes",
        "cat > out && sync out" => "1 process, then sync",
        "sha2 read+hash, 1 thread" => "1",
        n if n.starts_with("inspect") => "3: read/inflate, file hash, package hash",
        n if n.starts_with("install") => {
            "4: read/inflate, file hash, package hash, write (+ write-back)"
        }
        _ => "?",
    }
}

/// The issue's target for a measurement, as a ratio against openssl's wall-clock time.
fn target(name: &str) -> Option<f64> {
    match name {
        "install folder" | "install zip (stored)" => Some(0.7),
        "install zip (deflated)" => Some(0.6),
        "inspect folder (no staging)" => Some(1.5),
        _ => None,
    }
}

fn spread(v: &[f64]) -> String {
    format!("{:.2} [{:.2} … {:.2}]", median(v), min(v), max(v))
}

fn main() -> R<()> {
    // `cargo bench` passes `--bench`; arguments are ignored.
    let reps: usize = env_or("APPHOST_BENCH_REPS", 5).max(1);
    let total_mb: u64 = env_or("APPHOST_BENCH_MB", 200);
    let nfiles: usize = env_or("APPHOST_BENCH_FILES", 5000).max(1);
    let with_zip = std::env::var("APPHOST_BENCH_ZIP").map_or(true, |v| v != "0");
    let parent = std::env::var_os("APPHOST_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    fs::create_dir_all(&parent)?;
    let work = tempfile::Builder::new()
        .prefix("apphost-bench-")
        .tempdir_in(&parent)?;
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/packages/good/hello-app");
    let cache = match std::env::var("APPHOST_BENCH_CACHE").as_deref() {
        Ok("cold") => Cache::Cold,
        _ => Cache::Warm,
    };

    println!("== AppHost install benchmark ==");
    for (k, v) in machine(work.path()) {
        println!("{k:>13}: {v}");
    }

    let pkg = work.path().join("bench-app");
    let t = Instant::now();
    let content = generate(&pkg, &fixture, total_mb * 1_000_000, nfiles)?;
    let files = list_files(&pkg)?;
    let bytes: u64 = files
        .iter()
        .map(|f| fs::metadata(f).map(|m| m.len()))
        .sum::<Result<u64, _>>()?;
    println!(
        "\npackage: {} files, {:.1} MB ({:.1} MB generated in {nfiles} files, {:.1} s), reps: {reps}",
        files.len(),
        bytes as f64 / 1e6,
        content as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    let mut zips = Vec::new();
    if with_zip {
        for (label, deflate) in [("stored", false), ("deflated", true)] {
            let t = Instant::now();
            let dest = work.path().join(format!("{label}.zip"));
            let size = write_zip(&pkg, &files, &dest, deflate)?;
            println!(
                "zip ({label}): {:.1} MB on disk (built in {:.1} s)",
                size as f64 / 1e6,
                t.elapsed().as_secs_f64()
            );
            zips.push((label, dest));
        }
    }
    // Everything the bench reads is written; flush it so the timed runs start quiet.
    sync_dir(work.path())?;
    warm(&files)?;
    for (_, z) in &zips {
        warm(std::slice::from_ref(z))?;
    }

    let sel = CatalogSelect::default();
    let folder = resolve(&pkg, &sel)?;
    let zip_sources: Vec<(&str, ResolvedSource)> = zips
        .iter()
        .map(|(l, p)| Ok((*l, resolve(p, &sel)?)))
        .collect::<R<_>>()?;
    let small = resolve(&fixture, &sel)?;
    let data = |name: String| work.path().join(name);

    // Warm-up: one of each, untimed (page cache, allocator, first-run costs).
    openssl_files(&files)?;
    install_once(&folder, &data("data-warmup".into()), nfiles)?;
    inspect_once(&folder)?;
    sync_dir(work.path())?;

    let mut tab = Table::default();
    let mut uninstall_t = Vec::new();
    let dir = work.path();
    for rep in 0..reps {
        eprint!("rep {}/{reps}…\r", rep + 1);
        cache.prepare(dir)?;
        let c = cpu_times();
        let wall = openssl_files(&files)?.as_secs_f64();
        let cpu = cpu_times().1 - c.1;
        tab.add("openssl dgst (file list)", wall, cpu, None);
        let mut base = Base {
            wall,
            cpu,
            durable: f64::NAN,
        };

        cache.prepare(dir)?;
        let c = cpu_times();
        let w = cat_openssl(&files)?.as_secs_f64();
        tab.add("cat | openssl dgst", w, cpu_times().1 - c.1, None);

        cache.prepare(dir)?;
        let c = cpu_times();
        base.durable = cat_sync(&files, dir)?.as_secs_f64();
        tab.add(
            "cat > out && sync out",
            base.durable,
            cpu_times().1 - c.1,
            None,
        );

        cache.prepare(dir)?;
        let c = cpu_times();
        let w = sha2_files(&files)?.as_secs_f64();
        tab.add(
            "sha2 read+hash, 1 thread",
            w,
            cpu_times().0 - c.0,
            Some(base),
        );

        let mut inspects: Vec<(&'static str, &ResolvedSource)> =
            vec![("inspect folder (no staging)", &folder)];
        let mut installs: Vec<(&'static str, &ResolvedSource)> = vec![("install folder", &folder)];
        for (label, src) in &zip_sources {
            if *label == "deflated" {
                inspects.push(("inspect zip (deflated)", src));
                installs.push(("install zip (deflated)", src));
            } else {
                inspects.push(("inspect zip (stored)", src));
                installs.push(("install zip (stored)", src));
            }
        }
        for (name, src) in inspects {
            cache.prepare(dir)?;
            let c = cpu_times();
            let w = inspect_once(src)?.as_secs_f64();
            tab.add(name, w, cpu_times().0 - c.0, Some(base));
        }
        for (k, (name, src)) in installs.into_iter().enumerate() {
            let root = data(format!("data-{rep}-{k}"));
            // Each timed install starts on a quiet disk: earlier runs' write-back is done.
            cache.prepare(dir)?;
            let c = cpu_times();
            let ph = install_once(src, &root, nfiles)?;
            let cpu = cpu_times().0 - c.0;
            tab.add(name, ph.install_total().as_secs_f64(), cpu, Some(base));
            tab.phases.entry(name).or_default().push(ph);
            uninstall_t.push(uninstall_once(&root)?.as_secs_f64());
            fs::remove_dir_all(&root)?;
        }
    }
    eprintln!();

    let mb = bytes as f64 / 1e6;
    let cache_text = match cache {
        Cache::Warm => {
            "warm page cache (every input read once before timing; syncfs before each step)"
        }
        Cache::Cold => "cold: sync + drop_caches (echo 3) before each step",
    };
    println!(
        "\n-- {mb:.1} MB in {} files; {reps} repetitions; cache: {cache_text}; load average now: {} --",
        files.len(),
        loadavg()
    );
    println!("wall = elapsed seconds; cpu = user+sys seconds (getrusage: this process's threads, or the waited-for children)");
    println!("ratio = openssl time / measured time, paired per repetition; cpu ratio = openssl cpu / measured cpu\n");
    println!("| measurement | threads | wall s, median [min … max] | MB/s | cpu s (median) | ratio vs openssl, wall | ratio vs openssl, cpu-normalized | target (wall) |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    let order = [
        "openssl dgst (file list)",
        "cat | openssl dgst",
        "cat > out && sync out",
        "sha2 read+hash, 1 thread",
        "inspect folder (no staging)",
        "inspect zip (stored)",
        "inspect zip (deflated)",
        "install folder",
        "install zip (stored)",
        "install zip (deflated)",
    ];
    for name in order {
        let Some(v) = tab.wall.get(name) else {
            continue;
        };
        let (ratio, cpu_ratio) = match (tab.ratio.get(name), tab.cpu_ratio.get(name)) {
            (Some(r), Some(c)) => (spread(r), spread(c)),
            _ => ("1 (baseline)".to_owned(), String::new()),
        };
        let verdict = match (target(name), tab.ratio.get(name)) {
            (Some(t), Some(r)) if median(r) >= t => format!("≥ {t:.2}: met"),
            (Some(t), Some(_)) => format!("≥ {t:.2}: **missed**"),
            _ => String::new(),
        };
        let is_base = !tab.ratio.contains_key(name) && name.starts_with("openssl");
        println!(
            "| {} | {} | {:.3} [{:.3} … {:.3}] | {:.0} | {:.3} | {} | {} | {} |",
            if is_base {
                format!("**{name}**")
            } else {
                name.replace('|', "\\|")
            },
            threads(name),
            median(v),
            min(v),
            max(v),
            mb / median(v),
            median(&tab.cpu[name]),
            if tab.ratio.contains_key(name) || is_base {
                ratio
            } else {
                String::new()
            },
            cpu_ratio,
            verdict
        );
    }

    println!("\n-- installs against the durable-write bound: (cat > out && sync out) time / install time, paired per repetition --");
    println!("| install | ratio vs cat + sync, median [min … max] |");
    println!("| --- | --- |");
    for name in order {
        if let Some(r) = tab.durable_ratio.get(name) {
            println!("| {name} | {} |", spread(r));
        }
    }

    println!("\n-- install phases, median seconds --");
    for name in order {
        let Some(list) = tab.phases.get(name) else {
            continue;
        };
        let col = |f: fn(&Phases) -> Duration| {
            median(&list.iter().map(|p| f(p).as_secs_f64()).collect::<Vec<_>>())
        };
        println!(
            "{:<34} open {:.3}  stage {:.3}  plan {:.3}  commit {:.3}",
            name,
            col(|p| p.open),
            col(|p| p.stage),
            col(|p| p.plan),
            col(|p| p.commit),
        );
    }
    println!("(stage: read, hash, write the pack; commit: fsync the pack, place it, one SQLite transaction)");
    println!(
        "uninstall (DeleteData, {} files): median {:.3} s [min {:.3} … max {:.3}]",
        files.len(),
        median(&uninstall_t),
        min(&uninstall_t),
        max(&uninstall_t)
    );

    // Small package inspect: many calls, per-call figures.
    let n = 200;
    let mut small_t = Vec::with_capacity(n);
    inspect_once(&small)?;
    for _ in 0..n {
        small_t.push(inspect_once(&small)?.as_secs_f64() * 1e3);
    }
    println!(
        "\n-- inspect fixtures/packages/good/hello-app ({n} calls) --\nper call: median {:.3} ms [min {:.3} … max {:.3}]",
        median(&small_t),
        min(&small_t),
        max(&small_t)
    );

    // Context: raw hash speed and the disk's flush rate.
    let mut rng = Rng(42);
    let mut mem = Vec::new();
    fill_binary(&mut rng, &mut mem, 64 << 20);
    sha2_memory(&mem);
    let sha2_mem: Vec<f64> = (0..5).map(|_| sha2_memory(&mem).as_secs_f64()).collect();
    println!("\n-- context --");
    println!(
        "sha2 crate, in memory, 64 MiB, 1 thread: {:.0} MB/s (median of 5)",
        mem.len() as f64 / 1e6 / median(&sha2_mem)
    );
    match openssl_speed() {
        Some(bps) => println!(
            "openssl speed -evp sha256, 16 KiB blocks, 1 thread: {:.0} MB/s",
            bps / 1e6
        ),
        None => println!("openssl speed: unavailable"),
    }
    let mut w = Vec::new();
    let mut s = Vec::new();
    for _ in 0..3 {
        let (wt, st) = write_fsync(work.path(), bytes)?;
        w.push(wt.as_secs_f64());
        s.push(st.as_secs_f64());
    }
    println!(
        "write {mb:.0} MB into one file: {:.3} s ({:.0} MB/s); its fsync: {:.3} s ({:.0} MB/s) (median of 3)",
        median(&w),
        mb / median(&w),
        median(&s),
        mb / median(&s)
    );
    println!("load average at the end: {}", loadavg());
    Ok(())
}
