//! `host:download`: an app offers a file (one of its own artifacts, or bytes); the host UI asks
//! the user (name, size, type; save or cancel) and Rust writes it into the user's download
//! folder ([`crate::install::downloads`]). Everything is decided here: the relay only shows the question
//! ([`Outgoing::ConfirmDownload`]) and passes the answer back ([`BridgeHost::answer_download`]).
//!
//! - An artifact download goes through the choke point as `lime.artifacts.read` of that
//!   artifact (declared, ready, artifact permission granted, audited) when it is asked for AND
//!   again when the user saves, so a revoke in between applies. A permission that would need a
//!   prompt is refused (`APP_E002`): the app asks for it first with
//!   `lime.policy.requestPermission`.
//! - Bytes (`text` or `base64`) need nothing beyond a mounted, ready frame: they are the app's
//!   own, bounded by the 1 MiB message limit, and the user confirms.
//! - The call stays in flight (it counts towards the frame's limit) until the user answers; at
//!   most [`MAX_PENDING_DOWNLOADS`] wait at once. Unmounting the frame drops its downloads.
//! - The answer is `host:response {value: {saved: false}}` when the user cancels, `{saved:
//!   true, fileName}` (the name in the download folder, never a path) when saved; a failure is
//!   `host:error` (`APP_E900` `download.too_large`, `APP_E999` `download.io` /
//!   `download.name_taken`). Every saved file is audited (`download.save`).

use std::path::Path;

use base64::Engine as _;
use serde_json::{json, Value};

use super::{BridgeHost, Outgoing};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::hosting::bridge::message::{Call, DownloadSource};
use crate::hosting::bridge::mounts::{CallRefused, Mount};
use crate::hosting::capability::code::ErrorCode as CallCode;
use crate::hosting::capability::dispatch::{dispatch_with, Allowed, CallError, Verdict};
use crate::install::downloads::{
    sanitize_file_name, save_new_file, FALLBACK_NAME, MAX_DOWNLOAD_BYTES,
};
use crate::install::store::Store;

/// Most downloads waiting for the user at once (all frames); beyond: `HOST_E_RATE_LIMITED`.
pub const MAX_PENDING_DOWNLOADS: usize = 8;

/// A download waiting for the user.
pub(super) struct PendingDownload {
    mount_id: String,
    request_id: String,
    what: Offered,
    file_name: String,
    mime_type: String,
}

enum Offered {
    Artifact { id: String, sha256: String },
    Bytes(Vec<u8>),
}

