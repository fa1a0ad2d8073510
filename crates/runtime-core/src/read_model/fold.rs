//! The fold: how one event changes the read models. Pure, deterministic, total (any event
//! stream folds, whatever its order; unknown or degraded facts are ignored, never guessed).

use super::*;
use crate::event::facts::{AttemptStatus, SubmitStatus, TaskStatus, TurnEnd};
use crate::event::{EventBody, EventType as T};

fn push_bounded<X>(v: &mut Vec<X>, x: X) {
    v.push(x);
    if v.len() > RECENT {
        v.remove(0);
    }
}

fn push_unique<X: PartialEq>(v: &mut Vec<X>, x: X) {
    if !v.contains(&x) {
        push_bounded(v, x);
    }
}

impl SessionReadModel {
    /// Folds one event.
    pub fn apply(&mut self, e: &Event) {
        let s = &mut self.session;
        if s.session_id.is_none() {
            s.session_id = Some(e.session_id.clone());
            s.runtime_id = Some(e.runtime_id.clone());
            s.created_at = Some(e.timestamp.clone());
            s.status = "idle".into();
        }
        s.updated_at = Some(e.timestamp.clone());
        s.recovery_cursor = e.sequence;
        s.event_count += 1;
        let sc = &e.scope;
        if let Some(th) = &sc.thread_id {
            if !self.threads.contains_key(th.as_str()) {
                push_unique(&mut self.session.thread_ids, th.clone());
                self.threads.insert(
                    th.as_str().to_owned(),
                    ThreadReadModel {
                        thread_id: Some(th.clone()),
                        status: "idle".into(),
                        ..Default::default()
                    },
                );
            }
        }
        self.apply_session(e);
        self.apply_thread(e);
        self.apply_task(e);
        self.apply_permission(e);
        self.apply_routing(e);
        self.apply_evidence(e);
        self.session.status = self.session_status();
    }

    fn session_status(&self) -> String {
        let mut latest: Option<&LastOutcome> = None;
        for t in self.threads.values() {
            if t.active_turn_id.is_some() {
                return if t.pending_actions.is_empty() {
                    "running".into()
                } else {
                    "waitingAction".into()
                };
            }
            if let Some(o) = &t.last_outcome {
                latest = Some(o);
            }
        }
        match latest.map(|o| o.status) {
            Some(TurnStatus::Completed) => "completed".into(),
            Some(TurnStatus::Failed) => "failed".into(),
            Some(TurnStatus::Cancelled) => "cancelled".into(),
            _ => "idle".into(),
        }
    }

    fn apply_session(&mut self, e: &Event) {
        match &e.body {
            EventBody::Session(_, p) => {
                if p.app_id.is_some() {
                    self.session.app_id = p.app_id.clone();
                }
                if p.workspace_id.is_some() {
                    self.session.workspace_id = p.workspace_id.clone();
                }
                if p.business_object_ref.is_some() {
                    self.session.business_object_ref = p.business_object_ref.clone();
                }
                if let Some(t) = &p.title {
                    self.session.title = (!t.is_empty()).then(|| t.clone());
                }
                match p.archived {
                    Some(true) => self.session.archived_at = Some(e.timestamp.clone()),
                    Some(false) => self.session.archived_at = None,
                    None => {}
                }
            }
            EventBody::Snapshot(T::SnapshotRepaired, _) => self.session.repairs += 1,
            _ => {}
        }
    }

