use serde_json::json;

use super::*;

fn view_of(v: &Value) -> ManifestView<'_> {
    ManifestView::new(v.as_object().expect("object"))
}

#[test]
fn entries_read_typed_fields_and_skip_mistyped_ones() {
    let data = json!({
        "entries": [
            {"key": "home", "kind": "page", "title": "Home", "route": "/",
             "requiredCapabilities": ["lime.storage", 7], "permissions": ["net", null]},
            {"key": 3, "kind": "scene"},
            "not an object"
        ]
    });
    let v = view_of(&data);
    let e: Vec<Entry> = v.entries().collect();
    assert_eq!(e.len(), 3);
    assert_eq!(e[0].key(), Some("home"));
    assert_eq!(e[0].kind(), Some(EntryKind::Page));
    assert_eq!(e[0].title(), Some("Home"));
    assert_eq!(e[0].route(), Some("/"));
    assert_eq!(
        e[0].required_capabilities().collect::<Vec<_>>(),
        ["lime.storage"]
    );
    assert_eq!(e[0].permissions().collect::<Vec<_>>(), ["net"]);
    assert_eq!(e[1].key(), None);
    assert_eq!(e[1].key_raw(), Some(&json!(3)));
    assert_eq!(e[1].kind(), Some(EntryKind::Other("scene")));
    assert_eq!(e[1].label("entry"), "entry");
    assert_eq!(e[2].kind(), None);
    assert!(!e[2].is_object());
    assert_eq!(v.entry("home").map(|e| e.title()), Some(Some("Home")));
    assert!(v.entry("nope").is_none());
}

#[test]
fn entry_kinds_round_trip() {
    for k in crate::install::manifest::ENTRY_KINDS
        .iter()
        .chain(crate::install::manifest::LEGACY_ENTRY_KINDS)
    {
        let kind = EntryKind::parse(k);
        assert_eq!(kind.as_str(), *k);
        let legacy = crate::install::manifest::LEGACY_ENTRY_KINDS.contains(k);
        assert_eq!(matches!(kind, EntryKind::Other(_)), legacy, "{k}");
    }
}

#[test]
fn permissions_required_only_when_boolean_true() {
    let data = json!({"permissions": [
        {"key": "net", "scope": "network", "access": "read", "required": true,
         "domains": ["a.example", 1], "reason": "r", "entries": ["home"]},
        {"key": "fs", "scope": "filesystem", "required": "true"},
        {"scope": 5}
    ]});
    let v = view_of(&data);
    let p: Vec<Permission> = v.permissions().collect();
    assert!(p[0].required());
    assert!(!p[1].required());
    assert_eq!(p[0].scope(), Some("network"));
    assert_eq!(p[0].access_raw(), Some(&json!("read")));
    assert_eq!(p[0].reason(), Some("r"));
    assert_eq!(p[0].domains().collect::<Vec<_>>(), ["a.example"]);
    assert_eq!(p[0].entries().map(Vec::len), Some(1));
    assert_eq!(p[2].scope(), None);
    assert_eq!(p[2].scope_raw(), Some(&json!(5)));
    assert_eq!(p[2].label("permission"), "permission");
    assert_eq!(
        v.permission("fs").and_then(|p| p.scope()),
        Some("filesystem")
    );
    assert_eq!(v.permissions_raw().len(), 3);
}

#[test]
fn requires_reads_a_list_or_a_map_of_capabilities() {
    let list = json!({"requires": {"capabilities": ["lime.agent", 4], "sdk": "@lime/app-sdk@^0.10",
        "lime": {"appRuntime": ">=0.1", "other": 2}}});
    let v = view_of(&list);
    assert_eq!(v.requires().capabilities(), [("lime.agent", None)]);
    assert!(v.requires().has_capability("lime.agent"));
    assert!(!v.requires().has_capability("lime.storage"));
    assert_eq!(v.requires().sdk(), Some("@lime/app-sdk@^0.10"));
    let lime: Vec<_> = v.requires().lime().map(|(k, _)| k).collect();
    assert_eq!(lime, ["appRuntime", "other"]);
    let map = json!({"requires": {"capabilities": {"lime.storage": "^1", "lime.agent": 3}}});
    let v = view_of(&map);
    let caps = v.requires().capabilities();
    assert!(caps.contains(&("lime.storage", Some("^1"))));
    assert!(caps.contains(&("lime.agent", None)));
    assert!(v.requires().has_capability("lime.agent"));
    let odd = json!({"requires": "everything"});
    assert!(view_of(&odd).requires().capabilities().is_empty());
    assert_eq!(view_of(&odd).requires().lime().count(), 0);
}

