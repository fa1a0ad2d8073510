//! The generic settings writer (`Store::set_setting`: `apphost config KEY VALUE|--unset` and
//! the MCP tool registry) refuses every key under a prefix the store keeps for its own audited
//! per-app rows (secret and knowledge bindings, network grants, remote allowances, service
//! health, dev markers) with `setting.reserved`, before anything is written: a forged network or
//! remote allowance stays absent, a real one (or a crash record) cannot be cleared around its
//! audited path, and no `setting` audit row is written. The CLI's side is
//! `tests/cli_config_reserved.rs` at the repository root.

mod support;

use std::path::PathBuf;

use host_core::foundation::paths::DataDir;
use host_core::install::store::{
    reserved_setting_prefix, KnowledgeBinding, SecretBinding, Store, RESERVED_SETTING_PREFIXES,
};
use host_core::ErrorCode;
use serde_json::Value;

const APP: &str = "doc-parser";

fn doc_parser() -> PathBuf {
    support::repo_root().join("fixtures/apps/doc-parser")
}

/// A data dir with the doc-parser sample installed, and its store (locked).
fn installed() -> (tempfile::TempDir, Store) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path());
    support::install(&dir, &doc_parser());
    let (store, _) = Store::open_locked(&dir).unwrap();
    (tmp, store)
}

/// Every row the audited paths write for `APP`'s `parser` service, through those paths.
fn write_every_family(store: &Store) {
    let version = store.active_app(APP).unwrap().version;
    assert!(store.grant_network(APP, &version, "parser").unwrap());
    assert!(store
        .allow_remote(APP, &version, "parser", "https://api.example.com")
        .unwrap());
    store
        .record_service_crash(APP, &version, "parser", 1_000, "service.exited; 1")
        .unwrap();
    store
        .bind_knowledge(
            APP,
            &version,
            &KnowledgeBinding {
                template: "notes".into(),
                folder: "/tmp/notes".into(),
                bound_at: "2026-11-26T00:00:00Z".into(),
            },
        )
        .unwrap();
    store
        .bind_secret(
            APP,
            &version,
            &SecretBinding {
                slot: "token".into(),
                handle: "ref-1".into(),
                stored_as: "encrypted-file:app/doc-parser/token/1".into(),
                bound_at: "2026-11-26T00:00:00Z".into(),
            },
        )
        .unwrap();
}

fn setting_audits(store: &Store) -> usize {
    store
        .audit_log(None, 10_000)
        .unwrap()
        .iter()
        .filter(|a| a["action"] == "setting")
        .count()
}

#[test]
fn the_reserved_prefixes_cover_every_row_the_audited_paths_write() {
    assert_eq!(
        RESERVED_SETTING_PREFIXES,
        [
            "app-secret/",
            "app-knowledge/",
            "app-network/",
            "app-remote/",
            "app-service-health/",
            "dev-app/",
        ]
    );
    let (_tmp, store) = installed();
    let before = store.settings().unwrap();
    write_every_family(&store);
    let added: Vec<String> = store
        .settings()
        .unwrap()
        .into_keys()
        .filter(|k| !before.contains_key(k))
        .collect();
    assert_eq!(added.len(), 5, "{added:?}");
    for key in &added {
        assert!(
            reserved_setting_prefix(key).is_some(),
            "{key} is written by an audited path but not reserved"
        );
    }
    // Not reserved: the settings `apphost config` is for, and look-alikes.
    for key in [
        "limits.maxFiles",
        "model.budget.doc-parser",
        "tools.grants.doc-parser",
        "app-networks/x",
        "xapp-network/doc-parser/parser",
    ] {
        assert_eq!(reserved_setting_prefix(key), None, "{key}");
    }
}

