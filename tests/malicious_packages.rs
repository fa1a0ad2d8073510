//! Broken and malicious packages are rejected with their exact error code and change nothing.
//!
//! The cases live in `fixtures/packages/malicious/` (made by `fixtures/packages/make_malicious.py`)
//! and are listed with their expected codes in `expected.json`. Each one is installed with
//! `apphost --json install` into a data directory that already holds `hello-app`, then checked:
//!
//! - the exit code is the one of the code's class (`ErrorClass::exit_code`);
//! - stderr holds exactly one `{"error": {"code": …}}` line, with the expected code;
//! - the data directory is byte-for-byte what it was (every path, type, mode, size and content
//!   hash, `host.db` included; SQLite's `-wal`/`-shm` are left out), the child's `$TMPDIR` and
//!   working directory are still empty, and the fixtures themselves are untouched;
//! - `apphost --json validate` exits 1 and names the same code (except trust cases, which only
//!   `install` decides).
//!
//! The file tree is compared after every command; the CLI's JSON views of every table (`list`,
//! `verify`, `audit`, `trust list`) are compared at the start and end of each data directory's run.
//! Hard links, FIFOs, sockets and non-UTF-8 names cannot live in git, so those folders are made
//! here. Finally, a blob tampered with after install must be reported by `apphost verify`.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use host_core::foundation::error::ErrorCode;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_apphost");
const TRUST_FIXTURE_KEY: &str = "trust-fixture-key";
/// One command should take well under a second; this only stops a hung test.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn malicious_dir() -> PathBuf {
    repo().join("fixtures/packages/malicious")
}

fn hello_app() -> PathBuf {
    repo().join("fixtures/packages/good/hello-app")
}

fn fixture_pub_key() -> PathBuf {
    repo().join("fixtures/keys/fixture-publisher.pub.json")
}

