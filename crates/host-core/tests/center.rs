//! The app center's operations (`host_core::center`) driven on a temp data dir with the
//! fixtures, as the host UI's commands call them.

mod support;

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::Path;

use host_core::center::diagnostics::{self, LiveDiagnostics};
use host_core::center::lifecycle::{self, UninstallMode};
use host_core::center::{detail, grants, settings, Center, InstallArgs, ReviewSource};
use host_core::foundation::error::ErrorCode;
use host_core::foundation::paths::DataDir;
use host_core::install::store::{AuditQuery, SecretBinding, Store};
use support::{copy_dir, fixture, install, repo_root, zip_dir};

/// Every regular file under `dir` with its bytes (empty folders do not count), `host.db` as
/// the rows of every table (its file bytes and WAL change on every read).
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                walk(base, &e.path(), out);
            } else {
                let rel = e.path().strip_prefix(base).unwrap().display().to_string();
                if !rel.starts_with("host.db") {
                    out.insert(rel, fs::read(e.path()).unwrap());
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    if dir.exists() {
        walk(dir, dir, &mut out);
        out.insert("host.db (rows)".into(), db_rows(&dir.join("host.db")));
    }
    out
}

fn db_rows(db: &Path) -> Vec<u8> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut out = String::new();
    for t in tables {
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{t}\"")).unwrap();
        let n = stmt.column_count();
        let mut rows: Vec<String> = stmt
            .query_map([], |r| {
                Ok((0..n)
                    .map(|i| format!("{:?}", r.get_ref(i).unwrap()))
                    .collect::<Vec<_>>()
                    .join("|"))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        rows.sort();
        out.push_str(&format!("{t}: {rows:?}\n"));
    }
    out.into_bytes()
}

fn setup() -> (tempfile::TempDir, DataDir, Center) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path().join("data"));
    Store::open_locked(&dir).unwrap();
    let center = Center::new(dir.clone());
    (tmp, dir, center)
}

fn consent(review_id: &str) -> InstallArgs {
    InstallArgs {
        review_id: review_id.into(),
        consent: true,
        ..InstallArgs::default()
    }
}

fn uploads_in(dir: &DataDir) -> usize {
    fs::read_dir(dir.uploads()).map(|r| r.count()).unwrap_or(0)
}

#[test]
fn review_then_consent_installs_and_the_review_is_used_once() {
    let (_t, dir, center) = setup();
    let before = snapshot(dir.root());
    let mut calls = Vec::new();
    let review = center
        .review_install(
            ReviewSource::Path(fixture("good/hello-app")),
            &mut |d, t| calls.push((d, t)),
        )
        .unwrap();
    assert_eq!(snapshot(dir.root()), before, "a review stores nothing");
    assert!(!calls.is_empty(), "progress was reported");
    let (done, total) = *calls.last().unwrap();
    assert_eq!(done, total);
    let v = serde_json::to_value(&review).unwrap();
    assert_eq!(v["mode"], "install");
    assert_eq!(v["app"]["id"], "hello-app");
    assert_eq!(v["app"]["name"], "Hello Notes");
    assert_eq!(v["trust"]["state"], "unsigned");
    assert_eq!(v["trust"]["sideload"], true);
    assert_eq!(v["needsConsent"], serde_json::json!(["notes_storage"]));
    assert_eq!(v["permissions"].as_array().unwrap().len(), 2);
    assert!(v["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["change"] == "added"));
    assert_eq!(v["blockers"], serde_json::json!([]));
    assert_eq!(v["entries"][0]["key"], "notes");
    assert!(v["storage"]["migrations"].as_array().is_some());
    assert_eq!(review.review_id.len(), 34);
    assert!(review.review_id.starts_with("r-"));

    // Without consent: refused, nothing changes, the review is still usable.
    let e = center
        .install(
            &InstallArgs {
                consent: false,
                ..consent(&review.review_id)
            },
            &mut |_, _| {},
        )
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InstallConsentRequired);
    assert_eq!(snapshot(dir.root()), before);

    let s = center
        .install(&consent(&review.review_id), &mut |_, _| {})
        .unwrap();
    assert_eq!(s.name, "hello-app");
    assert_eq!(s.active_version, "1.0.0");
    let granted = Store::open(&dir).unwrap().grants("hello-app").unwrap();
    assert!(
        granted.contains("notes_storage"),
        "consent granted the required permission"
    );
    assert!(
        !granted.contains("sync_notes"),
        "optional permissions are asked at first use"
    );

    let e = center
        .install(&consent(&review.review_id), &mut |_, _| {})
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ReviewNotFound);
    assert_eq!(
        center.cancel_review(&review.review_id).unwrap_err().code,
        ErrorCode::ReviewNotFound
    );
}

