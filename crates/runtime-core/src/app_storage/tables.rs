//! Row methods on the tables the app declares in `storage/schema.json` (its migrations create
//! them): get, query, insert, update, delete. No SQL comes from the caller: table and column
//! names are checked against the declaration *and* the database's own schema, then quoted;
//! values are always bound parameters. Reserved `lime_*` tables are never reachable.
//!
//! Values: JSON `null`, booleans (stored as 0/1), numbers (integer or real) and strings map to
//! SQLite's types; arrays and objects are stored as their JSON text. Reading back, a BLOB (which
//! only a migration can write) is returned as a lowercase hex string, a non-finite real as null.

use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::OptionalExtension;
use serde_json::{Map, Value};

use super::guard::is_reserved;
use super::{AppStorage, StorageError, MAX_VALUE_BYTES};

/// Most rows one query returns.
pub const MAX_QUERY_LIMIT: u32 = 1000;
/// Most rows a query may skip.
pub const MAX_QUERY_OFFSET: u64 = 100_000;

/// A table the app's schema declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableDecl {
    pub name: String,
    /// `primaryKey` from the schema; else the table's own single-column primary key.
    pub primary_key: Option<String>,
}

/// A declared table as the database has it.
struct Resolved {
    name: String,
    pk: String,
    /// Writable columns (no generated or hidden ones).
    columns: Vec<String>,
}

/// A query: equality filters (AND), an order and a page.
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub filter: Map<String, Value>,
    pub order_by: Option<String>,
    pub descending: bool,
    pub limit: u32,
    pub offset: u64,
}

fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

