//! Manifest fields that name a file (or folder) of the package. Each must be a package path by
//! the same rule as the package's own entries ([`crate::install::package::path::validate`]): relative,
//! no `..`, no backslash, control or invisible character, no empty or `.` component. A URL
//! (`file:///etc/passwd`, `https://…`) is not a package path either, except where the field
//! allows one (`data:` images for icons, web links for a changelog). A field that breaks the rule
//! is a `manifest.invalid_package_path` error, so such a package is refused at validation and
//! never installed; the places that later read the file (the UI server, the icon reader, the
//! storage planner) still apply their own checks.
//!
//! Values that are not strings are left to the readers, which ignore them.

use serde_json::{Map, Value};

use super::view::{ManifestView, PathKind};
use super::Finding;
use crate::foundation::error::ErrorCode;
use crate::install::package::path;

/// What a field may hold besides a package file path.
#[derive(Clone, Copy)]
struct Rule {
    /// The field names a folder: the package root (`.`, `./`) and a trailing `/` are fine.
    folder: bool,
    /// A `data:` URL (an inline image) is fine.
    data_url: bool,
    /// An `https://` or `http://` link is fine (it is shown, never read from the package).
    web_url: bool,
}

const FILE: Rule = Rule {
    folder: false,
    data_url: false,
    web_url: false,
};
const FOLDER: Rule = Rule {
    folder: true,
    ..FILE
};
const IMAGE: Rule = Rule {
    data_url: true,
    ..FILE
};
const DOC: Rule = Rule {
    web_url: true,
    ..FILE
};

/// Checks every field that names a package file; adds one error finding per bad field.
pub(super) fn check(m: &Map<String, Value>, f: &mut Vec<Finding>) {
    for (pointer, v, kind) in ManifestView::new(m).package_path_fields() {
        let Value::String(s) = v else { continue };
        let rule = match kind {
            PathKind::File => FILE,
            PathKind::Folder => FOLDER,
            PathKind::Image => IMAGE,
            PathKind::Doc => DOC,
        };
        if let Err(why) = check_value(s, rule) {
            let field = pointer.replace('/', ".");
            f.push(Finding::error(
                ErrorCode::ManifestInvalidPackagePath,
                format!("APP.md#/{pointer}"),
                format!("{field} {s:?} is not a file of the package: {why}"),
            ));
        }
    }
}

/// `Err` says why `raw` is not acceptable under `rule`.
fn check_value(raw: &str, rule: Rule) -> Result<(), String> {
    if rule.data_url && raw.starts_with("data:") {
        return Ok(());
    }
    if rule.web_url && (raw.starts_with("https://") || raw.starts_with("http://")) {
        return Ok(());
    }
    if let Some(scheme) = url_scheme(raw) {
        return Err(format!(
            "it is a {scheme}: URL, not a path inside the package"
        ));
    }
    let mut rel = raw;
    while let Some(rest) = rel.strip_prefix("./") {
        rel = rest;
    }
    if rule.folder {
        if rel.is_empty() || rel == "." {
            return Ok(()); // the package root
        }
        rel = rel.strip_suffix('/').unwrap_or(rel);
    }
    path::validate(rel).map_err(|e| e.message)
}

/// Schemes that make a value a URL (a browser or reader would fetch or run it), whatever follows.
const URL_SCHEMES: &[&str] = &[
    "file",
    "http",
    "https",
    "ftp",
    "data",
    "blob",
    "filesystem",
    "javascript",
    "vbscript",
    "asset",
    "tauri",
];

