//! What changed in the permissions between the installed version and a new one: every field,
//! and which grants are kept, dropped or asked for again.

use super::*;

pub(super) fn perm_map(list: &[Value]) -> BTreeMap<String, &Value> {
    list.iter()
        .filter_map(|p| Some((Permission::new(p).key()?.to_owned(), p)))
        .collect()
}

pub(super) fn is_required(p: &Value) -> bool {
    Permission::new(p).required()
}

/// Every field of a permission that differs (a missing field is `null`; `required` compares
/// as the boolean it means).
pub(crate) fn permission_diff(old: &Value, new: &Value) -> Vec<FieldChange> {
    let fields: BTreeSet<&String> = [old, new]
        .iter()
        .filter_map(|p| p.as_object())
        .flat_map(|o| o.keys())
        .collect();
    fields
        .into_iter()
        .filter_map(|f| {
            let (o, n) = if f == "required" {
                (json!(is_required(old)), json!(is_required(new)))
            } else {
                (
                    old.get(f).cloned().unwrap_or(Value::Null),
                    new.get(f).cloned().unwrap_or(Value::Null),
                )
            };
            (o != n).then(|| FieldChange {
                field: f.clone(),
                old: o,
                new: n,
            })
        })
        .collect()
}

/// The permission diff between the active version and the new one, given the current grants.
pub(crate) fn diff_permissions(
    old_perms: &[Value],
    new_perms: &[Value],
    granted: &BTreeSet<String>,
) -> Vec<PermissionChange> {
    let old = perm_map(old_perms);
    let new = perm_map(new_perms);
    let entry = |key: &str, p: &Value, change, fields, grant| {
        let p = Permission::new(p);
        PermissionChange {
            key: key.to_owned(),
            change,
            required: p.required(),
            scope: p.scope_raw().cloned().unwrap_or(Value::Null),
            access: p.access_raw().cloned().unwrap_or(Value::Null),
            reason: p.reason_raw().cloned().unwrap_or(Value::Null),
            domains: p.domains_raw().cloned().unwrap_or(json!([])),
            paths: p.paths_raw().cloned().unwrap_or(json!([])),
            fields,
            grant,
        }
    };
    let mut out = Vec::new();
    for (key, p) in &new {
        let (change, fields) = match old.get(key) {
            None => ("added", Vec::new()),
            Some(o) => {
                let fields = permission_diff(o, p);
                (
                    if fields.is_empty() {
                        "unchanged"
                    } else {
                        "changed"
                    },
                    fields,
                )
            }
        };
        // Any change drops the old grant: the user consented to the old permission.
        let grant = if change == "unchanged" && granted.contains(key) {
            "kept"
        } else if is_required(p) {
            "asked"
        } else {
            "at-first-use"
        };
        out.push(entry(key, p, change, fields, grant));
    }
    for (key, p) in &old {
        if !new.contains_key(key) {
            let grant = if granted.contains(key) {
                "dropped"
            } else {
                "none"
            };
            out.push(entry(key, p, "removed", Vec::new(), grant));
        }
    }
    out
}
