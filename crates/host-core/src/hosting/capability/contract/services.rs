//! `lime.services`: the app's own backend services (`services[]`, docs/services.md).

use super::*;

pub fn contract() -> NamespaceContract {
    let status = object(
        &[
            ("key", string()),
            ("required", boolean()),
            (
                "state",
                json!({"enum": ["running", "stopped", "degraded", "blocked", "remote"]}),
            ),
            ("code", string()),
            ("reason", string()),
            ("pid", integer(0, None)),
            ("restarts", integer(0, None)),
            ("lastExit", string()),
            ("lastStop", string()),
            ("protocol", string()),
            // A `server-assisted` remote service (docs/services.md, "Remote services").
            (
                "remote",
                object(
                    &[
                        ("endpoint", string()),
                        ("origin", string()),
                        ("auth", json!({"enum": ["none", "bearer", "header"]})),
                        ("secret", string()),
                        ("dataBoundary", string()),
                        ("allowed", boolean()),
                    ],
                    &["endpoint", "origin", "auth", "dataBoundary", "allowed"],
                ),
            ),
        ],
        &["key", "required", "state", "restarts", "protocol"],
    );
    NamespaceContract {
        capability: "lime.services",
        rows: vec![
            row(
                "call",
                "Call a method of one of the app's own declared services (started on demand).",
                closed(
                    &[
                        ("service", bounded(1, 64)),
                        ("method", bounded(1, 128)),
                        ("params", any()),
                    ],
                    &["service", "method"],
                ),
                described(any(), "The service's JSON-RPC result."),
            ),
            row(
                "list",
                "The app's declared services and their state.",
                no_args(),
                object(&[("services", array(status))], &["services"]),
            ),
        ],
    }
}