fn expected() -> Value {
    let p = malicious_dir().join("expected.json");
    serde_json::from_slice(&fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .expect("expected.json is JSON")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha256_hex(data: &[u8]) -> String {
    hex(&host_core::foundation::hashing::sha256(data))
}

/// The exit code the CLI documents for `code` (its class's exit code).
fn exit_code_for(code: &str) -> i32 {
    ErrorCode::ALL
        .iter()
        .find(|c| c.as_str() == code)
        .unwrap_or_else(|| panic!("{code:?} is not an AppHost error code"))
        .class()
        .exit_code()
}

// ------------------------------------------------------------------------------------------------
// Running the CLI
// ------------------------------------------------------------------------------------------------

struct Run {
    status: i32,
    stdout: String,
    stderr: String,
    what: String,
}

impl Run {
    fn json_stdout(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("{}: stdout is not JSON ({e}):\n{}", self.what, self.stdout))
    }
}

/// Where children run: an empty working directory and an empty `$TMPDIR`, both checked after
/// each command, plus a scratch folder for captured output.
struct Sandbox {
    _tmp: tempfile::TempDir,
    cwd: PathBuf,
    tmpdir: PathBuf,
    out: PathBuf,
    runs: usize,
}

impl Sandbox {
    fn new() -> Sandbox {
        let tmp = tempfile::tempdir().unwrap();
        let [cwd, tmpdir, out] = ["cwd", "tmp", "out"].map(|d| tmp.path().join(d));
        for d in [&cwd, &tmpdir, &out] {
            fs::create_dir(d).unwrap();
        }
        Sandbox {
            _tmp: tmp,
            cwd,
            tmpdir,
            out,
            runs: 0,
        }
    }

    /// `apphost --json --data-dir <data> <args…>`, output captured through files (no pipe can
    /// fill up), killed after [`COMMAND_TIMEOUT`].
    fn run(&mut self, data: &Path, args: &[&OsStr]) -> Run {
        self.runs += 1;
        let out_path = self.out.join(format!("{}.out", self.runs));
        let err_path = self.out.join(format!("{}.err", self.runs));
        let what = format!(
            "apphost --json --data-dir {} {}",
            data.display(),
            args.iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" ")
        );
        let mut child = Command::new(BIN)
            .arg("--json")
            .arg("--data-dir")
            .arg(data)
            .args(args)
            .current_dir(&self.cwd)
            .env("TMPDIR", &self.tmpdir)
            .env_remove("APPHOST_DATA_DIR")
            .env_remove("APPHOST_LOG")
            .stdin(Stdio::null())
            .stdout(fs::File::create(&out_path).unwrap())
            .stderr(fs::File::create(&err_path).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {BIN}: {e}"));
        let start = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if start.elapsed() > COMMAND_TIMEOUT {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{what} did not finish within {COMMAND_TIMEOUT:?}");
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let read = |p: &Path| String::from_utf8_lossy(&fs::read(p).unwrap()).into_owned();
        let run = Run {
            status: status
                .code()
                .unwrap_or_else(|| panic!("{what} was killed by a signal ({status:?})")),
            stdout: read(&out_path),
            stderr: read(&err_path),
            what,
        };
        let _ = fs::remove_file(out_path);
        let _ = fs::remove_file(err_path);
        run
    }

    fn run_ok(&mut self, data: &Path, args: &[&OsStr]) -> Run {
        let r = self.run(data, args);
        assert_eq!(
            r.status, 0,
            "{} failed:\nstdout: {}\nstderr: {}",
            r.what, r.stdout, r.stderr
        );
        r
    }

    /// Files a command left in its working directory or `$TMPDIR` (then removes them).
    fn leftovers(&self) -> Vec<String> {
        let mut found = Vec::new();
        for dir in [&self.cwd, &self.tmpdir] {
            for e in fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                found.push(p.display().to_string());
                let _ = fs::remove_dir_all(&p).or_else(|_| fs::remove_file(&p));
            }
        }
        found
    }
}

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

// ------------------------------------------------------------------------------------------------
// Snapshots
// ------------------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Dir {
        mode: u32,
    },
    File {
        mode: u32,
        size: u64,
        sha256: String,
    },
    Link {
        target: PathBuf,
    },
    Other {
        mode: u32,
    },
}

type Tree = BTreeMap<String, Node>;

/// Every path under `root` (not following links). SQLite's `-wal`/`-shm` files are skipped:
/// they are transient and are checkpointed away when the last connection closes.
fn tree(root: &Path) -> Tree {
    let mut out = Tree::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = e.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel.ends_with("-wal") || rel.ends_with("-shm") {
                continue;
            }
            let meta = fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode() & 0o7777;
            let ft = meta.file_type();
            let node = if ft.is_symlink() {
                Node::Link {
                    target: fs::read_link(&path).unwrap(),
                }
            } else if ft.is_dir() {
                stack.push(path.clone());
                Node::Dir { mode }
            } else if ft.is_file() {
                Node::File {
                    mode,
                    size: meta.len(),
                    sha256: sha256_hex(&fs::read(&path).unwrap()),
                }
            } else {
                Node::Other { mode }
            };
            out.insert(rel, node);
        }
    }
    out
}

fn tree_diff(before: &Tree, after: &Tree) -> Vec<String> {
    let mut d = Vec::new();
    for (p, n) in before {
        match after.get(p) {
            None => d.push(format!("removed {p} ({n:?})")),
            Some(m) if m != n => d.push(format!("changed {p}: {n:?} -> {m:?}")),
            Some(_) => {}
        }
    }
    for (p, n) in after {
        if !before.contains_key(p) {
            d.push(format!("added {p} ({n:?})"));
        }
    }
    d
}

/// The file tree plus the CLI's JSON view of every table of `host.db`.
#[derive(Debug, PartialEq)]
struct Snapshot {
    tree: Tree,
    views: BTreeMap<&'static str, Value>,
}

