//! `lime.knowledge.search({template, query, topK})`: hits with citations from the folder the
//! user bound to one of the app's declared knowledge templates (`hosting::app_knowledge`). The
//! template must be declared by the `Allowed` proof's manifest and bound now (both re-read on
//! every call); the query is matched as terms only (`runtime_core::knowledge::query`), never as
//! FTS5 syntax. Open indexes are kept per app and binding (a rebind opens the new one).

use std::collections::HashMap;

use runtime_core::knowledge::{KnowledgeIndex, MAX_TOP_K};
use serde_json::{json, Value};

use super::args::{invalid, object, req_str};
use super::err;
use crate::foundation::error::{ErrorCode as HostCode, HostError};
use crate::hosting::app_knowledge;
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::dispatch::{Allowed, CallError};
use crate::hosting::capability::method::KnowledgeMethod;
use crate::install::store::Store;

/// Hits when `topK` is not given.
pub const DEFAULT_TOP_K: usize = 5;
/// Open indexes kept per host session.
const MAX_OPEN: usize = 32;

#[derive(Default)]
pub(super) struct KnowledgeService {
    /// (app, template, bound at) → the open index.
    open: HashMap<(String, String, String), KnowledgeIndex>,
}

impl KnowledgeService {
    pub(super) fn close_app(&mut self, app: &str) {
        self.open.retain(|(a, _, _), _| a != app);
    }

    pub(super) fn call(
        &mut self,
        store: &Store,
        a: &Allowed,
        method: KnowledgeMethod,
        args: &Value,
    ) -> Result<Value, CallError> {
        match method {
            KnowledgeMethod::Search => self.search(store, a, args),
        }
    }

    fn search(&mut self, store: &Store, a: &Allowed, args: &Value) -> Result<Value, CallError> {
        let o = object(a, args, &["template", "query", "topK"])?;
        let template = req_str(a, o, "template")?;
        let query = req_str(a, o, "query")?;
        let top_k = match o.get("topK") {
            None | Some(Value::Null) => DEFAULT_TOP_K,
            Some(v) => v
                .as_u64()
                .filter(|k| (1..=MAX_TOP_K as u64).contains(k))
                .ok_or_else(|| {
                    query_invalid(a, &format!("args.topK must be an integer 1-{MAX_TOP_K}"))
                })? as usize,
        };
        if template.is_empty() || template.len() > runtime_core::knowledge::MAX_TEMPLATE_BYTES {
            return Err(invalid(a, "args.template must be a template key"));
        }
        let binding = app_knowledge::check_search(store, a.manifest(), a.app(), template, query)
            .map_err(|e| host_err(a, e))?;
        let key = (
            a.app().to_owned(),
            template.to_owned(),
            binding.bound_at.clone(),
        );
        if !self.open.contains_key(&key) {
            self.open
                .retain(|(app, t, _), _| !(app == a.app() && t == template));
            if self.open.len() >= MAX_OPEN {
                self.open.clear();
            }
            let index =
                app_knowledge::open_index(store, a.app(), &binding).map_err(|e| host_err(a, e))?;
            self.open.insert(key.clone(), index);
        }
        let hits = self.open[&key]
            .search(query, top_k)
            .map_err(|e| host_err(a, app_knowledge::index_error(e)))?;
        Ok(json!({ "template": template, "hits": hits }))
    }
}

fn query_invalid(a: &Allowed, message: &str) -> CallError {
    err(
        a,
        ErrorCode::InvalidArgument,
        message,
        Some("knowledge.query_invalid"),
    )
}

/// A host error of a search as the app sees it; a host failure's text (which may name host
/// paths) is never shown.
fn host_err(a: &Allowed, e: HostError) -> CallError {
    match e.code {
        HostCode::KnowledgeTemplateNotDeclared => err(
            a,
            ErrorCode::PermissionDenied,
            "the app's manifest declares no knowledge template with this key",
            Some("knowledge.template_not_declared"),
        ),
        HostCode::KnowledgeNotBound => err(
            a,
            ErrorCode::KnowledgeNotBound,
            "no folder is bound to this knowledge template yet; the user binds one in the host",
            Some("knowledge.not_bound"),
        ),
        HostCode::KnowledgeQueryInvalid => query_invalid(a, &e.message),
        _ => {
            tracing::warn!(code = e.code.as_str(), error = %e.message, "lime.knowledge.search failed");
            let mut out = err(
                a,
                ErrorCode::UnknownError,
                "the host's knowledge index failed",
                Some("knowledge.index_failed"),
            );
            out.retryable = true;
            out
        }
    }
}

/// The knowledge templates a `startTask` request binds (`knowledge: ["kb", {template: "kb"}, {key:
/// "kb"}]`): each declared by the proof's manifest (`APP_E002` `knowledge.template_not_declared`)
/// and bound now (`APP_E003` `knowledge.not_bound`). The task's turns get `knowledge_search` for
/// them; the tool re-checks the binding on every call.
pub(super) fn task_templates(
    store: &Store,
    a: &Allowed,
    o: &serde_json::Map<String, Value>,
) -> Result<Vec<String>, CallError> {
    let items = match o.get("knowledge") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(invalid(
                a,
                "args.knowledge must be an array of template keys",
            ))
        }
    };
    let max = runtime_core::tools::knowledge::MAX_TEMPLATES;
    if items.len() > max {
        return Err(invalid(
            a,
            &format!("args.knowledge names more than {max} templates"),
        ));
    }
    let declared = app_knowledge::declared_templates(a.manifest());
    let bound: Vec<String> = store
        .knowledge_bindings(a.app())
        .map_err(|e| host_err(a, e))?
        .into_iter()
        .map(|b| b.template)
        .collect();
    let mut out: Vec<String> = Vec::new();
    for item in items {
        let key = match item {
            Value::String(s) => Some(s.as_str()),
            Value::Object(m) => m
                .get("template")
                .or_else(|| m.get("key"))
                .and_then(Value::as_str),
            _ => None,
        }
        .filter(|k| !k.is_empty() && k.len() <= runtime_core::knowledge::MAX_TEMPLATE_BYTES)
        .ok_or_else(|| {
            invalid(
                a,
                "args.knowledge items must be template keys (or {template})",
            )
        })?;
        if !declared.iter().any(|d| d == key) {
            return Err(host_err(
                a,
                HostError::new(HostCode::KnowledgeTemplateNotDeclared, ""),
            ));
        }
        if !bound.iter().any(|b| b == key) {
            return Err(host_err(a, HostError::new(HostCode::KnowledgeNotBound, "")));
        }
        if !out.iter().any(|o| o == key) {
            out.push(key.to_owned());
        }
    }
    Ok(out)
}
