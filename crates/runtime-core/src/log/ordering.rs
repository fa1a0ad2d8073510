//! The ordering rules every session's stream obeys, checked before an event is appended:
//! each `tool.started` pairs with exactly one `tool.result`/`tool.failed`; each
//! `action.required` is resolved once; a turn ends once, with no open tool call or action;
//! nothing of a turn follows its terminal event (except refs to what it produced).

use std::collections::{HashMap, HashSet};

use crate::event::{EventDraft, EventType};
use crate::ids::{ActionId, ToolCallId, TurnId};

/// A violated ordering rule (the code is stable and documented in `docs/app-server.md`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ordering rule {code} violated: {detail}")]
pub struct OrderingViolation {
    pub code: &'static str,
    pub detail: String,
}

fn violation(code: &'static str, detail: impl Into<String>) -> OrderingViolation {
    OrderingViolation {
        code,
        detail: detail.into(),
    }
}

/// What the rules need to remember about one session.
#[derive(Debug, Clone, Default)]
pub struct OrderingState {
    terminal_turns: HashSet<TurnId>,
    open_tools: HashMap<ToolCallId, Option<TurnId>>,
    open_actions: HashMap<ActionId, Option<TurnId>>,
}

/// Types allowed to name a turn after it ended: refs to what it produced, and repairs.
fn allowed_after_terminal(kind: EventType) -> bool {
    matches!(
        kind,
        EventType::ArtifactChanged
            | EventType::EvidenceChanged
            | EventType::SnapshotUpdated
            | EventType::SnapshotRepaired
    )
}

/// How to undo one `apply` (so a rejected batch leaves the state as it was, without cloning it).
enum Undo {
    Terminal(TurnId),
    ToolOpened(ToolCallId),
    ToolClosed(ToolCallId, Option<TurnId>),
    ActionOpened(ActionId),
    ActionClosed(ActionId, Option<TurnId>),
}

impl OrderingState {
    /// Admits a whole batch or none of it: on a violation, the drafts already admitted are
    /// undone.
    pub fn admit_batch(&mut self, drafts: &[EventDraft]) -> Result<(), OrderingViolation> {
        let mut undo = Vec::new();
        for d in drafts {
            if let Err(v) = self.check(d) {
                for u in undo.into_iter().rev() {
                    match u {
                        Undo::Terminal(t) => {
                            self.terminal_turns.remove(&t);
                        }
                        Undo::ToolOpened(id) => {
                            self.open_tools.remove(&id);
                        }
                        Undo::ToolClosed(id, t) => {
                            self.open_tools.insert(id, t);
                        }
                        Undo::ActionOpened(id) => {
                            self.open_actions.remove(&id);
                        }
                        Undo::ActionClosed(id, t) => {
                            self.open_actions.insert(id, t);
                        }
                    }
                }
                return Err(v);
            }
            self.apply_recording(d, &mut undo);
        }
        Ok(())
    }

    fn apply_recording(&mut self, d: &EventDraft, undo: &mut Vec<Undo>) {
        let turn = d.scope.turn_id.clone();
        match d.kind() {
            EventType::ToolStarted => {
                if let Some(id) = &d.scope.tool_call_id {
                    if self.open_tools.insert(id.clone(), turn).is_none() {
                        undo.push(Undo::ToolOpened(id.clone()));
                    }
                }
            }
            EventType::ToolResult | EventType::ToolFailed => {
                if let Some(id) = &d.scope.tool_call_id {
                    if let Some(t) = self.open_tools.remove(id) {
                        undo.push(Undo::ToolClosed(id.clone(), t));
                    }
                }
            }
            EventType::ActionRequired => {
                if let Some(id) = &d.scope.action_id {
                    if self.open_actions.insert(id.clone(), turn).is_none() {
                        undo.push(Undo::ActionOpened(id.clone()));
                    }
                }
            }
            EventType::ActionResolved => {
                if let Some(id) = &d.scope.action_id {
                    if let Some(t) = self.open_actions.remove(id) {
                        undo.push(Undo::ActionClosed(id.clone(), t));
                    }
                }
            }
            EventType::TurnCompleted | EventType::TurnFailed => {
                if let Some(t) = turn {
                    if self.terminal_turns.insert(t.clone()) {
                        undo.push(Undo::Terminal(t));
                    }
                }
            }
            _ => {}
        }
    }

