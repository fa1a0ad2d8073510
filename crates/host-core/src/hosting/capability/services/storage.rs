//! `lime.storage`: one SQLite file per app (RuntimeCore's `AppStorage`): key-value methods, and
//! row methods on the tables the app's `storage/schema.json` declares.
//!
//! On the first call for an app version (after a start, an update or a rollback) the service
//! opens the file with the version's quota and applies its pending migrations: the ones the
//! install review showed (`Store::storage_plan`), read as verified bytes (`Store::read_file`),
//! re-hashed against the plan by RuntimeCore right before they run, all in one transaction. A
//! batch that fails is rolled back and recorded (`Store::record_storage_failure`): readiness
//! then shows that version `blocked` with the reason, and the call answers `APP_E202`.

use std::path::Path;

use runtime_core::app_handles::AppHandles;
use runtime_core::app_storage::migrate::MAX_MIGRATION_BYTES;
use runtime_core::app_storage::{
    AppStorage, Migration, MigrationFailure, Query, StorageError, TableDecl, MAX_LIST_LIMIT,
    MAX_QUERY_LIMIT,
};
use serde_json::{json, Map, Value};

use super::err;
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::dispatch::{Allowed, CallError};
use crate::hosting::capability::method::StorageMethod as M;
use crate::install::readiness::StorageFailure;
use crate::install::store::Store;

/// One app's open storage, for the version it was migrated to.
struct OpenApp {
    version: String,
    storage: AppStorage,
    tables: Vec<TableDecl>,
}

/// Open per-app storage files.
#[derive(Default)]
pub(super) struct StorageService {
    open: AppHandles<OpenApp>,
}

impl StorageService {
    pub(super) fn close_app(&mut self, app: &str) {
        self.open.close(app);
    }

    /// Opens `a.app()`'s storage for `a.version()`, applying pending migrations first.
    fn prepare(
        &mut self,
        store: &Store,
        apps_data: &Path,
        a: &Allowed,
    ) -> Result<&mut OpenApp, CallError> {
        self.open.get_or_reopen(
            a.app(),
            |o| o.version == a.version(),
            || open_version(store, apps_data, a),
        )
    }

    pub(super) fn call(
        &mut self,
        store: &Store,
        apps_data: &Path,
        a: &Allowed,
        method: M,
        args: &Value,
    ) -> Result<Value, CallError> {
        let app = self.prepare(store, apps_data, a)?;
        let s = &mut app.storage;
        let tables = &app.tables;
        let bad = |m: &str| {
            err(
                a,
                ErrorCode::InvalidArgument,
                m,
                Some("storage.invalid_argument"),
            )
        };
        let key = || {
            args.get("key")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("args.key must be a string"))
        };
        let table = || {
            args.get("table")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("args.table must be a string"))
        };
        let object = |field: &str| {
            args.get(field)
                .and_then(Value::as_object)
                .ok_or_else(|| bad(&format!("args.{field} must be an object")))
        };
        let id = || args.get("id").ok_or_else(|| bad("args.id is required"));
        let se = |e: StorageError| storage_err(a, e);
        match method {
            M::Get => Ok(s.get(key()?).map_err(se)?.unwrap_or(Value::Null)),
            M::Set => {
                let value = args
                    .get("value")
                    .ok_or_else(|| bad("args.value is required"))?;
                s.set(key()?, value).map_err(se)?;
                Ok(Value::Null)
            }
            M::Delete => Ok(json!({ "deleted": s.delete(key()?).map_err(se)? })),
            M::List => {
                let prefix = opt_str(args, "prefix").map_err(|m| bad(&m))?.unwrap_or("");
                let cursor = opt_str(args, "cursor").map_err(|m| bad(&m))?;
                let limit = opt_limit(args, MAX_LIST_LIMIT).map_err(|m| bad(&m))?;
                let page = s.list(prefix, cursor, limit).map_err(se)?;
                Ok(serde_json::to_value(page).unwrap_or(Value::Null))
            }
            M::TableGet => {
                let row = s.table_get(tables, table()?, id()?).map_err(se)?;
                Ok(row.map_or(Value::Null, Value::Object))
            }
            M::TableQuery => {
                let filter = match args.get("where") {
                    None | Some(Value::Null) => Map::new(),
                    Some(Value::Object(m)) => m.clone(),
                    Some(_) => return Err(bad("args.where must be an object")),
                };
                let q = Query {
                    filter,
                    order_by: opt_str(args, "orderBy")
                        .map_err(|m| bad(&m))?
                        .map(str::to_owned),
                    descending: match args.get("descending") {
                        None | Some(Value::Null) => false,
                        Some(Value::Bool(b)) => *b,
                        Some(_) => return Err(bad("args.descending must be a boolean")),
                    },
                    limit: opt_limit(args, MAX_QUERY_LIMIT).map_err(|m| bad(&m))?,
                    offset: match args.get("offset") {
                        None | Some(Value::Null) => 0,
                        Some(v) => v
                            .as_u64()
                            .ok_or_else(|| bad("args.offset must be a whole number"))?,
                    },
                };
                let rows = s.table_query(tables, table()?, &q).map_err(se)?;
                Ok(json!({ "rows": rows }))
            }
            M::TableInsert => {
                let id = s
                    .table_insert(tables, table()?, object("row")?)
                    .map_err(se)?;
                Ok(json!({ "id": id }))
            }
            M::TableUpdate => {
                let updated = s
                    .table_update(tables, table()?, id()?, object("patch")?)
                    .map_err(se)?;
                Ok(json!({ "updated": updated }))
            }
            M::TableDelete => {
                let deleted = s.table_delete(tables, table()?, id()?).map_err(se)?;
                Ok(json!({ "deleted": deleted }))
            }
        }
    }
}

