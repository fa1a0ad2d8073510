//! Field-level validation of a merged manifest. Adds findings; coerces nothing except a
//! numeric `version` (kept as text, with a warning).

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::{Finding, CURRENT_MANIFEST_VERSION, NEWEST_MANIFEST_MINOR, OLDEST_MANIFEST_MINOR};
use crate::foundation::error::ErrorCode;

pub const STATUSES: &[&str] = &["draft", "ready", "needs-review", "deprecated", "archived"];
pub const APP_TYPES: &[&str] = &[
    "agent-app",
    "workflow-app",
    "domain-app",
    "customer-app",
    "custom",
];
pub const ENTRY_KINDS: &[&str] = &[
    "page",
    "panel",
    "expert-chat",
    "command",
    "workflow",
    "artifact",
    "background-task",
    "settings",
];
pub const LEGACY_ENTRY_KINDS: &[&str] = &["scene", "home"];
const PERMISSION_SCOPES: &[&str] = &[
    "filesystem",
    "network",
    "model",
    "tool",
    "secret",
    "storage",
    "workflow",
    "artifact",
    "tenant",
    "workspace",
    "export",
];
const PERMISSION_ACCESS: &[&str] = &["read", "write", "execute", "read-write", "admin"];
/// Keyed arrays whose keys must be unique.
const KEYED_ARRAYS: &[&str] = &[
    "services",
    "workflows",
    "knowledgeTemplates",
    "toolRefs",
    "artifactTypes",
    "evals",
    "events",
    "secrets",
    "overlayTemplates",
    "integrations",
    "operations",
];
const DATE_FIELDS: &[&str] = &[
    "createdAt",
    "updatedAt",
    "releasedAt",
    "deprecatedAt",
    "endOfLifeAt",
];

fn p(ptr: &str) -> String {
    format!("APP.md#/{ptr}")
}

pub(super) fn validate(m: &mut Map<String, Value>, f: &mut Vec<Finding>) -> String {
    required_string(
        m,
        "name",
        f,
        runtime_core::ids::is_valid_app_name,
        "must match ^[a-z0-9][a-z0-9-_.]*$ (1..64 characters)",
    );
    required_string(
        m,
        "description",
        f,
        |s| s.chars().count() <= 1024,
        "must be at most 1024 characters",
    );
    // version: a string; a YAML number (version: 1.0) is kept as its text with a warning.
    match m.get("version").cloned() {
        None | Some(Value::Null) => f.push(missing("version")),
        Some(Value::String(s)) if s.is_empty() => f.push(missing("version")),
        Some(Value::String(s)) => {
            if semver::Version::parse(&s).is_err() {
                f.push(Finding::warning(
                    "manifest.version_not_semver",
                    p("version"),
                    format!("version {s:?} is not SemVer; updates cannot be ordered"),
                ));
            }
        }
        Some(Value::Number(n)) => {
            f.push(Finding::warning(
                "manifest.version_not_string",
                p("version"),
                format!("version is the number {n}; quote it (\"{n}\")"),
            ));
            m.insert("version".into(), Value::String(n.to_string()));
        }
        Some(_) => f.push(Finding::error(
            ErrorCode::ManifestInvalidField,
            p("version"),
            "version must be a string",
        )),
    }
    enum_field(m, "status", STATUSES, ErrorCode::ManifestUnknownStatus, f);
    enum_field(
        m,
        "appType",
        APP_TYPES,
        ErrorCode::ManifestUnknownAppType,
        f,
    );
    let mv = manifest_version(m, f);
    entries(m, &mv, f);
    permissions(m, f);
    for key in KEYED_ARRAYS {
        keyed_array(m, key, f);
    }
    requires(m, f);
    required_flags(m, f);
    super::file_refs::check(m, f);
    for key in DATE_FIELDS {
        if let Some(v) = m.get(*key) {
            if crate::install::compat::parse_date(v).is_none() {
                f.push(Finding::error(
                    ErrorCode::ManifestInvalidField,
                    p(key),
                    format!("{key} must be an ISO 8601 date or date-time"),
                ));
            }
        }
    }
    if let Some(storage) = m.get("storage") {
        match storage {
            Value::Object(s) if !s.get("namespace").is_some_and(Value::is_string) => {
                f.push(Finding::warning(
                    "manifest.storage_namespace_missing",
                    p("storage/namespace"),
                    "storage has no namespace; the app name is used",
                ))
            }
            Value::Object(_) => {}
            _ => f.push(Finding::error(
                ErrorCode::ManifestInvalidField,
                p("storage"),
                "storage must be a mapping",
            )),
        }
    }
    if m.get("publisher").and_then(|p| p.get("verified")).is_some() {
        f.push(Finding::warning(
            "manifest.self_declared_verification",
            p("publisher/verified"),
            "publisher.verified is decided by AppHost (signatures), not by the package; it is ignored",
        ));
    }
    mv
}

