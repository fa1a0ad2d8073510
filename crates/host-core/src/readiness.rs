//! Readiness: can this app (and each of its entries) run here, and if not, what fixes it.
//!
//! A pure function of (manifest, files, host profile, host state): it reads declarations and
//! host facts and never executes app code. Every check is machine-readable
//! (`{severity, kind, key, required, message, setupAction}` plus `outcome`), so the CLI and the
//! app center render the same facts.
//!
//! Status rule: `disabled` if the user disabled the app; else `blocked` if any required check is
//! blocked or has an unknown outcome (AppHost cannot confirm a requirement it does not know,
//! such as an unknown `requires.lime.*` key or eval check type); else `needs-setup` if any
//! required check needs setup; else `ready-degraded` if any optional/recommended check failed;
//! else `ready`. Entries get the same rule over the
//! app-wide checks plus their own (`requiredCapabilities`, `permissions`).

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;
use serde_json::{json, Value};

use crate::compat::{parse_date, parse_version, split_package_spec, Range};
use crate::hashing::FileRecord;
use crate::manifest::{is_required, Manifest};
use crate::profile::HostProfile;
use crate::projection::package_path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Ready,
    ReadyDegraded,
    NeedsSetup,
    Blocked,
    Disabled,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ready => "ready",
            Status::ReadyDegraded => "ready-degraded",
            Status::NeedsSetup => "needs-setup",
            Status::Blocked => "blocked",
            Status::Disabled => "disabled",
        }
    }
}

/// What one check concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Pass,
    /// Worth showing; changes nothing.
    Notice,
    /// AppHost cannot evaluate this check (an unknown check type). Shown; a required check
    /// with this outcome keeps the app from launching (`blocked`), an optional one does not.
    Unknown,
    Degraded,
    NeedsSetup,
    Blocked,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SetupAction {
    pub key: String,
    pub title: String,
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    pub severity: &'static str,
    pub kind: &'static str,
    pub key: String,
    pub required: bool,
    pub outcome: Outcome,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tier: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup_action: Option<SetupAction>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remediation: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EntryReadiness {
    pub entry_key: String,
    pub status: Status,
    /// Keys of this entry's own checks that keep it from `ready`. App-wide checks count in
    /// `status` but are listed once, in the report's checks, not again for every entry (that
    /// would make the report entries x checks long).
    pub missing: Vec<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub ok: bool,
    pub status: Status,
    pub app: String,
    pub checks: Vec<Check>,
    pub blockers: Vec<String>,
    pub warnings: Vec<String>,
    pub setup_actions: Vec<SetupAction>,
    pub entries: Vec<EntryReadiness>,
}

/// Permissions the user has granted, or a preview of a fresh install.
#[derive(Debug, Clone)]
pub enum Grants {
    /// Not installed yet: required permissions are shown as granted by install consent.
    Preview,
    Granted(BTreeSet<String>),
}

/// Host facts readiness depends on. Today the host has no secret store, knowledge service or
/// ToolHub, so nothing is bound; those fields exist so readiness already reads them.
#[derive(Debug, Clone)]
pub struct HostState {
    pub now: jiff::Timestamp,
    pub disabled: bool,
    pub grants: Grants,
    pub bound_secrets: BTreeSet<String>,
    pub bound_knowledge: BTreeSet<String>,
    pub available_tools: BTreeSet<String>,
    /// Why this version's storage migrations could not be applied (blocks the app).
    pub storage_failure: Option<StorageFailure>,
    /// A model provider is configured (`model_settings`): without one, `lime.agent` needs
    /// setup ("Set up a model").
    pub model_configured: bool,
}

/// A storage migration batch that failed for an app version (recorded in `host.db`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StorageFailure {
    /// `storage.migration_*` cause.
    pub cause: String,
    /// The migration's id (file name).
    pub migration: String,
    pub message: String,
}

impl HostState {
    pub fn preview(now: jiff::Timestamp) -> Self {
        HostState {
            now,
            disabled: false,
            grants: Grants::Preview,
            bound_secrets: BTreeSet::new(),
            bound_knowledge: BTreeSet::new(),
            available_tools: BTreeSet::new(),
            storage_failure: None,
            model_configured: false,
        }
    }
}

