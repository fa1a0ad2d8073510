//! What the choke point is given: one [`Call`] from one [`Caller`], both transport-free.
//!
//! The Host Bridge builds them (the decoder makes the `Call` of a `capability:invoke`, the mount
//! table the `Caller` of a frame); the future workflow runtime and backend services will build
//! the same values for their own callers, so every transport reaches the services through the
//! same [`dispatch`](super::dispatch::dispatch). Nothing here is trusted as a fact: the caller
//! only says which app entry asks; whether the app is installed, enabled, at that version, ready
//! and granted is read from the store on every call.

use serde::Serialize;
use serde_json::{Map, Value};

/// One capability call, as received: the names are not parsed yet (an unknown one is answered
/// `APP_E001` by the choke point, with the names it was given).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Call {
    /// The caller's id for this call, echoed in its answer.
    pub request_id: String,
    pub capability: String,
    pub method: String,
    /// The method's arguments (`{}` when none were given).
    pub args: Value,
    /// Per-call options (`idempotencyKey`, …).
    pub options: Map<String, Value>,
}

/// Who calls: one entry of one installed app, at the version its surface was opened with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub app_id: String,
    pub entry_key: String,
    /// The version the caller runs; a call from a version that is no longer active is refused
    /// as not ready.
    pub version: String,
    /// The caller's session on its transport (the bridge: the mount id), for the audit record.
    pub session_id: String,
    /// The package the caller was opened from, as its transport recorded it (the audit record
    /// and the `Allowed` proof use the store's own hashes).
    pub package_hash: String,
    pub manifest_hash: String,
}