    fn apply_thread(&mut self, e: &Event) {
        let sc = &e.scope;
        let Some(th) = sc
            .thread_id
            .as_ref()
            .and_then(|t| self.threads.get_mut(t.as_str()))
        else {
            return;
        };
        let turn_id = sc.turn_id.as_ref();
        let turn_idx = turn_id.and_then(|id| th.turns.iter().position(|t| &t.turn_id == id));
        match &e.body {
            EventBody::TurnSubmitted(_, p) => {
                let Some(id) = turn_id else { return };
                if turn_idx.is_some() {
                    return;
                }
                let queued =
                    p.status.as_deref().and_then(SubmitStatus::parse) == Some(SubmitStatus::Queued);
                th.turns.push(TurnView {
                    turn_id: id.clone(),
                    status: if queued {
                        TurnStatus::Queued
                    } else {
                        TurnStatus::Accepted
                    },
                    submitted_at: Some(e.timestamp.clone()),
                    started_at: None,
                    completed_at: None,
                    task_id: None,
                    run_id: None,
                    output_text: String::new(),
                    structured_output: None,
                    error_code: None,
                    error_message: None,
                    tool_call_count: 0,
                    input_tokens: 0,
                    output_tokens: 0,
                });
                if th.turns.len() > RECENT {
                    // Keep the active and queued turns; drop the oldest ended one.
                    if let Some(pos) = th.turns.iter().position(|t| t.status.is_terminal()) {
                        th.turns.remove(pos);
                    }
                }
                self.session.turn_count += 1;
                if queued {
                    push_unique(&mut th.queued_turns, id.clone());
                    if th.active_turn_id.is_none() {
                        th.status = "queued".into();
                    }
                }
            }
            EventBody::TurnStarted(..) => {
                let Some(id) = turn_id else { return };
                th.queued_turns.retain(|q| q != id);
                th.active_turn_id = Some(id.clone());
                th.status = "running".into();
                if let Some(i) = turn_idx {
                    th.turns[i].status = TurnStatus::Running;
                    th.turns[i].started_at = Some(e.timestamp.clone());
                }
            }
            EventBody::TurnCompleted(..) | EventBody::TurnFailed(..) if turn_id.is_some() => {
                let id = turn_id.expect("guarded");
                let (status, code, message) = match &e.body {
                    EventBody::TurnFailed(_, f) => (
                        if f.status.as_deref().and_then(TurnEnd::parse) == Some(TurnEnd::Cancelled)
                        {
                            TurnStatus::Cancelled
                        } else {
                            TurnStatus::Failed
                        },
                        f.code.clone(),
                        f.message.clone(),
                    ),
                    _ => (TurnStatus::Completed, None, None),
                };
                if let Some(i) = turn_idx {
                    let t = &mut th.turns[i];
                    t.status = status;
                    t.completed_at = Some(e.timestamp.clone());
                    t.error_code = code.clone();
                    t.error_message = message;
                    if let EventBody::TurnCompleted(_, p) = &e.body {
                        t.structured_output = p.structured_output.clone();
                    }
                }
                th.queued_turns.retain(|q| q != id);
                th.pending_actions
                    .retain(|a| a.turn_id.as_ref() != Some(id));
                if th.active_turn_id.as_ref() == Some(id) {
                    th.active_turn_id = None;
                }
                th.last_outcome = Some(LastOutcome {
                    turn_id: id.clone(),
                    status,
                    code,
                    ended_at: e.timestamp.clone(),
                });
                th.status = if th.active_turn_id.is_some() {
                    "running".into()
                } else if !th.queued_turns.is_empty() {
                    "queued".into()
                } else {
                    match status {
                        TurnStatus::Completed => "completed".into(),
                        TurnStatus::Cancelled => "cancelled".into(),
                        _ => "failed".into(),
                    }
                };
            }
            EventBody::ModelRequested(..) => {
                if let Some(i) = turn_idx {
                    th.turns[i].output_text.clear();
                }
            }
            EventBody::ModelCompleted(_, p) => {
                if let Some(i) = turn_idx {
                    th.turns[i].input_tokens += p.input_tokens.unwrap_or(0);
                    th.turns[i].output_tokens += p.output_tokens.unwrap_or(0);
                }
            }
            EventBody::Delta(T::ModelDelta, d) => {
                if let (Some(i), Some(text)) = (turn_idx, &d.text) {
                    th.turns[i].output_text.push_str(text);
                }
            }
            EventBody::ToolStarted(_, p) => {
                let Some(id) = &sc.tool_call_id else { return };
                th.tool_call_count += 1;
                if let Some(i) = turn_idx {
                    th.turns[i].tool_call_count += 1;
                }
                push_bounded(
                    &mut th.tool_calls,
                    ToolCallView {
                        tool_call_id: id.clone(),
                        turn_id: turn_id.cloned(),
                        step_id: sc.step_id.clone(),
                        tool_name: p.tool_name.clone(),
                        status: "running".into(),
                        output_ref: None,
                        spilled: false,
                        error_code: None,
                    },
                );
            }
            EventBody::ToolResult(_, p) => {
                if let Some(tc) = tool_call(th, sc.tool_call_id.as_ref()) {
                    tc.status = "completed".into();
                    tc.output_ref = p.output_ref.clone();
                }
            }
            EventBody::OutputSpilled(_, p) => {
                if let Some(tc) = tool_call(th, sc.tool_call_id.as_ref()) {
                    tc.spilled = true;
                    tc.output_ref = p.output_ref.clone();
                }
            }
            EventBody::Failure(kind, f) => {
                if *kind == T::ToolFailed {
                    th.failed_tool_call_count += 1;
                    if let Some(tc) = tool_call(th, sc.tool_call_id.as_ref()) {
                        tc.status = "failed".into();
                        tc.error_code = f.code.clone();
                    }
                }
                th.incident_count += 1;
                push_bounded(
                    &mut th.incidents,
                    Incident {
                        sequence: e.sequence,
                        kind: kind.as_str().into(),
                        code: f.code.clone(),
                        message: f.message.clone(),
                        turn_id: turn_id.cloned(),
                    },
                );
            }
            EventBody::Snapshot(T::SnapshotRepaired, p) => {
                th.incident_count += 1;
                push_bounded(
                    &mut th.incidents,
                    Incident {
                        sequence: e.sequence,
                        kind: T::SnapshotRepaired.as_str().into(),
                        code: p.reason.clone(),
                        message: p.source.clone(),
                        turn_id: turn_id.cloned(),
                    },
                );
            }
            EventBody::ActionRequired(_, p) => {
                let Some(id) = &sc.action_id else { return };
                if th.pending_actions.iter().any(|a| &a.action_id == id) {
                    return;
                }
                th.pending_actions.push(PendingAction {
                    action_id: id.clone(),
                    turn_id: turn_id.cloned(),
                    tool_call_id: sc.tool_call_id.clone(),
                    action_type: p.action_type.clone(),
                    tool_name: p.tool_name.clone(),
                    prompt: p.prompt.clone(),
                    arguments: p.arguments.clone(),
                    available_decisions: p.available_decisions.clone().unwrap_or_default(),
                    requested_at: e.timestamp.clone(),
                });
                if let Some(i) = turn_idx {
                    th.turns[i].status = TurnStatus::WaitingAction;
                }
                if let Some(tc) = tool_call(th, sc.tool_call_id.as_ref()) {
                    tc.status = "waitingAction".into();
                }
                th.status = "blocked".into();
            }
            EventBody::ActionResolved(..) => {
                let Some(id) = &sc.action_id else { return };
                th.pending_actions.retain(|a| &a.action_id != id);
                if let Some(i) = turn_idx {
                    if th.turns[i].status == TurnStatus::WaitingAction
                        && !th
                            .pending_actions
                            .iter()
                            .any(|a| a.turn_id.as_ref() == turn_id)
                    {
                        th.turns[i].status = TurnStatus::Running;
                    }
                }
                if let Some(tc) = tool_call(th, sc.tool_call_id.as_ref()) {
                    if tc.status == "waitingAction" {
                        tc.status = "running".into();
                    }
                }
                if th.pending_actions.is_empty() && th.active_turn_id.is_some() {
                    th.status = "running".into();
                }
            }
            EventBody::Task(T::TaskCreated, _) => {
                if let Some(i) = turn_idx {
                    th.turns[i].task_id = sc.task_id.clone();
                }
            }
            EventBody::TaskAttempt(T::TaskAttemptStarted, _) => {
                if let Some(i) = turn_idx {
                    th.turns[i].run_id = sc.run_id.clone();
                }
            }
            _ => {}
        }
    }