#[test]
fn an_update_review_carries_the_permission_diff_and_rollback_goes_back() {
    let (_t, dir, center) = setup();
    install(&dir, &fixture("good/hello-app"));
    let review = center
        .review_install(
            ReviewSource::Path(fixture("good/hello-app-v2")),
            &mut |_, _| {},
        )
        .unwrap();
    let v = serde_json::to_value(&review).unwrap();
    assert_eq!(v["mode"], "update");
    assert_eq!(v["fromVersion"], "1.0.0");
    assert_eq!(v["needsConsent"], serde_json::json!(["notes_files"]));
    let perms = v["permissions"].as_array().unwrap();
    let by_key = |k: &str| perms.iter().find(|p| p["key"] == k).unwrap().clone();
    assert_eq!(by_key("notes_files")["change"], "added");
    assert_eq!(by_key("notes_files")["grant"], "asked");
    assert_eq!(by_key("notes_storage")["change"], "unchanged");
    assert_eq!(by_key("notes_storage")["grant"], "kept");
    assert_eq!(v["publisherChange"], serde_json::Value::Null);

    let s = center
        .install(&consent(&review.review_id), &mut |_, _| {})
        .unwrap();
    assert_eq!(s.active_version, "1.1.0");
    let s = lifecycle::rollback(&dir, "hello-app").unwrap();
    assert_eq!(s.active_version, "1.0.0");
    assert_eq!(
        lifecycle::rollback(&dir, "nope").unwrap_err().code,
        ErrorCode::AppNotInstalled
    );
}

#[test]
fn a_blocked_review_shows_its_blocker_and_install_answers_its_code() {
    let (_t, dir, center) = setup();
    install(&dir, &fixture("good/hello-app"));
    let before = snapshot(dir.root());
    let review = center
        .review_install(
            ReviewSource::Path(fixture("good/hello-app")),
            &mut |_, _| {},
        )
        .unwrap();
    assert_eq!(review.blockers.len(), 1);
    assert_eq!(review.blockers[0].code, ErrorCode::InstallAlreadyInstalled);
    assert_eq!(
        review.permissions.len(),
        2,
        "permissions are shown all the same"
    );
    let e = center
        .install(&consent(&review.review_id), &mut |_, _| {})
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InstallAlreadyInstalled);
    assert_eq!(snapshot(dir.root()), before);
}

#[test]
fn a_package_changed_after_its_review_is_not_installed() {
    let (t, dir, center) = setup();
    let pkg = t.path().join("pkg");
    copy_dir(&fixture("good/hello-app"), &pkg);
    let before = snapshot(dir.root());
    let review = center
        .review_install(ReviewSource::Path(pkg.clone()), &mut |_, _| {})
        .unwrap();
    fs::write(
        pkg.join("dist/ui/index.html"),
        "<p>swapped after the review</p>",
    )
    .unwrap();
    let e = center
        .install(&consent(&review.review_id), &mut |_, _| {})
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InstallPlanMismatch, "{e:?}");
    assert_eq!(
        snapshot(dir.root()),
        before,
        "byte-identical after the refused install"
    );
    assert!(Store::open(&dir).unwrap().app_names().unwrap().is_empty());
}

#[test]
fn an_uploaded_zip_is_reviewed_installed_and_its_file_removed() {
    let (t, dir, center) = setup();
    let zip = t.path().join("hello.zip");
    zip_dir(&fixture("good/hello-app"), &zip, None);
    let bytes = fs::read(&zip).unwrap();
    let up = center.upload(&bytes).unwrap();
    assert_eq!(up.bytes, bytes.len() as u64);
    assert_eq!(uploads_in(&dir), 1);
    // A store change meanwhile (recovery runs on a locked open) leaves the upload alone, and
    // verify does not call it a leftover.
    let (store, _) = Store::open_locked(&dir).unwrap();
    assert!(store.verify(None, false, Vec::new()).unwrap().ok);
    drop(store);
    assert_eq!(uploads_in(&dir), 1);
    let review = center
        .review_install(ReviewSource::Upload(up.upload_id.clone()), &mut |_, _| {})
        .unwrap();
    assert_eq!(uploads_in(&dir), 1, "kept with the review");
    let e = center
        .review_install(ReviewSource::Upload(up.upload_id.clone()), &mut |_, _| {})
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::UploadNotFound, "an upload is used once");
    center
        .install(&consent(&review.review_id), &mut |_, _| {})
        .unwrap();
    assert_eq!(uploads_in(&dir), 0, "removed with the review");

    // Cancelling a review removes its upload too.
    let up = center.upload(&bytes).unwrap();
    let e = center
        .review_install(ReviewSource::Upload(up.upload_id), &mut |_, _| {})
        .unwrap();
    assert_eq!(e.blockers[0].code, ErrorCode::InstallAlreadyInstalled);
    assert_eq!(uploads_in(&dir), 1);
    center.cancel_review(&e.review_id).unwrap();
    assert_eq!(uploads_in(&dir), 0);
}

