//! `lime.policy`: ask the user for an optional declared permission.

use super::*;

pub fn contract() -> NamespaceContract {
    NamespaceContract {
        capability: "lime.policy",
        rows: vec![row(
            "requestPermission",
            "Ask for one optional permission the manifest declares.",
            closed(&[("permission", string())], &["permission"]),
            closed(
                &[
                    ("granted", boolean()),
                    ("persistence", json!({"enum": ["once", "always", "denied"]})),
                ],
                &["granted", "persistence"],
            ),
        )],
    }
}
