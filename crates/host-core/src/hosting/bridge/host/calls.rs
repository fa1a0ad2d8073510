//! A capability call from a frame through the choke point, and the user's answer to the prompt
//! a call may wait on.

use super::*;

impl BridgeHost {
    /// Applies the user's answer to a pending prompt and finishes the waiting call.
    pub fn answer(&mut self, store: &Store, prompt_id: &str, answer: Answer) -> Vec<Outgoing> {
        let Some(p) = self.prompts.remove(prompt_id) else {
            return Vec::new();
        };
        let Some(mount) = self.table.get(&p.mount_id).cloned() else {
            return Vec::new();
        };
        if p.kind == PromptKind::RequestPermission {
            return self.answer_request(store, &mount, p, answer);
        }
        if let PromptKind::PickFiles { .. } = p.kind {
            // A picker answered as a prompt (closed, dismissed): nothing was chosen.
            return self.finish_pick(store, &mount, p, None);
        }
        if p.kind == PromptKind::ToolApproval {
            return self.answer_tool_approval(store, &mount, p, answer);
        }
        let answers = self.answers.entry(mount.mount_id.clone()).or_default();
        let refuse = |host: &mut Self| {
            let e = prompt_refused(&p.call);
            host.table.end_call(&mount.mount_id, &p.call.request_id);
            vec![host.call_error(&mount, &p.call.request_id, &e)]
        };
        match (answer, &p.permission) {
            (Answer::Deny, Some(perm)) => {
                answers.denied.insert(perm.clone());
                refuse(self)
            }
            (Answer::Deny | Answer::Dismissed, _) => refuse(self),
            (Answer::AllowOnce, Some(perm)) => {
                answers.allow_once.insert(perm.clone());
                self.finish_call(store, &mount, p.call, &p.trace_id)
            }
            (Answer::AllowAlways, Some(perm)) => {
                if let Err(e) = store.grant(&mount.app_id, perm) {
                    tracing::warn!(error = %e.message, "cannot record a grant");
                    return refuse(self);
                }
                self.finish_call(store, &mount, p.call, &p.trace_id)
            }
            (Answer::AllowOnce | Answer::AllowAlways, None) => {
                // A policy confirmation is only ever asked for an implemented method.
                if let Some(spec) = registry::lookup(&p.call.capability, &p.call.method) {
                    answers.confirmed_once.insert(confirmation_key(spec.method));
                }
                self.finish_call(store, &mount, p.call, &p.trace_id)
            }
        }
    }

    /// The user's answer to a destructive `lime.tools.invoke`: the call is dispatched again
    /// (facts re-derived: a revoke or disable meanwhile wins) and run only on "allow".
    fn answer_tool_approval(
        &mut self,
        store: &Store,
        mount: &Mount,
        p: PendingPrompt,
        answer: Answer,
    ) -> Vec<Outgoing> {
        let answers = self.answers.entry(mount.mount_id.clone()).or_default();
        let verdict = dispatch_with(
            &self.facts,
            store,
            &self.profile,
            &mount.caller(),
            &p.call,
            &p.trace_id,
            answers,
        );
        self.table.end_call(&mount.mount_id, &p.call.request_id);
        let result = match verdict {
            Verdict::Allowed(proof) => match answer {
                Answer::AllowOnce | Answer::AllowAlways => {
                    self.executions += 1;
                    self.services
                        .invoke_tool_approved(store, &proof, &p.call.args)
                }
                Answer::Deny | Answer::Dismissed => {
                    Err(self.services.tool_refused(store, &proof, &p.call.args))
                }
            },
            Verdict::Denied(e) => Err(e),
            Verdict::Ask(_) => Err(prompt_refused(&p.call)),
        };
        match result {
            Ok(value) => vec![self.post(
                mount,
                "host:response",
                Some(&p.call.request_id),
                json!({ "value": value, "traceId": p.trace_id }),
            )],
            Err(e) => vec![self.call_error(mount, &p.call.request_id, &e)],
        }
    }

    pub(super) fn invoke(&mut self, store: &Store, mount: &Mount, call: Call) -> Vec<Outgoing> {
        match self.table.begin_call(&mount.mount_id, &call.request_id) {
            Ok(()) => {}
            Err(CallRefused::UnknownMount) => return Vec::new(),
            Err(CallRefused::DuplicateRequest) => {
                return vec![self.post_error(
                    mount,
                    Some(&call.request_id),
                    &call.capability,
                    &call.method,
                    ErrorCode::DuplicateRequest,
                    "a call with this requestId is already in flight",
                    None,
                )]
            }
            Err(CallRefused::RateLimited) => {
                let mut e = error_for(
                    &call,
                    ErrorCode::RateLimited,
                    "too many calls in flight for this frame",
                );
                e.retryable = true;
                return vec![self.call_error(mount, &call.request_id, &e)];
            }
        }
        let trace_id = self.new_id("trace");
        self.finish_call(store, mount, call, &trace_id)
    }

    pub(super) fn finish_call(
        &mut self,
        store: &Store,
        mount: &Mount,
        call: Call,
        trace_id: &str,
    ) -> Vec<Outgoing> {
        let answers = self.answers.entry(mount.mount_id.clone()).or_default();
        let verdict = dispatch_with(
            &self.facts,
            store,
            &self.profile,
            &mount.caller(),
            &call,
            trace_id,
            answers,
        );
        match verdict {
            Verdict::Allowed(proof) => {
                self.executions += 1;
                let result = match proof.method() {
                    Method::Ui(m) => self.ui_call(store, mount, m, &call).map(Reply::value),
                    Method::Capabilities(m) => self
                        .capabilities_call(store, mount, &proof, m, &call.args)
                        .map(Reply::value),
                    Method::Workspace(m) => {
                        self.workspace_call(&proof, m, &call.args).map(Reply::value)
                    }
                    _ => self.services.call_with(store, &proof, &call.args),
                };
                if let Ok(Reply {
                    effect: Some(effect),
                    ..
                }) = result
                {
                    return self.apply_effect(mount, call, trace_id, effect);
                }
                self.table.end_call(&mount.mount_id, &call.request_id);
                match result.map(|r| r.value) {
                    Ok(value) => vec![self.post(
                        mount,
                        "host:response",
                        Some(&call.request_id),
                        json!({ "value": value, "traceId": trace_id }),
                    )],
                    Err(e) => vec![self.call_error(mount, &call.request_id, &e)],
                }
            }
            Verdict::Denied(e) => {
                self.table.end_call(&mount.mount_id, &call.request_id);
                vec![self.call_error(mount, &call.request_id, &e)]
            }
            Verdict::Ask(question) => {
                if self.prompts.len() >= MAX_PENDING_PROMPTS {
                    self.table.end_call(&mount.mount_id, &call.request_id);
                    let mut e = error_for(
                        &call,
                        ErrorCode::RateLimited,
                        "too many permission prompts are waiting",
                    );
                    e.retryable = true;
                    return vec![self.call_error(mount, &call.request_id, &e)];
                }
                let prompt_id = self.new_id("prompt");
                self.prompts.insert(
                    prompt_id.clone(),
                    PendingPrompt {
                        mount_id: mount.mount_id.clone(),
                        permission: question.permission.clone(),
                        call,
                        trace_id: trace_id.to_owned(),
                        kind: PromptKind::Call,
                    },
                );
                vec![Outgoing::Prompt {
                    prompt_id,
                    mount_id: mount.mount_id.clone(),
                    question,
                }]
            }
        }
    }
}