#[test]
fn a_rejected_upload_leaves_the_data_dir_byte_identical() {
    let (t, dir, center) = setup();
    let before = snapshot(dir.root());
    let zip = t.path().join("bad.zip");
    zip_dir(&fixture("malicious/manifest-missing"), &zip, None);
    let up = center.upload(&fs::read(&zip).unwrap()).unwrap();
    let e = center
        .review_install(ReviewSource::Upload(up.upload_id), &mut |_, _| {})
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ManifestMissing);
    assert_eq!(snapshot(dir.root()), before);

    // Larger than the package limit: refused while it is read, no file left.
    let (store, _) = Store::open_locked(&dir).unwrap();
    store
        .set_setting("limits.maxUnpackedBytes", Some("1000"))
        .unwrap();
    drop(store);
    let before = snapshot(dir.root());
    let e = center.upload(&vec![0u8; 1001]).unwrap_err();
    assert_eq!(e.code, ErrorCode::UploadTooLarge);
    assert_eq!(snapshot(dir.root()), before);
    assert_eq!(
        center
            .review_install(
                ReviewSource::Upload(format!("u-{}", "0".repeat(32))),
                &mut |_, _| {}
            )
            .unwrap_err()
            .code,
        ErrorCode::UploadNotFound
    );
}

#[test]
fn app_detail_shows_readme_entries_permissions_data_and_versions() {
    let (_t, dir, _center) = setup();
    install(&dir, &fixture("good/hello-app"));
    install_update(&dir, "good/hello-app-v2");
    let d = detail::app_detail(&dir, "hello-app").unwrap();
    let v = serde_json::to_value(&d).unwrap();
    assert_eq!(v["summary"]["activeVersion"], "1.1.0");
    assert!(d.readme.as_deref().unwrap().contains('#'));
    assert_eq!(v["entries"][0]["key"], "notes");
    assert!(v["entries"][0]["readiness"].is_string());
    let files = d
        .permissions
        .iter()
        .find(|p| p.key == "notes_files")
        .unwrap();
    assert!(files.granted && files.required);
    let sync = d
        .permissions
        .iter()
        .find(|p| p.key == "sync_notes")
        .unwrap();
    assert!(!sync.granted && !sync.required);
    assert_eq!(d.versions.len(), 2);
    assert_eq!(
        d.versions
            .iter()
            .filter(|v| v.active)
            .map(|v| v.version.as_str())
            .collect::<Vec<_>>(),
        ["1.1.0"]
    );
    assert_eq!(d.data.artifacts, 0);
    assert_eq!(
        detail::app_detail(&dir, "missing").unwrap_err().code,
        ErrorCode::AppNotInstalled
    );
}

fn install_update(dir: &DataDir, rel: &str) {
    support::install_with(
        dir,
        &fixture(rel),
        host_core::install::store::InstallMode::Update,
    );
}

#[test]
fn grants_are_listed_across_apps_granted_and_revoked() {
    let (_t, dir, _center) = setup();
    install(&dir, &fixture("good/hello-app"));
    install(&dir, &fixture("good/notes-viewer"));
    let all = grants::list_grants(&dir, None).unwrap();
    assert!(all.iter().any(|g| g.app_id == "hello-app"));
    assert!(all.iter().any(|g| g.app_id == "notes-viewer"));
    let one = grants::list_grants(&dir, Some("hello-app")).unwrap();
    assert!(one.iter().all(|g| g.app_id == "hello-app"));
    let row = grants::grant(&dir, "hello-app", "sync_notes").unwrap();
    assert!(row.permission.granted);
    let row = grants::revoke(&dir, "hello-app", "sync_notes").unwrap();
    assert!(!row.permission.granted);
    let before = snapshot(dir.root());
    assert_eq!(
        grants::revoke(&dir, "hello-app", "nope").unwrap_err().code,
        ErrorCode::PermissionUnknown
    );
    assert_eq!(
        grants::grant(&dir, "hello-app", "nope").unwrap_err().code,
        ErrorCode::PermissionUnknown
    );
    assert_eq!(snapshot(dir.root()), before);
}