#[test]
fn storage_runtime_package_ui_and_presentation() {
    let data = json!({
        "storage": {"namespace": "ns", "migrations": "./m", "schema": "s.json", "quota": "1MB",
                    "uninstallPolicy": "keep"},
        "runtimePackage": {"hash": "sha256:x", "ui": {"path": "./dist", "entry": "i.html",
                            "schema": 3}, "worker": {"migrations": "w"}},
        "ui": {"frame": {"forms": true, "downloads": "yes"}},
        "presentation": {"icon": "icon.png"},
        "publisher": {"name": "ACME"},
        "install": {"modes": ["in_lime"]},
        "capabilities": ["lime.events", false],
        "supportWindow": {"supersededBy": "demo@2"}
    });
    let v = view_of(&data);
    let s = v.storage().expect("declared");
    assert_eq!(s.namespace(), Some("ns"));
    assert_eq!(s.migrations(), Some("./m"));
    assert_eq!(s.schema(), Some(&json!("s.json")));
    assert_eq!(s.quota(), Some(&json!("1MB")));
    assert_eq!(s.uninstall_policy(), Some("keep"));
    let rp = v.runtime_package();
    assert_eq!(rp.hash(), Some("sha256:x"));
    assert_eq!(rp.ui_path(), Some(&json!("./dist")));
    assert_eq!(rp.ui_entry(), Some("i.html"));
    assert_eq!(
        rp.declared_paths(),
        [("ui", "path", "./dist"), ("worker", "migrations", "w")]
    );
    assert!(v.ui().frame_flag(FrameFlag::Forms));
    assert!(!v.ui().frame_flag(FrameFlag::Downloads));
    assert!(!v.ui().frame_flag(FrameFlag::UnsafeEval));
    assert_eq!(v.presentation().icon(), Some("icon.png"));
    assert_eq!(v.publisher_name(), Some("ACME"));
    assert_eq!(v.install_modes().map(Vec::len), Some(1));
    assert_eq!(
        v.declared_capabilities().collect::<Vec<_>>(),
        ["lime.events"]
    );
    assert_eq!(v.superseded_by(), Some("demo@2"));
    let empty = json!({});
    let e = view_of(&empty);
    assert!(e.storage().is_none());
    assert_eq!(e.runtime_package().declared_paths(), []);
    assert_eq!(e.name(), "");
    assert!(e.list(Key::Entries).is_empty());
}

#[test]
fn items_label_and_integration_readiness() {
    let data = json!({"integrations": [
        {"id": "gh", "required": true, "readiness": {"missing": "blocked", "setupAction": "https://x"}},
        {"name": 7}
    ], "secrets": [{"key": "k", "provider": "p", "scope": "app"}]});
    let v = view_of(&data);
    let i: Vec<Item> = v.items(Key::Integrations).collect();
    assert_eq!(i[0].label("integration"), "gh");
    assert!(i[0].required());
    assert_eq!(i[0].readiness_missing(), Some("blocked"));
    assert_eq!(i[0].readiness_setup_action(), Some("https://x"));
    assert_eq!(i[1].label("integration"), "integration");
    let s = v.items(Key::Secrets).next().expect("one");
    assert_eq!(s.text(ItemText::Provider), Some("p"));
    assert_eq!(s.text(ItemText::Scope), Some("app"));
}

#[test]
fn events_session_modes_and_permission_domains() {
    let data = json!({
        "events": [{"key": "note.saved", "direction": "publish"}, {"key": 1}, "x"],
        "agentRuntime": {"sessionPolicy": {"modes": ["new", 3, "resume"]}},
        "permissions": [
            {"key": "a", "domains": ["a.example", "b.example", 5]},
            {"key": "b", "domains": ["b.example", "c.example"]},
            {"key": "c", "domains": "not a list"}
        ]
    });
    let v = view_of(&data);
    let e: Vec<Event> = v.events().collect();
    assert_eq!(e.len(), 3);
    assert_eq!(
        (e[0].key(), e[0].direction()),
        (Some("note.saved"), Some("publish"))
    );
    assert_eq!((e[1].key(), e[1].direction()), (None, None));
    assert_eq!(v.agent_runtime().session_modes(), ["new", "resume"]);
    assert_eq!(
        v.permission_domains(),
        ["a.example", "b.example", "c.example"]
    );
    let empty = json!({"agentRuntime": {"sessionPolicy": {"modes": "new"}}});
    assert!(view_of(&empty).agent_runtime().session_modes().is_empty());
    assert!(view_of(&empty).permission_domains().is_empty());
}

