//! Runtime checks: what the app declares that something must *run* (backend services,
//! workflows) or *bind* (knowledge templates, tools), against what this host can run.
//!
//! [`HOST_RUNS`] is the table of what this AppHost can run, one row per declared kind. An item
//! of an unsupported kind (or an entry that uses it) is `blocked` with the row's stable code and
//! a message naming the item when required, `ready-degraded` when optional. Workflows run
//! ([`Runs::Supported`]: RuntimeCore's durable runs, `hosting/workflow/`).
//!
//! Workflows are validated first (`runtime_core::workflow::check` against the names under
//! `requires.capabilities`): an invalid workflow blocks the `workflow` entry that runs it, and
//! only that entry, with the validation findings (code, path, message) as the reason; warnings
//! are notices. A valid workflow passes; a `workflow` entry naming no declared workflow is blocked
//! with `workflow.not_declared`.

use runtime_core::workflow::Severity;

use super::workflow_cache::Verdict;

use super::{Ctx, Outcome};
use crate::install::manifest::{EntryKind, Key};

/// How this host runs one declared kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Runs {
    /// This host runs every valid item.
    Supported,
    /// Runs what the user granted the app and a configured MCP server lists
    /// (`HostState::available_tools`, from `host.db`'s `tools.*` rows); anything else needs
    /// setup, with a "Grant tool" action.
    WhenGranted,
    /// Runs what the user binds (`HostState::bound_knowledge`: a folder bound to the template,
    /// `apphost knowledge bind`); until then a required item is `needs-setup` with a setup
    /// action of kind `bind-knowledge`, an optional one a notice.
    UserBinds,
}

/// One row of [`HOST_RUNS`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Row {
    pub kind: &'static str,
    pub runs: Runs,
    /// The check code of an item this host cannot run.
    pub code: &'static str,
    /// Why not, completing "<kind> <key> cannot run: ...".
    pub why: &'static str,
}

/// What this host can run, per declared kind.
pub(super) const HOST_RUNS: [Row; 4] = [
    Row {
        // `client-local` `stdio-jsonrpc` in the sandbox; the rest per `services.rs`.
        kind: "service",
        runs: Runs::Supported,
        code: "service.runtime_unavailable",
        why: "this AppHost cannot run it here",
    },
    Row {
        kind: "workflow",
        runs: Runs::Supported,
        code: "workflow.not_declared",
        why: "the app declares no workflow with this key or path",
    },
    Row {
        kind: "knowledge",
        runs: Runs::UserBinds,
        code: "knowledge.not_bound",
        why: "no folder is bound to it yet",
    },
    Row {
        kind: "tool",
        runs: Runs::WhenGranted,
        code: "tools.not_granted",
        why: "it is not granted to the app, or no configured MCP server lists it",
    },
];

fn row(kind: &str) -> Row {
    *HOST_RUNS
        .iter()
        .find(|r| r.kind == kind)
        .expect("every kind has a row")
}

/// Workflow findings shown per check message (the rest are counted).
const FINDINGS_SHOWN: usize = 5;

fn unsupported(required: bool) -> Outcome {
    if required {
        Outcome::Blocked
    } else {
        Outcome::Degraded
    }
}

pub(super) fn runtimes(cx: &mut Ctx) {
    super::services::services(cx);
    workflows(cx);
    schedules(cx);
    bound(cx, Key::KnowledgeTemplates, "knowledge");
    bound(cx, Key::ToolRefs, "tool");
}

/// Knowledge templates and tool refs: pass when bound, else the row's code.
fn bound(cx: &mut Ctx, list: Key, kind: &'static str) {
    let r = row(kind);
    let present = match kind {
        "knowledge" => &cx.state.bound_knowledge,
        _ => &cx.state.available_tools,
    };
    for item in cx.m.view().items(list) {
        let key = item.label(kind).to_owned();
        let req = item.required();
        if matches!(r.runs, Runs::WhenGranted | Runs::UserBinds) && present.contains(&key) {
            cx.push(kind, key, req, Outcome::Pass, format!("{kind} is ready"));
            continue;
        }
        if r.runs == Runs::UserBinds {
            let app = cx.m.name().to_owned();
            let outcome = if req {
                Outcome::NeedsSetup
            } else {
                Outcome::Notice
            };
            let message = format!("{kind} {key} is not bound: {}", r.why);
            let c = cx.push(kind, key.clone(), req, outcome, message);
            c.code = Some(r.code);
            c.setup_action = super::action(
                &key,
                format!("Bind knowledge {key}"),
                "bind-knowledge",
                Some(key.clone()),
            );
            if let Some(a) = c.setup_action.as_mut() {
                a.description = Some(format!("apphost knowledge bind {app} {key} <folder>"));
            }
            continue;
        }
        if r.runs == Runs::WhenGranted {
            let target = crate::install::store::tool_rows::tool_ref_target(
                item.key(),
                item.text(crate::install::manifest::ItemText::Provider),
            )
            .unwrap_or_else(|| key.clone());
            let app = cx.m.name().to_owned();
            let outcome = if req {
                Outcome::NeedsSetup
            } else {
                Outcome::Degraded
            };
            let message = format!("{kind} {target} cannot run: {}", r.why);
            let c = cx.push(kind, key.clone(), req, outcome, message);
            c.code = Some(r.code);
            c.setup_action = super::action(
                &key,
                format!("Grant tool {target}"),
                "grant-tool",
                Some(target.clone()),
            );
            if let Some(a) = c.setup_action.as_mut() {
                a.description = Some(format!("apphost tools grant {app} {target}"));
            }
            continue;
        }
        let message = format!("{kind} {key} cannot run: {}", r.why);
        let c = cx.push(kind, key, req, unsupported(req), message);
        c.code = Some(r.code);
        c.remediation = Some(remediation(req));
    }
}

