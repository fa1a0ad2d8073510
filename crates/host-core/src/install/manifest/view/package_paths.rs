//! Every manifest field that names a file or folder of the package, as written: what
//! validation (`file_refs.rs`) checks to be a package path.

use serde_json::Value;

use super::{Key, ManifestView};

/// What a field that names a package path may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    /// A file.
    File,
    /// A folder (the package root `.`/`./` and a trailing `/` are fine).
    Folder,
    /// An image file, or a `data:` URL.
    Image,
    /// A document file, or a web link.
    Doc,
}

/// Lists of items whose `path` names a file or folder of the package.
const ITEM_PATH_LISTS: [Key; 7] = [
    Key::SkillRefs,
    Key::KnowledgeTemplates,
    Key::ToolRefs,
    Key::ArtifactTypes,
    Key::Evals,
    Key::OverlayTemplates,
    Key::Workflows,
];

impl<'a> ManifestView<'a> {
    /// Every field that names a package path and is present, whatever its type: (its JSON
    /// pointer under the manifest, e.g. `entries/0/ui`, its value, what it may hold), in a
    /// fixed order.
    pub fn package_path_fields(self) -> Vec<(String, &'a Value, PathKind)> {
        let mut out = Vec::new();
        let mut at = |pointer: String, v: Option<&'a Value>, kind: PathKind| {
            if let Some(v) = v {
                out.push((pointer, v, kind));
            }
        };
        if let Some(rp) = self.object(Key::RuntimePackage) {
            for (k, v) in rp {
                for (field, kind) in [
                    ("path", PathKind::Folder),
                    ("entry", PathKind::File),
                    ("schema", PathKind::File),
                    ("migrations", PathKind::Folder),
                ] {
                    at(format!("runtimePackage/{k}/{field}"), v.get(field), kind);
                }
            }
            at(
                "runtimePackage/lockfile".into(),
                rp.get("lockfile"),
                PathKind::File,
            );
        }
        if let Some(storage) = self.value(Key::Storage) {
            at(
                "storage/schema".into(),
                storage.get("schema"),
                PathKind::File,
            );
            at(
                "storage/migrations".into(),
                storage.get("migrations"),
                PathKind::Folder,
            );
        }
        for (i, e) in self.list(Key::Entries).iter().enumerate() {
            at(format!("entries/{i}/ui"), e.get("ui"), PathKind::Folder);
            at(format!("entries/{i}/path"), e.get("path"), PathKind::Folder);
        }
        for (i, s) in self.list(Key::Services).iter().enumerate() {
            for field in ["path", "entry", "binary"] {
                at(
                    format!("services/{i}/{field}"),
                    s.get(field),
                    PathKind::File,
                );
            }
        }
        for list in ITEM_PATH_LISTS {
            for (i, item) in self.list(list).iter().enumerate() {
                let list = list.as_str();
                at(
                    format!("{list}/{i}/path"),
                    item.get("path"),
                    PathKind::Folder,
                );
            }
        }
        let bundled = self
            .value(Key::Skills)
            .and_then(|s| s.get("bundled"))
            .and_then(Value::as_array);
        for (i, b) in bundled.into_iter().flatten().enumerate() {
            at(
                format!("skills/bundled/{i}/path"),
                b.get("path"),
                PathKind::Folder,
            );
        }
        if let Some(p) = self.value(Key::Presentation) {
            at("presentation/icon".into(), p.get("icon"), PathKind::Image);
        }
        if let Some(i) = self.value(Key::Install) {
            at(
                "install/branding/icon".into(),
                i.get("branding").and_then(|b| b.get("icon")),
                PathKind::Image,
            );
        }
        let translations = self
            .value(Key::I18n)
            .and_then(|i| i.get("translations"))
            .and_then(Value::as_object);
        for (locale, file) in translations.into_iter().flatten() {
            at(
                format!("i18n/translations/{locale}"),
                Some(file),
                PathKind::File,
            );
        }
        for key in [Key::Readme, Key::Changelog] {
            at(key.as_str().into(), self.value(key), PathKind::Doc);
        }
        if let Some(links) = self.value(Key::Links) {
            at(
                "links/changelog".into(),
                links.get("changelog"),
                PathKind::Doc,
            );
        }
        out
    }
}
