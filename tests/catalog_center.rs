//! The app center's side of remote catalogs end to end over a LOCAL HTTPS catalog (issue 22
//! §2/§4): the host API commands the Browse page calls (`api/catalog.rs`), against a server
//! with a throwaway CA the client trusts only through `APPHOST_CATALOG_CA_FILE`.
//!
//! browse → install (review, nothing before consent) → update (permission diff) → roll back
//! (data survives); a revoked release; a channel choice; and a catalog that is down, answers
//! 500, garbage or expired metadata: stale since …, the installed app keeps its readiness and
//! still mounts.
//!
//! A catalog that swaps the publisher key of an installed app's update: flagged in browse,
//! refused without the user's acceptance, nothing changed; and uninstalling drops the app's
//! "follows" record.
//!
//! The CA setting is process-wide: the test functions hold [`CA_LOCK`].

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

/// Held by each test function for its whole run: `CA_ENV` is process-wide.
static CA_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn ca_lock() -> std::sync::MutexGuard<'static, ()> {
    CA_LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

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
    let _ca = ca_lock();
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

/// Zips a copy of `fixtures/packages/good/<fixture>` signed with `key` into the packages folder.
fn add_signed(repo: &Repo, fixture: &str, secret: &Value, tmp: &std::path::Path) {
    use host_core::foundation::limits::Limits;
    use host_core::foundation::profile::HostProfile;
    use host_core::install::inspect::{inspect, InspectOptions};
    use host_core::install::package::catalog::CatalogSelect;
    use host_core::install::package::source::resolve;
    use host_core::install::signature;
    let dest = tmp.join(format!("signed-{fixture}"));
    common::copy_dir(
        &catalog_support::repo_root()
            .join("fixtures/packages/good")
            .join(fixture),
        &dest,
    );
    let profile = HostProfile::current();
    let opts = InspectOptions::preview(Limits::default(), &profile, &[]);
    let source = resolve(&dest, &CatalogSelect::default()).unwrap();
    let insp = inspect(&source, &opts, None, &mut |_, _| {}).unwrap();
    let key = signature::parse_secret_key(secret).unwrap();
    let block = signature::sign_block(&key, &insp.manifest_hash, &insp.files_digest);
    std::fs::write(
        dest.join("app.signature.yaml"),
        signature::render_signature_file(&block),
    )
    .unwrap();
    catalog_support::zip_dir(&dest, &repo.packages.join(format!("{fixture}.zip")));
}

