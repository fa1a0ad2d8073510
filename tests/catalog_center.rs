//! The app center's side of remote catalogs end to end over a LOCAL HTTPS catalog (issue 22
//! §2/§4): the host API commands the Browse page calls (`api/catalog.rs`), against a server
//! with a throwaway CA the client trusts only through `APPHOST_CATALOG_CA_FILE`.
//!
//! browse → install (review, nothing before consent) → update (permission diff) → roll back
//! (data survives); a revoked release; a channel choice; and a catalog that is down, answers
//! 500, garbage or expired metadata: stale since …, the installed app keeps its readiness and
//! still mounts.
//!
//! One test function: the CA setting is process-wide.

mod catalog_support;
mod common;

use catalog_support::https::HttpsCatalog;
use catalog_support::{expired, Repo};
use host_core::api::{self, LinkOpener, Session, SessionConfig};
use host_core::foundation::paths::DataDir;
use host_core::hosting::surface::origin::OriginStyle;
use host_core::hosting::surface::serve::ServeContext;
use host_core::install::remote::catalogs;
use serde_json::{json, Value};

const CA_ENV: &str = "APPHOST_CATALOG_CA_FILE";

fn session(dir: &DataDir) -> Session {
    Session::new(
        dir.clone(),
        SessionConfig {
            serve: ServeContext {
                style: OriginStyle::Scheme,
                frame_ancestors: vec!["tauri://localhost".into()],
            },
            links: LinkOpener::Page,
            launch: None,
        },
    )
}

fn call(s: &Session, command: &str, args: Value) -> Value {
    api::call(s, command, args).unwrap_or_else(|e| panic!("{command}: {e:?}"))
}

fn refused(s: &Session, command: &str, args: Value) -> String {
    match api::call(s, command, args) {
        Ok(v) => panic!("{command} answered {v}"),
        Err(e) => e.code.as_str().to_owned(),
    }
}

fn card<'a>(browse: &'a Value, app: &str) -> &'a Value {
    browse["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["appId"] == app)
        .unwrap_or_else(|| panic!("no card for {app}: {browse:#}"))
}

fn apps(s: &Session) -> Value {
    call(s, "list_apps", Value::Null)
}

/// The installed app as `list_apps` shows it, and whether its entry still mounts.
fn installed_and_runs(s: &Session) -> (Value, bool) {
    let list = apps(s);
    let app = list
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "hello-app")
        .cloned()
        .unwrap();
    let mounted = api::call(
        s,
        "mount_entry",
        json!({"appId": "hello-app", "entryKey": "notes"}),
    );
    if let Ok(m) = &mounted {
        call(s, "unmount", json!({"mountId": m["mountId"]}));
    }
    (app, mounted.is_ok())
}

