//! `lime.evidence`: records of what the app did and why, exportable as a pack.

use super::artifacts::provenance;
use super::*;

fn kind() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[A-Za-z0-9._:-]+$"})
}

fn record() -> Value {
    object(
        &[
            ("id", string()),
            ("kind", string()),
            ("summary", string()),
            ("data", any()),
            (
                "artifacts",
                array(closed(
                    &[("artifactId", string()), ("sha256", string())],
                    &["artifactId", "sha256"],
                )),
            ),
            ("createdAt", string()),
            ("provenance", provenance()),
        ],
        &[
            "id",
            "kind",
            "summary",
            "data",
            "artifacts",
            "createdAt",
            "provenance",
        ],
    )
}

pub fn contract() -> NamespaceContract {
    let args = one_of(&[
        (
            "The host's form.",
            closed(
                &[
                    ("kind", kind()),
                    ("summary", string()),
                    ("data", any()),
                    (
                        "artifactIds",
                        json!({"type": "array", "items": {"type": "string"}, "maxItems": 64}),
                    ),
                ],
                &["kind"],
            ),
        ),
        (
            "The standard's `{kind, message?, refs?}`.",
            closed(
                &[("kind", kind()), ("message", string()), ("refs", any())],
                &["kind"],
            ),
        ),
        (
            "The standard's `{subject, sources?, kind?}`.",
            closed(
                &[("subject", any()), ("sources", any()), ("kind", kind())],
                &["subject"],
            ),
        ),
    ]);
    NamespaceContract {
        capability: "lime.evidence",
        rows: vec![
            row("record", "Record one piece of evidence.", args, record()),
            row(
                "list",
                "The app's records, oldest first.",
                nullable(closed(
                    &[
                        ("kind", kind()),
                        ("cursor", nullable(string())),
                        ("limit", limit()),
                    ],
                    &[],
                )),
                closed(
                    &[
                        ("items", array(record())),
                        ("nextCursor", nullable(string())),
                    ],
                    &["items", "nextCursor"],
                ),
            ),
            row(
                "export",
                "The evidence pack (apphost.evidence-pack.v1) with its runtimeCorrelation: the ids of `taskId`'s latest run, or the call's trace and every other id named missing.",
                nullable(closed(
                    &[
                        ("kind", nullable(kind())),
                        ("taskId", nullable(bounded(1, 128))),
                    ],
                    &[],
                )),
                object(
                    &[
                        (
                            "schemaVersion",
                            json!({"const": "apphost.evidence-pack.v1"}),
                        ),
                        ("app", any_object()),
                        ("generatedAt", string()),
                        ("kind", nullable(string())),
                        ("records", array(record())),
                        ("artifacts", array(any_object())),
                        ("runtimeCorrelation", runtime_correlation()),
                    ],
                    &[
                        "schemaVersion",
                        "app",
                        "generatedAt",
                        "records",
                        "artifacts",
                        "runtimeCorrelation",
                    ],
                ),
            ),
        ],
    }
}

/// The Agent Runtime standard's `runtimeCorrelation`: each id a string or `null`, and `missing`
/// naming the `null` ones.
fn runtime_correlation() -> Value {
    let id = nullable(bounded(1, 256));
    let ids = crate::hosting::capability::services::CORRELATION_IDS;
    let mut props: Vec<(&str, Value)> = ids.iter().map(|k| (*k, id.clone())).collect();
    props.push(("missing", array(json!({"enum": ids}))));
    let mut required: Vec<&str> = ids.to_vec();
    required.push("missing");
    closed(&props, &required)
}