#[test]
fn disable_and_the_uninstall_modes_show_their_plan_first() {
    let (t, dir, _center) = setup();
    install(&dir, &fixture("good/hello-app"));
    let s = lifecycle::set_enabled(&dir, "hello-app", false).unwrap();
    assert!(!s.enabled);
    let plan = lifecycle::uninstall_plan(&dir, "hello-app", UninstallMode::KeepData).unwrap();
    assert_eq!(plan.versions, ["1.0.0"]);
    let before = snapshot(dir.root());
    let e = lifecycle::uninstall(&dir, "hello-app", UninstallMode::Export, None).unwrap_err();
    assert_eq!(e.code, ErrorCode::CliUsage);
    let e = lifecycle::uninstall(
        &dir,
        "hello-app",
        UninstallMode::KeepData,
        Some(Path::new("x.zip")),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::CliUsage);
    assert_eq!(snapshot(dir.root()), before);
    let dest = t.path().join("export.zip");
    let out = lifecycle::uninstall(&dir, "hello-app", UninstallMode::Export, Some(&dest)).unwrap();
    assert!(out.exported_to.is_some());
    assert!(dest.exists());
    assert!(Store::open(&dir).unwrap().app_names().unwrap().is_empty());
}

/// The app list's cards: publisher, icon (a bounded `data:` URL read from the verified store;
/// none when missing, too large or not an image type), readiness reasons in words and the setup
/// actions that fix them.
#[test]
fn app_summaries_carry_publisher_icon_readiness_reasons_and_setup_actions() {
    let (t, dir, _center) = setup();
    let png: &[u8] = b"\x89PNG\r\n\x1a\n0000IHDR-a-tiny-test-icon";
    let make = |name: &str, extra: &str, icon: Option<(&str, Vec<u8>)>| {
        let folder = t.path().join(name);
        copy_dir(&fixture("good/hello-app"), &folder);
        let md = fs::read_to_string(folder.join("APP.md")).unwrap();
        let md = md
            .replacen("name: hello-app", &format!("name: {name}"), 1)
            .replacen("namespace: hello-app", &format!("namespace: {name}"), 1)
            .replacen("triggers:", &format!("{extra}triggers:"), 1);
        fs::write(folder.join("APP.md"), md).unwrap();
        if let Some((path, bytes)) = icon {
            fs::write(folder.join(path), bytes).unwrap();
        }
        install(&dir, &folder);
    };
    make(
        "icon-app",
        "presentation:\n  icon: ./dist/ui/icon.png\nsecrets:\n  - {key: api_token, provider: example, required: true, scope: app}\n",
        Some(("dist/ui/icon.png", png.to_vec())),
    );
    make(
        "big-icon-app",
        "presentation:\n  icon: ./dist/ui/icon.png\n",
        Some(("dist/ui/icon.png", vec![7u8; 40 * 1024])),
    );
    make(
        "svg-icon-app",
        "presentation:\n  icon: dist/ui/icon.svg\n",
        Some(("dist/ui/icon.svg", b"<svg/>".to_vec())),
    );
    let apps = Store::open(&dir).unwrap().list_apps().unwrap();
    let by = |n: &str| apps.iter().find(|a| a.name == n).unwrap().clone();

    let a = by("icon-app");
    assert_eq!(a.publisher.as_deref(), Some("AppHost Fixtures"));
    use base64::Engine;
    assert_eq!(
        a.icon.as_deref(),
        Some(
            format!(
                "data:image/png;base64,{}",
                base64::engine::general_purpose::STANDARD.encode(png)
            )
            .as_str()
        )
    );
    assert_eq!(a.readiness, "needs-setup");
    assert_eq!(
        a.readiness_reasons,
        [
            "secret api_token is not bound",
            // the fixture's own degraded check (a network-less back-up)
            "Back-up is off until you allow network access."
        ]
    );
    assert_eq!(a.setup_actions.len(), 1);
    assert_eq!(a.setup_actions[0].kind, "configure-secret");
    assert_eq!(a.setup_actions[0].target.as_deref(), Some("api_token"));
    let json = serde_json::to_value(&a).unwrap();
    assert!(json["readinessReasons"].is_array() && json["setupActions"].is_array());

    assert_eq!(
        by("big-icon-app").icon,
        None,
        "over 32 KiB: the initial is drawn instead"
    );
    assert_eq!(by("svg-icon-app").icon, None, "not an allowed image type");
    let other = by("big-icon-app");
    assert_ne!(other.readiness, "needs-setup");
    assert!(!other
        .readiness_reasons
        .contains(&"secret api_token is not bound".to_owned()));
    assert!(other.setup_actions.is_empty());
}