fn to_sql(v: &Value) -> Result<SqlValue, StorageError> {
    let out = match v {
        Value::Null => SqlValue::Null,
        Value::Bool(b) => SqlValue::Integer(i64::from(*b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => SqlValue::Integer(i),
            None => SqlValue::Real(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => SqlValue::Text(s.clone()),
        other => SqlValue::Text(other.to_string()),
    };
    if let SqlValue::Text(t) = &out {
        if t.len() > MAX_VALUE_BYTES {
            return Err(StorageError::ValueTooLarge(t.len()));
        }
    }
    Ok(out)
}

fn to_json(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::String(b.iter().map(|x| format!("{x:02x}")).collect()),
    }
}

impl AppStorage {
    fn resolve(&self, decls: &[TableDecl], table: &str) -> Result<Resolved, StorageError> {
        let decl = decls
            .iter()
            .find(|d| d.name == table && !is_reserved(&d.name))
            .ok_or_else(|| StorageError::UndeclaredTable(table.chars().take(128).collect()))?;
        self.begin_call();
        let kind: Option<String> = self
            .conn
            .query_row(
                "SELECT type FROM sqlite_schema WHERE name = ?1 AND type = 'table'",
                [&decl.name],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sql_err(e))?;
        if kind.is_none() {
            return Err(StorageError::SchemaMismatch(format!(
                "the declared table {:?} does not exist (no migration created it)",
                decl.name
            )));
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT name, pk, hidden FROM pragma_table_xinfo(?1)")
            .map_err(|e| self.sql_err(e))?;
        let cols: Vec<(String, i64, i64)> = stmt
            .query_map([&decl.name], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(|e| self.sql_err(e))?
            .collect::<Result<_, _>>()
            .map_err(|e| self.sql_err(e))?;
        let pk = match &decl.primary_key {
            Some(pk) => cols
                .iter()
                .find(|c| &c.0 == pk)
                .map(|c| c.0.clone())
                .ok_or_else(|| {
                    StorageError::SchemaMismatch(format!(
                        "table {:?} has no column {pk:?}, its declared primary key",
                        decl.name
                    ))
                })?,
            None => {
                let pks: Vec<&(String, i64, i64)> = cols.iter().filter(|c| c.1 > 0).collect();
                match pks.as_slice() {
                    [one] => one.0.clone(),
                    _ => {
                        return Err(StorageError::SchemaMismatch(format!(
                        "table {:?} declares no primaryKey and has no single-column primary key",
                        decl.name
                    )))
                    }
                }
            }
        };
        Ok(Resolved {
            name: decl.name.clone(),
            pk,
            columns: cols.into_iter().filter(|c| c.2 == 0).map(|c| c.0).collect(),
        })
    }

    fn check_columns<'a>(
        t: &Resolved,
        names: impl Iterator<Item = &'a String>,
    ) -> Result<(), StorageError> {
        for n in names {
            if !t.columns.iter().any(|c| c == n) {
                return Err(StorageError::SchemaMismatch(format!(
                    "table {:?} has no writable column {:?}",
                    t.name,
                    n.chars().take(128).collect::<String>()
                )));
            }
        }
        Ok(())
    }

    fn rows(
        &self,
        sql: &str,
        params: &[SqlValue],
    ) -> Result<Vec<Map<String, Value>>, StorageError> {
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.sql_err(e))?;
        let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params))
            .map_err(|e| self.sql_err(e))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(|e| self.sql_err(e))? {
            let mut row = Map::new();
            for (i, n) in names.iter().enumerate() {
                row.insert(
                    n.clone(),
                    to_json(r.get_ref(i).map_err(|e| self.sql_err(e))?),
                );
            }
            out.push(row);
        }
        Ok(out)
    }

    /// The row whose primary key is `id`.
    pub fn table_get(
        &self,
        decls: &[TableDecl],
        table: &str,
        id: &Value,
    ) -> Result<Option<Map<String, Value>>, StorageError> {
        let t = self.resolve(decls, table)?;
        let sql = format!(
            "SELECT * FROM {} WHERE {} = ?1",
            quote(&t.name),
            quote(&t.pk)
        );
        Ok(self.rows(&sql, &[to_sql(id)?])?.into_iter().next())
    }

    /// Rows matching every `filter` column (`null` matches NULL), ordered by `order_by` (then
    /// the primary key), one page.
    pub fn table_query(
        &self,
        decls: &[TableDecl],
        table: &str,
        q: &Query,
    ) -> Result<Vec<Map<String, Value>>, StorageError> {
        if q.limit == 0 || q.limit > MAX_QUERY_LIMIT {
            return Err(StorageError::InvalidArgument(format!(
                "limit must be 1..={MAX_QUERY_LIMIT}"
            )));
        }
        if q.offset > MAX_QUERY_OFFSET {
            return Err(StorageError::InvalidArgument(format!(
                "offset must be at most {MAX_QUERY_OFFSET}"
            )));
        }
        let t = self.resolve(decls, table)?;
        Self::check_columns(&t, q.filter.keys().chain(q.order_by.iter()))?;
        let mut sql = format!("SELECT * FROM {}", quote(&t.name));
        let mut params = Vec::new();
        for (i, (col, v)) in q.filter.iter().enumerate() {
            sql.push_str(if i == 0 { " WHERE " } else { " AND " });
            if v.is_null() {
                sql.push_str(&format!("{} IS NULL", quote(col)));
            } else {
                params.push(to_sql(v)?);
                sql.push_str(&format!("{} = ?{}", quote(col), params.len()));
            }
        }
        let dir = if q.descending { "DESC" } else { "ASC" };
        match &q.order_by {
            Some(c) if c != &t.pk => sql.push_str(&format!(
                " ORDER BY {} {dir}, {} {dir}",
                quote(c),
                quote(&t.pk)
            )),
            _ => sql.push_str(&format!(" ORDER BY {} {dir}", quote(&t.pk))),
        }
        sql.push_str(&format!(" LIMIT {} OFFSET {}", q.limit, q.offset));
        self.rows(&sql, &params)
    }

    /// Inserts a row; returns its primary key (the rowid when the key was left to SQLite).
    pub fn table_insert(
        &mut self,
        decls: &[TableDecl],
        table: &str,
        row: &Map<String, Value>,
    ) -> Result<Value, StorageError> {
        let t = self.resolve(decls, table)?;
        if row.is_empty() {
            return Err(StorageError::InvalidArgument("row has no columns".into()));
        }
        Self::check_columns(&t, row.keys())?;
        let cols: Vec<String> = row.keys().map(|k| quote(k)).collect();
        let marks: Vec<String> = (1..=row.len()).map(|i| format!("?{i}")).collect();
        let params: Vec<SqlValue> = row.values().map(to_sql).collect::<Result<_, _>>()?;
        let sql = format!(
            "INSERT INTO {} ({}) VALUES ({})",
            quote(&t.name),
            cols.join(", "),
            marks.join(", ")
        );
        self.conn
            .execute(&sql, rusqlite::params_from_iter(&params))
            .map_err(|e| self.write_err(e))?;
        Ok(match row.get(&t.pk) {
            Some(v) if !v.is_null() => v.clone(),
            _ => Value::from(self.conn.last_insert_rowid()),
        })
    }

    /// Sets the `patch` columns of the row `id`; returns whether it existed.
    pub fn table_update(
        &mut self,
        decls: &[TableDecl],
        table: &str,
        id: &Value,
        patch: &Map<String, Value>,
    ) -> Result<bool, StorageError> {
        let t = self.resolve(decls, table)?;
        if patch.is_empty() {
            return Err(StorageError::InvalidArgument("patch has no columns".into()));
        }
        Self::check_columns(&t, patch.keys())?;
        let sets: Vec<String> = patch
            .keys()
            .enumerate()
            .map(|(i, k)| format!("{} = ?{}", quote(k), i + 1))
            .collect();
        let mut params: Vec<SqlValue> = patch.values().map(to_sql).collect::<Result<_, _>>()?;
        params.push(to_sql(id)?);
        let sql = format!(
            "UPDATE {} SET {} WHERE {} = ?{}",
            quote(&t.name),
            sets.join(", "),
            quote(&t.pk),
            params.len()
        );
        let n = self
            .conn
            .execute(&sql, rusqlite::params_from_iter(&params))
            .map_err(|e| self.write_err(e))?;
        Ok(n > 0)
    }

    /// Deletes the row `id`; returns whether it existed.
    pub fn table_delete(
        &mut self,
        decls: &[TableDecl],
        table: &str,
        id: &Value,
    ) -> Result<bool, StorageError> {
        let t = self.resolve(decls, table)?;
        let sql = format!("DELETE FROM {} WHERE {} = ?1", quote(&t.name), quote(&t.pk));
        let n = self
            .conn
            .execute(&sql, [to_sql(id)?])
            .map_err(|e| self.write_err(e))?;
        Ok(n > 0)
    }

    /// A write error: constraint violations are the caller's (`InvalidArgument`), the rest as
    /// any SQL error.
    fn write_err(&self, e: rusqlite::Error) -> StorageError {
        if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation) {
            return StorageError::InvalidArgument(format!("constraint failed: {e}"));
        }
        if e.sqlite_error_code() == Some(rusqlite::ErrorCode::AuthorizationForStatementDenied) {
            return StorageError::SchemaMismatch(
                "a trigger of this table touches the host's reserved tables".into(),
            );
        }
        self.sql_err(e)
    }
}
