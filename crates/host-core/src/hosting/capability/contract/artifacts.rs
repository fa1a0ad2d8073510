//! `lime.artifacts`: the app's files, content-addressed, with provenance.

use super::*;

fn artifact_id() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": 128})
}

/// The metadata every artifact answer carries.
pub(crate) fn metadata() -> Value {
    object(
        &[
            ("id", artifact_id()),
            ("name", string()),
            ("mimeType", string()),
            ("size", integer(0, None)),
            (
                "sha256",
                json!({"type": "string", "pattern": "^[0-9a-f]{64}$"}),
            ),
            ("createdAt", string()),
            ("provenance", provenance()),
        ],
        &[
            "id",
            "name",
            "mimeType",
            "size",
            "sha256",
            "createdAt",
            "provenance",
        ],
    )
}

/// Where a record came from, filled in by the dispatcher.
pub(crate) fn provenance() -> Value {
    object(
        &[
            ("appId", string()),
            ("appVersion", string()),
            ("entryKey", string()),
            ("packageHash", string()),
            ("manifestHash", string()),
            ("traceId", string()),
        ],
        &[
            "appId",
            "appVersion",
            "entryKey",
            "packageHash",
            "manifestHash",
            "traceId",
        ],
    )
}

pub fn contract() -> NamespaceContract {
    let name = bounded(1, 255);
    let mime = bounded(3, 127);
    let create = one_of(&[
        (
            "The host's form with text content.",
            closed(
                &[
                    ("name", name.clone()),
                    ("mimeType", mime.clone()),
                    ("text", string()),
                ],
                &["name", "text"],
            ),
        ),
        (
            "The host's form with base64 content.",
            closed(
                &[
                    ("name", name),
                    ("mimeType", mime.clone()),
                    ("base64", string()),
                ],
                &["name", "base64"],
            ),
        ),
        (
            "The standard's `{kind, title?, content}`.",
            closed(
                &[
                    ("kind", string()),
                    ("title", string()),
                    ("content", any()),
                    ("mimeType", mime.clone()),
                ],
                &["kind", "content"],
            ),
        ),
        (
            "The standard's `{type, data, title?}`.",
            closed(
                &[
                    ("type", string()),
                    ("data", any()),
                    ("title", string()),
                    ("mimeType", mime),
                ],
                &["type", "data"],
            ),
        ),
    ]);
    let mut read_result = metadata();
    read_result["properties"]["encoding"] = json!({"enum": ["base64", "text"]});
    read_result["properties"]["content"] = string();
    read_result["required"] = json!([
        "id",
        "name",
        "mimeType",
        "size",
        "sha256",
        "createdAt",
        "provenance",
        "encoding",
        "content"
    ]);
    NamespaceContract {
        capability: "lime.artifacts",
        rows: vec![
            row(
                "create",
                "Create an artifact (≤ 1 MiB of content).",
                create,
                metadata(),
            ),
            row(
                "read",
                "An artifact's metadata and content.",
                closed(
                    &[
                        ("id", artifact_id()),
                        ("encoding", json!({"enum": ["base64", "text"]})),
                    ],
                    &["id"],
                ),
                read_result,
            ),
            row(
                "list",
                "The app's artifacts, oldest first.",
                nullable(closed(
                    &[("cursor", nullable(string())), ("limit", limit())],
                    &[],
                )),
                closed(
                    &[
                        ("items", array(metadata())),
                        ("nextCursor", nullable(string())),
                    ],
                    &["items", "nextCursor"],
                ),
            ),
            row(
                "delete",
                "Delete one of the app's artifacts.",
                closed(&[("id", artifact_id())], &["id"]),
                closed(&[("deleted", boolean())], &["deleted"]),
            ),
        ],
    }
}
