//! The effect executor: performs what a turn machine asks (model streams, tool runs, aborts)
//! and feeds the results back until the turn ends.

use std::sync::Arc;

use tokio::sync::mpsc;
use tracing::Instrument;

use super::{lock, Control, Runtime, SessionHandle};
use crate::backend::{cancel_pair, BackendEvent, ExecutionBackend};
use crate::event::facts::{self, TurnEnd};
use crate::event::EventType;
use crate::ids::ToolCallId;
use crate::read_model::TurnStatus;
use crate::tools::ToolCall;
use crate::turn::{Effect, EffectId, Input, ToolOutcome, TurnMachine};

/// The effect executor: drives one turn machine to its end. Returns the answer of a turn that
/// completed with prose (for the next turn's context).
pub(super) async fn execute(
    rt: &Runtime,
    h: &Arc<SessionHandle>,
    mut machine: TurnMachine,
    backend: Arc<dyn ExecutionBackend>,
    mut control: mpsc::Receiver<Control>,
) -> Option<String> {
    enum Running {
        Nothing,
        Model(
            EffectId,
            mpsc::Receiver<BackendEvent>,
            crate::backend::CancelHandle,
            tracing::Span,
        ),
        Tool(
            EffectId,
            tokio::task::JoinHandle<ToolOutcome>,
            crate::backend::CancelHandle,
        ),
    }
    let mut running = Running::Nothing;
    let mut step = machine.handle(Input::Start);
    loop {
        if let Err(e) = rt.append(h, std::mem::take(&mut step.events)) {
            // A rejected fact is a runtime bug or a storage failure: end the turn honestly.
            tracing::error!(error = %e, "append failed; ending the turn");
            let mut fail = machine.handle(Input::Cancel);
            if let Some(last) = fail
                .events
                .last_mut()
                .filter(|d| d.kind() == EventType::TurnFailed)
            {
                // The cancel path ends the turn; the fact says why: the runtime, not a user.
                *last = facts::turn_failed(
                    last.scope.clone(),
                    TurnEnd::Failed,
                    "runtime_error",
                    &e.to_string(),
                    false,
                );
            }
            let _ = rt.append(h, fail.events);
            return None;
        }
        for effect in std::mem::take(&mut step.effects) {
            match effect {
                Effect::CallModel { id, request } => {
                    let span = tracing::info_span!(
                        "llm.request",
                        effect = id.get(),
                        messages = request.messages.len()
                    );
                    let (handle, signal) = cancel_pair();
                    let rx = backend.stream(request, signal);
                    running = Running::Model(id, rx, handle, span);
                }
                Effect::RunTool {
                    id,
                    tool_call_id,
                    name,
                    arguments,
                } => {
                    let tools = rt.inner.tools.clone();
                    // A risky tool runs only after the user's answer (turn/machine/tools.rs).
                    let approved = machine
                        .checkpoint()
                        .spec
                        .tools
                        .iter()
                        .any(|t| t.name == name && t.risky);
                    let (cancel, signal) = cancel_pair();
                    let call = ToolCall {
                        app: h.app_id.clone(),
                        session_id: h.id.as_str().to_owned(),
                        turn_id: machine.turn_id().as_str().to_owned(),
                        tool_call_id: tool_call_id.as_str().to_owned(),
                    };
                    let outputs = rt.inner.config.data_dir.join("outputs").join(h.id.as_str());
                    let span = tracing::info_span!("tool.call", tool = %name, call = %tool_call_id);
                    let task = tokio::task::spawn_blocking(move || {
                        let _g = span.enter();
                        match tools.run_with(&call, &name, &arguments, approved, signal) {
                            Ok((output, artifacts)) => {
                                match store_output(&outputs, &tool_call_id, &output) {
                                    Ok(output_ref) => ToolOutcome::Ok {
                                        output,
                                        output_ref,
                                        artifacts,
                                    },
                                    Err(e) => ToolOutcome::Err {
                                        code: "storage_error".into(),
                                        message: e.to_string(),
                                    },
                                }
                            }
                            Err(e) => ToolOutcome::Err {
                                code: e.code,
                                message: e.message,
                            },
                        }
                    });
                    running = Running::Tool(id, task, cancel);
                }
                Effect::Abort { id } => match &running {
                    Running::Model(mid, _, handle, _) if *mid == id => {
                        handle.cancel();
                        running = Running::Nothing;
                    }
                    Running::Tool(tid, task, cancel) if *tid == id => {
                        cancel.cancel();
                        task.abort();
                        running = Running::Nothing;
                    }
                    _ => {}
                },
            }
        }
        if machine.is_finished() {
            match &running {
                Running::Model(_, _, handle, _) => handle.cancel(),
                // A cancelled turn's external call is cancelled at its server too.
                Running::Tool(_, _, handle) => handle.cancel(),
                Running::Nothing => {}
            }
            let cp = machine.checkpoint();
            let completed = lock(&h.state)
                .model
                .turn(machine.turn_id())
                .map(|t| t.status == TurnStatus::Completed)
                .unwrap_or(false);
            return (completed && cp.spec.output_schema.is_none()).then(|| cp.text.clone());
        }
        let input = tokio::select! {
            ctl = control.recv() => match ctl {
                Some(Control::Cancel) | None => Input::Cancel,
                Some(Control::Action(action_id, decision)) => {
                    let _span = tracing::info_span!("approval.request", action = %action_id).entered();
                    Input::Action { action_id, decision }
                }
                Some(Control::ActionWithInput(action_id, arguments)) => {
                    let _span = tracing::info_span!("approval.request", action = %action_id).entered();
                    Input::ActionWithInput { action_id, arguments }
                }
            },
            ev = async {
                match &mut running {
                    Running::Model(id, rx, _, span) => {
                        match rx.recv().instrument(span.clone()).await {
                            Some(ev) => Input::Model(*id, ev),
                            None => Input::ModelStreamEnded(*id),
                        }
                    }
                    Running::Tool(id, task, _) => {
                        let out = match task.await {
                            Ok(o) => o,
                            Err(e) => ToolOutcome::Err { code: "tool_crashed".into(), message: e.to_string() },
                        };
                        Input::ToolDone(*id, out)
                    }
                    Running::Nothing => std::future::pending().await,
                }
            } => ev,
        };
        if let Input::ToolDone(..)
        | Input::Model(_, BackendEvent::Finished { .. } | BackendEvent::Failed(_))
        | Input::ModelStreamEnded(_) = &input
        {
            running = Running::Nothing;
        }
        step = machine.handle(input);
    }
}

/// Keeps a tool's whole output under `outputs/<session>/<toolCallId>.txt`; returns its ref.
fn store_output(dir: &std::path::Path, call: &ToolCallId, output: &str) -> std::io::Result<String> {
    crate::private_fs::create_private_dir(dir)?;
    let path = dir.join(format!("{}.txt", call.as_str()));
    std::io::Write::write_all(
        &mut crate::private_fs::create_private_file(&path)?,
        output.as_bytes(),
    )?;
    let session = dir.file_name().and_then(|s| s.to_str()).unwrap_or("");
    Ok(format!("output://{session}/{}", call.as_str()))
}
