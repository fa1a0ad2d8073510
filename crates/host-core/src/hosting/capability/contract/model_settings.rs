//! `lime.modelSettings`: the effective model profile and setup status; never a key, a key's
//! ref or the endpoint URL.

use super::*;

pub fn contract() -> NamespaceContract {
    let profile = closed(
        &[
            ("provider", json!({"const": "openai-compatible"})),
            ("model", string()),
            ("apiKeyConfigured", boolean()),
        ],
        &["provider", "model", "apiKeyConfigured"],
    );
    let action = closed(
        &[
            ("key", string()),
            ("title", string()),
            ("kind", string()),
            ("description", string()),
        ],
        &["key", "title", "kind"],
    );
    NamespaceContract {
        capability: "lime.modelSettings",
        rows: vec![row(
            "get",
            "The effective model profile, the app's token limits, the setup status and what fixes it.",
            no_args(),
            closed(
                &[
                    ("status", json!({"enum": ["ready", "needs-setup"]})),
                    ("profile", nullable(profile)),
                    (
                        "limits",
                        closed(
                            &[
                                ("maxTokensPerTask", nullable(integer(1, None))),
                                ("maxTokensPerTaskCeiling", integer(1, None)),
                            ],
                            &["maxTokensPerTask", "maxTokensPerTaskCeiling"],
                        ),
                    ),
                    ("setupAction", nullable(action)),
                ],
                &["status", "profile", "limits", "setupAction"],
            ),
        )],
    }
}
