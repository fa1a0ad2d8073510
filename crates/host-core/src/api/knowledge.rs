//! The knowledge area of the host UI (`docs/host-api.md`, "Knowledge"): the app page's "Bind
//! knowledge" setup action and the bindings' status, exactly as `apphost knowledge
//! bind|unbind|status` (`crate::hosting::app_knowledge` does the work). The folder is a path the
//! user typed (or picked in the desktop's dialog); apps never see it.

use serde::Deserialize;
use serde_json::Value;

use super::{answer, args, Command, Session};
use crate::foundation::error::HostResult;
use crate::hosting::app_knowledge::{self, BindingStatus, Indexed};
use crate::install::store::Store;

macro_rules! commands {
    ($($name:literal => $f:ident,)*) => {
        pub const COMMANDS: &[Command] = &[$(Command { name: $name, run: $f },)*];
    };
}

commands! {
    "bind_knowledge" => bind_knowledge,
    "unbind_knowledge" => unbind_knowledge,
    "knowledge_status" => knowledge_status,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "BindKnowledgeArgs")]
pub(crate) struct BindKnowledge {
    app_id: String,
    template: String,
    /// An absolute path to a folder.
    folder: String,
}

fn bind_knowledge(session: &Session, raw: Value) -> HostResult<Value> {
    let a: BindKnowledge = args("bind_knowledge", raw)?;
    let store = crate::center::open_locked(&session.data)?;
    let done: Indexed = app_knowledge::bind(
        &store,
        &a.app_id,
        &a.template,
        std::path::Path::new(&a.folder),
    )?;
    answer(done)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "UnbindKnowledgeArgs")]
pub(crate) struct UnbindKnowledge {
    app_id: String,
    template: String,
}

fn unbind_knowledge(session: &Session, raw: Value) -> HostResult<Value> {
    let a: UnbindKnowledge = args("unbind_knowledge", raw)?;
    let store = crate::center::open_locked(&session.data)?;
    app_knowledge::unbind(&store, &a.app_id, &a.template)?;
    answer(true)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "KnowledgeStatusArgs")]
pub(crate) struct StatusArgs {
    app_id: Option<String>,
}

fn knowledge_status(session: &Session, raw: Value) -> HostResult<Value> {
    let a: StatusArgs = args("knowledge_status", raw)?;
    if !session.data.db_path().exists() {
        return answer(Vec::<BindingStatus>::new());
    }
    answer(app_knowledge::status(
        &Store::open(&session.data)?,
        a.app_id.as_deref(),
    )?)
}