/// The scheme of a value that is a URL: `file:`, `javascript:` and the other [`URL_SCHEMES`],
/// or any `scheme:/…` (hierarchical: `smb://host/x`). A scheme is a letter, then letters,
/// digits, `+`, `-` or `.`, two characters at least, so a drive letter (`C:`) is left to the path
/// rule (which calls it absolute). A colon name such as an icon set's `mdi:home` is not a URL:
/// it is judged as a path (and names no file of the package).
fn url_scheme(raw: &str) -> Option<&str> {
    let (scheme, rest) = raw.split_once(':')?;
    let mut chars = scheme.chars();
    let is_scheme = scheme.len() >= 2
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let is_url = rest.starts_with('/')
        || URL_SCHEMES
            .iter()
            .any(|known| scheme.eq_ignore_ascii_case(known));
    (is_scheme && is_url).then_some(scheme)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn findings(m: Value) -> Vec<(String, String)> {
        let mut f = Vec::new();
        check(m.as_object().unwrap(), &mut f);
        f.into_iter()
            .map(|x| {
                assert_eq!(x.code, "manifest.invalid_package_path");
                (x.path, x.message)
            })
            .collect()
    }

    #[test]
    fn good_references_pass() {
        let m = json!({
            "runtimePackage": {"ui": {"path": "./dist/ui", "entry": "index.html"},
                               "worker": {"path": "."}, "lockfile": "app.lock.json"},
            "storage": {"schema": "./storage/schema.json", "migrations": "./storage/migrations/"},
            "entries": [{"key": "a", "ui": "ui/a"}],
            "presentation": {"icon": "data:image/png;base64,AAAA"},
            "install": {"branding": {"icon": "./icons/app.png"}},
            "evals": [{"key": "e", "path": "evals/quality.yaml"}],
            "changelog": "https://example.com/changes",
            "i18n": {"translations": {"en-US": "./locales/en-US.json"}},
        });
        assert_eq!(findings(m), vec![]);
    }

    #[test]
    fn traversal_urls_and_absolute_paths_are_refused_by_field() {
        let m = json!({
            "runtimePackage": {"ui": {"path": "./dist/ui", "entry": "../../../../etc/passwd"},
                               "worker": {"path": "/usr/lib"}},
            "presentation": {"icon": "file:///etc/passwd"},
            "install": {"branding": {"icon": "../secret.png"}},
            "storage": {"migrations": "storage\\..\\.."},
            "entries": [{"key": "a", "path": "ui/\u{202E}gnp.js"}],
            "workflows": [{"key": "w", "path": "javascript:alert(1)"}],
            "skills": {"bundled": [{"path": "skills/../../x"}]},
            "services": [{"key": "s", "binary": "C:\\Windows\\cmd.exe"}],
            "i18n": {"translations": {"en": "locales//en.json"}},
            "changelog": "file:///etc/shadow",
        });
        let got = findings(m);
        let paths: Vec<&str> = got.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "APP.md#/runtimePackage/ui/entry",
                "APP.md#/runtimePackage/worker/path",
                "APP.md#/storage/migrations",
                "APP.md#/entries/0/path",
                "APP.md#/services/0/binary",
                "APP.md#/workflows/0/path",
                "APP.md#/skills/bundled/0/path",
                "APP.md#/presentation/icon",
                "APP.md#/install/branding/icon",
                "APP.md#/i18n/translations/en",
                "APP.md#/changelog",
            ]
        );
        let msg = &got[0].1;
        assert!(
            msg.contains("runtimePackage.ui.entry") && msg.contains("../../../../etc/passwd"),
            "{msg}"
        );
        assert!(got[7].1.contains("file: URL"), "{}", got[7].1);
    }

    #[test]
    fn icon_names_with_a_colon_are_not_urls_but_schemes_are() {
        let icon = |v: &str| findings(json!({"presentation": {"icon": v}})).len();
        assert_eq!(icon("mdi:home"), 0);
        assert_eq!(icon("icons/app.png"), 0);
        for url in [
            "file:///etc/passwd",
            "FILE:/etc/passwd",
            "https://example.com/i.png",
            "javascript:alert(1)",
            "smb://host/share/i.png",
        ] {
            assert_eq!(icon(url), 1, "{url}");
        }
    }

    #[test]
    fn a_file_field_may_not_name_the_package_root() {
        let m = json!({"runtimePackage": {"ui": {"entry": "./"}}, "presentation": {"icon": "."}});
        assert_eq!(findings(m).len(), 2);
    }
}
