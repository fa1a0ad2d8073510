//! `lime.secrets`: opaque refs to user-bound secrets, never values.

use super::*;

pub fn contract() -> NamespaceContract {
    NamespaceContract {
        capability: "lime.secrets",
        rows: vec![row(
            "getRef",
            "An opaque ref to the value bound to a declared slot.",
            closed(&[("key", string())], &["key"]),
            closed(
                &[
                    (
                        "ref",
                        json!({"type": "string", "pattern": "^secretref_[0-9a-f]{32}$"}),
                    ),
                    ("key", string()),
                ],
                &["ref", "key"],
            ),
        )],
    }
}