struct Ctx<'a> {
    m: &'a Manifest,
    files: &'a [FileRecord],
    /// The package's paths, for lookups by path (sorted, so a folder is a range).
    paths: BTreeSet<&'a str>,
    /// Declared permissions by key: (some declaration is required, some is optional).
    declared: HashMap<&'a str, (bool, bool)>,
    profile: &'a HostProfile,
    state: &'a HostState,
    checks: Vec<Check>,
}

fn severity(o: Outcome, required: bool) -> &'static str {
    match o {
        Outcome::Unknown if required => "error",
        Outcome::Pass | Outcome::Notice | Outcome::Unknown => "info",
        Outcome::Degraded | Outcome::NeedsSetup => "warning",
        Outcome::Blocked => "error",
    }
}

impl Ctx<'_> {
    fn push(
        &mut self,
        kind: &'static str,
        key: impl Into<String>,
        required: bool,
        outcome: Outcome,
        message: impl Into<String>,
    ) -> &mut Check {
        self.checks.push(Check {
            severity: severity(outcome, required),
            kind,
            key: key.into(),
            required,
            outcome,
            message: message.into(),
            code: None,
            version: None,
            tier: None,
            entry: None,
            setup_action: None,
            remediation: None,
        });
        self.checks.last_mut().expect("just pushed")
    }

    fn has_path(&self, reference: &str) -> bool {
        let p = package_path(reference);
        let prefix = format!("{p}/");
        // The first path at or after `p/` is inside the folder if any is.
        self.paths.contains(p.as_str())
            || self
                .paths
                .range(prefix.as_str()..)
                .next()
                .is_some_and(|f| f.starts_with(&prefix))
    }

    fn granted(&self, permission: &str) -> bool {
        match &self.state.grants {
            Grants::Granted(set) => set.contains(permission),
            Grants::Preview => self.declared.get(permission).is_some_and(|d| d.0),
        }
    }
}

fn item_key(v: &Value, fallback: &str) -> String {
    [
        "key",
        "id",
        "name",
        "template",
        "capability",
        "permission",
        "tool",
        "check",
    ]
    .iter()
    .find_map(|k| v.get(*k).and_then(Value::as_str))
    .unwrap_or(fallback)
    .to_owned()
}

fn action(
    key: &str,
    title: String,
    kind: &'static str,
    target: Option<String>,
) -> Option<SetupAction> {
    Some(SetupAction {
        key: key.to_owned(),
        title,
        kind,
        target,
        description: None,
    })
}

pub fn evaluate(
    m: &Manifest,
    files: &[FileRecord],
    profile: &HostProfile,
    state: &HostState,
) -> Report {
    let mut declared: HashMap<&str, (bool, bool)> = HashMap::new();
    for p in m.array("permissions") {
        if let Some(key) = p.get("key").and_then(Value::as_str) {
            let d = declared.entry(key).or_default();
            if is_required(p) {
                d.0 = true;
            } else {
                d.1 = true;
            }
        }
    }
    let mut cx = Ctx {
        m,
        files,
        paths: files.iter().map(|f| f.path.as_str()).collect(),
        declared,
        profile,
        state,
        checks: Vec::new(),
    };
    compatibility(&mut cx);
    capabilities(&mut cx);
    package_files(&mut cx);
    storage(&mut cx);
    permissions(&mut cx);
    declared_requirements(&mut cx);
    eval_tiers(&mut cx);
    install_modes(&mut cx);
    finish(m, state, cx.checks)
}

