//! `lime.artifacts`: content-addressed deliverables in the app's own data area (RuntimeCore's
//! `AppArtifacts`), stamped with the call's provenance.
//!
//! Content crosses the bridge as `text` (UTF-8, stored as is) or `base64` (RFC 4648 standard
//! alphabet with padding); at most [`MAX_BRIDGE_CONTENT_BYTES`] after decoding, checked on the
//! encoded length before decoding. `read` returns at most [`MAX_BRIDGE_READ_BYTES`].
//! Arguments are validated completely before the app's files are opened, so a refused call
//! writes nothing.

use std::path::Path;

use base64::Engine as _;
use runtime_core::app_artifacts::{
    AppArtifacts, ArtifactError, ArtifactLimits, ArtifactMeta, Provenance, MAX_LIST_LIMIT,
};
use runtime_core::app_handles::AppHandles;
use serde_json::{json, Map, Value};

use super::args::{invalid, object, opt_str, req_str};
use super::err;
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::dispatch::{Allowed, CallError};
use crate::hosting::capability::method::{ArtifactsMethod, Method};

/// Largest artifact an app can create over the bridge (decoded bytes): 1 MiB. (A bridge message
/// is at most 1 MiB of JSON, so base64 content is in practice at most about 768 KiB.)
pub const MAX_BRIDGE_CONTENT_BYTES: usize = 1024 * 1024;
/// Largest artifact `read` returns over the bridge: 8 MiB.
pub const MAX_BRIDGE_READ_BYTES: u64 = 8 * 1024 * 1024;

/// Open per-app artifact stores.
#[derive(Default)]
pub(super) struct ArtifactsService {
    open: AppHandles<AppArtifacts>,
}

impl ArtifactsService {
    pub(super) fn close_app(&mut self, app: &str) {
        self.open.close(app);
    }

    /// The app's store, opened (and created) on first use.
    pub(super) fn store(
        &mut self,
        apps_data: &Path,
        a: &Allowed,
    ) -> Result<&mut AppArtifacts, CallError> {
        self.open.get_or_open(a.app(), || {
            AppArtifacts::open(&apps_data.join(a.app()), ArtifactLimits::default())
                .map_err(|e| artifact_err(a, e))
        })
    }

    /// `host:download` of one of the app's own artifacts, on a proof for `lime.artifacts.read`:
    /// its metadata and, with `max_bytes`, its content (rehashed; larger: `artifacts.too_large`).
    pub(super) fn for_download(
        &mut self,
        apps_data: &Path,
        a: &Allowed,
        id: &str,
        max_bytes: Option<u64>,
    ) -> Result<(ArtifactMeta, Option<Vec<u8>>), CallError> {
        if a.method() != Method::Artifacts(ArtifactsMethod::Read) {
            return Err(err(
                a,
                ErrorCode::PermissionDenied,
                "not a proof to read artifacts",
                None,
            ));
        }
        runtime_core::app_artifacts::check_id(id).map_err(|e| artifact_err(a, e))?;
        let store = self.store(apps_data, a)?;
        match max_bytes {
            None => Ok((store.get(id).map_err(|e| artifact_err(a, e))?, None)),
            Some(max) => {
                let (meta, bytes) = store.read(id, max).map_err(|e| artifact_err(a, e))?;
                Ok((meta, Some(bytes)))
            }
        }
    }

    /// The app's store if it is open or exists on disk; never creates one.
    pub(super) fn existing(
        &mut self,
        apps_data: &Path,
        a: &Allowed,
    ) -> Result<Option<&AppArtifacts>, CallError> {
        let dir = apps_data.join(a.app());
        let exists = self.open.is_open(a.app())
            || std::fs::symlink_metadata(dir.join(runtime_core::app_artifacts::ARTIFACTS_FILE))
                .is_ok();
        if !exists {
            return Ok(None);
        }
        self.store(apps_data, a).map(|s| Some(&*s))
    }

