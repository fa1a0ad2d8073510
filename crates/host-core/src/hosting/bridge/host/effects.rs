//! Carrying out what an allowed call asked of the bridge ([`Effect`]): the services never see
//! mounts, so fan-out, subscriptions and prompts happen here, after the one choke point has
//! allowed the call.
//!
//! `lime.events` deliveries are `host:event` messages (no `requestId`) with the payload
//! `{capability: "lime.events", topic, payload, sourceEntryKey}`, posted to every other mount
//! of the SAME app that has done the handshake and subscribes to the topic. A mount of another
//! app is never a recipient, whatever the topic.

use serde_json::{json, Value};

use super::{envelope, error_for, BridgeHost, Outgoing, PendingPrompt, PromptKind};
use crate::hosting::bridge::message::Call;
use crate::hosting::bridge::mounts::{CallRefused, Mount, MAX_SUBSCRIPTIONS};
use crate::hosting::capability::code::ErrorCode;
use crate::hosting::capability::decision::AskReason;
use crate::hosting::capability::dispatch::PermissionQuestion;
use crate::hosting::capability::services::Effect;
use crate::install::store::Store;

use super::{Answer, MAX_PENDING_PROMPTS};

/// Most tasks one frame follows at once.
pub const MAX_WATCHED_TASKS: usize = 32;

impl BridgeHost {
    /// Forwards `task_id`'s events after `after` to `mount` as asynchronous `host:event`s with
    /// the payload `{capability: "lime.agent", event: AgentTaskEvent}`. Watching a task again
    /// restarts from the new position (a frame that reloaded resumes where it says).
    /// Beyond [`MAX_WATCHED_TASKS`], the frame stops following its oldest watched task (it can
    /// still read that task's events with `getTaskEvents` or watch it again).
    fn watch_task(&mut self, mount: &Mount, task_id: &str, after: u64) {
        let list = self.watches.entry(mount.mount_id.clone()).or_default();
        if let Some(i) = list.iter().position(|(t, _)| t == task_id) {
            list.remove(i).1.abort();
        }
        if list.len() >= MAX_WATCHED_TASKS {
            list.remove(0).1.abort();
        }
        let outbox = self.outbox.clone();
        let target = mount.clone();
        let sink: crate::hosting::capability::services::TaskEventSink =
            std::sync::Arc::new(move |payload: Value| {
                let message = envelope(&target, "host:event", None, payload);
                outbox
                    .try_push(Outgoing::Post {
                        mount_id: target.mount_id.clone(),
                        message,
                    })
                    .map_err(|o| match *o {
                        Outgoing::Post { message, .. } => message["payload"].clone(),
                        _ => Value::Null,
                    })
            });
        if let Some(h) = self
            .services
            .watch_agent_task(&mount.app_id, task_id, after, sink)
        {
            self.watches
                .entry(mount.mount_id.clone())
                .or_default()
                .push((task_id.to_owned(), h));
        }
    }

    /// Forwards `run_id`'s events after `after` to `mount` as asynchronous `host:event`s with
    /// the payload `{capability: "lime.workflow", runId, event}`; runs and tasks share the
    /// frame's [`MAX_WATCHED_TASKS`] (a run is listed under `run:<id>`).
    fn watch_run(&mut self, mount: &Mount, run_id: &str, after: u64) {
        let name = format!("run:{run_id}");
        let list = self.watches.entry(mount.mount_id.clone()).or_default();
        if let Some(i) = list.iter().position(|(t, _)| *t == name) {
            list.remove(i).1.abort();
        }
        if list.len() >= MAX_WATCHED_TASKS {
            list.remove(0).1.abort();
        }
        let sink = self.frame_sink(mount);
        if let Some(h) = self
            .services
            .watch_workflow_run(&mount.app_id, run_id, after, sink)
        {
            self.watches
                .entry(mount.mount_id.clone())
                .or_default()
                .push((name, h));
        }
    }