fn remediation(required: bool) -> String {
    if required {
        "update AppHost to a version that runs it".into()
    } else {
        "the app runs without it, with reduced features".into()
    }
}

/// `workflows[]` and `workflow` entries.
fn workflows(cx: &mut Ctx) {
    let v = cx.m.view();
    let declared = v.requires().capability_names();
    let items: Vec<_> = v.workflows().collect();
    let raw: Vec<&serde_json::Value> = items.iter().map(|w| w.raw()).collect();
    // Remembered by content: repeated readiness of the same manifest parses nothing.
    let checked = super::workflow_cache::checked(&raw, &declared);
    let mut used = vec![false; items.len()];
    for e in v.entries() {
        if e.kind() != Some(EntryKind::Workflow) {
            continue;
        }
        let entry = e.label("entry").to_owned();
        let target = e.workflow();
        let found = target.and_then(|t| {
            items
                .iter()
                .position(|w| w.key() == Some(t) || w.path() == Some(t))
        });
        match found {
            Some(i) => {
                used[i] = true;
                let key = items[i].key().unwrap_or("workflow");
                workflow_check(cx, key, &checked[i], true, Some(&entry));
            }
            None => {
                let key = target.unwrap_or("workflow").to_owned();
                // The standard's examples point workflow entries at a Markdown description
                // (`*.workflow.md`, a diagram and prose): say so rather than "not declared".
                let document = key.to_ascii_lowercase().ends_with(".md");
                let why = if document {
                    "it is a Markdown description, not a workflow this host can run"
                } else {
                    row("workflow").why
                };
                let message = format!("workflow entry {entry} cannot run {key}: {why}");
                let c = cx.push("workflow", key, true, Outcome::Blocked, message);
                c.code = Some(row("workflow").code);
                c.entry = Some(entry);
                if document {
                    c.remediation = Some(
                        "the app must declare the workflow's states under workflows[] (docs/package-format.md)"
                            .into(),
                    );
                }
            }
        }
    }
    // Workflows no entry runs: nothing launches them, so they only degrade the app.
    for (i, w) in items.iter().enumerate() {
        if !used[i] {
            workflow_check(cx, w.key().unwrap_or("workflow"), &checked[i], false, None);
        }
    }
}

/// Scheduled `background-task` entries (`install/schedules.rs`): a valid schedule passes; an
/// invalid one blocks its entry with `schedule.invalid` / `schedule.no_workflow` (the host never
/// starts it), and only that entry.
fn schedules(cx: &mut Ctx) {
    let v = cx.m.view();
    for found in crate::install::schedules::of_manifest(v.name(), v) {
        let (entry, outcome, code, message) = match found {
            Ok(d) => (
                d.entry.clone(),
                Outcome::Pass,
                None,
                format!(
                    "entry {} starts workflow {} every {} s while AppHost runs",
                    d.entry,
                    d.workflow,
                    d.every.as_secs()
                ),
            ),
            Err((entry, code, why)) => (
                entry.clone(),
                Outcome::Blocked,
                Some(code),
                format!("the schedule of entry {entry} cannot run: {why}"),
            ),
        };
        let c = cx.push("schedule", entry.clone(), true, outcome, message);
        c.code = code;
        c.entry = Some(entry);
        if code.is_some() {
            c.remediation = Some("fix the entry's schedule (docs/package-format.md §8)".into());
        }
    }
}

fn workflow_check(cx: &mut Ctx, key: &str, checked: &Verdict, required: bool, entry: Option<&str>) {
    let entry = entry.map(str::to_owned);
    for f in checked
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .take(FINDINGS_SHOWN)
    {
        let message = format!("workflow {key}: {} at {:?}: {}", f.code, f.path, f.message);
        let c = cx.push("workflow", key, false, Outcome::Notice, message);
        c.code = Some(f.code);
        c.entry.clone_from(&entry);
    }
    let (code, message) = if checked.blocked {
        let errors: Vec<_> = checked
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .collect();
        let shown: Vec<String> = errors
            .iter()
            .take(FINDINGS_SHOWN)
            .map(|f| format!("{} at {:?}: {}", f.code, f.path, f.message))
            .collect();
        let more = errors.len().saturating_sub(FINDINGS_SHOWN) + checked.dropped;
        let tail = if more > 0 {
            format!(" (and {more} more)")
        } else {
            String::new()
        };
        let code = errors.first().map_or("workflow.invalid_field", |f| f.code);
        (
            code,
            format!("workflow {key} is invalid: {}{tail}", shown.join("; ")),
        )
    } else if row("workflow").runs == Runs::Supported {
        let c = cx.push(
            "workflow",
            key,
            required,
            Outcome::Pass,
            format!("workflow {key} is ready"),
        );
        c.entry = entry;
        return;
    } else {
        let r = row("workflow");
        (r.code, format!("workflow {key} cannot run: {}", r.why))
    };
    let c = cx.push("workflow", key, required, unsupported(required), message);
    c.code = Some(code);
    c.entry = entry;
    c.remediation = Some(if checked.blocked {
        "fix the workflow definition".into()
    } else {
        remediation(required)
    });
}
