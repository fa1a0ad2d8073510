//! The Agent App manifest: `APP.md` frontmatter merged with the layered `app.*.yaml` files.
//!
//! Unknown fields are kept verbatim (the manifest is a JSON object, not a closed struct), so a
//! newer package loses nothing when an older host reads it. Validation produces findings with
//! stable codes; findings of severity `error` make the package uninstallable.

pub mod authoring;
mod file_refs;
mod frontmatter;
mod layered;
mod validate;
mod view;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::limits::Limits;
use crate::foundation::yaml::{self, YamlError};

pub use layered::reads as reads_file;
pub use validate::{is_required, APP_TYPES, ENTRY_KINDS, LEGACY_ENTRY_KINDS, STATUSES};
pub use view::{
    AgentRuntime, Entry, EntryKind, EvalCheck, Event, FrameFlag, Item, ItemText, Key, ManifestView,
    Permission, Presentation, RemoteAuthDecl, Requires, RuntimePackage, Service, Storage, Ui,
    Workflow, EVAL_TIERS, RUNTIME_PACKAGE_PATH_FIELDS, SKILL_FIELDS, TRIGGER_FIELDS,
};

/// The manifest version this host implements (the standard's current version).
pub const CURRENT_MANIFEST_VERSION: &str = "0.10.0";
/// Oldest supported `0.x` minor.
pub const OLDEST_MANIFEST_MINOR: u64 = 3;
pub const NEWEST_MANIFEST_MINOR: u64 = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

/// One validation result. `code` is an [`ErrorCode`] string for errors and a documented
/// warning code (`docs/cli.md`) otherwise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub code: &'static str,
    /// Where: a file, optionally with a JSON pointer (`APP.md#/entries/1/kind`).
    pub path: String,
    pub message: String,
    /// The 1-based line in `path`, where there is one (authoring findings in UI files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// What to write instead, where the finding knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Finding {
    pub fn error(code: ErrorCode, path: impl Into<String>, message: impl Into<String>) -> Self {
        Finding {
            severity: Severity::Error,
            code: code.as_str(),
            path: path.into(),
            message: message.into(),
            line: None,
            fix: None,
        }
    }
    pub fn warning(
        code: &'static str,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            severity: Severity::Warning,
            code,
            path: path.into(),
            message: message.into(),
            line: None,
            fix: None,
        }
    }
}

/// A parsed, merged and validated manifest.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// Frontmatter merged with layered files (layered wins). Key order: frontmatter first.
    pub data: Map<String, Value>,
    /// The Markdown body of `APP.md` (human guidance; never a system prompt).
    pub body: String,
    /// `evals/readiness.yaml` → `readiness`, when present.
    pub readiness_spec: Option<Value>,
    /// `evals/health.yaml` → `health`, when present.
    pub health_spec: Option<Value>,
    /// `app.signature.yaml` → `signature`, when present (verification input, not merged).
    pub signature_doc: Option<Value>,
    /// Which layered files contributed.
    pub layered_files: Vec<String>,
    /// The effective manifest version (`0.4.0` when the field is absent, as in the reference CLI).
    pub manifest_version: String,
    pub findings: Vec<Finding>,
}

impl Manifest {
    pub fn name(&self) -> &str {
        self.view().name()
    }
    pub fn version(&self) -> &str {
        self.view().version()
    }
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }
    /// The first error as a [`HostError`] carrying every finding in its details.
    pub fn first_error(&self) -> Option<HostError> {
        let first = self
            .findings
            .iter()
            .find(|f| f.severity == Severity::Error)?;
        let code = ErrorCode::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == first.code)
            .unwrap_or(ErrorCode::ManifestInvalidField);
        Some(
            HostError::new(code, format!("{} ({})", first.message, first.path))
                .with("path", &first.path)
                .with("findings", &self.findings),
        )
    }
}