impl BridgeHost {
    /// A `host:download` from `mount`: checks it and asks the user, or answers with an error.
    pub(super) fn download_request(
        &mut self,
        store: &Store,
        mount: &Mount,
        request_id: String,
        source: DownloadSource,
        file_name: Option<String>,
        mime_type: Option<String>,
    ) -> Vec<Outgoing> {
        let fail = |host: &Self, code: CallCode, message: &str, cause: Option<&'static str>| {
            host.post_error(
                mount,
                Some(&request_id),
                "lime.ui",
                "download",
                code,
                message,
                cause,
            )
        };
        match self.table.begin_call(&mount.mount_id, &request_id) {
            Ok(()) => {}
            Err(CallRefused::UnknownMount) => return Vec::new(),
            Err(CallRefused::DuplicateRequest) => {
                return vec![fail(
                    self,
                    CallCode::DuplicateRequest,
                    "a call with this requestId is already in flight",
                    None,
                )]
            }
            Err(CallRefused::RateLimited) => return vec![self.rate_limited(mount, &request_id)],
        }
        if self.downloads.len() >= MAX_PENDING_DOWNLOADS {
            self.table.end_call(&mount.mount_id, &request_id);
            return vec![self.rate_limited(mount, &request_id)];
        }
        let offered = match source {
            DownloadSource::Artifact(id) => {
                match self.allow_artifact_read(store, mount, &request_id, &id) {
                    Ok(proof) => match self.services.artifact_for_download(&proof, &id, None) {
                        Ok((meta, _)) if meta.size > MAX_DOWNLOAD_BYTES => {
                            Err(too_large_error("lime.ui", meta.size))
                        }
                        Ok((meta, _)) => Ok((
                            Offered::Artifact {
                                id,
                                sha256: meta.sha256,
                            },
                            meta.size,
                            file_name.unwrap_or(meta.name),
                            mime_type.unwrap_or(meta.mime_type),
                        )),
                        Err(e) => Err(e),
                    },
                    Err(e) => Err(e),
                }
            }
            DownloadSource::Text(text) => Ok((
                Offered::Bytes(text.into_bytes()),
                0,
                file_name.unwrap_or_default(),
                mime_type.unwrap_or_else(|| "text/plain".to_owned()),
            )),
            DownloadSource::Base64(b64) => {
                match base64::engine::general_purpose::STANDARD.decode(b64.as_bytes()) {
                    Ok(bytes) => Ok((
                        Offered::Bytes(bytes),
                        0,
                        file_name.unwrap_or_default(),
                        mime_type.unwrap_or_else(|| "application/octet-stream".to_owned()),
                    )),
                    Err(_) => Err(CallError {
                        code: CallCode::InvalidArgument,
                        message: "args.base64 is not valid base64 (standard alphabet, padded)"
                            .to_owned(),
                        cause_code: Some("download.invalid_argument"),
                        capability: "lime.ui".to_owned(),
                        method: "download".to_owned(),
                        retryable: false,
                        details: None,
                    }),
                }
            }
        };
        let (what, size, name, mime) = match offered {
            Ok(o) => o,
            Err(e) => {
                self.table.end_call(&mount.mount_id, &request_id);
                return vec![self.call_error(mount, &request_id, &e)];
            }
        };
        let size = match &what {
            Offered::Bytes(b) => b.len() as u64,
            Offered::Artifact { .. } => size,
        };
        let Some(mime) = clean_mime(&mime) else {
            self.table.end_call(&mount.mount_id, &request_id);
            return vec![fail(
                self,
                CallCode::InvalidArgument,
                "args.mimeType must look like type/subtype",
                Some("download.invalid_argument"),
            )];
        };
        let file_name = sanitize_file_name(if name.is_empty() {
            FALLBACK_NAME
        } else {
            &name
        });
        let download_id = self.new_id("download");
        self.downloads.insert(
            download_id.clone(),
            PendingDownload {
                mount_id: mount.mount_id.clone(),
                request_id,
                what,
                file_name: file_name.clone(),
                mime_type: mime.clone(),
            },
        );
        vec![Outgoing::ConfirmDownload {
            download_id,
            mount_id: mount.mount_id.clone(),
            app_id: mount.app_id.clone(),
            file_name,
            size,
            mime_type: mime,
        }]
    }

    /// The user's answer to a [`Outgoing::ConfirmDownload`]: `save` writes the file into `dir`
    /// (the user's download folder; `None`: there is none) and answers the app.
    /// `download.unknown` when no such download is pending.
    pub fn answer_download(
        &mut self,
        store: &Store,
        download_id: &str,
        save: bool,
        dir: Option<&Path>,
    ) -> HostResult<Vec<Outgoing>> {
        let Some(p) = self.downloads.remove(download_id) else {
            return Err(HostError::new(
                ErrorCode::DownloadUnknown,
                "no such download is waiting for an answer",
            ));
        };
        let Some(mount) = self.table.get(&p.mount_id).cloned() else {
            return Ok(Vec::new());
        };
        self.table.end_call(&mount.mount_id, &p.request_id);
        let respond = |host: &Self, value: Value| {
            host.post(
                &mount,
                "host:response",
                Some(&p.request_id),
                json!({ "value": value }),
            )
        };
        if !save {
            return Ok(vec![respond(self, json!({ "saved": false }))]);
        }
        let bytes = match &p.what {
            Offered::Bytes(b) => Ok(b.clone()),
            Offered::Artifact { id, sha256 } => self
                .allow_artifact_read(store, &mount, &p.request_id, id)
                .and_then(|proof| {
                    self.services
                        .artifact_for_download(&proof, id, Some(MAX_DOWNLOAD_BYTES))
                })
                .and_then(|(meta, bytes)| {
                    if &meta.sha256 == sha256 {
                        Ok(bytes.unwrap_or_default())
                    } else {
                        // Ids are never reused with other content; refuse rather than save
                        // something the user was not shown.
                        Err(io_error(
                            "the artifact changed since the download was asked",
                        ))
                    }
                }),
        };
        let bytes = match bytes {
            Ok(b) => b,
            Err(e) => return Ok(vec![self.call_error(&mount, &p.request_id, &e)]),
        };
        let Some(dir) = dir else {
            return Ok(vec![self.call_error(
                &mount,
                &p.request_id,
                &io_error("this system has no download folder"),
            )]);
        };
        match save_new_file(dir, &p.file_name, &bytes) {
            Ok(saved) => {
                let artifact = match &p.what {
                    Offered::Artifact { id, .. } => Some(id.as_str()),
                    Offered::Bytes(_) => None,
                };
                if let Err(e) = store.record_audit_durably(
                    "download.save",
                    Some(&mount.app_id),
                    Some(&mount.version),
                    &json!({
                        "entryKey": mount.entry_key, "requestId": p.request_id,
                        "fileName": saved, "size": bytes.len(), "mimeType": p.mime_type,
                        "artifactId": artifact,
                    }),
                ) {
                    tracing::warn!(error = %e.message, "cannot audit a saved download");
                }
                Ok(vec![respond(
                    self,
                    json!({ "saved": true, "fileName": saved }),
                )])
            }
            Err(e) => {
                tracing::warn!(error = %e.message, "cannot save a download");
                let app_error = match e.code {
                    ErrorCode::DownloadTooLarge => too_large_error("lime.ui", bytes.len() as u64),
                    ErrorCode::DownloadNameTaken => {
                        let mut out =
                            io_error("the download folder has too many files of that name");
                        out.cause_code = Some("download.name_taken");
                        out.retryable = false;
                        out
                    }
                    _ => io_error("the host could not write the file"),
                };
                Ok(vec![self.call_error(&mount, &p.request_id, &app_error)])
            }
        }
    }

    /// The choke point's answer to a `lime.artifacts.read` of `id` from `mount` (audited). A
    /// decision that would need a prompt is a refusal here.
    fn allow_artifact_read(
        &mut self,
        store: &Store,
        mount: &Mount,
        request_id: &str,
        id: &str,
    ) -> Result<Allowed, CallError> {
        let call = Call {
            request_id: request_id.to_owned(),
            capability: "lime.artifacts".to_owned(),
            method: "read".to_owned(),
            args: json!({ "id": id }),
            options: Default::default(),
        };
        let trace_id = self.new_id("trace");
        let answers = self.answers.entry(mount.mount_id.clone()).or_default();
        match dispatch_with(
            &self.facts,
            store,
            &self.profile,
            &mount.caller(),
            &call,
            &trace_id,
            answers,
        ) {
            Verdict::Allowed(proof) => Ok(proof),
            Verdict::Denied(e) => Err(e),
            Verdict::Ask(_) => Err(CallError {
                code: CallCode::PermissionDenied,
                message: "downloading an artifact needs its artifact permission granted first \
                          (lime.policy.requestPermission)"
                    .to_owned(),
                cause_code: Some("permission.denied"),
                capability: "lime.artifacts".to_owned(),
                method: "read".to_owned(),
                retryable: false,
                details: None,
            }),
        }
    }

    fn rate_limited(&self, mount: &Mount, request_id: &str) -> Outgoing {
        let mut e = CallError {
            code: CallCode::RateLimited,
            message: "too many calls or downloads are waiting".to_owned(),
            cause_code: None,
            capability: "lime.ui".to_owned(),
            method: "download".to_owned(),
            retryable: true,
            details: None,
        };
        e.retryable = true;
        self.call_error(mount, request_id, &e)
    }

    /// Drops the downloads of a frame that went away.
    pub(super) fn drop_downloads(&mut self, mount_id: &str) {
        self.downloads.retain(|_, d| d.mount_id != mount_id);
    }
}

fn too_large_error(capability: &str, size: u64) -> CallError {
    CallError {
        code: CallCode::InvalidArgument,
        message: format!(
            "the file is {size} bytes; a download may be at most {MAX_DOWNLOAD_BYTES}"
        ),
        cause_code: Some("download.too_large"),
        capability: capability.to_owned(),
        method: "download".to_owned(),
        retryable: false,
        details: None,
    }
}

fn io_error(message: &str) -> CallError {
    CallError {
        code: CallCode::UnknownError,
        message: message.to_owned(),
        cause_code: Some("download.io"),
        capability: "lime.ui".to_owned(),
        method: "download".to_owned(),
        retryable: true,
        details: None,
    }
}

/// `type/subtype` (RFC 6838 restricted names, lowercased, parameters dropped), or `None`.
fn clean_mime(mime: &str) -> Option<String> {
    let essence = mime
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let (t, s) = essence.split_once('/')?;
    let token = |x: &str| {
        !x.is_empty()
            && x.len() <= 63
            && x.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    (token(t) && token(s)).then_some(essence)
}