    fn apply_task(&mut self, e: &Event) {
        let sc = &e.scope;
        let Some(task_id) = &sc.task_id else { return };
        let new = !self.tasks.contains_key(task_id.as_str());
        if new {
            if !matches!(e.body, EventBody::Task(T::TaskCreated, _)) && e.kind() != T::TaskCreated {
                // A task fact for a task never created: a degraded fact, not folded.
                if !e.kind().as_str().starts_with("task.") {
                    return;
                }
            }
            self.session.task_count += 1;
            self.tasks.insert(
                task_id.as_str().to_owned(),
                TaskSnapshot {
                    task_id: Some(task_id.clone()),
                    thread_id: sc.thread_id.clone(),
                    turn_id: sc.turn_id.clone(),
                    status: TaskStatus::Accepted.into(),
                    ..Default::default()
                },
            );
        }
        let t = self.tasks.get_mut(task_id.as_str()).expect("present");
        match &e.body {
            EventBody::Task(kind, p) => {
                if p.title.is_some() {
                    t.title = p.title.clone();
                }
                t.status = match kind {
                    T::TaskCreated => TaskStatus::Accepted.as_str(),
                    T::TaskStarted => TaskStatus::Running.as_str(),
                    T::TaskCompleted => TaskStatus::Completed.as_str(),
                    T::TaskFailed => TaskStatus::Failed.as_str(),
                    T::TaskCancelRequested => TaskStatus::Cancelling.as_str(),
                    T::TaskCancelled => TaskStatus::Cancelled.as_str(),
                    T::TaskRetrying => TaskStatus::Retrying.as_str(),
                    _ => t.status.as_str(),
                }
                .to_owned();
                if p.message.is_some() || p.code.is_some() {
                    t.last_error = p.code.clone().or_else(|| p.message.clone());
                }
            }
            EventBody::TaskAttempt(kind, p) => {
                let Some(run) = &sc.run_id else { return };
                let pos = t.attempts.iter().position(|a| &a.run_id == run);
                match (kind, pos) {
                    (T::TaskAttemptStarted, None) => {
                        t.current_run_id = Some(run.clone());
                        t.status = TaskStatus::Running.into();
                        t.attempts.push(TaskAttempt {
                            run_id: run.clone(),
                            attempt_index: p.attempt_index.unwrap_or(t.attempts.len() as u64 + 1),
                            status: AttemptStatus::Running.into(),
                            failure_category: None,
                            started_at: e.timestamp.clone(),
                            ended_at: None,
                        });
                    }
                    (T::TaskAttemptCompleted | T::TaskAttemptFailed, Some(i)) => {
                        let a = &mut t.attempts[i];
                        a.status = if *kind == T::TaskAttemptCompleted {
                            AttemptStatus::Completed
                        } else {
                            AttemptStatus::Failed
                        }
                        .into();
                        a.failure_category = p.failure_category.clone();
                        a.ended_at = Some(e.timestamp.clone());
                    }
                    _ => {}
                }
            }
            EventBody::RunStatus(_, p) => t.progress = p.phase.clone(),
            EventBody::Artifact(_, p) => {
                if let Some(r) = &p.artifact_ref {
                    push_unique(&mut t.outputs, r.clone());
                }
            }
            EventBody::OutputSpilled(_, p) => {
                if let Some(r) = &p.output_ref {
                    push_unique(&mut t.outputs, r.clone());
                }
            }
            _ => {}
        }
    }

