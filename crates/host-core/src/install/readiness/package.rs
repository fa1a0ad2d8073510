//! Package and storage checks: declared paths exist; the storage namespace and its migrations.

use serde_json::Value;

use super::{Ctx, Outcome};
use crate::install::manifest::Key;

pub(super) fn package_files(cx: &mut Ctx) {
    let v = cx.m.view();
    {
        for (k, field, p) in v.runtime_package().declared_paths() {
            {
                {
                    let key = format!("runtimePackage.{k}.{field}");
                    if cx.has_path(p) {
                        cx.push(
                            "package",
                            key,
                            true,
                            Outcome::Pass,
                            format!("{p} is in the package"),
                        );
                    } else {
                        let c = cx.push(
                            "package",
                            key,
                            true,
                            Outcome::Blocked,
                            format!("{p} is declared but not in the package"),
                        );
                        c.code = Some("package.missing_path");
                    }
                }
            }
        }
    }
    for key in [
        Key::SkillRefs,
        Key::KnowledgeTemplates,
        Key::ToolRefs,
        Key::ArtifactTypes,
        Key::Evals,
        Key::OverlayTemplates,
    ] {
        let list = key.as_str();
        for item in v.items(key) {
            if let Some(p) = item.path() {
                if !cx.has_path(p) {
                    let c = cx.push(
                        "package",
                        format!("{list}.{}", item.label(list)),
                        false,
                        Outcome::Notice,
                        format!("referenced path {p} does not exist"),
                    );
                    c.code = Some("package.missing_path");
                }
            }
        }
    }
}

pub(super) fn storage(cx: &mut Ctx) {
    let v = cx.m.view();
    let Some(s) = v.storage().filter(|s| s.raw().is_object()) else {
        return;
    };
    let ns = s.namespace().unwrap_or(v.name()).to_owned();
    for (field, path) in [
        ("schema", s.schema().and_then(Value::as_str)),
        ("migrations", s.migrations()),
    ] {
        if let Some(p) = path {
            if !cx.has_path(p) {
                let c = cx.push(
                    "storage",
                    format!("storage.{field}"),
                    true,
                    Outcome::Blocked,
                    format!("storage.{field} {p} is not in the package"),
                );
                c.code = Some("package.missing_path");
            }
        }
    }
    let count = s.migrations().map_or(0, |d| {
        crate::install::projection::planned_migration_files(d, cx.files).len()
    });
    if let Some(f) = &cx.state.storage_failure {
        let c = cx.push(
            "storage",
            "storage.migrations",
            true,
            Outcome::Blocked,
            format!(
                "the storage migrations of this version were not applied: {} {}",
                f.migration, f.message
            ),
        );
        c.code = Some("storage.migration_failed");
        c.remediation = Some(
            "update the app to a release with a working migration, or roll back to the previous version"
                .into(),
        );
    }
    // The namespace is created by lime.storage on first use; until that capability exists,
    // no namespace exists and no migration has been reviewed or applied.
    let required = v.requires().has_capability("lime.storage");
    let key = format!("storage.namespace:{ns}");
    match cx.profile.available("lime.storage") {
        Some(info) => {
            let version = info.version.clone();
            cx.push(
                "storage",
                key,
                required,
                Outcome::Pass,
                format!("lime.storage {version} creates the private storage namespace {ns:?} on first use; {count} planned migration(s) run then"),
            );
        }
        None => {
            let c = cx.push(
                "storage",
                key,
                required,
                if required { Outcome::Blocked } else { Outcome::Degraded },
                format!("the storage namespace {ns:?} is not available: lime.storage is not available in this AppHost build yet, so no namespace is created and its {count} planned migration(s) are not applied"),
            );
            c.code = Some("capability.unavailable");
            c.remediation = Some(if required {
                "update AppHost to a version that provides lime.storage".into()
            } else {
                "the app runs without its storage, with reduced features".into()
            });
        }
    }
}
