//! Per-app token budgets in host settings (`model.budget.<app>`, issue 19 §2): what the store
//! accepts, what it refuses (stable `setting.invalid`, nothing stored), and that the agent's
//! policy (`StoreToolPolicy::token_budget`, RuntimeCore's hook) reads exactly the app's own.

use host_core::foundation::paths::DataDir;
use host_core::hosting::agent_tool_policy::StoreToolPolicy;
use host_core::install::store::Store;
use host_core::ErrorCode;
use runtime_core::tools::ToolPolicy;
use runtime_core::AppId;

#[test]
fn an_app_budget_is_stored_read_by_the_policy_and_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path());
    let (store, _lock) = Store::open_locked(&dir).unwrap();
    let policy = StoreToolPolicy::new(dir.clone());
    let (notes, other) = (AppId::new("notes").unwrap(), AppId::new("other").unwrap());
    assert_eq!(policy.token_budget(&notes), None);
    store
        .set_setting("model.budget.notes", Some("5000"))
        .unwrap();
    assert_eq!(policy.token_budget(&notes), Some(5000));
    assert_eq!(
        policy.token_budget(&other),
        None,
        "one app's budget is not another's"
    );
    store.set_setting("model.budget.notes", None).unwrap();
    assert_eq!(policy.token_budget(&notes), None);
}

#[test]
fn bad_budgets_are_refused_with_setting_invalid_and_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = DataDir::at(tmp.path());
    let (store, _lock) = Store::open_locked(&dir).unwrap();
    store
        .set_setting("model.budget.notes", Some("100"))
        .unwrap();
    let before = store.settings().unwrap();
    for (key, value) in [
        ("model.budget.notes", "0"),
        ("model.budget.notes", "-5"),
        ("model.budget.notes", "1e9"),
        ("model.budget.notes", "99999999999999999999999"),
        ("model.budget.notes", "lots"),
        ("model.budget.", "10"),
        ("model.budget.../escape", "10"),
        ("model.budget.Bad App", "10"),
    ] {
        let err = store.set_setting(key, Some(value)).unwrap_err();
        assert_eq!(err.code, ErrorCode::SettingInvalid, "{key} = {value}");
    }
    assert_eq!(store.settings().unwrap(), before);
    assert_eq!(
        StoreToolPolicy::new(dir).token_budget(&AppId::new("notes").unwrap()),
        Some(100)
    );
}
