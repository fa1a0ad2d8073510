//! `lime.storage`: key-value and the app's declared tables.

use super::*;

fn key() -> Value {
    described(bounded(1, 512), "1–512 bytes, no control characters.")
}
fn table() -> Value {
    described(
        bounded(1, 128),
        "A table the app's storage/schema.json declares.",
    )
}
fn id() -> Value {
    described(
        json!({"type": ["string", "integer"]}),
        "The row's primary key.",
    )
}
fn columns() -> Value {
    json!({"type": "object", "description": "Column name → value."})
}

pub fn contract() -> NamespaceContract {
    let key_only = closed(&[("key", key())], &["key"]);
    let table_id = closed(&[("table", table()), ("id", id())], &["table", "id"]);
    NamespaceContract {
        capability: "lime.storage",
        rows: vec![
            row(
                "get",
                "The stored JSON value, or null.",
                key_only.clone(),
                any(),
            ),
            row(
                "set",
                "Store a JSON value (≤ 1 MiB) under a key.",
                closed(&[("key", key()), ("value", any())], &["key", "value"]),
                json!({"type": "null"}),
            ),
            row(
                "delete",
                "Delete a key.",
                key_only,
                closed(&[("deleted", boolean())], &["deleted"]),
            ),
            row(
                "list",
                "Keys in byte order, a page at a time.",
                nullable(closed(
                    &[
                        ("prefix", string()),
                        ("cursor", nullable(string())),
                        ("limit", limit()),
                    ],
                    &[],
                )),
                closed(
                    &[
                        (
                            "items",
                            array(closed(
                                &[("key", string()), ("value", any())],
                                &["key", "value"],
                            )),
                        ),
                        ("nextCursor", nullable(string())),
                    ],
                    &["items", "nextCursor"],
                ),
            ),
            row(
                "tableGet",
                "One row by primary key, or null.",
                table_id.clone(),
                nullable(any_object()),
            ),
            row(
                "tableQuery",
                "Rows matching an AND of equalities.",
                closed(
                    &[
                        ("table", table()),
                        ("where", columns()),
                        ("orderBy", string()),
                        ("descending", boolean()),
                        ("limit", limit()),
                        ("offset", integer(0, Some(100_000))),
                    ],
                    &["table"],
                ),
                closed(&[("rows", array(any_object()))], &["rows"]),
            ),
            row(
                "tableInsert",
                "Insert a row; answers its primary key.",
                closed(&[("table", table()), ("row", columns())], &["table", "row"]),
                closed(&[("id", id())], &["id"]),
            ),
            row(
                "tableUpdate",
                "Patch a row by primary key.",
                closed(
                    &[("table", table()), ("id", id()), ("patch", columns())],
                    &["table", "id", "patch"],
                ),
                closed(&[("updated", boolean())], &["updated"]),
            ),
            row(
                "tableDelete",
                "Delete a row by primary key.",
                table_id,
                closed(&[("deleted", boolean())], &["deleted"]),
            ),
        ],
    }
}