    /// Posts an asynchronous `host:event` payload to `mount` through the outbox;
    /// `Err(payload)` when it is full (the forwarder retries).
    fn frame_sink(&self, mount: &Mount) -> crate::hosting::capability::services::TaskEventSink {
        let outbox = self.outbox.clone();
        let target = mount.clone();
        std::sync::Arc::new(move |payload: Value| {
            let message = envelope(&target, "host:event", None, payload);
            outbox
                .try_push(Outgoing::Post {
                    mount_id: target.mount_id.clone(),
                    message,
                })
                .map_err(|o| match *o {
                    Outgoing::Post { message, .. } => message["payload"].clone(),
                    _ => Value::Null,
                })
        })
    }

    /// Applies `effect` for an allowed `call` and answers it (except a prompt, which keeps the
    /// call in flight until the user answers).
    pub(super) fn apply_effect(
        &mut self,
        mount: &Mount,
        call: Call,
        trace_id: &str,
        effect: Effect,
    ) -> Vec<Outgoing> {
        let mut out = Vec::new();
        let value = match effect {
            Effect::Subscribe { topic } => match self.table.subscribe(&mount.mount_id, &topic) {
                Ok(_) => Ok(json!({ "subscribed": true, "topic": topic })),
                Err(CallRefused::RateLimited) => {
                    let mut e = error_for(
                        &call,
                        ErrorCode::InvalidArgument,
                        &format!("a frame may subscribe to at most {MAX_SUBSCRIPTIONS} topics"),
                    );
                    e.cause_code = Some("events.too_many_subscriptions");
                    Err(e)
                }
                Err(_) => return Vec::new(),
            },
            Effect::WatchTask {
                task_id,
                after,
                value,
            } => {
                self.watch_task(mount, &task_id, after);
                Ok(value)
            }
            Effect::WatchRun {
                run_id,
                after,
                value,
            } => {
                self.watch_run(mount, &run_id, after);
                Ok(value)
            }
            Effect::Unsubscribe { topic } => {
                let was = self.table.unsubscribe(&mount.mount_id, &topic);
                Ok(json!({ "unsubscribed": was, "topic": topic }))
            }
            Effect::Publish { topic, payload } => {
                let payload = json!({
                    "capability": "lime.events", "topic": topic, "payload": payload,
                    "sourceEntryKey": mount.entry_key,
                });
                out.extend(
                    self.table
                        .subscribers(&mount.app_id, &topic, &mount.mount_id)
                        .map(|m| Outgoing::Post {
                            mount_id: m.mount_id.clone(),
                            message: envelope(m, "host:event", None, payload.clone()),
                        }),
                );
                Ok(json!({ "delivered": out.len() }))
            }
            Effect::PickFiles(request) => return self.pick_files(mount, call, trace_id, request),
            Effect::CallService(work) => {
                self.defer_service_call(mount, call, trace_id, work);
                return Vec::new();
            }
            Effect::AskToolApproval {
                tool,
                arguments_sha256,
            } => {
                if self.prompts.len() >= MAX_PENDING_PROMPTS {
                    let mut e = error_for(
                        &call,
                        ErrorCode::RateLimited,
                        "too many permission prompts are waiting",
                    );
                    e.retryable = true;
                    Err(e)
                } else {
                    let prompt_id = self.new_id("prompt");
                    let question = PermissionQuestion {
                        app_id: mount.app_id.clone(),
                        entry_key: mount.entry_key.clone(),
                        capability: call.capability.clone(),
                        method: call.method.clone(),
                        permission: None,
                        reason: Some(format!(
                            "Run the destructive tool {tool} (arguments sha256 {})",
                            &arguments_sha256[..12.min(arguments_sha256.len())]
                        )),
                        ask_reason: AskReason::PolicyConfirmation,
                    };
                    self.prompts.insert(
                        prompt_id.clone(),
                        PendingPrompt {
                            mount_id: mount.mount_id.clone(),
                            call,
                            permission: None,
                            trace_id: trace_id.to_owned(),
                            kind: PromptKind::ToolApproval,
                        },
                    );
                    return vec![Outgoing::Prompt {
                        prompt_id,
                        mount_id: mount.mount_id.clone(),
                        question,
                    }];
                }
            }
            Effect::AskPermission { permission, reason } => {
                let answers = self.answers.entry(mount.mount_id.clone()).or_default();
                if answers.denied.contains(&permission) {
                    Ok(json!({ "granted": false, "persistence": "denied" }))
                } else if answers.allow_once.contains(&permission) {
                    Ok(json!({ "granted": true, "persistence": "once" }))
                } else if self.prompts.len() >= MAX_PENDING_PROMPTS {
                    let mut e = error_for(
                        &call,
                        ErrorCode::RateLimited,
                        "too many permission prompts are waiting",
                    );
                    e.retryable = true;
                    Err(e)
                } else {
                    let prompt_id = self.new_id("prompt");
                    let question = PermissionQuestion {
                        app_id: mount.app_id.clone(),
                        entry_key: mount.entry_key.clone(),
                        capability: call.capability.clone(),
                        method: call.method.clone(),
                        permission: Some(permission.clone()),
                        reason,
                        ask_reason: AskReason::PermissionNotGranted,
                    };
                    self.prompts.insert(
                        prompt_id.clone(),
                        PendingPrompt {
                            mount_id: mount.mount_id.clone(),
                            call,
                            permission: Some(permission),
                            trace_id: trace_id.to_owned(),
                            kind: PromptKind::RequestPermission,
                        },
                    );
                    return vec![Outgoing::Prompt {
                        prompt_id,
                        mount_id: mount.mount_id.clone(),
                        question,
                    }];
                }
            }
        };
        self.table.end_call(&mount.mount_id, &call.request_id);
        out.push(match value {
            Ok(value) => self.post(
                mount,
                "host:response",
                Some(&call.request_id),
                json!({ "value": value, "traceId": trace_id }),
            ),
            Err(e) => self.call_error(mount, &call.request_id, &e),
        });
        out
    }

