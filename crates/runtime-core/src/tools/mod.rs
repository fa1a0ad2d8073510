//! Host tools offered to the model, scoped to the calling app's data area
//! ([`crate::app_area`]):
//!
//! - `storage_list` / `storage_read` / `storage_write` work on the `files/` sub-area only, so no
//!   path can name a reserved file of the area (`storage.sqlite`, `artifacts.sqlite`,
//!   `artifact-blobs/`, ...); paths are walked without following links at any step; writes are
//!   atomic (temporary file `O_EXCL|O_NOFOLLOW`, `renameat`) and count against the app's
//!   storage quota together with `storage.sqlite` (over it: `quota_exceeded`, nothing written).
//! - `artifact_write` creates a real `lime.artifacts` artifact through [`AppArtifacts::create`]
//!   (the code behind `lime.artifacts.create`: limits, quota, one content-addressed blob),
//!   stamped with the installed package and the agent run and tool call that made it; it is
//!   listed by `lime.artifacts.list` and `apphost artifacts`.
//!
//! `storage_write` always needs an explicit approval per call; `artifact_write` does when the
//! host's [`ToolPolicy`] says so (default: yes).

pub mod external;
pub mod knowledge;
pub mod policy;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use serde_json::{json, Value};

use crate::app_area::files::{FilesArea, FilesError, RelPath};
use crate::app_area::AppArea;
use crate::app_artifacts::{AgentProvenance, AppArtifacts, ArtifactError, Provenance};
use crate::app_data::AppDataStore;
use crate::app_storage::{AppStorage, StorageError};
use crate::backend::ToolSpec;
use crate::ids::{AppId, ArtifactId};
use crate::turn::ArtifactRecord;
pub use policy::{DefaultToolPolicy, PackageFacts, ToolPolicy};

/// Largest file `storage_read` returns (bytes).
pub const MAX_READ_BYTES: u64 = 4 * 1024 * 1024;
/// Largest content `storage_write` / `artifact_write` accept (bytes).
pub const MAX_WRITE_BYTES: usize = 4 * 1024 * 1024;

/// A failed tool call: a stable code and a message for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    pub code: String,
    pub message: String,
}

fn terr(code: &str, message: impl Into<String>) -> ToolError {
    ToolError {
        code: code.into(),
        message: message.into(),
    }
}

impl From<FilesError> for ToolError {
    fn from(e: FilesError) -> Self {
        terr(e.code(), e.to_string())
    }
}

impl From<StorageError> for ToolError {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::QuotaExceeded { .. } => terr("quota_exceeded", e.to_string()),
            e => terr("storage_error", e.to_string()),
        }
    }
}

impl From<ArtifactError> for ToolError {
    fn from(e: ArtifactError) -> Self {
        let code = match e {
            ArtifactError::QuotaExceeded { .. } | ArtifactError::TooMany { .. } => "quota_exceeded",
            ArtifactError::TooLarge { .. } => "too_large",
            ArtifactError::InvalidName(_)
            | ArtifactError::InvalidMimeType
            | ArtifactError::InvalidArgument(_) => "invalid_arguments",
            _ => "storage_error",
        };
        terr(code, e.to_string())
    }
}

fn io_err(e: std::io::Error) -> ToolError {
    match e.raw_os_error().map(rustix::io::Errno::from_raw_os_error) {
        Some(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => terr(
            "link_refused",
            "the app's data directory is not a plain directory (links are never followed)",
        ),
        _ => terr("storage_error", e.to_string()),
    }
}

/// Which call of which run a tool runs for (stamped in what it creates).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub app: AppId,
    pub session_id: String,
    pub turn_id: String,
    pub tool_call_id: String,
}

impl ToolCall {
    /// A call outside any run (tests).
    pub fn bare(app: &AppId) -> ToolCall {
        ToolCall {
            app: app.clone(),
            session_id: String::new(),
            turn_id: String::new(),
            tool_call_id: String::new(),
        }
    }
}

/// The host tool set.
#[derive(Clone, Debug)]
pub struct HostTools {
    apps: AppDataStore,
    policy: Arc<dyn ToolPolicy>,
    knowledge: knowledge::KnowledgeGrants,
    /// The `<server>/<tool>` refs each session's tasks declared (`startTask({tools})`).
    external: knowledge::SessionGrants,
    source: Option<Arc<dyn external::ToolSource>>,
}

pub type ToolOutput = (String, Vec<ArtifactRecord>);

impl HostTools {
    pub fn new(apps: AppDataStore) -> Self {
        HostTools {
            apps,
            policy: Arc::new(DefaultToolPolicy),
            knowledge: knowledge::KnowledgeGrants::default(),
            external: knowledge::SessionGrants::default(),
            source: None,
        }
    }

    /// The host's external (MCP) tools; without one, a task's tool refs offer nothing.
    pub fn with_source(mut self, source: Option<Arc<dyn external::ToolSource>>) -> Self {
        self.source = source;
        self
    }