/// Lists whose items may say `required: true|false` (the standard's schema types it boolean).
const ITEMS_WITH_REQUIRED: &[&str] = &[
    "permissions",
    "knowledgeTemplates",
    "skillRefs",
    "toolRefs",
    "artifactTypes",
    "evals",
    "secrets",
    "overlayTemplates",
    "integrations",
];

/// Whether a declared item (a permission, secret, tool, ...) is required. The one rule that
/// install, consent and readiness share: only the boolean `true` is required. Any other value
/// (`"yes"`, `1`, `"true"`) is a `manifest.invalid_field` error found by validation, so an
/// installed manifest never carries one.
pub fn is_required(item: &Value) -> bool {
    matches!(item.get("required"), Some(Value::Bool(true)))
}

/// `required` must be a boolean wherever the standard defines it.
fn required_flags(m: &Map<String, Value>, f: &mut Vec<Finding>) {
    let lists = ITEMS_WITH_REQUIRED
        .iter()
        .map(|k| (k.to_string(), m.get(*k)))
        .chain(std::iter::once((
            "skills/references".to_owned(),
            m.get("skills").and_then(|s| s.get("references")),
        )));
    for (list, items) in lists {
        for (i, item) in items
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            match item.get("required") {
                None | Some(Value::Bool(_)) => {}
                Some(v) => f.push(Finding::error(
                    ErrorCode::ManifestInvalidField,
                    p(&format!("{list}/{i}/required")),
                    format!("{list}[{i}].required is {v}; it must be true or false"),
                )),
            }
        }
    }
}

fn missing(key: &str) -> Finding {
    Finding::error(
        ErrorCode::ManifestMissingField,
        p(key),
        format!("missing required frontmatter field: {key}"),
    )
}

fn required_string(
    m: &Map<String, Value>,
    key: &str,
    f: &mut Vec<Finding>,
    ok: impl Fn(&str) -> bool,
    rule: &str,
) {
    match m.get(key) {
        None | Some(Value::Null) => f.push(missing(key)),
        Some(Value::String(s)) if s.is_empty() => f.push(missing(key)),
        Some(Value::String(s)) if !ok(s) => f.push(Finding::error(
            ErrorCode::ManifestInvalidField,
            p(key),
            format!("{key} {s:?} {rule}"),
        )),
        Some(Value::String(_)) => {}
        Some(_) => f.push(Finding::error(
            ErrorCode::ManifestInvalidField,
            p(key),
            format!("{key} must be a string"),
        )),
    }
}

fn enum_field(
    m: &Map<String, Value>,
    key: &str,
    allowed: &[&str],
    code: ErrorCode,
    f: &mut Vec<Finding>,
) {
    match m.get(key) {
        None | Some(Value::Null) => f.push(missing(key)),
        Some(Value::String(s)) if s.is_empty() => f.push(missing(key)),
        Some(Value::String(s)) if allowed.contains(&s.as_str()) => {}
        Some(v) => f.push(Finding::error(
            code,
            p(key),
            format!("unknown {key}: {v}; expected one of {}", allowed.join(", ")),
        )),
    }
}