pub(crate) fn yaml_error(file: &str, e: YamlError) -> HostError {
    let code = match e {
        YamlError::DepthLimit { .. } => ErrorCode::ManifestYamlDepthLimit,
        YamlError::NodeLimit { .. } => ErrorCode::ManifestYamlNodeLimit,
        YamlError::AliasLimit { .. } => ErrorCode::ManifestYamlAliasLimit,
        YamlError::ExpansionLimit { .. } => ErrorCode::ManifestYamlExpansionLimit,
        YamlError::DuplicateKey { .. } => ErrorCode::ManifestYamlDuplicateKey,
        _ => ErrorCode::ManifestYamlSyntax,
    };
    let limit = match e {
        YamlError::DepthLimit { limit }
        | YamlError::NodeLimit { limit }
        | YamlError::AliasLimit { limit }
        | YamlError::ExpansionLimit { limit } => Some(limit),
        _ => None,
    };
    let err = HostError::new(code, format!("{file}: {e}")).with("file", file);
    match limit {
        Some(limit) => err.with("limit", limit),
        None => err,
    }
}

/// Parses a YAML file that must hold a mapping.
pub(crate) fn parse_mapping(
    file: &str,
    text: &[u8],
    limits: &Limits,
) -> HostResult<Map<String, Value>> {
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    let text = std::str::from_utf8(text).map_err(|_| {
        HostError::new(
            ErrorCode::ManifestNotUtf8,
            format!("{file} is not valid UTF-8"),
        )
        .with("file", file)
    })?;
    match yaml::parse(&text.replace("\r\n", "\n"), limits.yaml())
        .map_err(|e| yaml_error(file, e))?
    {
        Value::Object(m) => Ok(m),
        Value::Null => Ok(Map::new()),
        _ => Err(HostError::new(
            ErrorCode::ManifestNotAMapping,
            format!("{file} must be a YAML mapping"),
        )
        .with("file", file)),
    }
}

/// Loads the manifest from the captured metadata files of a package, taking them to be the
/// whole package (see [`load_with_files`]).
pub fn load(captured: &BTreeMap<String, Vec<u8>>, limits: &Limits) -> HostResult<Manifest> {
    load_with_files(captured, captured.keys().map(String::as_str), limits)
}

/// Loads the manifest from the captured metadata files of a package (`APP.md` and the files
/// [`reads_file`] names; others are ignored). `package_files` lists every file of the package,
/// for the warnings about root `app.*` files that are not read.
///
/// Returns `Err` only when the manifest cannot be read at all (missing, not UTF-8, no
/// frontmatter, YAML errors, limits). Field-level problems become findings.
pub fn load_with_files<'a>(
    captured: &BTreeMap<String, Vec<u8>>,
    package_files: impl IntoIterator<Item = &'a str>,
    limits: &Limits,
) -> HostResult<Manifest> {
    let raw = captured
        .get("APP.md")
        .ok_or_else(|| HostError::new(ErrorCode::ManifestMissing, "the package has no APP.md"))?;
    let split = frontmatter::split(raw)?;
    let mut front = match yaml::parse(&split.yaml, limits.yaml()) {
        Ok(Value::Object(m)) => m,
        Ok(Value::Null) => Map::new(),
        Ok(_) => {
            return Err(HostError::new(
                ErrorCode::ManifestNotAMapping,
                "the APP.md frontmatter must be a YAML mapping",
            )
            .with("file", "APP.md"))
        }
        Err(e) => {
            let mut err = yaml_error("APP.md", e.clone());
            if let YamlError::Syntax { line, .. } = e {
                err = err.with("line", line + split.yaml_first_line - 1);
            }
            return Err(err);
        }
    };
    let mut findings = Vec::new();
    let layers = layered::load(captured, package_files, limits, &mut findings)?;
    let layered_files = layers.files.clone();
    layered::merge(&mut front, layers.values, &mut findings);
    let manifest_version = validate::validate(&mut front, &mut findings);
    Ok(Manifest {
        data: front,
        body: split.body,
        readiness_spec: layers.readiness,
        health_spec: layers.health,
        signature_doc: layers.signature,
        layered_files,
        manifest_version,
        findings,
    })
}

#[cfg(test)]
mod tests;
