//! Projection: everything an app would add, computed from the package alone, before any of its
//! code runs.
//!
//! A pure function of (manifest, file list, hashes): no clock, no random ids, no host state, so
//! the same package always projects to the same bytes. The shape follows the reference CLI's
//! `project` output (and `app-projection.schema.json`), plus the optional keys the schema
//! defines and the CLI never emits, plus AppHost's previews (`uiRoutes`, `networkDomains`,
//! `storage.migrations`). Every projected object carries provenance.

use serde_json::{json, Map, Value};

use crate::foundation::hashing::FileRecord;
use crate::foundation::profile::{STANDARD, STANDARD_VERSION};
use crate::install::manifest::{Key, Manifest, ManifestView, SKILL_FIELDS, TRIGGER_FIELDS};

pub struct ProjectionInput<'a> {
    pub manifest: &'a Manifest,
    pub files: &'a [FileRecord],
    pub package_hash: &'a str,
    pub manifest_hash: &'a str,
}

pub fn provenance(m: &Manifest, package_hash: &str, manifest_hash: &str) -> Value {
    json!({
        "appName": m.name(),
        "appVersion": if m.version().is_empty() { "0.0.0" } else { m.version() },
        "packageHash": package_hash,
        "manifestHash": manifest_hash,
        "standard": STANDARD,
        "standardVersion": STANDARD_VERSION,
    })
}

fn with_prov(items: &[Value], prov: &Value) -> Value {
    Value::Array(
        items
            .iter()
            .map(|item| match item {
                Value::Object(o) => {
                    let mut o = o.clone();
                    o.insert("provenance".into(), prov.clone());
                    Value::Object(o)
                }
                other => json!({ "value": other, "provenance": prov }),
            })
            .collect(),
    )
}

fn obj_or_empty(v: ManifestView, key: Key) -> Value {
    v.value(key)
        .filter(|v| v.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}))
}

/// The fields that are present, under their manifest keys.
fn pick(v: ManifestView, keys: &[Key]) -> Map<String, Value> {
    keys.iter()
        .filter_map(|k| v.value(*k).map(|x| (k.as_str().to_owned(), x.clone())))
        .collect()
}

/// Normalises a package-relative reference (`./storage/migrations`) to a package path.
/// The migration files of `storage.migrations` (a folder): its `.sql` files directly inside,
/// in byte order of their paths. The order they run in, and what the install review shows.
pub fn planned_migration_files<'a>(dir: &str, files: &'a [FileRecord]) -> Vec<&'a FileRecord> {
    let dir = package_path(dir);
    if dir.is_empty() {
        return Vec::new();
    }
    let prefix = format!("{dir}/");
    let mut list: Vec<&FileRecord> = files
        .iter()
        .filter(|f| {
            f.path
                .strip_prefix(&prefix)
                .is_some_and(|rest| !rest.contains('/') && rest.ends_with(".sql"))
        })
        .collect();
    list.sort_by(|a, b| a.path.cmp(&b.path));
    list
}

pub fn package_path(reference: &str) -> String {
    reference
        .trim_start_matches("./")
        .trim_end_matches('/')
        .to_owned()
}