fn opt_str<'a>(args: &'a Value, field: &str) -> Result<Option<&'a str>, String> {
    match args.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(format!("args.{field} must be a string")),
    }
}

fn opt_limit(args: &Value, max: u32) -> Result<u32, String> {
    match args.get("limit") {
        None | Some(Value::Null) => Ok(100.min(max)),
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=u64::from(max)).contains(n))
            .map(|n| n as u32)
            .ok_or_else(|| format!("args.limit must be 1..={max}")),
    }
}

/// Opens the storage of the called version and brings its schema up to that version's plan.
fn open_version(store: &Store, apps_data: &Path, a: &Allowed) -> Result<OpenApp, CallError> {
    let host = |what: &str| {
        let mut e = err(a, ErrorCode::UnknownError, what, Some("storage.io"));
        e.retryable = true;
        e
    };
    if let Ok(Some(f)) = store.storage_failure(a.app(), a.version()) {
        return Err(blocked(a, &f));
    }
    let plan = store
        .storage_plan(a.app(), a.version())
        .map_err(|_| host("the app's storage plan cannot be read"))?;
    let mut storage =
        AppStorage::open(&apps_data.join(a.app()), plan.quota).map_err(|e| storage_err(a, e))?;
    let mut migrations = Vec::with_capacity(plan.migrations.len());
    for m in &plan.migrations {
        if m.size > MAX_MIGRATION_BYTES as u64 {
            let f = StorageFailure {
                cause: MigrationFailure::Invalid.cause().to_owned(),
                migration: m.id.clone(),
                message: format!("{} bytes (at most {MAX_MIGRATION_BYTES})", m.size),
            };
            return Err(record(store, a, f));
        }
        match store.read_file(a.app(), a.version(), &m.path) {
            Ok(sql) => migrations.push(Migration {
                id: m.id.clone(),
                sha256: m.sha256.clone(),
                sql,
            }),
            Err(e) if e.code == crate::foundation::error::ErrorCode::StoreCorrupt => {
                // The installed bytes changed after the review: never run them.
                let f = StorageFailure {
                    cause: MigrationFailure::HashMismatch.cause().to_owned(),
                    migration: m.id.clone(),
                    message: "its installed bytes no longer match the reviewed hash".into(),
                };
                return Err(record(store, a, f));
            }
            Err(_) => return Err(host("a migration file cannot be read")),
        }
    }
    let now = crate::install::store::now_str();
    match storage.migrate(a.version(), &migrations, &now) {
        Ok(applied) => {
            if !applied.is_empty() {
                let _ = store.record_audit(
                    "storage.migrated",
                    Some(a.app()),
                    Some(a.version()),
                    &json!({ "applied": applied }),
                );
            }
        }
        Err(StorageError::Migration {
            id,
            failure,
            message,
        }) => {
            let f = StorageFailure {
                cause: failure.cause().to_owned(),
                migration: id,
                message,
            };
            return Err(record(store, a, f));
        }
        Err(e) => return Err(storage_err(a, e)),
    }
    let tables = store.storage_tables(a.app(), &plan, a.version());
    Ok(OpenApp {
        version: a.version().to_owned(),
        storage,
        tables,
    })
}

/// Records a failed batch (so readiness blocks the version) and answers the call.
fn record(store: &Store, a: &Allowed, f: StorageFailure) -> CallError {
    if let Err(e) = store.record_storage_failure(a.app(), a.version(), &f) {
        tracing::warn!(error = %e.message, "cannot record a failed storage migration");
    }
    blocked(a, &f)
}

fn blocked(a: &Allowed, f: &StorageFailure) -> CallError {
    let cause = [
        MigrationFailure::HashMismatch,
        MigrationFailure::Changed,
        MigrationFailure::OutOfOrder,
        MigrationFailure::Invalid,
        MigrationFailure::Refused,
        MigrationFailure::Failed,
        MigrationFailure::TimedOut,
        MigrationFailure::Quota,
    ]
    .into_iter()
    .map(MigrationFailure::cause)
    .find(|c| *c == f.cause)
    .unwrap_or("storage.migration_failed");
    err(
        a,
        ErrorCode::StorageMigrationRequired,
        &format!(
            "the app's storage migration {} could not be applied; the app is blocked until it is updated or rolled back",
            f.migration
        ),
        Some(cause),
    )
}

fn storage_err(a: &Allowed, e: StorageError) -> CallError {
    let message = match &e {
        // Never leak host paths or SQLite internals to the app.
        StorageError::Io { .. } | StorageError::Db(_) => "the app's storage failed".to_owned(),
        other => other.to_string(),
    };
    let mut out = err(
        a,
        ErrorCode::of_runtime(e.app_code()),
        &message,
        Some(e.cause()),
    );
    out.retryable = matches!(e, StorageError::Db(_) | StorageError::Io { .. });
    out
}
