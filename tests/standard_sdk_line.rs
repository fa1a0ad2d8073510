//! Issue 19 §1: apps written for an older SDK release of the standard's compatible line install
//! and are ready (the standard's quickstart, `^0.3.0`; the shapes of its customer-support and
//! lightweight-content-ops examples, `^0.6.0` / `^0.7.0`), and an app no AppHost could serve is
//! refused with a hint that never says "update AppHost".

mod common;

use std::path::Path;

use common::{apphost_in, describe};
use serde_json::Value;

/// The standard's quickstart `APP.md` (docs/en/authoring/quickstart.md), with `sdk` as given.
fn quickstart(dir: &Path, sdk: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("APP.md"),
        format!(
            "---\nmanifestVersion: 0.3.0\nname: my-app\ndescription: A minimal local-running Agent App.\n\
             version: 0.3.0\nstatus: draft\nappType: agent-app\nruntimeTargets:\n  - local\n\
             requires:\n  sdk: \"@lime/app-sdk@{sdk}\"\nentries:\n  - key: start\n    kind: command\n\
             \x20   title: Start\n    command: /start\n---\n\n# My App\n\nA guided start from the command palette.\n"
        ),
    )
    .unwrap();
}

fn install(tmp: &Path, data: &Path, pkg: &Path) -> (bool, Value, String) {
    let out = apphost_in(tmp, data)
        .args(["install", "--yes", "--sideload"])
        .arg(pkg)
        .output()
        .unwrap();
    // An answer on stdout; a refusal as JSON on stderr.
    let json = serde_json::from_slice(&out.stdout)
        .or_else(|_| serde_json::from_slice(&out.stderr))
        .unwrap_or(Value::Null);
    (out.status.success(), json, describe(&out))
}

#[test]
fn apps_of_older_releases_of_the_compatible_line_install_ready() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, sdk) in ["^0.3.0", "^0.6.0", "^0.7.0", "^0.10.0"].iter().enumerate() {
        let data = tmp.path().join(format!("data{i}"));
        let pkg = tmp.path().join(format!("pkg{i}"));
        quickstart(&pkg, sdk);
        let (ok, _, why) = install(tmp.path(), &data, &pkg);
        assert!(ok, "{sdk}: {why}");
        let out = apphost_in(tmp.path(), &data)
            .args(["readiness", "my-app"])
            .output()
            .unwrap();
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        let text = r.to_string();
        assert!(
            !text.contains("compat.requires_unsatisfied"),
            "{sdk}: {text}"
        );
        assert_eq!(r["status"], "ready", "{sdk}: {text}");
    }
}

#[test]
fn an_sdk_no_apphost_provides_is_refused_without_an_update_hint() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    for (sdk, update_helps) in [("^0.2.0", false), ("0.6.1", false), ("^0.11.0", true)] {
        let pkg = tmp.path().join(format!("pkg-{sdk}"));
        quickstart(&pkg, sdk);
        let (ok, json, why) = install(tmp.path(), &data, &pkg);
        assert!(!ok, "{sdk}: {why}");
        assert_eq!(
            json["error"]["code"], "compat.requires_unsatisfied",
            "{sdk}: {why}"
        );
        let text = json.to_string();
        assert_eq!(
            text.contains("update AppHost"),
            update_helps,
            "{sdk}: {why}"
        );
    }
    // Nothing was installed.
    let out = apphost_in(tmp.path(), &data).arg("list").output().unwrap();
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("my-app"),
        "{}",
        describe(&out)
    );
}