/// The standard's four uninstall states (§9.2) each answer a plan before they run, "Disable
/// only" included (entries hidden, package and data kept), and the manifest's
/// `storage.uninstallPolicy` picks the default the danger zone preselects (`ask`: none).
#[test]
fn the_four_uninstall_states_have_plans_and_the_policy_picks_the_default() {
    let (t, dir, _center) = setup();
    install(&dir, &fixture("good/hello-app")); // uninstallPolicy: ask
    let before = snapshot(dir.root());
    let lifecycle::LifecyclePlan::Disable(p) =
        lifecycle::plan(&dir, "hello-app", UninstallMode::Disable).unwrap()
    else {
        panic!("disable has its own plan")
    };
    assert_eq!(p.mode, "disable");
    assert_eq!(p.entries_hidden, ["notes", "settings"]);
    assert_eq!(p.versions_kept, ["1.0.0"]);
    assert!(!p.already_disabled);
    let json = serde_json::to_value(&p).unwrap();
    assert_eq!(json["entriesHidden"][0], "notes");
    for mode in [
        UninstallMode::KeepData,
        UninstallMode::DeleteData,
        UninstallMode::Export,
    ] {
        let lifecycle::LifecyclePlan::Cleanup(c) =
            lifecycle::plan(&dir, "hello-app", mode).unwrap()
        else {
            panic!("{mode:?} is an uninstall")
        };
        assert_eq!(c.versions, ["1.0.0"]);
    }
    // Disable is not an uninstall: refused, nothing changes; a plan changes nothing.
    let e = lifecycle::uninstall(&dir, "hello-app", UninstallMode::Disable, None).unwrap_err();
    assert_eq!(e.code, ErrorCode::CliUsage);
    let e = lifecycle::uninstall_plan(&dir, "hello-app", UninstallMode::Disable).unwrap_err();
    assert_eq!(e.code, ErrorCode::CliUsage);
    assert_eq!(snapshot(dir.root()), before);

    let d = detail::app_detail(&dir, "hello-app").unwrap();
    assert_eq!(d.uninstall_policy.as_deref(), Some("ask"));
    assert_eq!(d.uninstall_default, None, "ask: the user picks");
    for (policy, default) in [
        ("retain", Some(UninstallMode::KeepData)),
        ("delete", Some(UninstallMode::DeleteData)),
        ("export-then-delete", Some(UninstallMode::Export)),
    ] {
        let name = format!("policy-{policy}");
        let folder = t.path().join(&name);
        copy_dir(&fixture("good/hello-app"), &folder);
        let md = fs::read_to_string(folder.join("APP.md"))
            .unwrap()
            .replacen("name: hello-app", &format!("name: {name}"), 1)
            .replacen("namespace: hello-app", &format!("namespace: {name}"), 1)
            .replacen(
                "uninstallPolicy: ask",
                &format!("uninstallPolicy: {policy}"),
                1,
            );
        fs::write(folder.join("APP.md"), md).unwrap();
        install(&dir, &folder);
        let d = detail::app_detail(&dir, &name).unwrap();
        assert_eq!(d.uninstall_policy.as_deref(), Some(policy));
        assert_eq!(d.uninstall_default, default, "{policy}");
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(
            json["uninstallDefault"],
            serde_json::to_value(default).unwrap()
        );
    }
    lifecycle::set_enabled(&dir, "hello-app", false).unwrap();
    let lifecycle::LifecyclePlan::Disable(p) =
        lifecycle::plan(&dir, "hello-app", UninstallMode::Disable).unwrap()
    else {
        panic!()
    };
    assert!(p.already_disabled);
}

#[test]
fn the_audit_log_filters_by_app_capability_and_decision_with_a_cursor() {
    let (_t, dir, _center) = setup();
    install(&dir, &fixture("good/hello-app"));
    let store = Store::open(&dir).unwrap();
    for (cap, decision) in [
        ("lime.storage", "allow"),
        ("lime.storage", "deny"),
        ("lime.ui", "allow"),
        ("lime.storage", "allow"),
    ] {
        store
            .record_audit(
                "capability.call",
                Some("hello-app"),
                Some("1.0.0"),
                &serde_json::json!({"capability": cap, "decision": decision}),
            )
            .unwrap();
    }
    let q = |capability: Option<&str>, decision: Option<&str>, before, limit| {
        diagnostics::audit(
            &dir,
            &AuditQuery {
                app: Some("hello-app".into()),
                capability: capability.map(str::to_owned),
                decision: decision.map(str::to_owned),
                limit,
                before,
            },
        )
        .unwrap()
    };
    assert_eq!(q(Some("lime.storage"), None, None, 0).len(), 3);
    assert_eq!(q(Some("lime.storage"), Some("allow"), None, 0).len(), 2);
    assert_eq!(q(None, Some("deny"), None, 0).len(), 1);
    let page1 = q(Some("lime.storage"), None, None, 2);
    assert_eq!(page1.len(), 2);
    assert!(page1[0].id > page1[1].id, "newest first");
    let page2 = q(Some("lime.storage"), None, Some(page1[1].id), 2);
    assert_eq!(page2.len(), 1);
    assert!(page2[0].id < page1[1].id);
    let installs = diagnostics::audit(
        &dir,
        &AuditQuery {
            app: Some("other".into()),
            ..AuditQuery::default()
        },
    )
    .unwrap();
    assert!(installs.is_empty());
}

