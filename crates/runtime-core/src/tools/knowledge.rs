//! `knowledge_search`: the agent's search of the knowledge templates its task declared
//! (`startTask({knowledge: [...]})`), offered only in the sessions of such tasks
//! ([`KnowledgeGrants`], filled by `AgentTasks::start_with_knowledge` before the run starts).
//! The host re-derives on every call that the template is still bound
//! ([`ToolPolicy::knowledge_bound`](super::ToolPolicy::knowledge_bound)); the query is matched
//! as words only (`knowledge::query`). The hits with their citations are the tool's result (so
//! they are in the task's events), and each call leaves an evidence record
//! (`kind: knowledge.citations`) in the app's `lime.evidence`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::{terr, ToolCall, ToolError, ToolOutput};
use crate::app_area::AppArea;
use crate::app_artifacts::{AgentProvenance, Provenance};
use crate::app_evidence::{AppEvidence, EvidenceInput};
use crate::backend::ToolSpec;
use crate::knowledge::KnowledgeIndex;

/// Hits one call returns at most (the model's context is the bound).
pub const MAX_TOOL_TOP_K: u64 = 10;
/// Sessions remembered (oldest forgotten first; a forgotten session's next turn lacks the tool).
const MAX_SESSIONS: usize = 4096;
/// Templates one task may name.
pub const MAX_TEMPLATES: usize = 16;

/// Which templates each session's tasks declared (in memory, restored from the tasks' recorded
/// bindings when the task store opens: `agent_task/bindings.rs`).
#[derive(Debug, Clone, Default)]
pub struct KnowledgeGrants {
    inner: Arc<Mutex<Granted>>,
}

/// Names granted per session: the knowledge templates, and (a second instance) the external
/// tool refs its tasks declared.
pub type SessionGrants = KnowledgeGrants;

/// Session → templates, and the sessions in the order they were first granted.
type Granted = (HashMap<String, Vec<String>>, Vec<String>);

impl KnowledgeGrants {
    /// Adds `templates` to the session's grants.
    pub fn grant(&self, session_id: &str, templates: &[String]) {
        if templates.is_empty() {
            return;
        }
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (map, order) = &mut *g;
        if !map.contains_key(session_id) {
            if order.len() >= MAX_SESSIONS {
                let old = order.remove(0);
                map.remove(&old);
            }
            order.push(session_id.to_owned());
        }
        let set = map.entry(session_id.to_owned()).or_default();
        for t in templates.iter().take(MAX_TEMPLATES) {
            if !set.contains(t) && set.len() < MAX_TEMPLATES {
                set.push(t.clone());
            }
        }
    }

    /// The session's granted templates.
    pub fn of(&self, session_id: &str) -> Vec<String> {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        g.0.get(session_id).cloned().unwrap_or_default()
    }
}

pub(super) fn spec(templates: &[String]) -> ToolSpec {
    ToolSpec {
        name: "knowledge_search".into(),
        description: format!(
            "Search the user's documents bound to this task's knowledge templates ({}). Returns the best passages with citations (document, section, byte offsets). Cite them in your answer.",
            templates.join(", ")
        ),
        parameters: json!({"type": "object", "properties": {
            "template": {"type": "string", "enum": templates},
            "query": {"type": "string", "minLength": 1, "maxLength": 1024},
            "topK": {"type": "integer", "minimum": 1, "maximum": MAX_TOOL_TOP_K}
        }, "required": ["query"], "additionalProperties": false}),
        risky: false,
    }
}

pub(super) fn run(
    tools: &super::HostTools,
    call: &ToolCall,
    args: &Value,
) -> Result<ToolOutput, ToolError> {
    let granted = tools.knowledge.of(&call.session_id);
    if granted.is_empty() {
        return Err(terr(
            "unknown_tool",
            "no tool named \"knowledge_search\" in this task",
        ));
    }
    let template = match args.get("template").and_then(Value::as_str) {
        Some(t) => t.to_owned(),
        None if granted.len() == 1 => granted[0].clone(),
        None => {
            return Err(terr(
                "invalid_arguments",
                "template is required (this task has several)",
            ))
        }
    };
    if !granted.contains(&template) {
        return Err(terr(
            "knowledge.template_not_declared",
            "this task did not declare that knowledge template",
        ));
    }
    let query = super::str_arg(args, "query")?;
    let top_k = args
        .get("topK")
        .and_then(Value::as_u64)
        .unwrap_or(5)
        .clamp(1, MAX_TOOL_TOP_K) as usize;
    if !tools.policy.knowledge_bound(&call.app, &template) {
        return Err(terr(
            "knowledge.not_bound",
            "no folder is bound to this knowledge template any more",
        ));
    }
    let area = AppArea::open_existing(&tools.apps.dir(&call.app))
        .map_err(|e| terr("knowledge.index_failed", e.to_string()))?
        .ok_or_else(|| terr("knowledge.not_bound", "the template has no index yet"))?;
    let index = KnowledgeIndex::open_existing(&area, &template)
        .map_err(|e| terr(e.code(), e.to_string()))?
        .ok_or_else(|| terr("knowledge.not_bound", "the template has no index yet"))?;
    let hits = index
        .search(query, top_k)
        .map_err(|e| terr(e.code(), e.to_string()))?;
    let citations: Vec<Value> = hits
        .iter()
        .map(|h| json!({"document": h.document, "section": h.section, "start": h.start, "end": h.end}))
        .collect();
    // The evidence record: which passages the agent was shown, for which query.
    let package = tools.policy.package(&call.app).unwrap_or_default();
    let provenance = Provenance {
        app_id: call.app.as_str().to_owned(),
        app_version: package.app_version,
        package_hash: package.package_hash,
        manifest_hash: package.manifest_hash,
        entry_key: String::new(),
        trace_id: call.tool_call_id.clone(),
        agent: Some(AgentProvenance {
            session_id: call.session_id.clone(),
            run_id: call.turn_id.clone(),
            tool_call_id: call.tool_call_id.clone(),
            tool: "knowledge_search".into(),
        }),
    };
    let query_kept: String = query.chars().take(256).collect();
    let input = EvidenceInput {
        kind: "knowledge.citations".into(),
        summary: format!("knowledge_search {template}: {} hits", hits.len()),
        data: json!({"template": template, "query": query_kept, "citations": citations}),
        artifact_ids: Vec::new(),
    };
    AppEvidence::open(&tools.apps.dir(&call.app), Default::default())
        .and_then(|mut ev| ev.record(&input, None, &provenance))
        .map_err(|e| {
            terr(
                "storage_error",
                format!("the citations' evidence record failed: {e}"),
            )
        })?;
    let out = json!({"template": template, "hits": hits});
    Ok((out.to_string(), Vec::new()))
}
