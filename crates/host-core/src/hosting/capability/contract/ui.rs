//! `lime.ui`: answered by the host itself from the frame's snapshot.

use super::*;

pub fn contract() -> NamespaceContract {
    let theme = object(
        &[
            ("themeMode", string()),
            ("effectiveThemeMode", string()),
            ("colorSchemeId", string()),
            (
                "tokens",
                json!({"type": "object", "additionalProperties": {"type": "string"}}),
            ),
        ],
        &["themeMode", "effectiveThemeMode", "colorSchemeId", "tokens"],
    );
    NamespaceContract {
        capability: "lime.ui",
        rows: vec![
            row(
                "getSnapshot",
                "The frame's snapshot (the `host:snapshot` payload).",
                no_args(),
                any_object(),
            ),
            row(
                "getLocale",
                "The user's locale (BCP 47) and IANA time zone.",
                no_args(),
                object(
                    &[("locale", string()), ("timezone", string())],
                    &["locale", "timezone"],
                ),
            ),
            row(
                "getTheme",
                "The current theme and its CSS tokens.",
                no_args(),
                theme,
            ),
        ],
    }
}