#[test]
fn verify_store_reports_a_healthy_store() {
    let (_t, dir, _center) = setup();
    install(&dir, &fixture("good/hello-app"));
    let r = diagnostics::verify_store(&dir, false).unwrap();
    assert!(r.ok, "{:?}", r.problems);
    assert!(r.bytes_hashed > 0);
}

#[test]
fn the_diagnostics_bundle_holds_no_secret_value_ref_or_name() {
    let (_t, dir, _center) = setup();
    install(&dir, &fixture("good/hello-app"));
    const REF: &str = "secretref-4f1c9a7be2d0";
    const STORED_AS: &str = "encrypted-file:app/hello-app/token/9d8e7f6a";
    const KEY_REF: &str = "keyring:model/apiKey/77aa88bb";
    let (store, _) = Store::open_locked(&dir).unwrap();
    let binding: SecretBinding = serde_json::from_value(serde_json::json!({
        "ref": REF, "storedAs": STORED_AS, "boundAt": "2026-11-23T00:00:00Z"
    }))
    .unwrap();
    let binding = SecretBinding {
        slot: "token".into(),
        ..binding
    };
    store.bind_secret("hello-app", "1.0.0", &binding).unwrap();
    store
        .write_settings(
            &[
                (
                    "model.baseUrl",
                    Some("https://user:hunter2@llm.example.com/v1"),
                ),
                ("model.apiKeyRef", Some(KEY_REF)),
            ],
            "model.set",
            &serde_json::json!({"apiKeyRef": KEY_REF}),
        )
        .unwrap();
    drop(store);
    let live = LiveDiagnostics::default();
    let b = diagnostics::diagnostics_bundle(&dir, &live).unwrap();
    assert!(b.bytes > 0);
    let mut zip = zip::ZipArchive::new(fs::File::open(&b.path).unwrap()).unwrap();
    let mut names = Vec::new();
    let mut all = String::new();
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).unwrap();
        names.push(f.name().unwrap().to_string());
        f.read_to_string(&mut all).unwrap();
    }
    names.sort();
    assert_eq!(
        names,
        [
            "audit.json",
            "bridge-refusals.json",
            "file-refusals.json",
            "host.json",
            "settings.json",
            "verify.json"
        ]
    );
    for secret in [
        REF,
        STORED_AS,
        KEY_REF,
        "9d8e7f6a",
        "hunter2",
        "app-secret/",
    ] {
        assert!(!all.contains(secret), "{secret} leaked into the bundle");
    }
    assert!(all.contains("secret.bind"), "the action is kept");
    assert!(all.contains("\"omittedSettings\": 3"), "{all}");
}

#[test]
fn trusted_keys_have_fingerprints_and_can_be_added_and_removed() {
    let (_t, dir, _center) = setup();
    let doc =
        fs::read_to_string(repo_root().join("fixtures/keys/fixture-publisher.pub.json")).unwrap();
    let keys = settings::add_trusted_key(&dir, &doc, Some("Fixtures")).unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0].key_id, "ed25519:abb7ef460b77a001");
    assert_eq!(keys[0].name, "Fixtures");
    assert!(keys[0]
        .fingerprint
        .replace(' ', "")
        .starts_with("abb7ef460b77a001"));
    assert_eq!(settings::trusted_keys(&dir).unwrap(), keys);
    let before = snapshot(dir.root());
    assert_eq!(
        settings::add_trusted_key(&dir, "not a key", None)
            .unwrap_err()
            .code,
        ErrorCode::KeyInvalid
    );
    assert_eq!(snapshot(dir.root()), before);
    assert!(
        settings::remove_trusted_key(&dir, "ed25519:abb7ef460b77a001")
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        settings::remove_trusted_key(&dir, "ed25519:abb7ef460b77a001")
            .unwrap_err()
            .code,
        ErrorCode::KeyNotFound
    );
}