pub fn project(input: &ProjectionInput) -> Value {
    let m = input.manifest;
    let v = m.view();
    let prov = provenance(m, input.package_hash, input.manifest_hash);
    let mut out = Map::new();

    let mut app = pick(
        v,
        &[
            Key::Name,
            Key::Description,
            Key::Version,
            Key::Status,
            Key::AppType,
        ],
    );
    app.insert("manifestVersion".into(), json!(m.manifest_version));
    app.insert(
        "runtimeTargets".into(),
        match v.value(Key::RuntimeTargets) {
            Some(Value::Array(a)) => Value::Array(a.clone()),
            Some(v) => json!([v]),
            None => json!([]),
        },
    );
    app.insert("presentation".into(), obj_or_empty(v, Key::Presentation));
    app.extend(pick(
        v,
        &[
            Key::DisplayName,
            Key::DisplayNameI18n,
            Key::ShortDescription,
            Key::ShortDescriptionI18n,
            Key::Keywords,
            Key::Categories,
        ],
    ));
    out.insert("app".into(), Value::Object(app));
    out.insert(
        "capabilityRequirements".into(),
        obj_or_empty(v, Key::Requires),
    );
    out.insert("entries".into(), with_prov(v.list(Key::Entries), &prov));

    let mut ui = obj_or_empty(v, Key::Ui);
    ui["provenance"] = prov.clone();
    out.insert("ui".into(), ui);
    out.insert("uiRoutes".into(), ui_routes(m, &prov));

    out.insert("storage".into(), storage(m, input.files, &prov));
    out.insert("services".into(), with_prov(v.list(Key::Services), &prov));
    out.insert("workflows".into(), with_prov(v.list(Key::Workflows), &prov));
    out.insert(
        "permissions".into(),
        with_prov(v.list(Key::Permissions), &prov),
    );
    out.insert("networkDomains".into(), network_domains(m));
    out.insert(
        "knowledgeTemplates".into(),
        with_prov(v.list(Key::KnowledgeTemplates), &prov),
    );
    out.insert(
        "toolRequirements".into(),
        with_prov(v.list(Key::ToolRefs), &prov),
    );
    for key in [
        Key::ArtifactTypes,
        Key::Evals,
        Key::Events,
        Key::Secrets,
        Key::OverlayTemplates,
    ] {
        out.insert(key.as_str().into(), with_prov(v.list(key), &prov));
    }
    out.insert("lifecycle".into(), obj_or_empty(v, Key::Lifecycle));
    out.insert("agentRuntime".into(), obj_or_empty(v, Key::AgentRuntime));
    out.insert("requirements".into(), obj_or_empty(v, Key::Requirements));
    out.insert("boundary".into(), obj_or_empty(v, Key::Boundary));
    out.insert(
        "integrations".into(),
        with_prov(v.list(Key::Integrations), &prov),
    );
    out.insert(
        "operations".into(),
        with_prov(v.list(Key::Operations), &prov),
    );
    out.insert("install".into(), obj_or_empty(v, Key::Install));
    out.insert("installModes".into(), install_modes(m));

    // Optional keys from app-projection.schema.json.
    if let Some(t) = v.object(Key::Triggers) {
        let t: Map<String, Value> = TRIGGER_FIELDS
            .iter()
            .filter_map(|k| t.get(*k).map(|x| (k.to_string(), x.clone())))
            .collect();
        out.insert("triggers".into(), Value::Object(t));
    }
    if let Some(s) = v.object(Key::Skills) {
        let s: Map<String, Value> = SKILL_FIELDS
            .iter()
            .filter_map(|k| s.get(*k).map(|x| (k.to_string(), x.clone())))
            .collect();
        out.insert("skills".into(), Value::Object(s));
    }
    for key in [
        Key::Quickstart,
        Key::Publisher,
        Key::SupportWindow,
        Key::Support,
        Key::Distribution,
        Key::Compliance,
        Key::I18n,
    ] {
        if let Some(x) = v.value(key).filter(|x| x.is_object()) {
            out.insert(key.as_str().into(), x.clone());
        }
    }
    if let Some(v) = v.value(Key::Publisher).and_then(Value::as_object) {
        // `verified` is decided by the host, never taken from the package.
        let mut p = v.clone();
        p.remove("verified");
        out.insert("publisher".into(), Value::Object(p));
    }
    out.extend(pick(v, &[Key::Author, Key::Maintainers, Key::Contributors]));
    let timeline = pick(
        v,
        &[
            Key::CreatedAt,
            Key::UpdatedAt,
            Key::ReleasedAt,
            Key::DeprecatedAt,
            Key::EndOfLifeAt,
        ],
    );
    if !timeline.is_empty() {
        out.insert("timeline".into(), Value::Object(timeline));
    }
    let links = pick(
        v,
        &[
            Key::Homepage,
            Key::Repository,
            Key::Documentation,
            Key::Issues,
            Key::Changelog,
        ],
    );
    if !links.is_empty() {
        out.insert("links".into(), Value::Object(links));
    }
    let mut license = Map::new();
    if let Some(l) = v.value(Key::License) {
        license.insert("spdx".into(), l.clone());
    }
    license.extend(pick(v, &[Key::LicenseUrl, Key::Copyright]));
    if !license.is_empty() {
        out.insert("license".into(), Value::Object(license));
    }
    if let Some(errors) = v.object(Key::Errors) {
        let list = errors
            .iter()
            .map(|(name, v)| {
                let mut e = v.as_object().cloned().unwrap_or_default();
                e.insert("name".into(), json!(name));
                Value::Object(e)
            })
            .collect::<Vec<_>>();
        out.insert("errors".into(), Value::Array(list));
    }
    if let Some(h) = &m.health_spec {
        out.insert("health".into(), h.clone());
    }
    out.insert("provenance".into(), prov);
    Value::Object(out)
}

