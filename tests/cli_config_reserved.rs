//! `apphost config KEY VALUE` and `apphost config KEY --unset` through the real binary refuse
//! every key under a prefix the host keeps for its own audited per-app rows
//! (`setting.reserved`, exit 2): a forged network or remote allowance stays absent, a recorded
//! crash or a real grant is not cleared, and host.db keeps the same settings and audit rows.
//! The store's side is `crates/host-core/tests/settings_reserved.rs`.

mod common;

use common::describe;
use common::services_cli::{ServicesHost, DOC_PARSER as APP};
use host_core::foundation::paths::DataDir;
use host_core::install::store::{Store, RESERVED_SETTING_PREFIXES};

fn store(h: &ServicesHost) -> Store {
    Store::open_for_calls(&DataDir::at(h.data.clone())).unwrap()
}

/// Every audit row: a refusal writes none.
fn audit_rows(store: &Store) -> usize {
    store.audit_log(None, 10_000).unwrap().len()
}

fn refused(h: &ServicesHost, args: &[&str]) {
    let out = h.run(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", describe(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("setting.reserved"),
        "{args:?}: {}",
        describe(&out)
    );
}

#[test]
fn config_refuses_a_forged_row_under_each_reserved_prefix_and_changes_nothing() {
    let h = ServicesHost::installed(&[]);
    let (before, audits) = (store(&h).settings().unwrap(), audit_rows(&store(&h)));
    for prefix in RESERVED_SETTING_PREFIXES {
        let key = format!("{prefix}{APP}/parser");
        for value in ["1", "https://api.example.com", "{}"] {
            refused(&h, &["config", &key, value]);
        }
        refused(&h, &["config", &key, "--unset"]);
    }
    let s = store(&h);
    assert_eq!(s.settings().unwrap(), before, "nothing was written");
    assert_eq!(audit_rows(&s), audits);
    assert!(!s.network_granted(APP, "parser").unwrap());
    assert_eq!(s.remote_allowed_origin(APP, "parser").unwrap(), None);
    assert!(s.service_health(APP).unwrap().is_empty());
    // The ordinary settings still go through.
    let out = h.json(&["config", "limits.maxFiles", "1000"]);
    assert_eq!(out["value"], "1000", "{out}");
}

#[test]
fn config_unset_cannot_clear_a_crash_record_or_a_grant() {
    let h = ServicesHost::installed(&[]);
    {
        let (s, _) = Store::open_locked(&DataDir::at(h.data.clone())).unwrap();
        let version = s.active_app(APP).unwrap().version;
        assert!(s.grant_network(APP, &version, "parser").unwrap());
        s.record_service_crash(APP, &version, "parser", 1_000, "service.exited; 7")
            .unwrap();
    }
    let (before, audits) = (store(&h).settings().unwrap(), audit_rows(&store(&h)));
    for key in [
        format!("app-network/{APP}/parser"),
        format!("app-service-health/{APP}/parser"),
    ] {
        assert!(before.contains_key(&key), "{key}: {before:?}");
        refused(&h, &["config", &key, "--unset"]);
    }
    let s = store(&h);
    assert_eq!(s.settings().unwrap(), before, "nothing was removed");
    assert!(s.network_granted(APP, "parser").unwrap());
    assert_eq!(s.service_health(APP).unwrap().len(), 1);
    assert_eq!(audit_rows(&s), audits);
}