fn snapshot(sb: &mut Sandbox, data: &Path) -> Snapshot {
    let tree_before = tree(data);
    let mut views = BTreeMap::new();
    let commands: [(&'static str, &[&str]); 4] = [
        ("list", &["list"]),
        ("verify", &["verify"]),
        ("audit", &["audit", "--limit", "1000000"]),
        ("trust", &["trust", "list"]),
    ];
    for (name, args) in commands {
        let args: Vec<&OsStr> = args.iter().map(|a| os(a)).collect();
        views.insert(name, sb.run_ok(data, &args).json_stdout());
    }
    let tree = tree(data);
    let d = tree_diff(&tree_before, &tree);
    assert!(
        d.is_empty(),
        "read-only commands changed {}: {d:#?}",
        data.display()
    );
    Snapshot { tree, views }
}

// ------------------------------------------------------------------------------------------------
// Data directories
// ------------------------------------------------------------------------------------------------

/// A data directory holding `hello-app`, optionally trusting the fixture publisher key.
struct Base {
    dir: PathBuf,
    trusted: bool,
    start: Snapshot,
    tree: Tree,
}

impl Base {
    fn new(sb: &mut Sandbox, dir: PathBuf, trusted: bool) -> Base {
        let _ = fs::remove_dir_all(&dir);
        sb.run_ok(
            &dir,
            &[
                os("install"),
                os("--yes"),
                os("--sideload"),
                hello_app().as_os_str(),
            ],
        );
        if trusted {
            sb.run_ok(
                &dir,
                &[os("trust"), os("add"), fixture_pub_key().as_os_str()],
            );
        }
        let start = snapshot(sb, &dir);
        assert_eq!(start.views["list"].as_array().map(Vec::len), Some(1));
        assert_eq!(
            start.views["verify"]["ok"], true,
            "{:#}",
            start.views["verify"]
        );
        let tree = start.tree.clone();
        Base {
            dir,
            trusted,
            start,
            tree,
        }
    }

    /// Problems left by the last command: data-dir changes and stray temp files. After a change
    /// the directory is rebuilt, so one bad case does not fail the ones after it.
    fn check_unchanged(&mut self, sb: &mut Sandbox, what: &str) -> Vec<String> {
        let mut problems = Vec::new();
        let now = tree(&self.dir);
        let d = tree_diff(&self.tree, &now);
        if !d.is_empty() {
            problems.push(format!("{what} changed the data directory: {d:#?}"));
        }
        let left = sb.leftovers();
        if !left.is_empty() {
            problems.push(format!("{what} left files behind: {left:?}"));
        }
        if !d.is_empty() {
            *self = Base::new(sb, self.dir.clone(), self.trusted);
        }
        problems
    }
}

// ------------------------------------------------------------------------------------------------
// The cases
// ------------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Case {
    name: String,
    path: PathBuf,
    code: String,
    install: Vec<String>,
    setup: Option<String>,
    validate: bool,
}

fn cases() -> Vec<Case> {
    let doc = expected();
    doc["cases"]
        .as_array()
        .expect("expected.json has a cases array")
        .iter()
        .map(|c| {
            let s = |k: &str| {
                c[k].as_str()
                    .unwrap_or_else(|| panic!("case {c} has no string {k}"))
                    .to_owned()
            };
            Case {
                name: s("case"),
                path: malicious_dir().join(s("path")),
                code: s("expectCode"),
                install: c["install"]
                    .as_array()
                    .expect("install is a list")
                    .iter()
                    .map(|a| a.as_str().expect("install flags are strings").to_owned())
                    .collect(),
                setup: c["setup"].as_str().map(str::to_owned),
                validate: c["validate"].as_bool().unwrap_or(true),
            }
        })
        .collect()
}

