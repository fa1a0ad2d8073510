//! `lime.capabilities`: what the calling entry may call now, and why the rest is blocked.

use super::*;

pub fn contract() -> NamespaceContract {
    let status = json!({"enum": ["available", "ask", "blocked"]});
    let reason = nullable(json!({"enum": [
        "not-available", "undeclared", "not-ready", "permission-undeclared", "denied", "policy",
        "not-granted", "policy-confirmation"
    ]}));
    let method = closed(
        &[
            ("method", string()),
            ("status", status.clone()),
            ("reason", reason.clone()),
            ("causeCode", nullable(string())),
        ],
        &["method", "status", "reason", "causeCode"],
    );
    let capability = closed(
        &[
            ("capability", string()),
            ("status", status),
            ("reason", reason),
            ("causeCode", nullable(string())),
            ("code", nullable(string())),
            ("methods", array(method)),
        ],
        &[
            "capability",
            "status",
            "reason",
            "causeCode",
            "code",
            "methods",
        ],
    );
    NamespaceContract {
        capability: "lime.capabilities",
        rows: vec![row(
            "list",
            "Every capability the standard names, with each method's standing for the calling entry and why a blocked one is blocked.",
            no_args(),
            closed(
                &[
                    ("appId", string()),
                    ("entryKey", string()),
                    ("available", array(string())),
                    ("capabilities", array(capability)),
                ],
                &["appId", "entryKey", "available", "capabilities"],
            ),
        )],
    }
}
