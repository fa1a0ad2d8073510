//! The host UI's `lime.files` commands (`docs/host-api.md`, "Files"): an app's refs on its
//! detail page, Revoke, and granting a path the user typed or chose (the window's path entry;
//! `apphost files grant` does the same). The host UI is trusted with paths; apps never see one.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{answer, args, Command, Session};
use crate::foundation::error::HostResult;
use crate::hosting::user_files;
use crate::install::store::Store;

macro_rules! commands {
    ($($name:literal => $f:ident,)*) => {
        pub const COMMANDS: &[Command] = &[$(Command { name: $name, run: $f },)*];
    };
}

commands! {
    "file_refs" => file_refs,
    "file_ref_revoke" => file_ref_revoke,
    "file_grant_path" => file_grant_path,
    "file_upload" => file_upload,
    "answer_file_pick" => answer_file_pick,
}

/// Largest file `file_upload` takes (decoded): 3 MiB, so its base64 fits the host API's 4 MiB
/// JSON body under `apphost serve`.
pub const MAX_JSON_UPLOAD_BYTES: usize = 3 * 1024 * 1024;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "FileUploadArgs")]
pub(crate) struct UploadArgs {
    app_id: String,
    /// The file's name as the user's browser gave it (shown only).
    name: String,
    /// The bytes, base64 (standard alphabet, padded).
    base64: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "AnswerFilePickArgs")]
pub(crate) struct PickAnswer {
    prompt_id: String,
    /// The refs granted from the user's choice; absent or `null`: the user cancelled.
    #[serde(default)]
    refs: Option<Vec<String>>,
}

/// `file_upload {appId, name, base64}` → the new ref: the bytes are kept under the data
/// directory (`user-files/<ref>`, 0600) and removed with the ref.
fn file_upload(session: &Session, raw: Value) -> HostResult<Value> {
    use base64::Engine as _;
    let a: UploadArgs = args("file_upload", raw)?;
    let too_large = || {
        crate::foundation::error::HostError::new(
            crate::foundation::error::ErrorCode::FilesTooLarge,
            format!("an upload through the host UI is at most {MAX_JSON_UPLOAD_BYTES} bytes"),
        )
        .with("limit", MAX_JSON_UPLOAD_BYTES)
    };
    if a.base64.len() > MAX_JSON_UPLOAD_BYTES.div_ceil(3) * 4 {
        return Err(too_large());
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(a.base64.as_bytes())
        .map_err(|_| super::bad_arguments("file_upload", "base64 is not valid base64"))?;
    if bytes.len() > MAX_JSON_UPLOAD_BYTES {
        return Err(too_large());
    }
    let store = Store::open(&session.data)?;
    answer(user_files::grant_upload(
        &store, &a.app_id, &a.name, &bytes,
    )?)
}

/// `answer_file_pick {promptId, refs?}` → `Outgoing[]`: the app's `requestFiles` gets the
/// refs (only live refs of that app; one unless it asked for `multiple`), or `cancelled`.
fn answer_file_pick(session: &Session, raw: Value) -> HostResult<Value> {
    let a: PickAnswer = args("answer_file_pick", raw)?;
    let out = session
        .with_bridge(|bridge, store| bridge.answer_file_pick(store, &a.prompt_id, a.refs))?;
    answer(out)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "FileRefsArgs")]
pub(crate) struct AppArg {
    app_id: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "FileRefRevokeArgs")]
pub(crate) struct RevokeArgs {
    app_id: String,
    #[serde(rename = "ref")]
    handle: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "FileGrantPathArgs")]
pub(crate) struct GrantArgs {
    app_id: String,
    /// An absolute path (a file or a folder) on this machine.
    path: String,
}

/// What `file_ref_revoke` answers.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileRefRevoked {
    pub app_id: String,
    #[serde(rename = "ref")]
    pub handle: String,
    pub revoked: bool,
}

/// `file_refs {appId}` → the app's live refs (with their paths, for the user).
fn file_refs(session: &Session, raw: Value) -> HostResult<Value> {
    let a: AppArg = args("file_refs", raw)?;
    let store = Store::open(&session.data)?;
    store.active_app(&a.app_id)?;
    answer(store.file_refs(&a.app_id)?)
}

/// `file_ref_revoke {appId, ref}`: the app's next read of it is `files.ref_not_found`.
fn file_ref_revoke(session: &Session, raw: Value) -> HostResult<Value> {
    let a: RevokeArgs = args("file_ref_revoke", raw)?;
    let store = Store::open(&session.data)?;
    let r = user_files::revoke(&store, &a.app_id, &a.handle)?;
    answer(FileRefRevoked {
        app_id: a.app_id,
        handle: r.handle,
        revoked: true,
    })
}

/// `file_grant_path {appId, path}` → the new ref.
fn file_grant_path(session: &Session, raw: Value) -> HostResult<Value> {
    let a: GrantArgs = args("file_grant_path", raw)?;
    let store = Store::open(&session.data)?;
    answer(user_files::grant_path(
        &store,
        &a.app_id,
        std::path::Path::new(&a.path),
    )?)
}
