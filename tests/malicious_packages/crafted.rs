//! Packages built byte by byte at test time, from the attack review: zips whose local headers
//! disagree with their central directory or whose entries share bytes, manifest fields that name
//! files outside the package, and a large manifest without aliases. Each is installed into a data
//! directory holding `hello-app` and must fail with its code and change nothing; `validate` must
//! name the same code. Controls written by the same zip writer install, so each case fails for
//! its own reason.

use super::*;

/// The control's `APP.md`, with `extra` frontmatter lines added before the closing `---`.
fn app_md(name: &str, extra: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: \"Crafted package.\"\nversion: 1.0.0\nstatus: ready\n\
         appType: agent-app\nmanifestVersion: \"0.10.0\"\n{extra}---\n\n# {name}\n"
    )
}

/// CRC-32 (IEEE), bit by bit: test data is small.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// One entry of a hand-written stored zip.
struct RawEntry {
    /// The name in the central directory.
    central: String,
    /// The name in the local header (normally the same).
    local: String,
    data: Vec<u8>,
    /// `Some(i)`: no local header of its own; the central record points at entry `i`'s.
    shares: Option<usize>,
}

fn entry(name: &str, data: &[u8]) -> RawEntry {
    RawEntry {
        central: name.into(),
        local: name.into(),
        data: data.to_vec(),
        shares: None,
    }
}

fn put16(out: &mut Vec<u8>, v: &[u16]) {
    v.iter()
        .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
}

fn put32(out: &mut Vec<u8>, v: &[u32]) {
    v.iter()
        .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
}

/// A stored (method 0) zip, local headers then central directory then end record, as the
/// format describes them (no data descriptors, no zip64).
fn raw_zip(entries: &[RawEntry]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = vec![(0u32, 0u32, 0u32); entries.len()]; // offset, size, crc
    for (i, e) in entries.iter().enumerate() {
        if e.shares.is_some() {
            continue;
        }
        let (size, crc) = (e.data.len() as u32, crc32(&e.data));
        at[i] = (out.len() as u32, size, crc);
        put32(&mut out, &[0x0403_4b50]);
        put16(&mut out, &[20, 0, 0, 0, 0]);
        put32(&mut out, &[crc, size, size]);
        put16(&mut out, &[e.local.len() as u16, 0]);
        out.extend_from_slice(e.local.as_bytes());
        out.extend_from_slice(&e.data);
    }
    let dir_start = out.len() as u32;
    for (i, e) in entries.iter().enumerate() {
        let (offset, size, crc) = at[e.shares.unwrap_or(i)];
        put32(&mut out, &[0x0201_4b50]);
        put16(&mut out, &[(3 << 8) | 20, 20, 0, 0, 0, 0]);
        put32(&mut out, &[crc, size, size]);
        put16(&mut out, &[e.central.len() as u16, 0, 0, 0, 0]);
        put32(&mut out, &[0o100644 << 16, offset]);
        out.extend_from_slice(e.central.as_bytes());
    }
    let dir_len = out.len() as u32 - dir_start;
    let n = u16::try_from(entries.len()).expect("no zip64 in this writer");
    put32(&mut out, &[0x0605_4b50]);
    put16(&mut out, &[0, 0, n, n]);
    put32(&mut out, &[dir_len, dir_start]);
    put16(&mut out, &[0]);
    out
}

const INDEX_HTML: &[u8] = b"<!doctype html><title>crafted</title><p>crafted</p>\n";
/// 5,000 records of one 200 KiB stored entry: 1,024,000,000 bytes listed, under the 1 GiB limit.
const SHARED_RECORDS: usize = 5_000;
const SHARED_SIZE: usize = 200 * 1024;

/// The package folder of a manifest case: `APP.md` (with `extra`) and `dist/index.html`.
fn folder(root: &Path, name: &str, extra: &str) -> PathBuf {
    let dir = root.join(name);
    fs::create_dir_all(dir.join("dist")).unwrap();
    fs::write(dir.join("APP.md"), app_md(name, extra)).unwrap();
    fs::write(dir.join("dist/index.html"), INDEX_HTML).unwrap();
    dir
}

/// The zip cases, and the same zips written honestly (the controls).
fn zips(root: &Path) -> (Vec<(&'static str, PathBuf, &'static str)>, Vec<PathBuf>) {
    let write = |name: &str, entries: &[RawEntry]| -> PathBuf {
        let p = root.join(format!("{name}.zip"));
        fs::write(&p, raw_zip(entries)).unwrap();
        p
    };
    let app = |name: &str| entry("APP.md", app_md(name, "").as_bytes());

    // The central directory says dist/index.html; the local header says dist/evil.html.
    let mut renamed = entry("dist/index.html", INDEX_HTML);
    renamed.local = "dist/evil.html".into();
    let mismatch = write(
        "zip-local-name-mismatch",
        &[app("zip-local-name-mismatch"), renamed],
    );
    let mismatch_control = write(
        "zip-local-name-control",
        &[
            app("zip-local-name-control"),
            entry("dist/index.html", INDEX_HTML),
        ],
    );

    // One 200 KiB local entry, listed 5,000 times by the central directory.
    let blob = vec![b'A'; SHARED_SIZE];
    let mut shared = vec![app("zip-overlapping-entries"), entry("data/0.bin", &blob)];
    for i in 1..SHARED_RECORDS {
        shared.push(RawEntry {
            central: format!("data/{i}.bin"),
            local: String::new(),
            data: Vec::new(),
            shares: Some(1),
        });
    }
    let overlapping = write("zip-overlapping-entries", &shared);
    let overlap_control = write(
        "zip-overlap-control",
        &[app("zip-overlap-control"), entry("data/0.bin", &blob)],
    );
    (
        vec![
            (
                "zip-local-name-mismatch",
                mismatch,
                "archive.local_name_mismatch",
            ),
            (
                "zip-overlapping-entries",
                overlapping,
                "archive.overlapping_entries",
            ),
        ],
        vec![mismatch_control, overlap_control],
    )
}