#[test]
fn browse_install_update_roll_back_and_stale_catalogs_over_local_https() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let repo = Repo::new(&t.join("publisher"));
    repo.add("hello-app");
    repo.build();
    let mut server = HttpsCatalog::start(&repo.out, &t.join("certs"));
    assert!(
        server.url.starts_with("https://127.0.0.1:"),
        "{}",
        server.url
    );
    let dir = DataDir::at(t.join("data"));
    let root = std::fs::read(repo.root_file()).unwrap();

    // Verification is never off: without the test CA the HTTPS catalog is refused, and
    // nothing is saved.
    std::env::remove_var(CA_ENV);
    let e = catalogs::add(&dir, "local", &server.url, &root, catalogs::now()).unwrap_err();
    assert_eq!(e.code.as_str(), "catalog.fetch_failed", "{e:?}");
    assert!(catalogs::list(&dir, catalogs::now()).unwrap().is_empty());

    std::env::set_var(CA_ENV, &server.ca);
    catalogs::add(&dir, "local", &server.url, &root, catalogs::now()).unwrap();
    let s = session(&dir);

    // Browse: the catalog is fresh; the card has publisher, trust, permissions, readiness.
    let list = call(&s, "catalog_list", Value::Null);
    assert_eq!(list[0]["stale"], false, "{list:#}");
    assert!(list[0]["refreshedAt"].is_string(), "{list:#}");
    let b = call(&s, "browse_catalog", json!({}));
    let c = card(&b, "hello-app");
    // The fixture packages are unsigned (the catalog metadata is signed, not the package).
    assert_eq!(c["trust"], "unknown", "{c:#}");
    assert_eq!(c["readiness"]["status"], "compatible", "{c:#}");
    assert_eq!(c["offered"]["version"], "1.0.0");
    assert_eq!(c["permissions"], json!(["notes_storage", "sync_notes"]));
    assert!(c["installed"].is_null());
    assert_eq!(
        call(&s, "browse_catalog", json!({"text": "no such thing"}))["apps"],
        json!([])
    );

    // Install goes through the review sheet: nothing is installed before consent.
    let review = call(&s, "catalog_review_install", json!({"appId": "hello-app"}));
    assert_eq!(review["mode"], "install");
    assert_eq!(review["app"]["version"], "1.0.0");
    assert_eq!(apps(&s), json!([]));
    let id = review["reviewId"].clone();
    assert_eq!(
        refused(&s, "install", json!({"reviewId": id, "consent": false})),
        "install.consent_required"
    );
    assert_eq!(apps(&s), json!([]));
    let installed = call(&s, "install", json!({"reviewId": id, "consent": true}));
    assert_eq!(installed["activeVersion"], "1.0.0");
    let downloads = dir.root().join("catalogs/downloads");
    assert_eq!(std::fs::read_dir(&downloads).unwrap().count(), 0);
    let c = card(&call(&s, "browse_catalog", json!({})), "hello-app").clone();
    assert_eq!(c["installed"]["version"], "1.0.0", "{c:#}");
    assert_eq!(c["installed"]["follows"], true);
    assert_eq!(c["installed"]["channel"], "stable");
    assert!(c["installed"]["update"].is_null());

    // The app's data, which an update and a roll back must keep.
    let data_file = dir.apps_data().join("hello-app").join("kept-note.txt");
    std::fs::create_dir_all(data_file.parent().unwrap()).unwrap();
    std::fs::write(&data_file, b"remember me").unwrap();

    // The publisher ships 1.1.0, which asks for one more permission.
    repo.add("hello-app-v2");
    repo.build();
    let r = call(&s, "catalog_refresh", json!({}));
    assert_eq!(r["errors"], json!([]), "{r:#}");
    let c = card(&call(&s, "browse_catalog", json!({})), "hello-app").clone();
    let update = &c["installed"]["update"];
    assert_eq!(update["version"], "1.1.0", "{c:#}");
    assert_eq!(update["permissionsAdded"], json!(["notes_files"]));
    assert_eq!(update["permissionsRemoved"], json!([]));

    // Update: the review shows the update and the new permission; consent installs it.
    let review = call(
        &s,
        "catalog_review_install",
        json!({"appId": "hello-app", "version": "1.1.0", "catalog": "local"}),
    );
    assert_eq!(review["mode"], "update");
    assert_eq!(review["fromVersion"], "1.0.0");
    assert!(
        review["permissions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p.to_string().contains("notes_files")),
        "{review:#}"
    );
    assert_eq!(apps(&s)[0]["activeVersion"], "1.0.0");
    let updated = call(
        &s,
        "install",
        json!({"reviewId": review["reviewId"], "consent": true}),
    );
    assert_eq!(updated["activeVersion"], "1.1.0");
    assert_eq!(updated["previousVersion"], "1.0.0");
    let c = card(&call(&s, "browse_catalog", json!({})), "hello-app").clone();
    assert!(c["installed"]["update"].is_null(), "{c:#}");
    assert_eq!(c["installed"]["previousVersion"], "1.0.0");

    // Roll back: the previous version is active again, the data is still there, and the
    // catalog offers 1.1.0 again.
    let back = call(&s, "rollback", json!({"appId": "hello-app"}));
    assert_eq!(back["activeVersion"], "1.0.0");
    assert_eq!(std::fs::read(&data_file).unwrap(), b"remember me");
    let c = card(&call(&s, "browse_catalog", json!({})), "hello-app").clone();
    assert_eq!(c["installed"]["update"]["version"], "1.1.0", "{c:#}");

    // A revoked release: flagged on the card, not offered, refused by name, nothing changes.
    std::fs::write(
        repo.packages.join("hello-app-v2.release.json"),
        r#"{"revoked": {"reason": "leaks notes"}}"#,
    )
    .unwrap();
    repo.build();
    call(&s, "catalog_refresh", json!({}));
    let c = card(&call(&s, "browse_catalog", json!({})), "hello-app").clone();
    let v2 = c["releases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["version"] == "1.1.0")
        .unwrap();
    assert_eq!(v2["revoked"], "leaks notes", "{c:#}");
    assert_eq!(c["offered"]["version"], "1.0.0");
    assert!(c["installed"]["update"].is_null());
    let before = apps(&s);
    assert_eq!(
        refused(
            &s,
            "catalog_review_install",
            json!({"appId": "hello-app", "version": "1.1.0"})
        ),
        "catalog.release_revoked"
    );
    assert_eq!(apps(&s), before);

    // Channel choice: a beta channel with 1.2.0; the card offers it once the app follows beta.
    repo.add("hello-app-v3");
    std::fs::write(
        repo.packages.join("hello-app-v3.release.json"),
        r#"{"channel": "beta"}"#,
    )
    .unwrap();
    repo.build();
    call(&s, "catalog_refresh", json!({}));
    let c = card(&call(&s, "browse_catalog", json!({})), "hello-app").clone();
    assert_eq!(c["channels"], json!(["beta", "stable"]), "{c:#}");
    assert!(c["installed"]["update"].is_null());
    assert_eq!(
        refused(
            &s,
            "catalog_set_channel",
            json!({"appId": "hello-app", "catalog": "local", "channel": "nightly"})
        ),
        "catalog.release_not_found"
    );
    let b = call(
        &s,
        "catalog_set_channel",
        json!({"appId": "hello-app", "catalog": "local", "channel": "beta"}),
    );
    let c = card(&b, "hello-app");
    assert_eq!(c["installed"]["channel"], "beta");
    assert_eq!(c["installed"]["update"]["version"], "1.2.0", "{c:#}");

    // Registry failure: HTTP 500, garbage, expired metadata, down. Each refresh is refused,
    // the catalog says since when it is stale, and the installed app is untouched and runs.
    let (app_before, runs) = installed_and_runs(&s);
    assert!(runs);
    let mut first_stale_since: Option<Value> = None;
    for failure in ["500", "garbage", "expired", "down"] {
        match failure {
            "expired" => {
                server.set_mode("ok");
                repo.build_with(&expired("timestamp"));
            }
            "down" => server.stop(),
            mode => server.set_mode(mode),
        }
        let r = call(&s, "catalog_refresh", json!({}));
        let code = r["errors"][0]["code"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            code.starts_with("catalog."),
            "{failure}: refresh answered {r:#}"
        );
        let info = &r["catalogs"][0];
        assert_eq!(info["stale"], true, "{failure}: {info:#}");
        assert!(info["staleSince"].is_string(), "{failure}: {info:#}");
        assert_eq!(info["lastError"]["code"], code.as_str());
        // "Stale since" is the first failure, not the latest.
        let since = info["staleSince"].clone();
        assert_eq!(first_stale_since.get_or_insert(since.clone()), &since);
        let b = call(&s, "browse_catalog", json!({}));
        assert_eq!(card(&b, "hello-app")["stale"], true);
        let (app_now, runs) = installed_and_runs(&s);
        assert_eq!(app_now, app_before, "{failure} changed the installed app");
        assert!(runs, "{failure}: the installed app no longer mounts");
        // Nothing can be installed from a stale catalog; nothing changes.
        let code = refused(&s, "catalog_review_install", json!({"appId": "hello-app"}));
        assert!(code.starts_with("catalog."), "{failure}: {code}");
        assert_eq!(installed_and_runs(&s).0, app_before);
    }
    std::env::remove_var(CA_ENV);
}
