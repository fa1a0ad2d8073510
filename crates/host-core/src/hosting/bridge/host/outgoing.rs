//! What the bridge host answers with: the [`Outgoing`] actions a transport carries out, the
//! user's [`Answer`] to a prompt, the host facts ([`Environment`]) a snapshot carries and the
//! refusal [`Diagnostics`].

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::message;
#[allow(unused_imports)]
// named by the doc links of `Outgoing` (and so by the schema's descriptions)
use super::BridgeHost;
use crate::hosting::capability::dispatch::PermissionQuestion;

/// Host facts the snapshot carries (non-sensitive; set by the shell).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Environment {
    pub theme_mode: String,
    pub effective_theme_mode: String,
    pub color_scheme_id: String,
    /// Only `--lime-*` and `--app-*` variables are ever sent.
    pub tokens: BTreeMap<String, String>,
    pub locale: String,
    pub timezone: String,
    pub workspace_id: String,
    pub tenant_id: String,
    /// The workspace's name for people (`lime.workspace.get`).
    pub workspace_name: String,
}

impl Default for Environment {
    fn default() -> Self {
        Environment {
            theme_mode: "system".into(),
            effective_theme_mode: "light".into(),
            color_scheme_id: "lime-default".into(),
            tokens: BTreeMap::new(),
            locale: "en-US".into(),
            timezone: "UTC".into(),
            workspace_id: "local".into(),
            tenant_id: "local".into(),
            workspace_name: "Local workspace".into(),
        }
    }
}

/// The user's answer to a permission prompt.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    AllowOnce,
    AllowAlways,
    Deny,
    /// Closed without answering: not an allow.
    Dismissed,
}

/// What the transport must do.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Outgoing {
    /// Post `message` to the frame of `mount_id` (target origin: the mount's origin).
    #[serde(rename_all = "camelCase")]
    Post { mount_id: String, message: Value },
    /// Show a permission prompt; answer with [`BridgeHost::answer`].
    #[serde(rename_all = "camelCase")]
    Prompt {
        prompt_id: String,
        mount_id: String,
        question: PermissionQuestion,
    },
    #[serde(rename_all = "camelCase")]
    Toast {
        mount_id: String,
        app_id: String,
        message: String,
        level: message::ToastLevel,
    },
    /// Ask the user to confirm opening an external URL; the app's declared domains are shown.
    #[serde(rename_all = "camelCase")]
    ConfirmExternal {
        mount_id: String,
        app_id: String,
        url: String,
        declared_domains: Vec<String>,
    },
    #[serde(rename_all = "camelCase")]
    Navigate { mount_id: String, route: String },
    /// Ask the user whether to save a file the app offers (`host:download`): the sanitized
    /// file name, its size in bytes and its MIME type; answer with
    /// [`BridgeHost::answer_download`].
    #[serde(rename_all = "camelCase")]
    ConfirmDownload {
        download_id: String,
        mount_id: String,
        app_id: String,
        file_name: String,
        size: u64,
        mime_type: String,
    },
    /// `lime.files.requestFiles`: draw the file picker for the app; answer with
    /// [`BridgeHost::answer_file_pick`] (the refs granted from the user's choice, or cancel).
    #[serde(rename_all = "camelCase")]
    PickFiles {
        prompt_id: String,
        mount_id: String,
        app_id: String,
        entry_key: String,
        request: crate::hosting::capability::services::PickRequest,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RefusedMessage {
    pub mount_id: Option<String>,
    pub app_id: Option<String>,
    pub reason: &'static str,
    pub message_type: Option<String>,
    pub bytes: usize,
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostics {
    pub refused_by_reason: BTreeMap<&'static str, u64>,
    pub recent_refusals: Vec<RefusedMessage>,
    pub executions: u64,
}