#[test]
fn raw_fields_for_validation() {
    let data = json!({
        "publisher": {"verified": false},
        "skills": {"references": [{"required": "yes"}]},
        "requires": {"capabilities": 5, "lime": {"a": 1}, "sdk": true},
        "storage": ["not a mapping"],
        "entries": [{"key": "p", "kind": "page", "route": null}, {"key": "q", "kind": "panel"}],
        "permissions": [{"key": "k", "access": "read", "bypassPermissions": false}]
    });
    let v = view_of(&data);
    assert_eq!(v.publisher_verified_raw(), Some(&json!(false)));
    assert!(v.skill_references_raw().is_some_and(Value::is_array));
    let r = v.requires();
    assert_eq!(r.capabilities_raw(), Some(&json!(5)));
    assert_eq!(r.lime_raw(), Some(&json!({"a": 1})));
    assert_eq!(r.sdk_raw(), Some(&json!(true)));
    assert!(!v.storage().expect("declared").is_mapping());
    let e: Vec<Entry> = v.entries().collect();
    // A binding present with any value counts; a missing one does not.
    assert!(e[0].has_binding(EntryKind::Page));
    assert!(!e[1].has_binding(EntryKind::Panel));
    assert!(e[1].has_binding(EntryKind::Settings));
    assert_eq!(EntryKind::ExpertChat.binding(), Some("persona"));
    assert_eq!(EntryKind::Artifact.binding(), None);
    let p = v.permission("k").expect("declared");
    assert_eq!(p.access(), Some("read"));
    assert_eq!(p.bypass_permissions_raw(), Some(&json!(false)));
    // `id` counts only when `key` is absent: a mistyped `key` is not replaced by `id`.
    assert_eq!(Item::new(&json!({"id": "i"})).key_or_id(), Some("i"));
    assert_eq!(Item::new(&json!({"key": 1, "id": "i"})).key_or_id(), None);
    assert_eq!(
        Item::new(&json!({"required": "yes"})).required_raw(),
        Some(&json!("yes"))
    );
}

#[test]
fn package_path_fields_in_order_with_their_kind() {
    let data = json!({
        "runtimePackage": {"ui": {"path": "ui/", "entry": 3}, "lockfile": "app.lock"},
        "entries": [{"ui": "a/"}, "x"],
        "presentation": {"icon": "data:image/png;base64,AA"},
        "install": {"branding": {"icon": "i.png"}},
        "i18n": {"translations": {"fr": "i18n/fr.json"}},
        "readme": "README.md",
        "links": {"changelog": "https://example.com/c"}
    });
    let fields = view_of(&data).package_path_fields();
    let got: Vec<(&str, &Value, PathKind)> = fields
        .iter()
        .map(|(p, v, k)| (p.as_str(), *v, *k))
        .collect();
    assert_eq!(
        got,
        [
            ("runtimePackage/ui/path", &json!("ui/"), PathKind::Folder),
            // Present whatever its type: validation decides what to do with it.
            ("runtimePackage/ui/entry", &json!(3), PathKind::File),
            (
                "runtimePackage/lockfile",
                &json!("app.lock"),
                PathKind::File
            ),
            ("entries/0/ui", &json!("a/"), PathKind::Folder),
            (
                "presentation/icon",
                &json!("data:image/png;base64,AA"),
                PathKind::Image
            ),
            ("install/branding/icon", &json!("i.png"), PathKind::Image),
            (
                "i18n/translations/fr",
                &json!("i18n/fr.json"),
                PathKind::File
            ),
            ("readme", &json!("README.md"), PathKind::Doc),
            (
                "links/changelog",
                &json!("https://example.com/c"),
                PathKind::Doc
            ),
        ]
    );
}
