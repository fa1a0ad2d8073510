//! Field-level validation of a merged manifest. Adds findings; coerces nothing except a
//! numeric `version` (kept as text, with a warning).

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::view::{EntryKind, Item, Key, ManifestView};
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
const KEYED_ARRAYS: &[Key] = &[
    Key::Services,
    Key::Workflows,
    Key::KnowledgeTemplates,
    Key::ToolRefs,
    Key::ArtifactTypes,
    Key::Evals,
    Key::Events,
    Key::Secrets,
    Key::OverlayTemplates,
    Key::Integrations,
    Key::Operations,
];
const DATE_FIELDS: &[Key] = &[
    Key::CreatedAt,
    Key::UpdatedAt,
    Key::ReleasedAt,
    Key::DeprecatedAt,
    Key::EndOfLifeAt,
];

fn p(ptr: &str) -> String {
    format!("APP.md#/{ptr}")
}

pub(super) fn validate(m: &mut Map<String, Value>, f: &mut Vec<Finding>) -> String {
    version(m, f);
    let v = ManifestView::new(m);
    required_string(
        v,
        Key::Name,
        f,
        runtime_core::ids::is_valid_app_name,
        "must match ^[a-z0-9][a-z0-9-_.]*$ (1..64 characters)",
    );
    required_string(
        v,
        Key::Description,
        f,
        |s| s.chars().count() <= 1024,
        "must be at most 1024 characters",
    );
    enum_field(
        v,
        Key::Status,
        STATUSES,
        ErrorCode::ManifestUnknownStatus,
        f,
    );
    enum_field(
        v,
        Key::AppType,
        APP_TYPES,
        ErrorCode::ManifestUnknownAppType,
        f,
    );
    let mv = manifest_version(v, f);
    entries(v, &mv, f);
    permissions(v, f);
    for key in KEYED_ARRAYS {
        keyed_array(v, *key, f);
    }
    requires(v, f);
    required_flags(v, f);
    super::file_refs::check(m, f);
    for key in DATE_FIELDS {
        if let Some(date) = v.value(*key) {
            if crate::install::compat::parse_date(date).is_none() {
                let key = key.as_str();
                f.push(Finding::error(
                    ErrorCode::ManifestInvalidField,
                    p(key),
                    format!("{key} must be an ISO 8601 date or date-time"),
                ));
            }
        }
    }
    if let Some(storage) = v.storage() {
        if !storage.is_mapping() {
            f.push(Finding::error(
                ErrorCode::ManifestInvalidField,
                p("storage"),
                "storage must be a mapping",
            ));
        } else if storage.namespace().is_none() {
            f.push(Finding::warning(
                "manifest.storage_namespace_missing",
                p("storage/namespace"),
                "storage has no namespace; the app name is used",
            ));
        }
    }
    if v.publisher_verified_raw().is_some() {
        f.push(Finding::warning(
            "manifest.self_declared_verification",
            p("publisher/verified"),
            "publisher.verified is decided by AppHost (signatures), not by the package; it is ignored",
        ));
    }
    mv
}

/// `version`: a string; a YAML number (version: 1.0) is kept as its text with a warning.
fn version(m: &mut Map<String, Value>, f: &mut Vec<Finding>) {
    match ManifestView::new(m).value(Key::Version).cloned() {
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
            m.insert(Key::Version.as_str().into(), Value::String(n.to_string()));
        }
        Some(_) => f.push(Finding::error(
            ErrorCode::ManifestInvalidField,
            p("version"),
            "version must be a string",
        )),
    }
}

/// Lists whose items may say `required: true|false` (the standard's schema types it boolean).
const ITEMS_WITH_REQUIRED: &[Key] = &[
    Key::Permissions,
    Key::KnowledgeTemplates,
    Key::SkillRefs,
    Key::ToolRefs,
    Key::ArtifactTypes,
    Key::Evals,
    Key::Secrets,
    Key::OverlayTemplates,
    Key::Integrations,
];

/// Whether a declared item (a permission, secret, tool, ...) is required. The one rule that
/// install, consent and readiness share: only the boolean `true` is required. Any other value
/// (`"yes"`, `1`, `"true"`) is a `manifest.invalid_field` error found by validation, so an
/// installed manifest never carries one.
pub fn is_required(item: &Value) -> bool {
    Item::new(item).required()
}

