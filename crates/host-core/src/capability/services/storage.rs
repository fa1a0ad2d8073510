//! `lime.storage`: key-value storage in one SQLite file per app (RuntimeCore's `AppStorage`).

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::path::Path;

use runtime_core::app_storage::{AppStorage, StorageError, DEFAULT_QUOTA_BYTES, MAX_LIST_LIMIT};
use serde_json::{json, Value};

use super::err;
use crate::capability::dispatch::{Allowed, CallError};

/// Open per-app storage files.
#[derive(Default)]
pub(super) struct StorageService {
    open: HashMap<String, AppStorage>,
}

impl StorageService {
    pub(super) fn close_app(&mut self, app: &str) {
        self.open.remove(app);
    }

    pub(super) fn call(
        &mut self,
        apps_data: &Path,
        a: &Allowed,
        args: &Value,
    ) -> Result<Value, CallError> {
        let s = match self.open.entry(a.app().to_owned()) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => {
                let dir = apps_data.join(a.app());
                v.insert(
                    AppStorage::open(&dir, DEFAULT_QUOTA_BYTES).map_err(|e| storage_err(a, e))?,
                )
            }
        };
        let key = || {
            args.get("key")
                .and_then(Value::as_str)
                .ok_or_else(|| err(a, "APP_E900", "args.key must be a string", None))
        };
        match a.method() {
            "get" => {
                let v = s.get(key()?).map_err(|e| storage_err(a, e))?;
                Ok(v.unwrap_or(Value::Null))
            }
            "set" => {
                let value = args
                    .get("value")
                    .ok_or_else(|| err(a, "APP_E900", "args.value is required", None))?;
                s.set(key()?, value).map_err(|e| storage_err(a, e))?;
                Ok(Value::Null)
            }
            "delete" => {
                let existed = s.delete(key()?).map_err(|e| storage_err(a, e))?;
                Ok(json!({ "deleted": existed }))
            }
            "list" => {
                let prefix = match args.get("prefix") {
                    None | Some(Value::Null) => "",
                    Some(Value::String(p)) => p.as_str(),
                    Some(_) => {
                        return Err(err(a, "APP_E900", "args.prefix must be a string", None))
                    }
                };
                let cursor = match args.get("cursor") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(c)) => Some(c.as_str()),
                    Some(_) => {
                        return Err(err(a, "APP_E900", "args.cursor must be a string", None))
                    }
                };
                let limit = match args.get("limit") {
                    None | Some(Value::Null) => 100,
                    Some(v) => v
                        .as_u64()
                        .filter(|n| (1..=u64::from(MAX_LIST_LIMIT)).contains(n))
                        .ok_or_else(|| err(a, "APP_E900", "args.limit must be 1..=1000", None))?
                        as u32,
                };
                let page = s
                    .list(prefix, cursor, limit)
                    .map_err(|e| storage_err(a, e))?;
                Ok(serde_json::to_value(page).unwrap_or(Value::Null))
            }
            _ => Err(err(a, "APP_E001", "unknown lime.storage method", None)),
        }
    }
}
fn storage_err(a: &Allowed, e: StorageError) -> CallError {
    let cause = match &e {
        StorageError::QuotaExceeded { .. } => "storage.quota_exceeded",
        StorageError::InvalidKey(_) => "storage.invalid_key",
        StorageError::ValueTooLarge(_) => "storage.value_too_large",
        StorageError::InvalidArgument(_) => "storage.invalid_argument",
        StorageError::Db(_) => "storage.db",
        StorageError::Io { .. } => "storage.io",
    };
    let message = match &e {
        // Never leak host paths to the app.
        StorageError::Io { .. } | StorageError::Db(_) => "the app's storage failed".to_owned(),
        other => other.to_string(),
    };
    let mut out = err(a, e.app_code(), &message, Some(cause));
    out.retryable = matches!(e, StorageError::Db(_) | StorageError::Io { .. });
    out
}
