//! Projection: everything an app would add, computed from the package alone, before any of its
//! code runs.
//!
//! A pure function of (manifest, file list, hashes): no clock, no random ids, no host state, so
//! the same package always projects to the same bytes. The shape follows the reference CLI's
//! `project` output (and `app-projection.schema.json`), plus the optional keys the schema
//! defines and the CLI never emits, plus AppHost's previews (`uiRoutes`, `networkDomains`,
//! `storage.migrations`). Every projected object carries provenance.

use serde_json::{json, Map, Value};

use crate::hashing::FileRecord;
use crate::manifest::Manifest;
use crate::profile::{STANDARD, STANDARD_VERSION};

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

fn obj_or_empty(m: &Manifest, key: &str) -> Value {
    m.data
        .get(key)
        .filter(|v| v.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}))
}

fn pick(m: &Manifest, keys: &[&str]) -> Map<String, Value> {
    keys.iter()
        .filter_map(|k| m.data.get(*k).map(|v| (k.to_string(), v.clone())))
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
    let prov = provenance(m, input.package_hash, input.manifest_hash);
    let mut out = Map::new();

    let mut app = pick(m, &["name", "description", "version", "status", "appType"]);
    app.insert("manifestVersion".into(), json!(m.manifest_version));
    app.insert(
        "runtimeTargets".into(),
        match m.data.get("runtimeTargets") {
            Some(Value::Array(a)) => Value::Array(a.clone()),
            Some(v) => json!([v]),
            None => json!([]),
        },
    );
    app.insert("presentation".into(), obj_or_empty(m, "presentation"));
    app.extend(pick(
        m,
        &[
            "displayName",
            "displayNameI18n",
            "shortDescription",
            "shortDescriptionI18n",
            "keywords",
            "categories",
        ],
    ));
    out.insert("app".into(), Value::Object(app));
    out.insert("capabilityRequirements".into(), obj_or_empty(m, "requires"));
    out.insert("entries".into(), with_prov(m.array("entries"), &prov));

    let mut ui = obj_or_empty(m, "ui");
    ui["provenance"] = prov.clone();
    out.insert("ui".into(), ui);
    out.insert("uiRoutes".into(), ui_routes(m, &prov));

    out.insert("storage".into(), storage(m, input.files, &prov));
    out.insert("services".into(), with_prov(m.array("services"), &prov));
    out.insert("workflows".into(), with_prov(m.array("workflows"), &prov));
    out.insert(
        "permissions".into(),
        with_prov(m.array("permissions"), &prov),
    );
    out.insert("networkDomains".into(), network_domains(m));
    out.insert(
        "knowledgeTemplates".into(),
        with_prov(m.array("knowledgeTemplates"), &prov),
    );
    out.insert(
        "toolRequirements".into(),
        with_prov(m.array("toolRefs"), &prov),
    );
    for key in [
        "artifactTypes",
        "evals",
        "events",
        "secrets",
        "overlayTemplates",
    ] {
        out.insert(key.into(), with_prov(m.array(key), &prov));
    }
    out.insert("lifecycle".into(), obj_or_empty(m, "lifecycle"));
    out.insert("agentRuntime".into(), obj_or_empty(m, "agentRuntime"));
    out.insert("requirements".into(), obj_or_empty(m, "requirements"));
    out.insert("boundary".into(), obj_or_empty(m, "boundary"));
    out.insert(
        "integrations".into(),
        with_prov(m.array("integrations"), &prov),
    );
    out.insert("operations".into(), with_prov(m.array("operations"), &prov));
    out.insert("install".into(), obj_or_empty(m, "install"));
    out.insert("installModes".into(), install_modes(m));

    // Optional keys from app-projection.schema.json.
    if let Some(t) = m.object("triggers") {
        let t: Map<String, Value> = ["keywords", "scenarios"]
            .iter()
            .filter_map(|k| t.get(*k).map(|v| (k.to_string(), v.clone())))
            .collect();
        out.insert("triggers".into(), Value::Object(t));
    }
    if let Some(s) = m.object("skills") {
        let s: Map<String, Value> = ["bundled", "references"]
            .iter()
            .filter_map(|k| s.get(*k).map(|v| (k.to_string(), v.clone())))
            .collect();
        out.insert("skills".into(), Value::Object(s));
    }
    for key in [
        "quickstart",
        "publisher",
        "supportWindow",
        "support",
        "distribution",
        "compliance",
        "i18n",
    ] {
        if let Some(v) = m.data.get(key).filter(|v| v.is_object()) {
            out.insert(key.into(), v.clone());
        }
    }
    if let Some(v) = m.data.get("publisher").and_then(Value::as_object) {
        // `verified` is decided by the host, never taken from the package.
        let mut p = v.clone();
        p.remove("verified");
        out.insert("publisher".into(), Value::Object(p));
    }
    out.extend(pick(m, &["author", "maintainers", "contributors"]));
    let timeline = pick(
        m,
        &[
            "createdAt",
            "updatedAt",
            "releasedAt",
            "deprecatedAt",
            "endOfLifeAt",
        ],
    );
    if !timeline.is_empty() {
        out.insert("timeline".into(), Value::Object(timeline));
    }
    let links = pick(
        m,
        &[
            "homepage",
            "repository",
            "documentation",
            "issues",
            "changelog",
        ],
    );
    if !links.is_empty() {
        out.insert("links".into(), Value::Object(links));
    }
    let mut license = Map::new();
    if let Some(l) = m.data.get("license") {
        license.insert("spdx".into(), l.clone());
    }
    license.extend(pick(m, &["licenseUrl", "copyright"]));
    if !license.is_empty() {
        out.insert("license".into(), Value::Object(license));
    }
    if let Some(errors) = m.object("errors") {
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
        .array("entries")
        .iter()
        .filter_map(|e| {
            let route = e.get("route").and_then(Value::as_str)?;
            Some(json!({
                "entryKey": e.get("key").cloned().unwrap_or(Value::Null),
                "kind": e.get("kind").cloned().unwrap_or(Value::Null),
                "route": route,
                "provenance": prov,
            }))
        })
        .collect();
    Value::Array(routes)
}

fn network_domains(m: &Manifest) -> Value {
    let mut out: Vec<Value> = Vec::new();
    for p in m.array("permissions") {
        for d in p
            .get("domains")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(domain) = d.as_str() {
                out.push(json!({
                    "domain": domain,
                    "permission": p.get("key").cloned().unwrap_or(Value::Null),
                    "required": p.get("required").and_then(Value::as_bool).unwrap_or(false),
                }));
            }
        }
    }
    Value::Array(out)
}

fn install_modes(m: &Manifest) -> Value {
    match m.data.get("install").and_then(|i| i.get("modes")) {
        Some(Value::Array(a)) if !a.is_empty() => Value::Array(a.clone()),
        _ => json!(["in_lime"]),
    }
}

fn storage(m: &Manifest, files: &[FileRecord], prov: &Value) -> Value {
    let mut s = obj_or_empty(m, "storage");
    if m.data.get("storage").is_some() {
        if s.get("namespace").and_then(Value::as_str).is_none() {
            s["namespace"] = json!(m.name());
        }
        // The migrations AppHost would apply, in order, with their hashes: shown before install.
        let dir = s.get("migrations").and_then(Value::as_str);
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