/// `required` must be a boolean wherever the standard defines it.
fn required_flags(v: ManifestView, f: &mut Vec<Finding>) {
    let lists = ITEMS_WITH_REQUIRED
        .iter()
        .map(|k| (k.as_str().to_owned(), v.value(*k)))
        .chain(std::iter::once((
            "skills/references".to_owned(),
            v.skill_references_raw(),
        )));
    for (list, items) in lists {
        for (i, item) in items
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            match Item::new(item).required_raw() {
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
    v: ManifestView,
    key: Key,
    f: &mut Vec<Finding>,
    ok: impl Fn(&str) -> bool,
    rule: &str,
) {
    let (value, key) = (v.value(key), key.as_str());
    match value {
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

fn enum_field(v: ManifestView, key: Key, allowed: &[&str], code: ErrorCode, f: &mut Vec<Finding>) {
    let (value, key) = (v.value(key), key.as_str());
    match value {
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
fn manifest_version(v: ManifestView, f: &mut Vec<Finding>) -> String {
    let raw = match v.value(Key::ManifestVersion) {
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

fn entries(v: ManifestView, mv: &str, f: &mut Vec<Finding>) {
    let Some(list) = v.value(Key::Entries) else {
        return;
    };
    if !list.is_array() {
        f.push(Finding::error(
            ErrorCode::ManifestInvalidField,
            p("entries"),
            "entries must be a list",
        ));
        return;
    }
    let mut keys = HashSet::new();
    for (i, entry) in v.entries().enumerate() {
        let at = |field: &str| p(&format!("entries/{i}{field}"));
        if !entry.is_object() {
            f.push(Finding::error(
                ErrorCode::ManifestInvalidField,
                at(""),
                "each entry must be a mapping",
            ));
            continue;
        }
        match entry.key_raw() {
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
        let label = entry.key().unwrap_or("?");
        match entry.kind().map(EntryKind::as_str) {
            None => f.push(Finding::error(
                ErrorCode::ManifestMissingField,
                at("/kind"),
                format!("entry {label} has no kind"),
            )),
            Some(k) if ENTRY_KINDS.contains(&k) => {
                let kind = EntryKind::parse(k);
                if let Some(b) = kind.binding().filter(|_| !entry.has_binding(kind)) {
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
        if !entry.title_raw().is_some_and(Value::is_string) {
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

fn permissions(v: ManifestView, f: &mut Vec<Finding>) {
    keyed_array(v, Key::Permissions, f);
    for (i, perm) in v.permissions().enumerate() {
        let at = |field: &str| p(&format!("permissions/{i}/{field}"));
        if let Some(s) = perm.scope() {
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
        if let Some(a) = perm.access() {
            if !PERMISSION_ACCESS.contains(&a) {
                f.push(Finding::warning(
                    "permission.unknown_access",
                    at("access"),
                    format!("permission access {a:?} is not in the standard's list"),
                ));
            }
        }
        if perm.bypass_permissions_raw().is_some() {
            f.push(Finding::error(
                ErrorCode::ManifestInvalidField,
                at("bypassPermissions"),
                "manifests may not declare bypassPermissions",
            ));
        }
    }
}

fn keyed_array(v: ManifestView, key: Key, f: &mut Vec<Finding>) {
    let Some(value) = v.value(key) else { return };
    let key = key.as_str();
    let Some(list) = value.as_array() else {
        f.push(Finding::error(
            ErrorCode::ManifestInvalidField,
            p(key),
            format!("{key} must be a list"),
        ));
        return;
    };
    let mut seen = HashSet::new();
    for (i, item) in list.iter().enumerate() {
        if !item.is_object() {
            f.push(Finding::error(
                ErrorCode::ManifestInvalidField,
                p(&format!("{key}/{i}")),
                format!("each item of {key} must be a mapping"),
            ));
            continue;
        }
        match Item::new(item).key_or_id() {
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

fn requires(v: ManifestView, f: &mut Vec<Finding>) {
    let Some(raw) = v.value(Key::Requires) else {
        return;
    };
    if !raw.is_object() {
        f.push(Finding::error(
            ErrorCode::ManifestInvalidField,
            p("requires"),
            "requires must be a mapping",
        ));
        return;
    }
    let req = v.requires();
    match req.capabilities_raw() {
        None | Some(Value::Null) => {}
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => {}
        Some(Value::Object(o)) if o.values().all(Value::is_string) => {}
        Some(_) => f.push(Finding::error(
            ErrorCode::ManifestInvalidField,
            p("requires/capabilities"),
            "requires.capabilities must be a list of names or a map of name to version range",
        )),
    }
    if let Some(lime) = req.lime_raw() {
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
    if let Some(sdk) = req.sdk_raw() {
        if !sdk.is_string() {
            f.push(Finding::error(
                ErrorCode::ManifestInvalidField,
                p("requires/sdk"),
                "requires.sdk must be a string",
            ));
        }
    }
}