/// The code of a failed `--json` command: stderr must hold exactly one `{"error": …}` line.
fn error_code(r: &Run) -> Result<String, String> {
    let errors: Vec<Value> = r
        .stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("error").is_some())
        .collect();
    match errors.as_slice() {
        [one] => {
            let e = &one["error"];
            let has_message = e["message"].as_str().is_some_and(|m| !m.is_empty());
            if !has_message || !e["details"].is_object() {
                return Err(format!("error is not {{code, message, details}}: {one}"));
            }
            e["code"]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("error has no code: {one}"))
        }
        _ => Err(format!(
            "stderr should hold exactly one JSON error, found {}:\n{}",
            errors.len(),
            r.stderr
        )),
    }
}

/// The code `validate --json` fails with: its `error`, else its first error finding.
fn validate_code(report: &Value) -> Option<String> {
    if let Some(c) = report["error"]["code"].as_str() {
        return Some(c.to_owned());
    }
    report["findings"]
        .as_array()?
        .iter()
        .find(|f| f["severity"] == "error")
        .and_then(|f| f["code"].as_str())
        .map(str::to_owned)
}

/// Installs (and validates) one case against `base`; returns what went wrong.
fn check_case(sb: &mut Sandbox, base: &mut Base, c: &Case) -> Vec<String> {
    let mut problems = Vec::new();
    let mut args: Vec<&OsStr> = vec![os("install")];
    args.extend(c.install.iter().map(|a| os(a)));
    args.push(c.path.as_os_str());
    let r = sb.run(&base.dir, &args);
    let want_exit = exit_code_for(&c.code);
    if r.status != want_exit {
        problems.push(format!(
            "install exited {} (want {want_exit} for {}); stderr: {}",
            r.status,
            c.code,
            r.stderr.trim()
        ));
    }
    match error_code(&r) {
        Ok(code) if code == c.code => {}
        Ok(code) => problems.push(format!(
            "install failed with {code}, want {}; stderr: {}",
            c.code,
            r.stderr.trim()
        )),
        Err(e) => problems.push(format!("install: {e}")),
    }
    if !r.stdout.trim().is_empty() {
        problems.push(format!("install printed to stdout: {}", r.stdout.trim()));
    }
    problems.extend(base.check_unchanged(sb, "install"));

    if c.validate {
        let r = sb.run(&base.dir, &[os("validate"), c.path.as_os_str()]);
        if r.status != 1 {
            problems.push(format!(
                "validate exited {} (want 1); stdout: {} stderr: {}",
                r.status,
                r.stdout.trim(),
                r.stderr.trim()
            ));
        } else {
            let report = r.json_stdout();
            if report["ok"] != false {
                problems.push(format!("validate reported ok: {report:#}"));
            }
            match validate_code(&report) {
                Some(code) if code == c.code => {}
                other => problems.push(format!(
                    "validate names {other:?}, want {}: {report:#}",
                    c.code
                )),
            }
        }
        problems.extend(base.check_unchanged(sb, "validate"));
    }
    problems
}

/// Hashes of every fixture file: installing or validating must never write into a source.
fn fixtures_tree() -> Tree {
    tree(&malicious_dir())
}

