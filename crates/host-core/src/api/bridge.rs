//! The bridge relay's commands: the host UI relays what frames post (with the origin it
//! observed) and executes the `Outgoing[]` answers; `BridgeHost` decides everything.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{answer, args, Command, NoArgs, Session};
use crate::foundation::error::HostResult;
use crate::hosting::bridge::host::{Answer, Diagnostics};
use crate::hosting::surface::serve::ServeRefusal;

pub const COMMANDS: &[Command] = &[
    Command {
        name: "bridge_message",
        run: bridge_message,
    },
    Command {
        name: "bridge_refused",
        run: bridge_refused,
    },
    Command {
        name: "answer_prompt",
        run: answer_prompt,
    },
    Command {
        name: "answer_download",
        run: answer_download,
    },
    Command {
        name: "set_visibility",
        run: set_visibility,
    },
    Command {
        name: "bridge_diagnostics",
        run: bridge_diagnostics,
    },
];

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "BridgeMessageArgs")]
pub(crate) struct Message {
    mount_id: String,
    origin: String,
    data: String,
}

/// `bridge_message {mountId, origin, data}` → `Outgoing[]`.
fn bridge_message(session: &Session, raw: Value) -> HostResult<Value> {
    let a: Message = args("bridge_message", raw)?;
    // A service call's answer comes after the bridge lock was released for the wait.
    let (mut out, answers) = session
        .with_bridge_calls(|bridge, store| bridge.handle(store, &a.mount_id, &a.origin, &a.data))?;
    out.extend(answers);
    super::dev_console::refused_calls(session, &a.mount_id, &out);
    answer(out)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "BridgeRefusedArgs")]
pub(crate) struct Refused {
    #[serde(default)]
    mount_id: Option<String>,
    reason: String,
    bytes: usize,
}

/// A message the host UI refused itself (`bridge.wrong_source`): counted, never acted on.
fn bridge_refused(session: &Session, raw: Value) -> HostResult<Value> {
    let a: Refused = args("bridge_refused", raw)?;
    session
        .bridge()?
        .host
        .report_refusal(a.mount_id.as_deref(), &a.reason, a.bytes);
    answer(Value::Null)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "AnswerPromptArgs")]
pub(crate) struct PromptAnswer {
    prompt_id: String,
    answer: Answer,
}

/// The user's answer to a permission prompt → `Outgoing[]`.
fn answer_prompt(session: &Session, raw: Value) -> HostResult<Value> {
    let a: PromptAnswer = args("answer_prompt", raw)?;
    let out = session.with_bridge(|bridge, store| bridge.answer(store, &a.prompt_id, a.answer))?;
    // "Allow always" commits a grant on the bridge's own connection, which the mount watcher
    // does not announce (it stays quiet about the bridge's own commits): announce it here.
    session
        .outbox
        .push(super::watch::STORE_CHANGED, serde_json::Value::Null);
    answer(out)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "AnswerDownloadArgs")]
pub(crate) struct DownloadAnswer {
    download_id: String,
    save: bool,
}

/// The user's answer to a download (`Outgoing::ConfirmDownload`) → `Outgoing[]`: `save` writes
/// the file into the user's download folder (`crate::install::downloads`); Rust answers the app either way.
fn answer_download(session: &Session, raw: Value) -> HostResult<Value> {
    let a: DownloadAnswer = args("answer_download", raw)?;
    let dir = crate::install::downloads::download_dir();
    answer(session.with_bridge(|bridge, store| {
        bridge.answer_download(store, &a.download_id, a.save, dir.as_deref())
    })??)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "SetVisibilityArgs")]
pub(crate) struct Visibility {
    mount_id: String,
    visible: bool,
}

/// `set_visibility {mountId, visible}` → `Outgoing[]`: the host UI showed or hid a frame (a tab
/// switch); a ready frame is told with `host:visibility` once per change, an unknown mount or no
/// change answers nothing.
fn set_visibility(session: &Session, raw: Value) -> HostResult<Value> {
    let a: Visibility = args("set_visibility", raw)?;
    answer(session.with_bridge(|bridge, _| bridge.set_visibility(&a.mount_id, a.visible))?)
}

/// What the bridge and the file server refused, and how many service calls ran.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionDiagnostics {
    #[serde(flatten)]
    pub bridge: Diagnostics,
    pub serve_refusals: Vec<ServeRefusal>,
    /// How many frames Rust has mounted now.
    pub mounts: usize,
}

fn bridge_diagnostics(session: &Session, raw: Value) -> HostResult<Value> {
    let NoArgs {} = args("bridge_diagnostics", raw)?;
    let (bridge, mounts) = {
        let guard = session.bridge()?;
        (guard.host.diagnostics(), guard.host.mounts().all().count())
    };
    answer(SessionDiagnostics {
        bridge,
        serve_refusals: session.serve_refusals(),
        mounts,
    })
}