#[test]
fn the_theme_is_a_setting_and_host_settings_show_it() {
    let (_t, dir, _center) = setup();
    assert_eq!(settings::host_settings(&dir).unwrap().theme, "system");
    settings::set_theme(&dir, "dark").unwrap();
    let s = settings::host_settings(&dir).unwrap();
    assert_eq!(s.theme, "dark");
    assert_eq!(s.data_dir, dir.root().display().to_string());
    assert!(s.limits["maxUnpackedBytes"].as_u64().unwrap() > 0);
    let before = snapshot(dir.root());
    assert_eq!(
        settings::set_theme(&dir, "neon").unwrap_err().code,
        ErrorCode::SettingInvalid
    );
    assert_eq!(snapshot(dir.root()), before);
}

mod dev {
    use super::*;
    use host_core::center::dev::{dev_consent, dev_status, DevOutcome, DevSession};

    fn never(_: &[host_core::install::store::PermissionChange]) -> bool {
        false
    }

    #[test]
    fn a_dev_folder_is_installed_updated_on_change_and_kept_on_a_broken_save() {
        let (t, dir, _center) = setup();
        let folder = t.path().join("app");
        copy_dir(&fixture("good/hello-app"), &folder);
        let mut s = DevSession::new(dir.clone(), &folder).unwrap();
        let DevOutcome::Committed {
            version: v1,
            first: true,
            ..
        } = s.apply(&mut never).unwrap()
        else {
            panic!("first pass installs")
        };
        assert!(v1.starts_with("1.0.0+dev."), "{v1}");
        let store = Store::open(&dir).unwrap();
        let sum = store
            .summary(
                "hello-app",
                &host_core::foundation::profile::HostProfile::current(),
            )
            .unwrap();
        assert!(sum.dev && sum.sideloaded);
        assert!(store.grants("hello-app").unwrap().contains("notes_storage"));
        assert_eq!(s.apply(&mut never).unwrap(), DevOutcome::Unchanged);

        fs::write(folder.join("dist/ui/index.html"), "<p>edited</p>").unwrap();
        let DevOutcome::Committed {
            version: v2,
            first: false,
            ..
        } = s.apply(&mut never).unwrap()
        else {
            panic!("an edit updates")
        };
        assert_ne!(v1, v2);
        let active = || {
            Store::open(&dir)
                .unwrap()
                .summary(
                    "hello-app",
                    &host_core::foundation::profile::HostProfile::current(),
                )
                .unwrap()
                .active_version
        };
        assert_eq!(active(), v2);

        // A broken manifest: findings, the last good version stays active.
        let app_md = fs::read_to_string(folder.join("APP.md")).unwrap();
        fs::write(
            folder.join("APP.md"),
            app_md.replace("---\nname:", "---\nname: ["),
        )
        .unwrap();
        let DevOutcome::Invalid(findings) = s.apply(&mut never).unwrap() else {
            panic!("a broken manifest is not installed")
        };
        assert!(!findings.is_empty());
        assert_eq!(active(), v2);
        assert_eq!(
            s.apply(&mut never).unwrap(),
            DevOutcome::Unchanged,
            "reported once"
        );
        let st = dev_status(&dir).unwrap();
        assert_eq!(st.len(), 1);
        assert_eq!(st[0].status, "invalid");
        assert_eq!(st[0].version.as_deref(), Some(v2.as_str()));
        assert!(!st[0].findings.is_empty());

        // Fixed again, with a new required permission: held without consent, installed with it.
        fs::write(folder.join("APP.md"), &app_md).unwrap();
        fs::copy(
            fixture("good/hello-app-v2/app.permissions.yaml"),
            folder.join("app.permissions.yaml"),
        )
        .unwrap();
        let DevOutcome::AwaitingConsent(perms) = s.apply(&mut never).unwrap() else {
            panic!("a widening change waits for consent")
        };
        assert_eq!(
            perms.iter().map(|p| p.key.as_str()).collect::<Vec<_>>(),
            ["notes_files"]
        );
        assert_eq!(active(), v2);
        assert_eq!(dev_status(&dir).unwrap()[0].status, "awaiting-consent");
        let DevOutcome::Committed { .. } = s.apply(&mut |_| true).unwrap() else {
            panic!("consented")
        };
        assert!(Store::open(&dir)
            .unwrap()
            .grants("hello-app")
            .unwrap()
            .contains("notes_files"));
        assert_eq!(dev_status(&dir).unwrap()[0].status, "updated");

        // Uninstalled, it stops being a dev app: a normal install of the name is not DEV.
        lifecycle::uninstall(&dir, "hello-app", UninstallMode::DeleteData, None).unwrap();
        assert!(dev_status(&dir).unwrap().is_empty());
        install(&dir, &fixture("good/hello-app"));
        let sum = Store::open(&dir)
            .unwrap()
            .summary(
                "hello-app",
                &host_core::foundation::profile::HostProfile::current(),
            )
            .unwrap();
        assert!(!sum.dev);
    }