#[test]
fn expected_json_covers_the_issue() {
    let doc = expected();
    let cases = cases();
    assert!(cases.len() >= 30, "only {} cases", cases.len());
    let mut names = std::collections::HashSet::new();
    for c in &cases {
        assert!(
            names.insert(c.name.clone()),
            "case {} is listed twice",
            c.name
        );
        assert!(
            fs::symlink_metadata(&c.path).is_ok(),
            "{}: {} does not exist (run fixtures/packages/make_malicious.py)",
            c.name,
            c.path.display()
        );
        exit_code_for(&c.code);
        assert!(
            c.install.iter().any(|a| a == "--yes"),
            "{}: install without --yes would stop at the consent prompt",
            c.name
        );
        if let Some(s) = &c.setup {
            assert_eq!(s, TRUST_FIXTURE_KEY, "{}: unknown setup", c.name);
        }
    }
    // Every fixture in the folder is a listed case (no forgotten files).
    let listed: std::collections::HashSet<PathBuf> = cases.iter().map(|c| c.path.clone()).collect();
    for e in fs::read_dir(malicious_dir()).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if ["expected.json", ".gitattributes", "_controls"].contains(&name.as_str()) {
            continue;
        }
        assert!(listed.contains(&p), "{name} is not listed in expected.json");
    }
    // Names and paths (issue 6): invisible characters and full case folding; one `required` rule.
    for must in [
        "zip-bidi-override-name",
        "zip-zero-width-name",
        "zip-nbsp-name",
        "folder-bidi-name",
        "zip-case-fold-sharp-s",
        "zip-case-fold-ligature",
        "required-not-boolean",
    ] {
        assert!(names.contains(must), "no case {must}");
    }
    let mut codes: std::collections::BTreeSet<String> =
        cases.iter().map(|c| c.code.clone()).collect();
    for t in doc["testTimeCases"].as_array().unwrap() {
        codes.insert(t["expectCode"].as_str().unwrap().to_owned());
    }
    for must in [
        "archive.path_traversal",
        "archive.absolute_path",
        "archive.symlink",
        "archive.hardlink",
        "archive.special_file",
        "archive.duplicate_entry",
        "archive.case_collision",
        "archive.non_utf8_name",
        "archive.compression_ratio",
        "archive.too_large",
        "archive.size_mismatch",
        "archive.encrypted",
        "archive.unsupported_compression",
        "archive.too_many_files",
        "manifest.missing",
        "manifest.too_large",
        "manifest.not_utf8",
        "manifest.no_frontmatter",
        "manifest.yaml_alias_limit",
        "manifest.yaml_expansion_limit",
        "manifest.metadata_too_large",
        "manifest.yaml_depth_limit",
        "manifest.yaml_duplicate_key",
        "manifest.missing_field",
        "manifest.invalid_field",
        "manifest.unknown_status",
        "manifest.unknown_app_type",
        "manifest.unknown_entry_kind",
        "manifest.unsupported_version",
        "compat.end_of_life",
        "compat.requires_unsatisfied",
        "verify.package_hash_mismatch",
        "verify.lock_mismatch",
        "verify.signature_invalid",
        "verify.untrusted_key",
        "verify.unsigned",
        "catalog.release_mismatch",
    ] {
        assert!(codes.contains(must), "no case expects {must}");
    }
}

