//! `lime.workspace`: the workspace's ids, display name, locale and time zone.

use super::*;

pub fn contract() -> NamespaceContract {
    NamespaceContract {
        capability: "lime.workspace",
        rows: vec![row(
            "get",
            "The workspace's and tenant's ids, the workspace's display name, the locale and the IANA time zone.",
            no_args(),
            closed(
                &[
                    ("workspaceId", string()),
                    ("tenantId", string()),
                    ("displayName", string()),
                    ("locale", string()),
                    ("timezone", string()),
                ],
                &["workspaceId", "tenantId", "displayName", "locale", "timezone"],
            ),
        )],
    }
}