fn compatibility(cx: &mut Ctx) {
    let req = cx.m.object("requires").cloned().unwrap_or_default();
    if let Some(lime) = req.get("lime").and_then(Value::as_object) {
        for (name, range) in lime {
            let range_text = range.as_str().unwrap_or_default();
            let host_version = match name.as_str() {
                "appRuntime" | "runtime" => Some(cx.profile.app_runtime_version.clone()),
                "host" | "desktop" | "apphost" => Some(cx.profile.host_version.clone()),
                _ => None,
            };
            let key = format!("requires.lime.{name}");
            let Some(have) = host_version else {
                let c = cx.push(
                    "compatibility",
                    key,
                    true,
                    Outcome::Unknown,
                    format!("requires.lime.{name} {range_text:?} is a requirement AppHost does not know, so it cannot confirm it"),
                );
                c.code = Some("compat.unknown_requirement");
                c.version = Some(range_text.into());
                c.remediation = Some(
                    "update AppHost, or install a release of the app that does not require it"
                        .into(),
                );
                continue;
            };
            check_range(
                cx,
                "compatibility",
                key,
                range_text,
                &have,
                "the host runtime",
            );
        }
    }
    if let Some(sdk) = req.get("sdk").and_then(Value::as_str) {
        let (pkg, range) = split_package_spec(sdk);
        if pkg != cx.profile.sdk_package {
            let c = cx.push(
                "compatibility",
                "requires.sdk",
                true,
                Outcome::Blocked,
                format!(
                    "the app needs SDK {pkg}; AppHost provides {}",
                    cx.profile.sdk_package
                ),
            );
            c.code = Some("compat.requires_unsatisfied");
        } else {
            let have = cx.profile.sdk_version.clone();
            check_range(
                cx,
                "compatibility",
                "requires.sdk".into(),
                range,
                &have,
                "the SDK",
            );
        }
    }
    let now = cx.state.now;
    if let Some(eol) = cx.m.data.get("endOfLifeAt").and_then(parse_date) {
        if eol <= now {
            let superseded =
                cx.m.data
                    .get("supportWindow")
                    .and_then(|s| s.get("supersededBy"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            let c = cx.push(
                "compatibility",
                "endOfLifeAt",
                true,
                Outcome::Blocked,
                format!("this release reached end of life on {eol}"),
            );
            c.code = Some("compat.end_of_life");
            c.remediation = Some(match superseded {
                Some(s) => format!("install {s} instead"),
                None => "install a supported release".into(),
            });
        }
    }
    if let Some(dep) = cx.m.data.get("deprecatedAt").and_then(parse_date) {
        if dep <= now {
            cx.push(
                "compatibility",
                "deprecatedAt",
                false,
                Outcome::Notice,
                format!("this release is deprecated since {dep}"),
            );
        }
    }
}

fn check_range(cx: &mut Ctx, kind: &'static str, key: String, range: &str, have: &str, what: &str) {
    match (Range::parse(range), parse_version(have)) {
        (Ok(r), Some(v)) if r.matches(&v) => {
            let c = cx.push(
                kind,
                key,
                true,
                Outcome::Pass,
                format!("{what} {have} satisfies {range}"),
            );
            c.version = Some(range.into());
        }
        (Ok(_), _) => {
            let c = cx.push(
                kind,
                key,
                true,
                Outcome::Blocked,
                format!("{what} is {have}; the app needs {range}"),
            );
            c.code = Some("compat.requires_unsatisfied");
            c.version = Some(range.into());
            c.remediation = Some(
                "install a release of the app compatible with this AppHost, or update AppHost"
                    .into(),
            );
        }
        (Err(e), _) => {
            let c = cx.push(kind, key, true, Outcome::Blocked, e);
            c.code = Some("compat.invalid_range");
            c.version = Some(range.into());
        }
    }
}

fn capability_check(
    cx: &mut Ctx,
    name: &str,
    range: Option<&str>,
    required: bool,
    entry: Option<&str>,
) {
    let key = entry
        .map(|e| format!("{e}:{name}"))
        .unwrap_or_else(|| name.to_owned());
    let miss = if required {
        Outcome::Blocked
    } else {
        Outcome::Degraded
    };
    let (outcome, message, code) = match cx.profile.capabilities.get(name) {
        None => (
            miss,
            format!("{name} is not a capability AppHost knows"),
            Some("capability.unknown"),
        ),
        Some(info) if !info.available => (
            miss,
            format!("{name} is not available in this AppHost build yet"),
            Some("capability.unavailable"),
        ),
        Some(info) => match range.map(|r| (r, Range::parse(r))) {
            Some((r, Ok(rr))) if !parse_version(&info.version).is_some_and(|v| rr.matches(&v)) => (
                miss,
                format!("{name} is version {}; the app needs {r}", info.version),
                Some("compat.requires_unsatisfied"),
            ),
            Some((_, Err(e))) => (miss, e, Some("compat.invalid_range")),
            _ => (
                Outcome::Pass,
                format!("{name} {} is available", info.version),
                None,
            ),
        },
    };
    // lime.agent is available in this build, but runs nothing until a model is set up.
    let needs_model =
        name == "lime.agent" && outcome == Outcome::Pass && !cx.state.model_configured;
    let (outcome, message, code) = if needs_model {
        (
            if required {
                Outcome::NeedsSetup
            } else {
                Outcome::Degraded
            },
            "lime.agent needs a model: none is set up in AppHost".to_owned(),
            Some("model.not_configured"),
        )
    } else {
        (outcome, message, code)
    };
    let c = cx.push("capability", key.clone(), required, outcome, message);
    c.code = code;
    c.version = range.map(str::to_owned);
    c.entry = entry.map(str::to_owned);
    if needs_model {
        c.setup_action = action("model", "Set up a model".into(), "model", None);
        c.remediation = Some("set a model in Settings → Model (or `apphost model set`)".into());
        return;
    }
    if outcome != Outcome::Pass {
        c.remediation = Some(if required {
            "update AppHost to a version that provides this capability".into()
        } else {
            "the app runs without it, with reduced features".into()
        });
    }
}

fn capabilities(cx: &mut Ctx) {
    let mut required_names = BTreeSet::new();
    match cx
        .m
        .data
        .get("requires")
        .and_then(|r| r.get("capabilities"))
    {
        Some(Value::Array(list)) => {
            for name in list.iter().filter_map(Value::as_str) {
                required_names.insert(name.to_owned());
                capability_check(cx, name, None, true, None);
            }
        }
        Some(Value::Object(map)) => {
            for (name, range) in map {
                required_names.insert(name.clone());
                capability_check(cx, name, range.as_str(), true, None);
            }
        }
        _ => {}
    }
    // Capabilities the app says it uses but does not require: optional.
    if let Some(Value::Array(list)) = cx.m.data.get("capabilities") {
        for name in list.iter().filter_map(Value::as_str) {
            if name.starts_with("lime.") && !required_names.contains(name) {
                capability_check(cx, name, None, false, None);
            }
        }
    }
    for e in cx.m.array("entries").to_vec() {
        let key = item_key(&e, "entry");
        for name in e
            .get("requiredCapabilities")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            capability_check(cx, name, None, true, Some(&key));
        }
    }
}

fn package_files(cx: &mut Ctx) {
    if let Some(rp) = cx.m.object("runtimePackage").cloned() {
        for (k, v) in &rp {
            for field in ["path", "schema", "migrations"] {
                if let Some(p) = v.get(field).and_then(Value::as_str) {
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
    for list in [
        "skillRefs",
        "knowledgeTemplates",
        "toolRefs",
        "artifactTypes",
        "evals",
        "overlayTemplates",
    ] {
        for item in cx.m.array(list).to_vec() {
            if let Some(p) = item.get("path").and_then(Value::as_str) {
                if !cx.has_path(p) {
                    let c = cx.push(
                        "package",
                        format!("{list}.{}", item_key(&item, list)),
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

fn storage(cx: &mut Ctx) {
    let Some(s) = cx.m.object("storage").cloned() else {
        return;
    };
    let ns = s
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or(cx.m.name())
        .to_owned();
    for field in ["schema", "migrations"] {
        if let Some(p) = s.get(field).and_then(Value::as_str) {
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
    let count = s.get("migrations").and_then(Value::as_str).map_or(0, |d| {
        crate::projection::planned_migration_files(d, cx.files).len()
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
    let required = requires_capability(cx.m, "lime.storage");
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

/// Whether the app lists `name` in `requires.capabilities` (a list or a map of ranges).
fn requires_capability(m: &Manifest, name: &str) -> bool {
    match m.data.get("requires").and_then(|r| r.get("capabilities")) {
        Some(Value::Array(list)) => list.iter().any(|v| v.as_str() == Some(name)),
        Some(Value::Object(map)) => map.contains_key(name),
        _ => false,
    }
}

fn permissions(cx: &mut Ctx) {
    for p in cx.m.array("permissions").to_vec() {
        let key = item_key(&p, "permission");
        let required = is_required(&p);
        let scope = p
            .get("scope")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned();
        if cx.granted(&key) {
            let how = if matches!(cx.state.grants, Grants::Preview) {
                "granted when you install"
            } else {
                "granted"
            };
            cx.push(
                "permission",
                key.clone(),
                required,
                Outcome::Pass,
                format!("{scope} permission {key} is {how}"),
            );
        } else if required {
            let c = cx.push(
                "permission",
                key.clone(),
                true,
                Outcome::NeedsSetup,
                format!("required {scope} permission {key} is not granted"),
            );
            c.setup_action = action(
                &key,
                format!("Grant {key}"),
                "grant-permission",
                Some(key.clone()),
            );
        } else {
            cx.push(
                "permission",
                key.clone(),
                false,
                Outcome::Notice,
                format!("optional {scope} permission {key} is asked for when the app needs it"),
            );
        }
    }
    // Entry-scoped permission requirements.
    for e in cx.m.array("entries").to_vec() {
        let ekey = item_key(&e, "entry");
        for perm in e
            .get("permissions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !cx.granted(perm) {
                let declared_optional = cx.declared.get(perm).is_some_and(|d| d.1);
                let outcome = if declared_optional {
                    Outcome::Degraded
                } else {
                    Outcome::NeedsSetup
                };
                let c = cx.push(
                    "permission",
                    format!("{ekey}:{perm}"),
                    true,
                    outcome,
                    format!("entry {ekey} needs permission {perm}"),
                );
                c.entry = Some(ekey.clone());
                c.setup_action = action(
                    perm,
                    format!("Grant {perm}"),
                    "grant-permission",
                    Some(perm.to_owned()),
                );
            }
        }
    }
}

/// One kind of declared slot the host must bind (secret, knowledge) or provide (tool).
struct Slot {
    list: &'static str,
    kind: &'static str,
    /// Outcome when a required / an optional slot is missing.
    missing: (Outcome, Outcome),
    missing_message: &'static str,
    code: Option<&'static str>,
    /// Setup action kind and title verb, when the user can fix it.
    fix: Option<(&'static str, &'static str)>,
}

fn slot_checks(cx: &mut Ctx, slot: Slot, present: &BTreeSet<String>) {
    for item in cx.m.array(slot.list).to_vec() {
        let key = item_key(&item, slot.kind);
        let req = is_required(&item);
        if present.contains(&key) {
            cx.push(
                slot.kind,
                key,
                req,
                Outcome::Pass,
                format!("{} is ready", slot.kind),
            );
            continue;
        }
        let outcome = if req { slot.missing.0 } else { slot.missing.1 };
        let message = format!("{} {key} {}", slot.kind, slot.missing_message);
        let c = cx.push(slot.kind, key.clone(), req, outcome, message);
        c.code = slot.code;
        if let Some((kind, verb)) = slot.fix {
            c.setup_action = action(&key, format!("{verb} {key}"), kind, Some(key.clone()));
        }
    }
}

fn declared_requirements(cx: &mut Ctx) {
    let state = cx.state;
    slot_checks(
        cx,
        Slot {
            list: "secrets",
            kind: "secret",
            missing: (Outcome::NeedsSetup, Outcome::Notice),
            missing_message: "is not bound",
            code: None,
            fix: Some(("configure-secret", "Bind secret")),
        },
        &state.bound_secrets,
    );
    // How to bind one today: the CLI reads the value from stdin, never from an argument.
    let app = cx.m.name().to_owned();
    for c in cx.checks.iter_mut().filter(|c| c.kind == "secret") {
        if let Some(a) = c.setup_action.as_mut() {
            a.description = Some(format!("apphost secrets set {app} {}", a.key));
        }
    }
    slot_checks(
        cx,
        Slot {
            list: "knowledgeTemplates",
            kind: "knowledge",
            missing: (Outcome::NeedsSetup, Outcome::Notice),
            missing_message: "is not bound",
            code: None,
            fix: Some(("bind-knowledge", "Bind knowledge")),
        },
        &state.bound_knowledge,
    );
    slot_checks(
        cx,
        Slot {
            list: "toolRefs",
            kind: "tool",
            missing: (Outcome::Blocked, Outcome::Degraded),
            missing_message: "is not available: this AppHost has no ToolHub connection",
            code: Some("tool.unavailable"),
            fix: None,
        },
        &state.available_tools,
    );
    for i in cx.m.array("integrations").to_vec() {
        let key = item_key(&i, "integration");
        let missing = i
            .pointer("/readiness/missing")
            .and_then(Value::as_str)
            .unwrap_or(if is_required(&i) {
                "needs-setup"
            } else {
                "optional"
            });
        let outcome = match missing {
            "blocked" => Outcome::Blocked,
            "needs-setup" => Outcome::NeedsSetup,
            _ => Outcome::Notice,
        };
        let c = cx.push(
            "integration",
            key.clone(),
            outcome != Outcome::Notice,
            outcome,
            format!("integration {key} is not connected"),
        );
        if let Some(a) = i.pointer("/readiness/setupAction").and_then(Value::as_str) {
            c.setup_action = action(
                &key,
                format!("Connect {key}"),
                "external",
                Some(a.to_owned()),
            );
        }
    }
}

fn eval_tiers(cx: &mut Ctx) {
    let Some(spec) = cx.m.readiness_spec.clone() else {
        return;
    };
    for (tier, list) in [
        ("required", "required"),
        ("recommended", "recommended"),
        ("performance", "performance"),
    ] {
        for item in spec
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let check = item
                .get("check")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_owned();
            let blocker = matches!(
                item.get("blocker").or_else(|| item.get("blocking")),
                Some(Value::Bool(true))
            );
            let (passed, subject): (Option<bool>, String) = match check.as_str() {
                "sdk_version" => {
                    let expect = item.get("expect").and_then(Value::as_str).unwrap_or("*");
                    let ok = Range::parse(expect.trim_start_matches('='))
                        .ok()
                        .zip(parse_version(&cx.profile.sdk_version))
                        .map(|(r, v)| r.matches(&v));
                    (ok, format!("sdk {expect}"))
                }
                "capability_available" => {
                    let c = item
                        .get("capability")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_owned();
                    (Some(cx.profile.available(&c).is_some()), c)
                }
                "permission_granted" => {
                    let p = item
                        .get("permission")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_owned();
                    (Some(cx.granted(&p)), p)
                }
                "knowledge_bound" => {
                    let t = item
                        .get("template")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_owned();
                    (Some(cx.state.bound_knowledge.contains(&t)), t)
                }
                "tool_available" => {
                    let t = item
                        .get("tool")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                        .to_owned();
                    (Some(cx.state.available_tools.contains(&t)), t)
                }
                _ => (None, item_key(item, &check)),
            };
            let declared = item
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| format!("{check} {subject}"));
            let message = if passed.is_none() {
                format!("AppHost does not know the {tier} readiness check {check:?}, so it cannot confirm it ({declared})")
            } else {
                declared
            };
            let outcome = match (passed, tier) {
                (None, _) => Outcome::Unknown,
                (Some(true), _) => Outcome::Pass,
                (Some(false), "required") if blocker => Outcome::Blocked,
                (Some(false), "required") => Outcome::NeedsSetup,
                (Some(false), "recommended") => Outcome::Degraded,
                (Some(false), _) => Outcome::Notice,
            };
            let required = tier == "required";
            let c = cx.push(
                "eval",
                format!("{check}:{subject}"),
                required,
                outcome,
                message,
            );
            c.tier = Some(tier);
            if let Some(r) = item.get("remediation").and_then(Value::as_str) {
                c.remediation = Some(r.to_owned());
            }
            if outcome == Outcome::Unknown {
                c.code = Some("eval.unknown_check");
            }
        }
    }
}

fn install_modes(cx: &mut Ctx) {
    let Some(modes) =
        cx.m.data
            .get("install")
            .and_then(|i| i.get("modes"))
            .and_then(Value::as_array)
            .cloned()
    else {
        return;
    };
    if !modes.iter().any(|m| m.as_str() == Some("in_lime")) {
        let list = modes
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(", ");
        let c = cx.push(
            "install",
            "install.modes",
            true,
            Outcome::Blocked,
            format!("the app installs only as {list}; AppHost hosts in_lime apps"),
        );
        c.code = Some("install.mode_unsupported");
    }
}

fn status_of<'a>(checks: impl Iterator<Item = &'a Check>) -> (Status, Vec<String>) {
    let mut worst = Status::Ready;
    let mut missing = Vec::new();
    for c in checks {
        let s = match (c.outcome, c.required) {
            (Outcome::Blocked | Outcome::Unknown, true) => Status::Blocked,
            (Outcome::NeedsSetup, true) => Status::NeedsSetup,
            (Outcome::Blocked | Outcome::NeedsSetup | Outcome::Degraded, _) => {
                Status::ReadyDegraded
            }
            _ => continue,
        };
        missing.push(c.key.clone());
        worst = worst.max(s);
    }
    (worst, missing)
}

fn finish(m: &Manifest, state: &HostState, checks: Vec<Check>) -> Report {
    let (mut status, _) = status_of(checks.iter().filter(|c| c.entry.is_none()));
    // Each entry's own checks, grouped once (not one scan of every check per entry).
    let mut own: HashMap<&str, Vec<&Check>> = HashMap::new();
    for c in &checks {
        if let Some(e) = c.entry.as_deref() {
            own.entry(e).or_default().push(c);
        }
    }
    // An app whose every entry is blocked cannot launch anything.
    let entries: Vec<EntryReadiness> = m
        .array("entries")
        .iter()
        .map(|e| {
            let key = item_key(e, "entry");
            let (s, missing) = status_of(own.get(key.as_str()).into_iter().flatten().copied());
            EntryReadiness {
                entry_key: key,
                status: if state.disabled {
                    Status::Disabled
                } else {
                    s.max(status)
                },
                missing,
            }
        })
        .collect();
    if !entries.is_empty() && entries.iter().all(|e| e.status == Status::Blocked) {
        status = Status::Blocked;
    } else if status == Status::Ready && entries.iter().any(|e| e.status > Status::Ready) {
        status = Status::ReadyDegraded;
    }
    if state.disabled {
        status = Status::Disabled;
    }
    let blockers = checks
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::Blocked | Outcome::Unknown) && c.required)
        .map(|c| c.message.clone())
        .collect();
    let warnings = checks
        .iter()
        .filter(|c| {
            matches!(c.outcome, Outcome::Degraded | Outcome::Notice)
                || (matches!(c.outcome, Outcome::Blocked | Outcome::Unknown) && !c.required)
        })
        .map(|c| c.message.clone())
        .collect();
    let mut setup_actions: Vec<SetupAction> = Vec::new();
    let mut seen: BTreeSet<(&str, &str)> = BTreeSet::new();
    for a in checks
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::NeedsSetup | Outcome::Degraded))
        .filter_map(|c| c.setup_action.as_ref())
    {
        if seen.insert((a.key.as_str(), a.kind)) {
            setup_actions.push(a.clone());
        }
    }
    Report {
        ok: status != Status::Blocked,
        status,
        app: m.name().to_owned(),
        checks,
        blockers,
        warnings,
        setup_actions,
        entries,
    }
}

impl Report {
    /// The report as the standard's readiness result (`app-readiness.schema.json`).
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(self).expect("report serializes");
        v["command"] = json!("readiness");
        v["workspace"] = Value::Null;
        v
    }
}

#[cfg(test)]
mod tests;