#[test]
fn malicious_packages_are_rejected_with_their_code_and_change_nothing() {
    let fixtures_before = fixtures_tree();
    let cases = cases();
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 3);
    let work = tempfile::tempdir().unwrap();
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let mine: Vec<&Case> = cases.iter().skip(w).step_by(workers).collect();
                let root = work.path().join(format!("worker-{w}"));
                s.spawn(move || {
                    let mut sb = Sandbox::new();
                    let mut plain = Base::new(&mut sb, root.join("plain"), false);
                    let mut trusted = Base::new(&mut sb, root.join("trusted"), true);
                    let mut failures = Vec::new();
                    for c in mine {
                        let base = match c.setup.as_deref() {
                            None => &mut plain,
                            Some(TRUST_FIXTURE_KEY) => &mut trusted,
                            Some(other) => panic!("{}: unknown setup {other}", c.name),
                        };
                        for p in check_case(&mut sb, base, c) {
                            failures.push(format!("[{}] {}: {p}", c.name, c.path.display()));
                        }
                    }
                    // The whole state, CLI views included, is what it was at the start.
                    for base in [&plain, &trusted] {
                        let end = snapshot(&mut sb, &base.dir);
                        if end != base.start {
                            failures.push(format!(
                                "{}: state differs from the start: tree {:#?}, views equal: {}",
                                base.dir.display(),
                                tree_diff(&base.start.tree, &end.tree),
                                end.views == base.start.views
                            ));
                        }
                    }
                    failures
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("worker panicked"))
            .collect()
    });
    let d = tree_diff(&fixtures_before, &fixtures_tree());
    assert!(d.is_empty(), "the fixtures were modified: {d:#?}");
    assert!(
        failures.is_empty(),
        "{} problem(s) across {} cases:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

/// Runs `apphost --json --data-dir <data> inspect <package>` under python3, which caps the
/// child's address space at 1 GiB (a regression aborts rather than taking the machine's memory)
/// and writes its exit status and peak RSS (`getrusage(RUSAGE_CHILDREN)`, KiB) to a file.
fn inspect_with_peak_rss(data: &Path, package: &Path, scratch: &Path) -> (Run, u64) {
    const SCRIPT: &str = "import resource, subprocess, sys\n\
        cap = lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n\
        r = subprocess.run(sys.argv[2:], preexec_fn=cap)\n\
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n\
        open(sys.argv[1], 'w').write('%d %d' % (r.returncode, usage.ru_maxrss))\n";
    let result = scratch.join("rusage");
    let out = Command::new("python3")
        .arg("-c")
        .arg(SCRIPT)
        .arg(&result)
        .arg(BIN)
        .arg("--json")
        .arg("--data-dir")
        .arg(data)
        .arg("inspect")
        .arg(package)
        .current_dir(scratch)
        .env_remove("APPHOST_DATA_DIR")
        .env_remove("APPHOST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("python3 is needed to measure peak memory");
    assert!(out.status.success(), "python3 failed: {out:?}");
    let text = fs::read_to_string(&result).unwrap();
    let (status, rss) = text.split_once(' ').unwrap();
    let run = Run {
        status: status.parse().unwrap(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        what: format!("apphost inspect {}", package.display()),
    };
    (run, rss.parse().unwrap())
}

/// Packages built to make the host allocate far more than they weigh (YAML alias expansion to
/// gigabytes, megabytes of metadata files) fail fast, with their code, in bounded memory:
/// before the expansion was bounded by bytes, `inspect` of such a package allocated gigabytes.
#[test]
fn memory_bombs_fail_fast_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let bombs: Vec<Case> = cases()
        .into_iter()
        .filter(|c| {
            c.code == "manifest.yaml_expansion_limit" || c.code == "manifest.metadata_too_large"
        })
        .collect();
    assert!(bombs.len() >= 5, "{bombs:?}");
    let (control, baseline) = inspect_with_peak_rss(
        &data,
        &malicious_dir().join("_controls/ok-folder"),
        tmp.path(),
    );
    assert_eq!(control.status, 0, "{}", control.stderr);
    let mut failures = Vec::new();
    for c in &bombs {
        let started = Instant::now();
        let (r, peak_kib) = inspect_with_peak_rss(&data, &c.path, tmp.path());
        let took = started.elapsed();
        if r.status != exit_code_for(&c.code) {
            failures.push(format!(
                "[{}] exited {}: {}",
                c.name,
                r.status,
                r.stderr.trim()
            ));
            continue;
        }
        match error_code(&r) {
            Ok(code) if code == c.code => {}
            other => failures.push(format!("[{}] {other:?}, want {}", c.name, c.code)),
        }
        // The control package's own peak is the baseline (the binary and its libraries).
        if peak_kib > baseline + 64 * 1024 {
            failures.push(format!(
                "[{}] peak RSS {} MiB (the control package: {} MiB)",
                c.name,
                peak_kib / 1024,
                baseline / 1024
            ));
        }
        if took > Duration::from_secs(30) {
            failures.push(format!("[{}] took {took:?}", c.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Folders git cannot hold: a hard link, a FIFO, a socket, a non-UTF-8 file name.
#[test]
fn links_and_special_files_made_at_test_time_are_rejected() {
    let doc = expected();
    let expect: BTreeMap<String, String> = doc["testTimeCases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["case"].as_str().unwrap().to_owned(),
                t["expectCode"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let control = malicious_dir().join("_controls/ok-folder");
    let make = |name: &str| -> PathBuf {
        let dir = tmp.path().join(name);
        for rel in ["APP.md", "dist/index.html"] {
            fs::create_dir_all(dir.join(rel).parent().unwrap()).unwrap();
            fs::copy(control.join(rel), dir.join(rel)).unwrap();
        }
        dir
    };
    let mut made: BTreeMap<&str, PathBuf> = BTreeMap::new();

    let d = make("folder-hardlink");
    fs::hard_link(d.join("dist/index.html"), d.join("dist/second-name.html")).unwrap();
    made.insert("folder-hardlink", d);

    let d = make("folder-fifo");
    let st = Command::new("mkfifo")
        .arg(d.join("dist/pipe"))
        .status()
        .expect("mkfifo (coreutils) is needed for the FIFO case");
    assert!(st.success());
    made.insert("folder-fifo", d);

    let d = make("folder-socket");
    let _listener = std::os::unix::net::UnixListener::bind(d.join("dist/sock")).unwrap();
    made.insert("folder-socket", d);

    let d = make("folder-non-utf8-name");
    fs::write(
        d.join("dist").join(OsStr::from_bytes(b"\xff\xfeevil.js")),
        b"evil()\n",
    )
    .unwrap();
    made.insert("folder-non-utf8-name", d);

    assert_eq!(
        made.keys().map(|k| k.to_string()).collect::<Vec<_>>(),
        expect.keys().cloned().collect::<Vec<_>>(),
        "expected.json testTimeCases and this test disagree"
    );
    let mut sb = Sandbox::new();
    let mut base = Base::new(&mut sb, tmp.path().join("data"), false);
    let mut failures = Vec::new();
    for (name, path) in &made {
        let c = Case {
            name: name.to_string(),
            path: path.clone(),
            code: expect[*name].clone(),
            install: vec!["--yes".into(), "--sideload".into()],
            setup: None,
            validate: true,
        };
        failures.extend(
            check_case(&mut sb, &mut base, &c)
                .into_iter()
                .map(|p| format!("[{name}] {p}")),
        );
    }
    let end = snapshot(&mut sb, &base.dir);
    assert_eq!(end, base.start, "state changed");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The packages the cases are built from install fine, so each case fails for its own reason.
#[test]
fn controls_install() {
    let doc = expected();
    let tmp = tempfile::tempdir().unwrap();
    let mut sb = Sandbox::new();
    let mut failures = Vec::new();
    for (i, c) in doc["controls"].as_array().unwrap().iter().enumerate() {
        let name = c["case"].as_str().unwrap();
        let path = malicious_dir().join(c["path"].as_str().unwrap());
        let data = tmp.path().join(format!("data-{i}"));
        if let Some(setup) = c["setup"].as_str() {
            assert_eq!(setup, TRUST_FIXTURE_KEY);
            sb.run_ok(
                &data,
                &[os("trust"), os("add"), fixture_pub_key().as_os_str()],
            );
        }
        let mut args: Vec<&OsStr> = vec![os("install")];
        let flags: Vec<&str> = c["install"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        args.extend(flags.iter().map(|f| os(f)));
        args.push(path.as_os_str());
        let r = sb.run(&data, &args);
        if r.status != 0 {
            failures.push(format!(
                "[{name}] {} exited {}: {}",
                path.display(),
                r.status,
                r.stderr.trim()
            ));
            continue;
        }
        let out = r.json_stdout();
        if c["setup"].as_str() == Some(TRUST_FIXTURE_KEY) && out["app"]["trust"] != "trusted" {
            failures.push(format!(
                "[{name}] installed as {}, want trusted",
                out["app"]["trust"]
            ));
        }
        let v = sb.run(&data, &[os("verify")]);
        if v.status != 0 {
            failures.push(format!("[{name}] verify after install: {}", v.stdout));
        }
    }
    let left = sb.leftovers();
    assert!(left.is_empty(), "left behind: {left:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A blob changed on disk after install is caught by `verify` (full: any change; `--quick`:
/// a size change), and verifying changes nothing.
#[test]
fn blob_tampered_after_install_is_caught_by_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let mut sb = Sandbox::new();
    sb.run_ok(
        &data,
        &[
            os("install"),
            os("--yes"),
            os("--sideload"),
            hello_app().as_os_str(),
        ],
    );
    let v = sb.run_ok(&data, &[os("verify")]).json_stdout();
    assert_eq!(v["ok"], true, "{v:#}");

    // The content of dist/ui/index.html sits, whole, inside the app's pack file.
    let rel = "dist/ui/index.html";
    let original = fs::read(hello_app().join(rel)).unwrap();
    let packs: Vec<PathBuf> = fs::read_dir(data.join("packs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(packs.len(), 1, "one install, one pack: {packs:?}");
    let pack = &packs[0];
    let meta = fs::metadata(pack).unwrap();
    assert_eq!(
        meta.permissions().mode() & 0o777,
        0o444,
        "packs are read-only"
    );
    let mut bytes = fs::read(pack).unwrap();
    let at = bytes
        .windows(original.len())
        .position(|w| w == original.as_slice())
        .expect("the file's bytes are in the pack");

    // Same size, different content.
    let mut perms = meta.permissions();
    perms.set_mode(0o644);
    fs::set_permissions(pack, perms).unwrap();
    bytes[at + original.len() / 2] ^= 0x20;
    fs::write(pack, &bytes).unwrap();
    let tampered = bytes.clone();

    let problem = |report: &Value, code: &str| -> Option<Value> {
        report["problems"]
            .as_array()?
            .iter()
            .find(|p| p["code"] == code)
            .cloned()
    };
    let before = tree(&data);
    let r = sb.run(&data, &[os("verify")]);
    assert_eq!(r.status, 1, "verify must fail: {}", r.stdout);
    let report = r.json_stdout();
    assert_eq!(report["ok"], false);
    let p = problem(&report, "blob.hash_mismatch")
        .unwrap_or_else(|| panic!("no blob.hash_mismatch: {report:#}"));
    assert_eq!(p["app"], "hello-app", "{p}");
    assert!(
        p["path"].as_str().is_some_and(|s| s.ends_with(rel)),
        "the problem names {rel}: {p}"
    );
    assert_eq!(
        tree_diff(&before, &tree(&data)),
        Vec::<String>::new(),
        "verify changed the store"
    );

    // A size change is caught without rehashing: the pack no longer has its recorded size, and
    // every file in it is reported by app and path.
    let mut grown = tampered;
    grown.extend_from_slice(b"<script>evil()</script>\n");
    fs::write(pack, &grown).unwrap();
    for args in [&["verify", "--quick"][..], &["verify"][..]] {
        let args: Vec<&OsStr> = args.iter().map(|a| os(a)).collect();
        let r = sb.run(&data, &args);
        assert_eq!(r.status, 1, "{} must fail: {}", r.what, r.stdout);
        let report = r.json_stdout();
        problem(&report, "pack.size_mismatch")
            .unwrap_or_else(|| panic!("{}: no pack.size_mismatch: {report:#}", r.what));
        let damaged: Vec<&Value> = report["problems"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["code"] == "blob.missing" && p["app"] == "hello-app")
            .collect();
        assert!(
            damaged
                .iter()
                .any(|p| p["path"].as_str().is_some_and(|s| s.ends_with(rel))),
            "{}: {report:#}",
            r.what
        );
    }
    let left = sb.leftovers();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Packages built byte by byte at test time (local/central name mismatch, overlapping entries,
/// manifest paths outside the package, a large manifest without aliases).
#[path = "malicious_packages/crafted.rs"]
mod crafted;