/// Returns the effective manifest version.
fn manifest_version(m: &Map<String, Value>, f: &mut Vec<Finding>) -> String {
    let raw = match m.get("manifestVersion") {
        None | Some(Value::Null) => {
            f.push(Finding::warning(
                "manifest.version_assumed",
                p("manifestVersion"),
                format!("manifestVersion is missing; 0.4.0 is assumed (current is {CURRENT_MANIFEST_VERSION})"),
            ));
            return "0.4.0".into();
        }
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => {
            f.push(Finding::error(
                ErrorCode::ManifestInvalidField,
                p("manifestVersion"),
                format!("manifestVersion is the number {n}; YAML reads 0.10 as 0.1, so write it quoted: \"{CURRENT_MANIFEST_VERSION}\""),
            ));
            return CURRENT_MANIFEST_VERSION.into();
        }
        Some(_) => {
            f.push(Finding::error(
                ErrorCode::ManifestInvalidField,
                p("manifestVersion"),
                "manifestVersion must be a string",
            ));
            return CURRENT_MANIFEST_VERSION.into();
        }
    };
    let normalized = if raw.matches('.').count() == 1 {
        format!("{raw}.0")
    } else {
        raw.clone()
    };
    let Ok(v) = semver::Version::parse(&normalized) else {
        f.push(Finding::error(
            ErrorCode::ManifestInvalidField,
            p("manifestVersion"),
            format!("manifestVersion {raw:?} is not a version"),
        ));
        return CURRENT_MANIFEST_VERSION.into();
    };
    if v.major != 0 || v.minor < OLDEST_MANIFEST_MINOR {
        f.push(Finding::error(
            ErrorCode::ManifestUnsupportedVersion,
            p("manifestVersion"),
            format!("manifestVersion {raw} is not supported (supported: 0.{OLDEST_MANIFEST_MINOR}.0 to {CURRENT_MANIFEST_VERSION})"),
        ));
    } else if v.minor > NEWEST_MANIFEST_MINOR {
        f.push(Finding::warning(
            "manifest.version_newer",
            p("manifestVersion"),
            format!("manifestVersion {raw} is newer than {CURRENT_MANIFEST_VERSION}; fields AppHost does not know are kept but not used"),
        ));
    } else if normalized != raw {
        f.push(Finding::warning(
            "manifest.version_normalized",
            p("manifestVersion"),
            format!("manifestVersion {raw:?} read as {normalized}"),
        ));
    }
    normalized
}

fn entries(m: &Map<String, Value>, mv: &str, f: &mut Vec<Finding>) {
    let Some(list) = m.get("entries") else { return };
    let Some(list) = list.as_array() else {
        f.push(Finding::error(
            ErrorCode::ManifestInvalidField,
            p("entries"),
            "entries must be a list",
        ));
        return;
    };
    let mut keys = HashSet::new();
    for (i, e) in list.iter().enumerate() {
        let at = |field: &str| p(&format!("entries/{i}{field}"));
        let Some(obj) = e.as_object() else {
            f.push(Finding::error(
                ErrorCode::ManifestInvalidField,
                at(""),
                "each entry must be a mapping",
            ));
            continue;
        };
        match obj.get("key") {
            None | Some(Value::Null) => f.push(Finding::error(
                ErrorCode::ManifestMissingField,
                at("/key"),
                format!("entry {i} has no key"),
            )),
            Some(Value::String(k)) if is_entry_key(k) => {
                if !keys.insert(k.clone()) {
                    f.push(Finding::error(
                        ErrorCode::ManifestDuplicateKey,
                        at("/key"),
                        format!("entry key {k:?} is used twice"),
                    ));
                }
            }
            Some(k) => f.push(Finding::error(
                ErrorCode::ManifestInvalidField,
                at("/key"),
                format!("entry key {k} must match ^[a-zA-Z0-9_.:-]+$"),
            )),
        }
        let label = obj
            .get("key")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned();
        match obj.get("kind").and_then(Value::as_str) {
            None => f.push(Finding::error(
                ErrorCode::ManifestMissingField,
                at("/kind"),
                format!("entry {label} has no kind"),
            )),
            Some(k) if ENTRY_KINDS.contains(&k) => {
                let binding = match k {
                    "page" => Some("route"),
                    "panel" => Some("panel"),
                    "command" => Some("command"),
                    "workflow" => Some("workflow"),
                    "expert-chat" => Some("persona"),
                    _ => None,
                };
                if let Some(b) = binding.filter(|b| !obj.contains_key(*b)) {
                    f.push(Finding::warning(
                        "entry.missing_binding",
                        at(""),
                        format!("{k} entry {label} has no {b}"),
                    ));
                }
            }
            Some(k) if LEGACY_ENTRY_KINDS.contains(&k) => {
                if mv.starts_with("0.3") {
                    f.push(Finding::error(
                        ErrorCode::ManifestUnknownEntryKind,
                        at("/kind"),
                        format!("entry kind {k} is not valid for manifestVersion 0.3: {label}"),
                    ));
                } else {
                    f.push(Finding::warning("entry.legacy_kind", at("/kind"), format!("entry kind {k} is deprecated; use page/command/workflow/artifact/background-task/settings")));
                }
            }
            Some(k) => f.push(Finding::error(
                ErrorCode::ManifestUnknownEntryKind,
                at("/kind"),
                format!(
                    "unknown entry kind for {label}: {k}; expected one of {}",
                    ENTRY_KINDS.join(", ")
                ),
            )),
        }
        if !obj.get("title").is_some_and(Value::is_string) {
            f.push(Finding::warning(
                "entry.missing_title",
                at("/title"),
                format!("entry {label} has no title"),
            ));
        }
    }
}