    fn apply_permission(&mut self, e: &Event) {
        let sc = &e.scope;
        let p = &mut self.permission_sandbox;
        match &e.body {
            EventBody::Permission(_, ev) => {
                p.evaluated_count += 1;
                if ev.mode.is_some() {
                    p.mode = ev.mode.clone();
                }
                push_bounded(
                    &mut p.decisions,
                    PermissionDecision {
                        turn_id: sc.turn_id.clone(),
                        tool_call_id: sc.tool_call_id.clone(),
                        tool_name: ev.tool_name.clone(),
                        result: ev.result.clone().unwrap_or_else(|| "indeterminate".into()),
                        source: ev.owner.clone().unwrap_or_else(|| "policy".into()),
                    },
                );
            }
            EventBody::ActionRequired(..) => {
                if let Some(id) = &sc.action_id {
                    push_unique(&mut p.pending_approvals, id.clone());
                }
            }
            EventBody::ActionResolved(_, r) => {
                if let (Some("allow_for_session"), Some(true), Some(tool)) =
                    (r.decision.as_deref(), r.confirmed, &r.tool_name)
                {
                    push_unique(&mut p.session_allowed_tools, tool.clone());
                }
                if let Some(id) = &sc.action_id {
                    if p.pending_approvals.contains(id) {
                        p.pending_approvals.retain(|a| a != id);
                        if r.confirmed == Some(true) {
                            p.approved_count += 1;
                        } else {
                            p.denied_count += 1;
                        }
                        push_bounded(
                            &mut p.decisions,
                            PermissionDecision {
                                turn_id: sc.turn_id.clone(),
                                tool_call_id: sc.tool_call_id.clone(),
                                tool_name: r.tool_name.clone(),
                                result: r
                                    .decision
                                    .clone()
                                    .unwrap_or_else(|| "indeterminate".into()),
                                source: r.source.clone().unwrap_or_else(|| "user".into()),
                            },
                        );
                    }
                }
            }
            EventBody::TurnCompleted(..) | EventBody::TurnFailed(..) => {
                // Actions never outlive their turn.
                if let Some(turn) = &sc.turn_id {
                    if let Some(th) = sc
                        .thread_id
                        .as_ref()
                        .and_then(|t| self.threads.get(t.as_str()))
                    {
                        let still: Vec<ActionId> = th
                            .pending_actions
                            .iter()
                            .map(|a| a.action_id.clone())
                            .collect();
                        let _ = turn;
                        p.pending_approvals.retain(|a| still.contains(a));
                    }
                }
            }
            EventBody::Other(T::SandboxApplied, m) => {
                p.sandbox_profile = Some(Value::Object(m.clone()))
            }
            EventBody::Other(T::SandboxViolation, m) => {
                push_bounded(&mut p.violations, Value::Object(m.clone()))
            }
            _ => {}
        }
    }