fn follows(dir: &DataDir) -> Value {
    let path = dir.root().join("catalogs/apps.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_swapped_publisher_key_is_a_publisher_change_and_uninstall_drops_the_follow() {
    use host_core::install::signature::{self, TrustedKey};
    use host_core::install::store::Store;
    let _ca = ca_lock();
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let dir = DataDir::at(t.join("data"));
    // The host trusts BOTH publisher keys: "a key this host trusts" is not the pinned
    // publisher of the installed app.
    let (a, b) = (
        signature::generate_key().unwrap(),
        signature::generate_key().unwrap(),
    );
    {
        let (store, _) = Store::open_locked(&dir).unwrap();
        for (key, name) in [(&a, "publisher-a"), (&b, "publisher-b")] {
            let doc = signature::public_key_json(&key.verifying_key(), name);
            store
                .add_trusted_key(&TrustedKey {
                    key_id: doc["keyId"].as_str().unwrap().to_owned(),
                    public_key: doc["publicKey"].as_str().unwrap().to_owned(),
                    name: name.to_owned(),
                })
                .unwrap();
        }
    }
    let repo = Repo::new(&t.join("publisher"));
    add_signed(&repo, "hello-app", &signature::secret_key_json(&a, "a"), t);
    repo.build();
    let server = HttpsCatalog::start(&repo.out, &t.join("certs"));
    std::env::set_var(CA_ENV, &server.ca);
    let root = std::fs::read(repo.root_file()).unwrap();
    catalogs::add(&dir, "local", &server.url, &root, catalogs::now()).unwrap();
    let s = session(&dir);

    let review = call(
        &s,
        "catalog_review_install",
        json!({"appId": "hello-app", "progressId": "p-1"}),
    );
    // The download reported its progress through the host event path, up to the signed length.
    let events = call(&s, "next_events", json!({"after": 0, "timeoutMs": 0}));
    let ours: Vec<&Value> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "install:progress" && e["payload"]["progressId"] == "p-1")
        .collect();
    assert!(!ours.is_empty(), "{events:#}");
    assert!(
        ours.len() <= 2 * 51 + 2,
        "not throttled: {} events",
        ours.len()
    );
    let download: Vec<&&Value> = ours
        .iter()
        .filter(|e| e["payload"]["phase"] == "download")
        .collect();
    let zip_len = std::fs::metadata(repo.packages.join("hello-app.zip"))
        .unwrap()
        .len();
    let last = &download.last().expect("no download progress")["payload"];
    assert_eq!(last["bytesVerified"].as_u64(), Some(zip_len), "{events:#}");
    assert_eq!(last["bytesTotal"].as_u64(), Some(zip_len), "{events:#}");
    // The download comes before the review's reading.
    let first_review = ours.iter().position(|e| e["payload"]["phase"] == "review");
    let last_download = ours
        .iter()
        .rposition(|e| e["payload"]["phase"] == "download");
    assert!(last_download < first_review, "{events:#}");
    call(
        &s,
        "install",
        json!({"reviewId": review["reviewId"], "consent": true}),
    );
    let c = card(&call(&s, "browse_catalog", json!({})), "hello-app").clone();
    assert_eq!(c["trust"], "pinned", "{c:#}");
    assert_eq!(c["installed"]["publisher"], "same", "{c:#}");
    assert_eq!(follows(&dir)["hello-app"]["catalog"], "local");

    // The catalog's 1.1.0 is signed by key B (trusted by the host, but not the pinned
    // publisher of the installed app): the card flags a publisher change.
    add_signed(
        &repo,
        "hello-app-v2",
        &signature::secret_key_json(&b, "b"),
        t,
    );
    repo.build();
    let r = call(&s, "catalog_refresh", json!({}));
    assert_eq!(r["errors"], json!([]), "{r:#}");
    let c = card(&call(&s, "browse_catalog", json!({})), "hello-app").clone();
    assert_eq!(c["trust"], "changed", "{c:#}");
    assert_eq!(c["installed"]["publisher"], "changed", "{c:#}");
    assert_eq!(c["installed"]["update"]["version"], "1.1.0", "{c:#}");
    assert_eq!(c["installed"]["update"]["publisherChanged"], true, "{c:#}");

    // Cancelling the review while its download trickles in stops the transfer: refused with
    // `catalog.download_cancelled`, the partial file removed, nothing installed.
    let before = apps(&s);
    server.set_mode("slow");
    let code = std::thread::scope(|scope| {
        let review = scope.spawn(|| {
            refused(
                &s,
                "catalog_review_install",
                json!({"appId": "hello-app", "version": "1.1.0", "progressId": "p-cancel"}),
            )
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let events = call(&s, "next_events", json!({"after": 0, "timeoutMs": 200}));
            let started = events["events"].as_array().unwrap().iter().any(|e| {
                e["payload"]["progressId"] == "p-cancel" && e["payload"]["phase"] == "download"
            });
            if started {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "no download progress");
        }
        call(&s, "cancel_review", json!({"reviewId": "p-cancel"}));
        review.join().unwrap()
    });
    server.set_mode("ok");
    assert_eq!(code, "catalog.download_cancelled");
    let downloads = dir.root().join("catalogs/downloads");
    let left: Vec<_> = std::fs::read_dir(&downloads).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(apps(&s), before);
    // Not in flight any more: the id is an unknown review.
    assert_eq!(
        refused(&s, "cancel_review", json!({"reviewId": "p-cancel"})),
        "review.not_found"
    );

    // Install: the review says so; consent alone is refused and nothing changes.
    let review = call(
        &s,
        "catalog_review_install",
        json!({"appId": "hello-app", "version": "1.1.0"}),
    );
    assert_eq!(review["publisherChange"]["status"], "changed", "{review:#}");
    assert_eq!(
        refused(
            &s,
            "install",
            json!({"reviewId": review["reviewId"], "consent": true})
        ),
        "install.publisher_changed"
    );
    assert_eq!(apps(&s), before);
    let c = card(&call(&s, "browse_catalog", json!({})), "hello-app").clone();
    assert_eq!(c["installed"]["version"], "1.0.0");
    assert_eq!(c["installed"]["publisher"], "changed");

    // With the user's explicit acceptance the update installs and key B is the new pin.
    let review = call(
        &s,
        "catalog_review_install",
        json!({"appId": "hello-app", "version": "1.1.0"}),
    );
    let updated = call(
        &s,
        "install",
        json!({"reviewId": review["reviewId"], "consent": true, "acceptPublisherChange": true}),
    );
    assert_eq!(updated["activeVersion"], "1.1.0");
    let c = card(&call(&s, "browse_catalog", json!({})), "hello-app").clone();
    assert_eq!(c["trust"], "pinned", "{c:#}");
    assert_eq!(c["installed"]["publisher"], "same", "{c:#}");

    // Uninstall drops the app's "follows" record (other records stay).
    host_core::install::remote::state::set_followed(
        &dir,
        "other-app",
        host_core::install::remote::state::Followed {
            catalog: "local".into(),
            channel: "stable".into(),
        },
    )
    .unwrap();
    call(
        &s,
        "uninstall",
        json!({"appId": "hello-app", "mode": "delete-data"}),
    );
    let f = follows(&dir);
    assert!(f.get("hello-app").is_none(), "{f:#}");
    assert_eq!(f["other-app"]["channel"], "stable", "{f:#}");
    let c = card(&call(&s, "browse_catalog", json!({})), "hello-app").clone();
    assert!(c["installed"].is_null(), "{c:#}");
    std::env::remove_var(CA_ENV);
}