    /// The user's answer to a `lime.policy.requestPermission` prompt becomes the call's value
    /// (`{granted, persistence}`); the answer is audited, and "allow always" is a grant.
    pub(super) fn answer_request(
        &mut self,
        store: &Store,
        mount: &Mount,
        p: PendingPrompt,
        answer: Answer,
    ) -> Vec<Outgoing> {
        let Some(permission) = p.permission.clone() else {
            return Vec::new();
        };
        let answers = self.answers.entry(mount.mount_id.clone()).or_default();
        let value: Result<Value, &str> = match answer {
            Answer::AllowOnce => {
                answers.allow_once.insert(permission.clone());
                Ok(json!({ "granted": true, "persistence": "once" }))
            }
            Answer::AllowAlways => match store.grant(&mount.app_id, &permission) {
                Ok(()) => Ok(json!({ "granted": true, "persistence": "always" })),
                Err(e) => {
                    tracing::warn!(error = %e.message, "cannot record a grant");
                    Err("the host could not record the grant")
                }
            },
            Answer::Deny => {
                answers.denied.insert(permission.clone());
                Ok(json!({ "granted": false, "persistence": "denied" }))
            }
            // Closed without answering: not an allow, and not remembered as a deny.
            Answer::Dismissed => Ok(json!({ "granted": false, "persistence": "denied" })),
        };
        let details = json!({
            "entryKey": mount.entry_key, "capability": p.call.capability,
            "method": p.call.method, "permission": permission, "answer": answer,
            "requestId": p.call.request_id, "traceId": p.trace_id, "mountId": mount.mount_id,
        });
        if let Err(e) = store.record_audit(
            "permission.prompt_answer",
            Some(&mount.app_id),
            Some(&mount.version),
            &details,
        ) {
            tracing::warn!(error = %e.message, "cannot audit a prompt answer");
        }
        self.table.end_call(&mount.mount_id, &p.call.request_id);
        match value {
            Ok(value) => vec![self.post(
                mount,
                "host:response",
                Some(&p.call.request_id),
                json!({ "value": value, "traceId": p.trace_id }),
            )],
            Err(msg) => {
                let mut e = error_for(&p.call, ErrorCode::UnknownError, msg);
                e.retryable = true;
                vec![self.call_error(mount, &p.call.request_id, &e)]
            }
        }
    }
}