/// Manifest fields that name a package file, pointing outside it; and 10,000 permissions.
fn manifests(root: &Path) -> Vec<(&'static str, PathBuf, &'static str)> {
    const BAD_PATH: &str = "manifest.invalid_package_path";
    let ui = "runtimePackage:\n  ui:\n    path: ./dist\n";
    let cases: [(&'static str, String, &'static str); 6] = [
        (
            "ui-entry-traversal",
            format!("{ui}    entry: ../../../../etc/passwd\n"),
            BAD_PATH,
        ),
        (
            "icon-traversal",
            "presentation:\n  icon: ../../../../etc/passwd\n".into(),
            BAD_PATH,
        ),
        (
            "icon-file-url",
            "presentation:\n  icon: file:///etc/passwd\n".into(),
            BAD_PATH,
        ),
        (
            "storage-migrations-outside",
            "storage:\n  namespace: x\n  migrations: ../../other-app/storage/migrations\n".into(),
            BAD_PATH,
        ),
        (
            "entry-ui-absolute",
            "entries:\n  - {key: main, kind: page, title: Main, route: /, ui: /etc}\n".into(),
            BAD_PATH,
        ),
        (
            "ten-thousand-permissions",
            // 10,000 mappings of five fields: 110,001 nodes as written, not one alias.
            std::iter::once("permissions:\n".to_owned())
                .chain((0..10_000).map(|i| {
                    format!("  - {{key: p{i}, scope: tool, access: read, required: false, reason: r}}\n")
                }))
                .collect(),
            "manifest.yaml_node_limit",
        ),
    ];
    cases
        .into_iter()
        .map(|(name, extra, code)| (name, folder(root, name, &extra), code))
        .collect()
}

#[test]
fn crafted_zips_and_manifest_paths_are_refused_with_their_code_and_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let made = tmp.path().join("made");
    fs::create_dir(&made).unwrap();
    let (zip_cases, controls) = zips(&made);
    let mut cases = zip_cases;
    cases.extend(manifests(&made));

    let mut sb = Sandbox::new();
    let mut base = Base::new(&mut sb, tmp.path().join("data"), false);
    let mut failures = Vec::new();
    for (name, path, code) in &cases {
        let c = Case {
            name: name.to_string(),
            path: path.clone(),
            code: code.to_string(),
            install: vec!["--yes".into(), "--sideload".into()],
            setup: None,
            validate: true,
        };
        let started = Instant::now();
        failures.extend(
            check_case(&mut sb, &mut base, &c)
                .into_iter()
                .map(|p| format!("[{name}] {p}")),
        );
        // Install and validate of one case: refused from the headers, nothing inflated.
        let took = started.elapsed();
        if took > Duration::from_secs(20) {
            failures.push(format!("[{name}] took {took:?}"));
        }
    }
    let end = snapshot(&mut sb, &base.dir);
    assert_eq!(end, base.start, "state changed");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));

    // The honest zips from the same writer install (and verify), in a data directory of their own.
    let data = tmp.path().join("controls");
    for control in &controls {
        let r = sb.run_ok(
            &data,
            &[
                os("install"),
                os("--yes"),
                os("--sideload"),
                control.as_os_str(),
            ],
        );
        assert!(!r.stdout.trim().is_empty(), "{}", r.what);
    }
    let v = sb.run(&data, &[os("verify")]);
    assert_eq!(v.status, 0, "{}", v.stdout);
    let listed = sb.run_ok(&data, &[os("list")]).json_stdout();
    assert_eq!(listed.as_array().map(Vec::len), Some(2), "{listed:#}");
}

/// The manifest cases without their bad field install, so the field is what is refused.
#[test]
fn crafted_manifest_controls_install() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sb = Sandbox::new();
    let data = tmp.path().join("data");
    let good = [
        "runtimePackage:\n  ui:\n    path: ./dist\n    entry: index.html\n",
        "presentation:\n  icon: data:image/png;base64,iVBORw0KGgo=\n",
        "entries:\n  - {key: main, kind: page, title: Main, route: /, ui: ./dist}\n",
        // 2,000 permissions: 22,001 nodes, well under the node limit.
        &std::iter::once("permissions:\n".to_owned())
            .chain((0..2_000).map(|i| {
                format!(
                    "  - {{key: p{i}, scope: tool, access: read, required: false, reason: r}}\n"
                )
            }))
            .collect::<String>(),
    ];
    for (i, extra) in good.iter().enumerate() {
        let dir = folder(tmp.path(), &format!("control-{i}"), extra);
        sb.run_ok(
            &data,
            &[
                os("install"),
                os("--yes"),
                os("--sideload"),
                dir.as_os_str(),
            ],
        );
    }
    let listed = sb.run_ok(&data, &[os("list")]).json_stdout();
    assert_eq!(
        listed.as_array().map(Vec::len),
        Some(good.len()),
        "{listed:#}"
    );
}
