//! Layered configuration files (`app.*.yaml`) and how they merge into the frontmatter.
//!
//! The standard says "when frontmatter and an independent file disagree, the independent file
//! wins" but leaves merge granularity open. AppHost's rule (documented in
//! `docs/package-format.md`):
//! - arrays of keyed objects (`entries`, `permissions`, `integrations`, `operations`) merge by
//!   `key`: a layered item replaces the frontmatter item with the same key wholesale; items
//!   present on one side only are kept (layered items first, in file order);
//! - any other value is replaced wholesale by the layered value;
//! - every real disagreement is reported as a `manifest.layered_conflict` warning.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{Map, Value};

use super::{parse_mapping, Finding};
use crate::foundation::error::HostResult;
use crate::foundation::limits::Limits;

/// (file, top-level key in the file, manifest key, keyed-array merge)
const LAYERS: &[(&str, Option<&str>, &str, bool)] = &[
    (
        "app.capabilities.yaml",
        Some("capabilities"),
        "capabilities",
        false,
    ),
    ("app.entries.yaml", Some("entries"), "entries", true),
    (
        "app.permissions.yaml",
        Some("permissions"),
        "permissions",
        true,
    ),
    ("app.permissions.yaml", Some("policy"), "policy", false),
    ("app.errors.yaml", Some("errors"), "errors", false),
    ("app.i18n.yaml", Some("i18n"), "i18n", false),
    // The reference CLI: `agentRuntime` key, else the whole file is the agentRuntime object.
    (
        "app.runtime.yaml",
        Some("agentRuntime"),
        "agentRuntime",
        false,
    ),
    // The reference CLI projects the whole file object for these two.
    ("app.requirements.yaml", None, "requirements", false),
    ("app.boundary.yaml", None, "boundary", false),
    (
        "app.integrations.yaml",
        Some("integrations"),
        "integrations",
        true,
    ),
    (
        "app.operations.yaml",
        Some("operations"),
        "operations",
        true,
    ),
    ("app.install.yaml", Some("install"), "install", false),
];

const SPECIAL: &[&str] = &["app.signature.yaml"];

pub(super) struct Layers {
    pub values: Vec<(&'static str, &'static str, Value, bool)>, // (file, manifest key, value, keyed)
    pub readiness: Option<Value>,
    pub health: Option<Value>,
    pub signature: Option<Value>,
    pub files: Vec<String>,
}

const EVALS: &[&str] = &["evals/readiness.yaml", "evals/health.yaml"];

/// Whether the manifest loader reads `path` (a layered file, `app.signature.yaml` or an
/// `evals/*.yaml` file AppHost knows). Only these, with `APP.md`, are kept in memory while a
/// package is read; any other root `app.*.yaml` is reported as unread from its name alone.
pub fn reads(path: &str) -> bool {
    LAYERS.iter().any(|l| l.0 == path) || SPECIAL.contains(&path) || EVALS.contains(&path)
}

