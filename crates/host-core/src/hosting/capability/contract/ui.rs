//! `lime.ui`: answered by the host itself from the frame's snapshot.

use super::*;

fn route() -> Value {
    object(
        &[
            ("appId", string()),
            ("entryKey", string()),
            ("path", string()),
            ("title", string()),
        ],
        &["appId", "entryKey", "path", "title"],
    )
}

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
            row(
                "registerRoute",
                "Registers one of the app's in-app routes (`/notes/:id`) so the host can deep-link to it and list it in its command palette (at most 64 per app).",
                closed(
                    &[
                        ("path", json!({"type": "string", "minLength": 1, "maxLength": 256, "pattern": "^/([A-Za-z0-9._~:@!$&'()*+,;=%-][A-Za-z0-9._~/:@!$&'()*+,;=%-]*)?$"})),
                        ("title", json!({"type": "string", "minLength": 1, "maxLength": 120})),
                    ],
                    &["path"],
                ),
                route(),
            ),
            row(
                "listRoutes",
                "The routes this app registered in this host session.",
                no_args(),
                object(&[("routes", json!({"type": "array", "items": route()}))], &["routes"]),
            ),
        ],
    }
}
