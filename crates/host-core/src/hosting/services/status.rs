//! One service's status as the CLI and the host UI show it (`apphost services list`,
//! `app_services`, `lime.services.list`).

use serde::Serialize;

/// One service as the CLI and the host UI show it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceStatus {
    pub key: String,
    pub required: bool,
    /// `running`, `stopped`, `degraded` (crashed recently), `blocked` (crash loop, or cannot run
    /// here: `code` says why).
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Starts after the first one in this host process.
    pub restarts: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_exit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_stop: Option<String>,
    pub protocol: String,
    /// A `server-assisted` remote service: its endpoint, auth kind, data boundary and whether
    /// the user allowed it (state `remote` when allowed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<super::remote::RemoteInfo>,
    /// The durable crash record (host.db, any process of this data dir): the last crash,
    /// crashes inside the crash-loop window, the last crash's error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_crash_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crashes_in_window: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}