    /// Checks `draft` against the rules; on success, records it.
    pub fn admit(&mut self, draft: &EventDraft) -> Result<(), OrderingViolation> {
        self.check(draft)?;
        self.apply(draft);
        Ok(())
    }

    pub fn check(&self, d: &EventDraft) -> Result<(), OrderingViolation> {
        let kind = d.kind();
        let turn = d.scope.turn_id.as_ref();
        if let Some(t) = turn {
            if self.terminal_turns.contains(t) && !allowed_after_terminal(kind) {
                let code = if kind.is_turn_terminal() {
                    "turn_terminal_repeated"
                } else {
                    "execution_after_turn_terminal"
                };
                return Err(violation(code, format!("{kind} after turn {t} ended")));
            }
        }
        match kind {
            EventType::ToolStarted => {
                if let Some(id) = &d.scope.tool_call_id {
                    if self.open_tools.contains_key(id) {
                        return Err(violation("tool_started_already_active", id.as_str()));
                    }
                }
            }
            EventType::ToolArgs
            | EventType::ToolProgress
            | EventType::ToolResult
            | EventType::ToolFailed => {
                let id = d.scope.tool_call_id.as_ref();
                if !id.is_some_and(|id| self.open_tools.contains_key(id)) {
                    let code = match kind {
                        EventType::ToolFailed => "tool_failed_without_start",
                        _ => "tool_result_without_start",
                    };
                    return Err(violation(code, format!("{kind} for {id:?}")));
                }
            }
            EventType::ActionRequired => {
                if let Some(id) = &d.scope.action_id {
                    if self.open_actions.contains_key(id) {
                        return Err(violation("action_required_already_active", id.as_str()));
                    }
                }
            }
            EventType::ActionResolved => {
                let id = d.scope.action_id.as_ref();
                if !id.is_some_and(|id| self.open_actions.contains_key(id)) {
                    return Err(violation(
                        "action_resolved_without_request",
                        format!("{id:?}"),
                    ));
                }
            }
            EventType::TurnCompleted | EventType::TurnFailed => {
                if let Some(t) = turn {
                    if let Some((id, _)) = self
                        .open_tools
                        .iter()
                        .find(|(_, tt)| tt.as_ref() == Some(t))
                    {
                        return Err(violation("tool_unclosed_at_turn_end", id.as_str()));
                    }
                    if let Some((id, _)) = self
                        .open_actions
                        .iter()
                        .find(|(_, tt)| tt.as_ref() == Some(t))
                    {
                        return Err(violation("action_unresolved_at_turn_end", id.as_str()));
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Records `draft` (also used when loading a session's history, without checking).
    pub fn apply(&mut self, d: &EventDraft) {
        let turn = d.scope.turn_id.clone();
        match d.kind() {
            EventType::ToolStarted => {
                if let Some(id) = &d.scope.tool_call_id {
                    self.open_tools.insert(id.clone(), turn);
                }
            }
            EventType::ToolResult | EventType::ToolFailed => {
                if let Some(id) = &d.scope.tool_call_id {
                    self.open_tools.remove(id);
                }
            }
            EventType::ActionRequired => {
                if let Some(id) = &d.scope.action_id {
                    self.open_actions.insert(id.clone(), turn);
                }
            }
            EventType::ActionResolved => {
                if let Some(id) = &d.scope.action_id {
                    self.open_actions.remove(id);
                }
            }
            EventType::TurnCompleted | EventType::TurnFailed => {
                if let Some(t) = turn {
                    self.terminal_turns.insert(t);
                }
            }
            _ => {}
        }
    }

    pub fn is_terminal(&self, turn: &TurnId) -> bool {
        self.terminal_turns.contains(turn)
    }

    /// Open tool calls and actions of `turn` (what a recovery must close before ending it).
    pub fn open_in_turn(&self, turn: &TurnId) -> (Vec<ToolCallId>, Vec<ActionId>) {
        let mut tools: Vec<_> = self
            .open_tools
            .iter()
            .filter(|(_, t)| t.as_ref() == Some(turn))
            .map(|(id, _)| id.clone())
            .collect();
        let mut actions: Vec<_> = self
            .open_actions
            .iter()
            .filter(|(_, t)| t.as_ref() == Some(turn))
            .map(|(id, _)| id.clone())
            .collect();
        tools.sort();
        actions.sort();
        (tools, actions)
    }
}