    pub fn with_policy(mut self, policy: Arc<dyn ToolPolicy>) -> Self {
        self.policy = policy;
        self
    }

    /// The tools with the default policy (documentation, schemas).
    pub fn specs() -> Vec<ToolSpec> {
        specs(policy::DEFAULT_ARTIFACT_WRITE_NEEDS_APPROVAL)
    }

    /// The tools as the host's policy has them now (read at each turn's start).
    pub fn current_specs(&self) -> Vec<ToolSpec> {
        specs(self.policy.artifact_write_needs_approval())
    }

    /// The tools a turn of `session_id` gets: [`Self::current_specs`], `knowledge_search`
    /// when the session's task declared knowledge templates, and the external tools its tasks
    /// declared that the host's [`external::ToolSource`] offers now (blocking).
    pub fn specs_for(&self, app: &AppId, session_id: &str) -> Vec<ToolSpec> {
        let mut specs = self.current_specs();
        let templates = self.knowledge.of(session_id);
        if !templates.is_empty() {
            specs.push(knowledge::spec(&templates));
        }
        let refs = self.external.of(session_id);
        if let (Some(source), false) = (&self.source, refs.is_empty()) {
            specs.extend(external::specs(source.as_ref(), app, &refs));
        }
        specs
    }

    /// The external tool refs each session's tasks declared.
    pub fn tool_grants(&self) -> &knowledge::SessionGrants {
        &self.external
    }

    /// The knowledge templates each session's tasks declared.
    pub fn knowledge_grants(&self) -> &knowledge::KnowledgeGrants {
        &self.knowledge
    }

    /// Runs `name` for `call.app` (blocking file I/O: call from a blocking thread).
    pub fn run(&self, call: &ToolCall, name: &str, args: &Value) -> Result<ToolOutput, ToolError> {
        self.run_with(call, name, args, false, crate::backend::cancel_pair().1)
    }

    /// [`Self::run`] with whether the user approved this call (the turn asked, the user said
    /// yes) and the turn's cancel signal, which external tools pass on to their server.
    pub fn run_with(
        &self,
        call: &ToolCall,
        name: &str,
        args: &Value,
        approved_by_user: bool,
        cancel: crate::backend::CancelSignal,
    ) -> Result<ToolOutput, ToolError> {
        if name.starts_with(external::PREFIX) {
            let refs = self.external.of(&call.session_id);
            let (Some(source), Some(tool_ref)) = (&self.source, external::ref_of(&refs, name))
            else {
                return Err(terr("unknown_tool", format!("no tool named {name:?}")));
            };
            return source.call(call, &tool_ref, args, approved_by_user, cancel);
        }
        match name {
            "storage_list" => self.storage_list(&call.app),
            "storage_read" => {
                let rel = RelPath::parse(str_arg(args, "path")?)?;
                let files = self
                    .files(&call.app, false)?
                    .ok_or_else(|| ToolError::from(FilesError::NotFound))?;
                let bytes = files.read(&rel, MAX_READ_BYTES)?;
                Ok((String::from_utf8_lossy(&bytes).into_owned(), Vec::new()))
            }
            "storage_write" => self.storage_write(call, args),
            "artifact_write" => self.artifact_write(call, args),
            "knowledge_search" => knowledge::run(self, call, args),
            other => Err(terr("unknown_tool", format!("no tool named {other:?}"))),
        }
    }

    fn area(&self, app: &AppId, create: bool) -> Result<Option<AppArea>, ToolError> {
        let dir = self.apps.dir(app);
        if create {
            AppArea::open(&dir).map(Some).map_err(io_err)
        } else {
            AppArea::open_existing(&dir).map_err(io_err)
        }
    }

    fn files(&self, app: &AppId, create: bool) -> Result<Option<FilesArea>, ToolError> {
        match self.area(app, create)? {
            Some(area) => Ok(FilesArea::open(&area, create)?),
            None => Ok(None),
        }
    }

    fn storage_list(&self, app: &AppId) -> Result<ToolOutput, ToolError> {
        let mut out = String::new();
        if let Some(files) = self.files(app, false)? {
            for f in files.list()?.files {
                out.push_str(&format!("{}\t{}\n", f.path, f.size));
            }
        }
        Ok((out, Vec::new()))
    }

    fn storage_write(&self, call: &ToolCall, args: &Value) -> Result<ToolOutput, ToolError> {
        let content = str_arg(args, "content")?;
        if content.len() > MAX_WRITE_BYTES {
            return Err(terr("too_large", "content is too large"));
        }
        let rel = RelPath::parse(str_arg(args, "path")?)?;
        let area = self.area(&call.app, true)?.expect("created");
        let files = FilesArea::open(&area, true)?.expect("created");
        let mut storage = AppStorage::open_in(&area, self.policy.storage_quota(&call.app))?;
        let len = content.len() as u64;
        storage.account_files(|room| -> Result<(u64, ()), ToolError> {
            let listing = files.list()?;
            if listing.truncated {
                return Err(terr(
                    "too_many_files",
                    "this app's files/ holds too many entries to count; delete some first",
                ));
            }
            let old = files.size_of(&rel)?.unwrap_or(0);
            let total = listing.total_bytes.saturating_sub(old).saturating_add(len);
            if total > room {
                return Err(terr(
                    "quota_exceeded",
                    format!(
                        "storage quota exceeded: files/ would hold {total} bytes, {room} are left \
                         beside the app's storage database"
                    ),
                ));
            }
            files.write(&rel, content.as_bytes())?;
            Ok((total, ()))
        })?;
        Ok((format!("wrote {} bytes", content.len()), Vec::new()))
    }