    fn apply_routing(&mut self, e: &Event) {
        let r = &mut self.routing_limits;
        match &e.body {
            EventBody::Routing(kind, p) => {
                r.task_kind = p.task_kind.clone().or(r.task_kind.take());
                r.candidate_count = p.candidate_count.or(r.candidate_count);
                r.selected_model = p.selected_model.clone().or(r.selected_model.take());
                r.decision_source = p.decision_source.clone().or(r.decision_source.take());
                match kind {
                    T::RoutingSingleCandidate => r.single_candidate = true,
                    T::RoutingNotPossible => r.no_candidate = true,
                    _ => {}
                }
            }
            EventBody::Limit(kind, p) => match kind {
                T::RateLimitHit => r.rate_limit_hits += 1,
                T::QuotaLow | T::QuotaBlocked => {
                    r.quota_state = Some(kind.as_str().trim_start_matches("quota.").into())
                }
                _ => {
                    let _ = p;
                }
            },
            EventBody::ModelRequested(..) => r.model_requests += 1,
            EventBody::ModelCompleted(_, p) => {
                r.input_tokens += p.input_tokens.unwrap_or(0);
                r.output_tokens += p.output_tokens.unwrap_or(0);
            }
            _ => {}
        }
    }

    fn apply_evidence(&mut self, e: &Event) {
        let ev = &mut self.evidence;
        match &e.body {
            EventBody::Evidence(_, p) => {
                if let Some(id) = &e.scope.evidence_id {
                    push_unique(&mut ev.evidence_refs, id.clone());
                }
                if let Some(r) = &p.pack_ref {
                    push_unique(&mut ev.pack_refs, r.clone());
                }
                if let Some(r) = &p.replay_ref {
                    push_unique(&mut ev.replay_refs, r.clone());
                }
                for o in p.verification_outcomes.iter().flatten() {
                    push_bounded(&mut ev.verification_outcomes, o.clone());
                }
            }
            EventBody::Artifact(_, p) => {
                if let Some(r) = &p.artifact_ref {
                    push_unique(&mut ev.artifact_refs, r.clone());
                }
            }
            EventBody::OutputSpilled(_, p) => {
                if let Some(r) = &p.output_ref {
                    push_unique(&mut ev.output_refs, r.clone());
                }
            }
            _ => {}
        }
    }
}

fn tool_call<'a>(
    th: &'a mut ThreadReadModel,
    id: Option<&ToolCallId>,
) -> Option<&'a mut ToolCallView> {
    let id = id?;
    th.tool_calls
        .iter_mut()
        .rev()
        .find(|t| &t.tool_call_id == id)
}
