//! Fields as written, whatever their type: what validation reads to report a mistyped or
//! forbidden field. The rest of the host reads the typed accessors in `view.rs`.

use serde_json::Value;

use super::{Entry, EntryKind, Item, ManifestView, Permission, Requires, Storage};

impl<'a> ManifestView<'a> {
    /// `publisher.verified` as written (the package may not decide it).
    pub fn publisher_verified_raw(self) -> Option<&'a Value> {
        self.value(super::Key::Publisher)
            .and_then(|p| p.get("verified"))
    }
    /// `skills.references` as written.
    pub fn skill_references_raw(self) -> Option<&'a Value> {
        self.value(super::Key::Skills)
            .and_then(|s| s.get("references"))
    }
}

impl<'a> EntryKind<'a> {
    /// The field that binds an entry of this kind to what it opens (`page` → `route`,
    /// `panel` → `panel`, `command` → `command`, `workflow` → `workflow`, `expert-chat` →
    /// `persona`); other kinds have none.
    pub fn binding(self) -> Option<&'static str> {
        match self {
            EntryKind::Page => Some("route"),
            EntryKind::Panel => Some("panel"),
            EntryKind::Command => Some("command"),
            EntryKind::Workflow => Some("workflow"),
            EntryKind::ExpertChat => Some("persona"),
            _ => None,
        }
    }
}

impl<'a> Entry<'a> {
    /// Whether the entry has its kind's binding field (see [`EntryKind::binding`]), whatever
    /// its value; `true` for kinds without one.
    pub fn has_binding(self, kind: EntryKind<'_>) -> bool {
        kind.binding().is_none_or(|b| self.0.get(b).is_some())
    }
    /// `title` as written.
    pub fn title_raw(self) -> Option<&'a Value> {
        self.0.get("title")
    }
}

impl<'a> Permission<'a> {
    /// `access`, when a string.
    pub fn access(self) -> Option<&'a str> {
        self.0.get("access").and_then(Value::as_str)
    }
    /// `bypassPermissions` as written (manifests may not declare it).
    pub fn bypass_permissions_raw(self) -> Option<&'a Value> {
        self.0.get("bypassPermissions")
    }
}

impl<'a> Item<'a> {
    /// `key`, else `id` (only when `key` is absent), when a string.
    pub fn key_or_id(self) -> Option<&'a str> {
        self.0
            .get("key")
            .or_else(|| self.0.get("id"))
            .and_then(Value::as_str)
    }
    /// `required` as written.
    pub fn required_raw(self) -> Option<&'a Value> {
        self.0.get("required")
    }
}

impl<'a> Storage<'a> {
    /// Whether `storage` is a mapping.
    pub fn is_mapping(self) -> bool {
        self.0.is_object()
    }
}

impl<'a> Requires<'a> {
    /// `requires.capabilities` as written.
    pub fn capabilities_raw(self) -> Option<&'a Value> {
        self.0.and_then(|r| r.get("capabilities"))
    }
    /// `requires.lime` as written.
    pub fn lime_raw(self) -> Option<&'a Value> {
        self.0.and_then(|r| r.get("lime"))
    }
    /// `requires.sdk` as written.
    pub fn sdk_raw(self) -> Option<&'a Value> {
        self.0.and_then(|r| r.get("sdk"))
    }
}
