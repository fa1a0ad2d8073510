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