#[test]
fn a_forged_row_under_each_reserved_prefix_is_refused_and_nothing_changes() {
    let (_tmp, store) = installed();
    let before = store.settings().unwrap();
    let audits = store.audit_log(None, 10_000).unwrap().len();
    for prefix in RESERVED_SETTING_PREFIXES {
        for key in [
            format!("{prefix}{APP}/parser"),
            format!("{prefix}{APP}/notes"),
            format!("{prefix}{APP}/token"),
            format!("{prefix}{APP}"),
            prefix.to_owned(),
        ] {
            for value in [
                "1",
                "https://api.example.com",
                "2026-11-26T00:00:00Z",
                r#"{"folder":"/","boundAt":"x"}"#,
                r#"{"ref":"r","storedAs":"encrypted-file:x","boundAt":"x"}"#,
                "{}",
            ] {
                let err = store.set_setting(&key, Some(value)).unwrap_err();
                assert_eq!(err.code, ErrorCode::SettingReserved, "{key} = {value}");
                assert_eq!(err.details["key"], Value::from(key.as_str()));
                assert_eq!(err.details["prefix"], Value::from(prefix));
            }
        }
    }
    assert_eq!(store.settings().unwrap(), before, "nothing was written");
    assert_eq!(store.audit_log(None, 10_000).unwrap().len(), audits);
    // The allowances are still absent where they are enforced.
    assert!(!store.network_granted(APP, "parser").unwrap());
    assert_eq!(store.remote_allowed_origin(APP, "parser").unwrap(), None);
    assert!(store.service_health(APP).unwrap().is_empty());
    assert!(store.knowledge_bindings(APP).unwrap().is_empty());
    assert!(store.secret_bindings(APP).unwrap().is_empty());
}

#[test]
fn an_audited_row_cannot_be_cleared_through_the_generic_setter() {
    let (_tmp, store) = installed();
    write_every_family(&store);
    let before = store.settings().unwrap();
    let rows: Vec<&String> = before
        .keys()
        .filter(|k| reserved_setting_prefix(k).is_some())
        .collect();
    assert_eq!(rows.len(), 5, "{rows:?}");
    let audits = setting_audits(&store);
    for key in rows {
        let err = store.set_setting(key, None).unwrap_err();
        assert_eq!(err.code, ErrorCode::SettingReserved, "{key} --unset");
        let err = store.set_setting(key, Some("1")).unwrap_err();
        assert_eq!(err.code, ErrorCode::SettingReserved, "{key} = 1");
    }
    assert_eq!(store.settings().unwrap(), before, "nothing was removed");
    assert_eq!(setting_audits(&store), audits);
    assert!(store.network_granted(APP, "parser").unwrap());
    assert_eq!(
        store
            .remote_allowed_origin(APP, "parser")
            .unwrap()
            .as_deref(),
        Some("https://api.example.com")
    );
    assert_eq!(store.service_health(APP).unwrap().len(), 1);
    assert_eq!(store.knowledge_bindings(APP).unwrap().len(), 1);
    assert_eq!(store.secret_bindings(APP).unwrap().len(), 1);
}

#[test]
fn the_audited_paths_still_write_and_remove_their_rows_with_their_own_audit() {
    let (_tmp, store) = installed();
    write_every_family(&store);
    assert!(store.revoke_network(APP, None, "parser").unwrap());
    assert!(!store.revoke_network(APP, None, "parser").unwrap());
    assert!(store.revoke_remote(APP, None, "parser").unwrap());
    assert!(!store.revoke_remote(APP, None, "parser").unwrap());
    assert!(store.reset_service_health(APP, "parser", "test").unwrap());
    assert!(!store.reset_service_health(APP, "parser", "test").unwrap());
    assert!(store
        .unbind_knowledge(APP, None, "notes")
        .unwrap()
        .is_some());
    assert!(store
        .unbind_knowledge(APP, None, "notes")
        .unwrap()
        .is_none());
    assert!(store.unbind_secret(APP, None, "token").unwrap().is_some());
    assert!(store.unbind_secret(APP, None, "token").unwrap().is_none());
    assert!(store
        .settings()
        .unwrap()
        .keys()
        .all(|k| reserved_setting_prefix(k).is_none()));
    let audit = store.audit_log(Some(APP), 10_000).unwrap();
    for action in [
        "service.network_revoke",
        "service.remote_revoke",
        "service.reset",
        "knowledge.unbind",
        "secret.unbind",
    ] {
        let rows: Vec<&Value> = audit.iter().filter(|a| a["action"] == action).collect();
        assert_eq!(rows.len(), 1, "one {action} for one removal: {audit:?}");
        assert_eq!(rows[0]["app"], APP);
    }
}
