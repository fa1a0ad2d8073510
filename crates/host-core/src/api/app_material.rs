//! The app page's "Tools and knowledge" section (`docs/host-api.md`, "Tools and knowledge"):
//! what the app declares — its `toolRefs[]` and `knowledgeTemplates[]` — each with its state
//! (server present, listed by it, granted, destructive; bound folder and index), and the user's
//! grant and revoke of a declared tool, exactly as `apphost tools grant|revoke` (the broker's
//! registry checks and writes them, audited). Binding a folder is `bind_knowledge`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{answer, args, Command, Session};
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::hosting::agent_tool_source::declared_tool_refs;
use crate::hosting::app_knowledge::{self, declared_templates};
use crate::hosting::tools::policy::AdminPolicy;
use crate::hosting::tools::{registry, ToolRef};
use crate::install::manifest::{ItemText, Key};
use crate::install::store::tool_rows::tool_ref_target;
use crate::install::store::Store;

macro_rules! commands {
    ($($name:literal => $f:ident,)*) => {
        pub const COMMANDS: &[Command] = &[$(Command { name: $name, run: $f },)*];
    };
}

commands! {
    "app_material" => app_material,
    "grant_tool" => grant_tool,
    "revoke_tool" => revoke_tool,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "AppMaterialArgs")]
pub(crate) struct AppArg {
    app_id: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "ToolGrantArgs")]
pub(crate) struct ToolArg {
    app_id: String,
    /// `<server>/<tool>`, one the app declares in `toolRefs[]`.
    tool: String,
}

/// One declared tool ref and its state.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolRefState {
    /// `<server>/<tool>`.
    pub tool: String,
    pub server: String,
    pub required: bool,
    /// A server with that name is configured (by the user or the admin).
    pub server_present: bool,
    /// The server's last listing has the tool.
    pub listed: bool,
    pub granted: bool,
    /// Each call needs the user's approval (annotation or policy); known once listed.
    pub destructive: bool,
    /// The admin policy denies it.
    pub denied: bool,
}

/// One declared knowledge template and its binding.
#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TemplateState {
    pub template: String,
    pub required: bool,
    /// The bound folder, when bound.
    pub folder: Option<String>,
    pub files: usize,
    pub chunks: usize,
    pub last_indexed: Option<String>,
}

#[derive(Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppMaterial {
    pub tools: Vec<ToolRefState>,
    pub knowledge: Vec<TemplateState>,
}

fn app_material(session: &Session, raw: Value) -> HostResult<Value> {
    let a: AppArg = args("app_material", raw)?;
    let store = Store::open(&session.data)?;
    let active = store.active_app(&a.app_id)?;
    let settings = store.settings()?;
    let policy = AdminPolicy::load(&session.data);
    let servers = registry::servers(&settings, &policy);
    let granted = registry::grants(&settings, &a.app_id);
    let mut tools = Vec::new();
    for item in active.manifest.view().items(Key::ToolRefs) {
        let Some(target) = tool_ref_target(item.key(), item.text(ItemText::Provider)) else {
            continue;
        };
        let Ok(r) = ToolRef::parse(&target) else {
            continue;
        };
        let info = registry::listing(&settings, &r.server)
            .into_iter()
            .find(|t| t.name == r.tool);
        tools.push(ToolRefState {
            server_present: servers.contains_key(&r.server),
            listed: info.is_some(),
            granted: granted.contains(&r),
            destructive: info.as_ref().is_some_and(|i| policy.needs_approval(&r, i)),
            denied: policy.check_allowed(&r).is_err(),
            required: item.required(),
            server: r.server.clone(),
            tool: target,
        });
    }
    let bindings = app_knowledge::status(&store, Some(&a.app_id))?;
    let required: Vec<(String, bool)> = active
        .manifest
        .view()
        .items(Key::KnowledgeTemplates)
        .filter_map(|i| i.key().map(|k| (k.to_owned(), i.required())))
        .collect();
    let knowledge = declared_templates(&active.manifest)
        .into_iter()
        .map(|t| {
            let b = bindings.iter().find(|b| b.template == t);
            TemplateState {
                required: required.iter().any(|(k, r)| k == &t && *r),
                folder: b.map(|b| b.folder.clone()),
                files: b.map_or(0, |b| b.index.files),
                chunks: b.map_or(0, |b| b.index.chunks),
                last_indexed: b.and_then(|b| b.index.last_indexed.clone()),
                template: t,
            }
        })
        .collect();
    answer(AppMaterial { tools, knowledge })
}

/// The ref, when the app's active manifest declares it (the page offers nothing else).
fn declared_ref(store: &Store, a: &ToolArg) -> HostResult<ToolRef> {
    let r = ToolRef::parse(&a.tool)?;
    let active = store.active_app(&a.app_id)?;
    if !declared_tool_refs(&active.manifest).contains(&r.to_string()) {
        return Err(HostError::new(
            ErrorCode::ToolsNotDeclared,
            format!("{} declares no toolRefs[] item for {r}", a.app_id),
        )
        .with("tool", r.to_string()));
    }
    Ok(r)
}

fn grant_tool(session: &Session, raw: Value) -> HostResult<Value> {
    let a: ToolArg = args("grant_tool", raw)?;
    let store = crate::center::open_locked(&session.data)?;
    let r = declared_ref(&store, &a)?;
    registry::grant(&store, &AdminPolicy::load(&session.data), &a.app_id, &r)?;
    answer(true)
}

fn revoke_tool(session: &Session, raw: Value) -> HostResult<Value> {
    let a: ToolArg = args("revoke_tool", raw)?;
    let store = crate::center::open_locked(&session.data)?;
    let r = ToolRef::parse(&a.tool)?;
    store.active_app(&a.app_id)?;
    registry::revoke(&store, &a.app_id, &r)?;
    answer(true)
}
