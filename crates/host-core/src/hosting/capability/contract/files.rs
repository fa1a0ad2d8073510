//! `lime.files`: documents the user chose, by opaque per-app refs (never paths).

use super::*;

fn file_ref() -> Value {
    bounded(1, 128)
}
fn kind() -> Value {
    json!({"enum": ["file", "folder"]})
}
fn listed() -> Value {
    object(
        &[
            ("ref", string()),
            ("name", string()),
            ("kind", kind()),
            ("mtime", any()),
            ("grantedAt", any()),
            ("size", integer(0, None)),
            ("mimeType", string()),
        ],
        &["ref", "name", "kind"],
    )
}
fn metadata() -> Value {
    object(
        &[
            ("ref", string()),
            ("name", string()),
            ("kind", kind()),
            ("size", integer(0, None)),
            ("mtime", any()),
            ("mimeType", string()),
            ("path", string()),
        ],
        &["ref", "name", "kind"],
    )
}

pub fn contract() -> NamespaceContract {
    let at = closed(&[("ref", file_ref()), ("path", string())], &["ref"]);
    let mut read = metadata();
    for (k, v) in [
        ("offset", integer(0, None)),
        ("length", integer(0, None)),
        ("eof", boolean()),
        ("encoding", json!({"enum": ["base64", "text"]})),
        ("content", string()),
    ] {
        read["properties"][k] = v;
    }
    read["required"] =
        json!(["ref", "name", "kind", "offset", "length", "eof", "encoding", "content"]);
    let refs = closed(&[("refs", array(listed()))], &["refs"]);
    let mut picked = refs.clone();
    picked["properties"]["cancelled"] = boolean();
    picked["required"] = json!(["cancelled", "refs"]);
    NamespaceContract {
        capability: "lime.files",
        rows: vec![
            row(
                "list",
                "The refs the user granted this app.",
                no_args(),
                refs,
            ),
            row(
                "readRef",
                "Read (a range of) a granted file, ≤ 4 MiB per read.",
                closed(
                    &[
                        ("ref", file_ref()),
                        ("path", string()),
                        ("offset", integer(0, None)),
                        ("length", integer(0, Some(4 * 1024 * 1024))),
                        ("encoding", json!({"enum": ["base64", "text"]})),
                    ],
                    &["ref"],
                ),
                read,
            ),
            row("stat", "A granted file's metadata.", at.clone(), metadata()),
            row(
                "listFolder",
                "A granted folder's entries (at most 1000).",
                at,
                object(
                    &[
                        ("ref", string()),
                        ("path", string()),
                        ("entries", array(any_object())),
                        ("skipped", integer(0, None)),
                        ("truncated", boolean()),
                    ],
                    &["ref", "entries"],
                ),
            ),
            row(
                "requestFiles",
                "Ask the user to choose files or a folder.",
                nullable(closed(
                    &[
                        ("multiple", boolean()),
                        ("folder", boolean()),
                        (
                            "accept",
                            json!({"type": "array", "items": {"type": "string"}, "maxItems": 16}),
                        ),
                    ],
                    &[],
                )),
                picked,
            ),
        ],
    }
}