    #[test]
    fn an_app_installed_normally_is_never_turned_into_a_dev_app() {
        let (t, dir, _center) = setup();
        install(&dir, &fixture("good/hello-app"));
        let folder = t.path().join("app");
        copy_dir(&fixture("good/hello-app"), &folder);
        fs::write(folder.join("dist/ui/index.html"), "<p>edited</p>").unwrap();
        let before = snapshot(dir.root());
        let mut s = DevSession::new(dir.clone(), &folder).unwrap();
        let e = s.apply(&mut never).unwrap_err();
        assert_eq!(e.code, ErrorCode::DevNotADevInstall);
        assert_eq!(snapshot(dir.root()), before);
        assert!(dev_status(&dir).unwrap().is_empty());
    }

    /// A widening save held by `apphost dev`, consented from the host UI: installed only while
    /// it is the change shown; a stale digest (the folder changed since) installs nothing.
    #[test]
    fn the_host_ui_consents_to_a_held_widening_change_and_a_stale_consent_is_refused() {
        let (t, dir, _center) = setup();
        let folder = t.path().join("app");
        copy_dir(&fixture("good/hello-app"), &folder);
        let mut s = DevSession::new(dir.clone(), &folder).unwrap();
        let DevOutcome::Committed { version: v1, .. } = s.apply(&mut never).unwrap() else {
            panic!("first pass installs")
        };
        fs::copy(
            fixture("good/hello-app-v2/app.permissions.yaml"),
            folder.join("app.permissions.yaml"),
        )
        .unwrap();
        let DevOutcome::AwaitingConsent(_) = s.apply(&mut never).unwrap() else {
            panic!("held")
        };
        let held = dev_status(&dir).unwrap().remove(0);
        assert_eq!(held.status, "awaiting-consent");
        assert_eq!(held.pending.len(), 1);
        let shown = held
            .pending_digest
            .clone()
            .expect("a held change has a digest");

        // Not an awaiting app, or a made-up digest: refused, nothing changes.
        let before = snapshot(dir.root());
        let e = dev_consent(&dir, "hello-app", "0000").unwrap_err();
        assert_eq!(e.code, ErrorCode::DevConsentStale);
        let e = dev_consent(&dir, "no-such-app", &shown).unwrap_err();
        assert_eq!(e.code, ErrorCode::AppNotInstalled);
        assert_eq!(snapshot(dir.root()), before);

        // The folder changes after the banner was shown: the old digest is stale.
        let html = folder.join("dist/ui/index.html");
        fs::write(&html, "<p>edited after the banner</p>").unwrap();
        let e = dev_consent(&dir, "hello-app", &shown).unwrap_err();
        assert_eq!(e.code, ErrorCode::DevConsentStale);
        let active = || {
            Store::open(&dir)
                .unwrap()
                .summary(
                    "hello-app",
                    &host_core::foundation::profile::HostProfile::current(),
                )
                .unwrap()
                .active_version
        };
        assert_eq!(active(), v1, "a stale consent installs nothing");
        let now = dev_status(&dir).unwrap().remove(0);
        assert_eq!(now.status, "awaiting-consent");
        let fresh = now.pending_digest.expect("the change as it is now");
        assert_ne!(fresh, shown);

        // Consent to the change as shown now: installed with its grant, and the dev session
        // sees it installed (no second update).
        let done = dev_consent(&dir, "hello-app", &fresh).unwrap();
        assert_eq!(done.status, "updated");
        assert!(done.pending.is_empty() && done.pending_digest.is_none());
        assert_ne!(active(), v1);
        assert_eq!(done.version.as_deref(), Some(active().as_str()));
        assert!(Store::open(&dir)
            .unwrap()
            .grants("hello-app")
            .unwrap()
            .contains("notes_files"));
        assert_eq!(s.apply(&mut never).unwrap(), DevOutcome::Unchanged);
        // Used once: the same digest again is stale.
        let e = dev_consent(&dir, "hello-app", &fresh).unwrap_err();
        assert_eq!(e.code, ErrorCode::DevConsentStale);
    }
}