/// `captured` holds the files AppHost reads ([`reads`]; others are ignored); `package_files`
/// names every file of the package, for the warnings about files that are not read.
pub(super) fn load<'a>(
    captured: &BTreeMap<String, Vec<u8>>,
    package_files: impl IntoIterator<Item = &'a str>,
    limits: &Limits,
    findings: &mut Vec<Finding>,
) -> HostResult<Layers> {
    let mut out = Layers {
        values: Vec::new(),
        readiness: None,
        health: None,
        signature: None,
        files: Vec::new(),
    };
    // Sorted, so the warnings come in the same order whatever order the files were listed in.
    let unread: BTreeSet<&str> = package_files
        .into_iter()
        .filter(|path| {
            *path == "app.manifest.json"
                || (!reads(path)
                    && !path.contains('/')
                    && path.starts_with("app.")
                    && (path.ends_with(".yaml") || path.ends_with(".yml")))
        })
        .collect();
    for path in unread {
        if path == "app.manifest.json" {
            findings.push(Finding::warning(
                "manifest.machine_manifest_ignored",
                path,
                "app.manifest.json is not read: APP.md (with app.*.yaml) is the manifest",
            ));
        } else {
            findings.push(Finding::warning(
                "manifest.unknown_layered_file",
                path,
                format!("{path} is not a layered file AppHost knows; it is installed but not read"),
            ));
        }
    }
    let mut parsed: BTreeMap<&str, Map<String, Value>> = BTreeMap::new();
    for (path, bytes) in captured {
        if reads(path) {
            parsed.insert(path.as_str(), parse_mapping(path, bytes, limits)?);
            out.files.push(path.clone());
        }
    }

    for (file, file_key, manifest_key, keyed) in LAYERS {
        let Some(doc) = parsed.get(file) else {
            continue;
        };
        let value = match file_key {
            None => Some(Value::Object(doc.clone())),
            Some(k) => match doc.get(*k) {
                Some(v) => Some(v.clone()),
                None if *file == "app.runtime.yaml" => Some(Value::Object(doc.clone())),
                None => None,
            },
        };
        if let Some(v) = value {
            out.values.push((file, manifest_key, v, *keyed));
        }
    }
    // Keys in layered files that no rule reads.
    for (file, doc) in &parsed {
        let known: Vec<&str> = LAYERS
            .iter()
            .filter(|l| l.0 == *file)
            .filter_map(|l| l.1)
            .collect();
        if known.is_empty() || *file == "app.runtime.yaml" {
            continue;
        }
        for key in doc.keys() {
            let extra_ok = *file == "app.requirements.yaml" || *file == "app.boundary.yaml";
            if !known.contains(&key.as_str()) && !extra_ok {
                findings.push(Finding::warning(
                    "manifest.unknown_layered_key",
                    format!("{file}#/{key}"),
                    format!("{file} has a top-level key {key:?} that is not read"),
                ));
            }
        }
    }
    out.readiness = parsed
        .get("evals/readiness.yaml")
        .map(|d| d.get("readiness").cloned().unwrap_or(Value::Null));
    out.health = parsed
        .get("evals/health.yaml")
        .map(|d| d.get("health").cloned().unwrap_or(Value::Null));
    out.signature = parsed
        .get("app.signature.yaml")
        .map(|d| d.get("signature").cloned().unwrap_or(Value::Null));
    Ok(out)
}

pub(super) fn merge(
    front: &mut Map<String, Value>,
    layers: Vec<(&'static str, &'static str, Value, bool)>,
    findings: &mut Vec<Finding>,
) {
    for (file, key, layered, keyed) in layers {
        let Some(existing) = front.get(key).cloned() else {
            front.insert(key.to_owned(), layered);
            continue;
        };
        if existing == layered {
            continue;
        }
        match (keyed, &existing, &layered) {
            (true, Value::Array(fm), Value::Array(ly)) => {
                // Layered items by key (the first one wins, as a search from the start would):
                // one lookup per frontmatter item, not a scan.
                let mut by_key: HashMap<&str, &Value> = HashMap::with_capacity(ly.len());
                for l in ly {
                    if let Some(k) = key_of(l) {
                        by_key.entry(k).or_insert(l);
                    }
                }
                let mut merged = ly.clone();
                for item in fm {
                    match key_of(item) {
                        Some(k) => match by_key.get(k) {
                            Some(l) if *l != item => {
                                findings.push(conflict(file, &format!("{key}[{k}]")))
                            }
                            Some(_) => {}
                            None => merged.push(item.clone()),
                        },
                        None => merged.push(item.clone()),
                    }
                }
                front.insert(key.to_owned(), Value::Array(merged));
            }
            _ => {
                findings.push(conflict(file, key));
                front.insert(key.to_owned(), layered);
            }
        }
    }
}

fn key_of(v: &Value) -> Option<&str> {
    v.get("key").and_then(Value::as_str)
}

fn conflict(file: &str, what: &str) -> Finding {
    Finding::warning(
        "manifest.layered_conflict",
        format!("{file}#/{what}"),
        format!("APP.md and {file} disagree on {what}; the layered file wins"),
    )
}