    fn artifact_write(&self, call: &ToolCall, args: &Value) -> Result<ToolOutput, ToolError> {
        let content = str_arg(args, "content")?;
        if content.len() > MAX_WRITE_BYTES {
            return Err(terr("too_large", "content is too large"));
        }
        let title = str_arg(args, "title")?.to_owned();
        let kind = args
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("text")
            .to_owned();
        crate::app_artifacts::check_name(&title).map_err(ToolError::from)?;
        let package = self.policy.package(&call.app).unwrap_or_default();
        let provenance = Provenance {
            app_id: call.app.as_str().to_owned(),
            app_version: package.app_version,
            package_hash: package.package_hash,
            manifest_hash: package.manifest_hash,
            entry_key: String::new(),
            trace_id: call.tool_call_id.clone(),
            agent: Some(AgentProvenance {
                session_id: call.session_id.clone(),
                run_id: call.turn_id.clone(),
                tool_call_id: call.tool_call_id.clone(),
                tool: "artifact_write".into(),
            }),
        };
        let area = self.area(&call.app, true)?.expect("created");
        let mut store = AppArtifacts::open_in(&area, self.policy.artifact_limits(&call.app))?;
        let meta = store.create(
            &title,
            Some(mime_of(&kind)),
            content.as_bytes(),
            &provenance,
        )?;
        let id = ArtifactId::new(meta.id.clone())
            .map_err(|_| terr("storage_error", "the artifact id is not valid"))?;
        let record = ArtifactRecord {
            artifact_ref: format!("artifact://{}/{}", call.app.as_str(), id.as_str()),
            artifact_id: id,
            kind,
            title,
            bytes: meta.size,
        };
        Ok((
            format!("saved artifact {}", record.artifact_ref),
            vec![record],
        ))
    }

    /// The bytes of an `artifact://<app>/<id>` ref, if it is one of `app`'s artifacts (read
    /// through `lime.artifacts`, rehashed) and at most `max` bytes.
    pub fn artifact_content(&self, app: &AppId, artifact_ref: &str, max: u64) -> Option<Vec<u8>> {
        let rest = artifact_ref.strip_prefix("artifact://")?;
        let (a, id) = rest.split_once('/')?;
        if a != app.as_str() {
            return None;
        }
        let store = AppArtifacts::open_read_only(&self.apps.dir(app)).ok()??;
        store.read(id, max).ok().map(|(_, bytes)| bytes)
    }
}

/// The MIME type of an artifact of `kind` (the model's label).
fn mime_of(kind: &str) -> &'static str {
    match kind {
        "markdown" | "md" => "text/markdown; charset=utf-8",
        "json" => "application/json",
        "csv" => "text/csv; charset=utf-8",
        _ => "text/plain; charset=utf-8",
    }
}

fn specs(artifact_write_risky: bool) -> Vec<ToolSpec> {
    let path = json!({"type": "string", "minLength": 1, "maxLength": 255});
    vec![
        ToolSpec {
            name: "storage_list".into(),
            description: "List the files in this app's storage (path and size per line).".into(),
            parameters: json!({"type": "object", "properties": {}, "additionalProperties": false}),
            risky: false,
        },
        ToolSpec {
            name: "storage_read".into(),
            description: "Read a UTF-8 text file from this app's storage.".into(),
            parameters: json!({"type": "object", "properties": {"path": path}, "required": ["path"], "additionalProperties": false}),
            risky: false,
        },
        ToolSpec {
            name: "storage_write".into(),
            description:
                "Write a text file in this app's storage (replaces it). Needs the user's approval."
                    .into(),
            parameters: json!({"type": "object", "properties": {"path": path, "content": {"type": "string"}}, "required": ["path", "content"], "additionalProperties": false}),
            risky: true,
        },
        ToolSpec {
            name: "artifact_write".into(),
            description: if artifact_write_risky {
                "Save a text deliverable as a new artifact of this app. Needs the user's approval."
            } else {
                "Save a text deliverable as a new artifact of this app."
            }
            .into(),
            parameters: json!({"type": "object", "properties": {"title": {"type": "string", "minLength": 1, "maxLength": 200}, "content": {"type": "string"}, "kind": {"type": "string", "maxLength": 64}}, "required": ["title", "content"], "additionalProperties": false}),
            risky: artifact_write_risky,
        },
    ]
}

fn str_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| terr("invalid_arguments", format!("{key} must be a string")))
}