fn ui_routes(m: &Manifest, prov: &Value) -> Value {
    let routes: Vec<Value> = m
        .view()
        .entries()
        .filter_map(|e| {
            let route = e.route()?;
            Some(json!({
                "entryKey": e.key_raw().cloned().unwrap_or(Value::Null),
                "kind": e.kind_raw().cloned().unwrap_or(Value::Null),
                "route": route,
                "provenance": prov,
            }))
        })
        .collect();
    Value::Array(routes)
}

fn network_domains(m: &Manifest) -> Value {
    let mut out: Vec<Value> = Vec::new();
    for p in m.view().permissions() {
        for domain in p.domains() {
            out.push(json!({
                "domain": domain,
                "permission": p.key_raw().cloned().unwrap_or(Value::Null),
                "required": p.required(),
            }));
        }
    }
    Value::Array(out)
}

fn install_modes(m: &Manifest) -> Value {
    match m.view().install_modes() {
        Some(a) if !a.is_empty() => Value::Array(a.clone()),
        _ => json!(["in_lime"]),
    }
}

fn storage(m: &Manifest, files: &[FileRecord], prov: &Value) -> Value {
    let v = m.view();
    let mut s = obj_or_empty(v, Key::Storage);
    if let Some(decl) = v.storage() {
        let is_object = decl.raw().is_object();
        if !is_object || decl.namespace().is_none() {
            s["namespace"] = json!(m.name());
        }
        // The migrations AppHost would apply, in order, with their hashes: shown before install.
        let dir = decl.migrations().filter(|_| is_object);
        let migrations: Vec<Value> = dir
            .map(|d| planned_migration_files(d, files))
            .unwrap_or_default()
            .iter()
            .map(|f| json!({"path": f.path, "size": f.size, "sha256": f.hex()}))
            .collect();
        s["plannedMigrations"] = Value::Array(migrations);
    }
    s["provenance"] = prov.clone();
    s
}

#[cfg(test)]
mod migration_plan_tests {
    use super::*;

    fn rec(path: &str) -> FileRecord {
        FileRecord {
            path: path.into(),
            size: 1,
            sha256: [0; 32],
        }
    }

    /// Only `.sql` files directly in the folder are migrations, in byte order: a README or a
    /// nested folder is never shown as (nor run as) a migration.
    #[test]
    fn planned_migrations_are_the_sql_files_of_the_folder_in_order() {
        let files = [
            rec("storage/migrations/002_b.sql"),
            rec("storage/migrations/README.md"),
            rec("storage/migrations/old/000_x.sql"),
            rec("storage/migrations/001_a.sql"),
            rec("storage/schema.json"),
        ];
        let got: Vec<&str> = planned_migration_files("./storage/migrations/", &files)
            .iter()
            .map(|f| f.path.as_str())
            .collect();
        assert_eq!(
            got,
            [
                "storage/migrations/001_a.sql",
                "storage/migrations/002_b.sql"
            ]
        );
        assert!(planned_migration_files("./", &files).is_empty());
    }
}