fn is_entry_key(k: &str) -> bool {
    !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
}

fn permissions(m: &Map<String, Value>, f: &mut Vec<Finding>) {
    keyed_array(m, "permissions", f);
    for (i, perm) in m
        .get("permissions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = |field: &str| p(&format!("permissions/{i}/{field}"));
        if let Some(s) = perm.get("scope").and_then(Value::as_str) {
            if !PERMISSION_SCOPES.contains(&s) {
                f.push(Finding::warning(
                    "permission.unknown_scope",
                    at("scope"),
                    format!("permission scope {s:?} is not in the standard's list"),
                ));
            }
        } else {
            f.push(Finding::warning(
                "permission.missing_scope",
                at("scope"),
                "permission has no scope",
            ));
        }
        if let Some(a) = perm.get("access").and_then(Value::as_str) {
            if !PERMISSION_ACCESS.contains(&a) {
                f.push(Finding::warning(
                    "permission.unknown_access",
                    at("access"),
                    format!("permission access {a:?} is not in the standard's list"),
                ));
            }
        }
        if perm.get("bypassPermissions").is_some() {
            f.push(Finding::error(
                ErrorCode::ManifestInvalidField,
                at("bypassPermissions"),
                "manifests may not declare bypassPermissions",
            ));
        }
    }
}

fn keyed_array(m: &Map<String, Value>, key: &str, f: &mut Vec<Finding>) {
    let Some(v) = m.get(key) else { return };
    let Some(list) = v.as_array() else {
        f.push(Finding::error(
            ErrorCode::ManifestInvalidField,
            p(key),
            format!("{key} must be a list"),
        ));
        return;
    };
    let mut seen = HashSet::new();
    for (i, item) in list.iter().enumerate() {
        let Some(obj) = item.as_object() else {
            f.push(Finding::error(
                ErrorCode::ManifestInvalidField,
                p(&format!("{key}/{i}")),
                format!("each item of {key} must be a mapping"),
            ));
            continue;
        };
        match obj
            .get("key")
            .or_else(|| obj.get("id"))
            .and_then(Value::as_str)
        {
            Some(k) => {
                if !seen.insert(k.to_owned()) {
                    f.push(Finding::error(
                        ErrorCode::ManifestDuplicateKey,
                        p(&format!("{key}/{i}/key")),
                        format!("{key} key {k:?} is used twice"),
                    ));
                }
            }
            None => f.push(Finding::warning(
                "manifest.item_without_key",
                p(&format!("{key}/{i}")),
                format!("item {i} of {key} has no key"),
            )),
        }
    }
}

fn requires(m: &Map<String, Value>, f: &mut Vec<Finding>) {
    let Some(req) = m.get("requires") else { return };
    let Some(req) = req.as_object() else {
        f.push(Finding::error(
            ErrorCode::ManifestInvalidField,
            p("requires"),
            "requires must be a mapping",
        ));
        return;
    };
    match req.get("capabilities") {
        None | Some(Value::Null) => {}
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => {}
        Some(Value::Object(o)) if o.values().all(Value::is_string) => {}
        Some(_) => f.push(Finding::error(
            ErrorCode::ManifestInvalidField,
            p("requires/capabilities"),
            "requires.capabilities must be a list of names or a map of name to version range",
        )),
    }
    if let Some(lime) = req.get("lime") {
        if !lime
            .as_object()
            .is_some_and(|o| o.values().all(Value::is_string))
        {
            f.push(Finding::error(
                ErrorCode::ManifestInvalidField,
                p("requires/lime"),
                "requires.lime must map names to version ranges",
            ));
        }
    }
    if let Some(sdk) = req.get("sdk") {
        if !sdk.is_string() {
            f.push(Finding::error(
                ErrorCode::ManifestInvalidField,
                p("requires/sdk"),
                "requires.sdk must be a string",
            ));
        }
    }
}