    pub(super) fn call(
        &mut self,
        apps_data: &Path,
        a: &Allowed,
        method: ArtifactsMethod,
        args: &Value,
    ) -> Result<Value, CallError> {
        match method {
            ArtifactsMethod::Create => {
                let args = &super::shapes::artifact_create(a, args)?;
                let o = object(a, args, &["name", "mimeType", "text", "base64"])?;
                let name = req_str(a, o, "name")?;
                let mime = opt_str(a, o, "mimeType")?;
                let bytes = content(a, o)?;
                // Checked before the app's files are opened (and again by the store).
                runtime_core::app_artifacts::check_name(name).map_err(|e| artifact_err(a, e))?;
                if let Some(m) = mime {
                    runtime_core::app_artifacts::check_mime(m).map_err(|e| artifact_err(a, e))?;
                }
                let prov = provenance(a)?;
                let meta = self
                    .store(apps_data, a)?
                    .create_keyed(a.idempotency_key(), name, mime, &bytes, &prov)
                    .map_err(|e| artifact_err(a, e))?;
                Ok(serde_json::to_value(meta).unwrap_or(Value::Null))
            }
            ArtifactsMethod::Read => {
                let o = object(a, args, &["id", "encoding"])?;
                let id = req_id(a, o)?;
                let text = match opt_str(a, o, "encoding")? {
                    None | Some("base64") => false,
                    Some("text") => true,
                    Some(_) => {
                        return Err(invalid(a, "args.encoding must be \"base64\" or \"text\""))
                    }
                };
                let (meta, bytes) = self
                    .store(apps_data, a)?
                    .read(id, MAX_BRIDGE_READ_BYTES)
                    .map_err(|e| artifact_err(a, e))?;
                let content = if text {
                    String::from_utf8(bytes).map_err(|_| {
                        let mut e = invalid(a, "the artifact is not UTF-8 text; read it as base64");
                        e.cause_code = Some("artifacts.not_text");
                        e
                    })?
                } else {
                    base64::engine::general_purpose::STANDARD.encode(bytes)
                };
                let mut v = serde_json::to_value(meta).unwrap_or(Value::Null);
                if let Some(m) = v.as_object_mut() {
                    m.insert(
                        "encoding".into(),
                        json!(if text { "text" } else { "base64" }),
                    );
                    m.insert("content".into(), Value::String(content));
                }
                Ok(v)
            }
            ArtifactsMethod::List => {
                let o = object(a, args, &["cursor", "limit"])?;
                let cursor = opt_str(a, o, "cursor")?;
                let limit = limit(a, o)?;
                let page = self
                    .store(apps_data, a)?
                    .list(cursor, limit)
                    .map_err(|e| artifact_err(a, e))?;
                Ok(serde_json::to_value(page).unwrap_or(Value::Null))
            }
            ArtifactsMethod::Delete => {
                let o = object(a, args, &["id"])?;
                let id = req_id(a, o)?;
                let deleted = self
                    .store(apps_data, a)?
                    .delete(id)
                    .map_err(|e| artifact_err(a, e))?;
                Ok(json!({ "deleted": deleted }))
            }
        }
    }
}

/// The call's provenance (from the dispatcher's proof, never from the message).
pub(super) fn provenance(a: &Allowed) -> Result<Provenance, CallError> {
    serde_json::from_value(a.provenance()).map_err(|_| {
        let mut e = err(
            a,
            ErrorCode::UnknownError,
            "the host could not stamp provenance",
            None,
        );
        e.retryable = true;
        e
    })
}

fn req_id<'v>(a: &Allowed, o: &'v Map<String, Value>) -> Result<&'v str, CallError> {
    let id = req_str(a, o, "id")?;
    runtime_core::app_artifacts::check_id(id).map_err(|e| artifact_err(a, e))?;
    Ok(id)
}

pub(super) fn limit(a: &Allowed, o: &Map<String, Value>) -> Result<u32, CallError> {
    match o.get("limit") {
        None | Some(Value::Null) => Ok(100),
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=u64::from(MAX_LIST_LIMIT)).contains(n))
            .map(|n| n as u32)
            .ok_or_else(|| invalid(a, "args.limit must be 1..=1000")),
    }
}

/// The bytes of `text` or `base64` (exactly one), bounded before decoding.
fn content(a: &Allowed, o: &Map<String, Value>) -> Result<Vec<u8>, CallError> {
    let too_large = |n: usize| {
        err(
            a,
            ErrorCode::InvalidArgument,
            &format!("content is {n} bytes or more (at most {MAX_BRIDGE_CONTENT_BYTES})"),
            Some("artifacts.too_large"),
        )
    };
    match (opt_str(a, o, "text")?, opt_str(a, o, "base64")?) {
        (Some(t), None) => {
            if t.len() > MAX_BRIDGE_CONTENT_BYTES {
                return Err(too_large(t.len()));
            }
            Ok(t.as_bytes().to_vec())
        }
        (None, Some(b)) => {
            // 4 characters per 3 bytes: refuse before decoding anything too large.
            if b.len() > MAX_BRIDGE_CONTENT_BYTES.div_ceil(3) * 4 {
                return Err(too_large(b.len() / 4 * 3));
            }
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b)
                .map_err(|_| {
                    let mut e = invalid(
                        a,
                        "args.base64 is not valid base64 (standard alphabet, padded)",
                    );
                    e.cause_code = Some("artifacts.invalid_base64");
                    e
                })?;
            if bytes.len() > MAX_BRIDGE_CONTENT_BYTES {
                return Err(too_large(bytes.len()));
            }
            Ok(bytes)
        }
        (Some(_), Some(_)) => Err(invalid(a, "give args.text or args.base64, not both")),
        (None, None) => Err(invalid(a, "args.text or args.base64 is required")),
    }
}

pub(super) fn artifact_err(a: &Allowed, e: ArtifactError) -> CallError {
    super::store_err(
        a,
        "artifact",
        e.is_host_failure(),
        e.app_code(),
        e.cause_code(),
        || e.to_string(),
    )
}
