//! Token budgets (issue 19 §2 "Cost and quota"): `model.budget.<app>` in host settings is the
//! most tokens (input + output, over all model calls) one agent task of the app may use; a task
//! that passes it ends `error_max_budget` (RuntimeCore's turn machine enforces it, asked
//! through `hosting::agent_tool_policy`). Set with `apphost config model.budget.<app> <N>`,
//! removed with `apphost config model.budget.<app> --unset`.

use std::collections::BTreeMap;

/// `model.budget.<app>`: the app's token budget per task.
pub const MODEL_BUDGET_PREFIX: &str = "model.budget.";
/// The largest budget a setting may hold (a typo's extra digits are refused, not stored).
pub const MAX_TOKEN_BUDGET: u64 = 1_000_000_000_000;

/// Checks a `model.budget.*` setting: a valid app id after the prefix and a whole number of
/// tokens in `1..=MAX_TOKEN_BUDGET`. `Ok(false)` for other keys.
pub fn check_budget_setting(key: &str, value: &str) -> Result<bool, String> {
    let Some(app) = key.strip_prefix(MODEL_BUDGET_PREFIX) else {
        return Ok(false);
    };
    runtime_core::AppId::new(app).map_err(|_| format!("{key:?}: {app:?} is not a valid app id"))?;
    parse_budget(value).map(|_| true).ok_or_else(|| {
        format!(
            "{key} must be a whole number of tokens from 1 to {MAX_TOKEN_BUDGET}, not {value:?}"
        )
    })
}

/// The app's budget from `settings`, when one is set and valid.
pub fn app_budget(settings: &BTreeMap<String, String>, app: &str) -> Option<u64> {
    settings
        .get(&format!("{MODEL_BUDGET_PREFIX}{app}"))
        .and_then(|v| parse_budget(v))
}

fn parse_budget(value: &str) -> Option<u64> {
    let v = value.trim();
    if v.is_empty() || v.len() > 13 || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse::<u64>()
        .ok()
        .filter(|n| (1..=MAX_TOKEN_BUDGET).contains(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_are_whole_bounded_numbers_for_valid_apps() {
        let k = "model.budget.notes";
        assert_eq!(check_budget_setting(k, "5000"), Ok(true));
        assert_eq!(check_budget_setting(k, " 1 "), Ok(true));
        for bad in [
            "0",
            "-1",
            "1.5",
            "1e6",
            "",
            "10000000000000",
            "99999999999999999999",
        ] {
            assert!(check_budget_setting(k, bad).is_err(), "{bad:?}");
        }
        assert!(check_budget_setting("model.budget.", "5").is_err());
        assert!(check_budget_setting("model.budget.../x", "5").is_err());
        assert_eq!(check_budget_setting("model.name", "x"), Ok(false));
        let s = BTreeMap::from([(k.to_owned(), "5000".to_owned())]);
        assert_eq!(app_budget(&s, "notes"), Some(5000));
        assert_eq!(app_budget(&s, "other"), None);
    }
}
