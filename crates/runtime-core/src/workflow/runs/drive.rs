//! Driving a run: make its effects happen, record each fact, apply it, until the run waits
//! for a person or a timer, or ends.

use jiff::{SignedDuration, Timestamp};

use super::*;
use crate::event::facts::PersonWait;
use crate::workflow::machine::{Fact, Wake};

impl WorkflowRuns {
    /// Drives `run_id` until it waits for a person or a timer not yet due, or ends.
    ///
    /// A step's call is made WITHOUT the runs' lock: reading, starting, answering and
    /// cancelling runs go on while a step (an agent task: minutes) is in flight. A run another
    /// thread is driving is not driven twice (its view is returned). When the run was
    /// cancelled while its step was in flight, the step's result is not recorded (the run has
    /// ended; a replay sees the step started without a result, of a cancelled run). A call the
    /// executor abandoned ([`code::STEP_ABANDONED`]) records nothing either: the next drive
    /// re-issues it with the same key.
    pub fn drive(&self, run_id: &str, exec: &dyn StepExecutor) -> Result<RunView, RunError> {
        loop {
            let (id, app, workflow, call) = {
                let mut runs = lock(&self.runs);
                let e = find_mut(&mut runs, run_id)?;
                if e.driving {
                    return Ok(e.view());
                }
                let Some(call) = self.advance(e)? else {
                    return Ok(e.view());
                };
                let started = self.mark_started(e, &call)?;
                e.driving = true;
                (
                    e.run_id.clone(),
                    e.app.clone(),
                    e.workflow.clone(),
                    (call, started),
                )
            };
            let (call, started) = call;
            let result = {
                let _guard = Driving {
                    runs: &self.runs,
                    id: &id,
                };
                exec.call(&StepCall {
                    run_id: id.as_str(),
                    app: &app,
                    workflow: &workflow,
                    call: &call,
                })
            };
            let mut runs = lock(&self.runs);
            let e = find_mut(&mut runs, run_id)?;
            let still_waits = !e.closed
                && matches!(e.machine.next_effect(),
                    Effect::Wait(Pending::Call(c)) if c.idempotency_key == call.idempotency_key);
            let abandoned = matches!(&result, Err(se) if se.code == code::STEP_ABANDONED);
            if !still_waits || abandoned {
                return Ok(e.view());
            }
            let synced = !exec.reissue_is_safe(&call);
            self.record_result(e, &call, started, result, synced)?;
        }
    }

    /// Drives every running run whose timer or deadline is due; returns the runs it moved.
    pub fn drive_due(&self, exec: &dyn StepExecutor) -> Result<Vec<RunView>, RunError> {
        let now = self.log.clock().now();
        let due: Vec<RunId> = lock(&self.runs)
            .values()
            .filter(|e| match e.machine.next_effect() {
                Effect::Wait(p) => e
                    .marks
                    .get(p.key())
                    .and_then(|m| m.due_at)
                    .is_some_and(|d| d <= now),
                Effect::Done(_) => false,
            })
            .map(|e| e.run_id.clone())
            .collect();
        due.iter().map(|id| self.drive(id.as_str(), exec)).collect()
    }

    /// Records a person's answer to what the run waits for and applies it (then drive the run
    /// to make the next steps happen). Only the user answers a review or a retry decision: an
    /// answer from the app is refused with `workflow.answer_not_by_user` and changes nothing.
    /// An input (from either) must satisfy the state's `schema` ([`check_input`]).
    pub fn respond(
        &self,
        run_id: &str,
        answer: Answer,
        source: AnswerSource,
    ) -> Result<RunView, RunError> {
        let mut runs = lock(&self.runs);
        let e = find_mut(&mut runs, run_id)?;
        let pending = match e.machine.next_effect() {
            Effect::Wait(p) => p,
            Effect::Done(_) => return Err(RunError::new(code::RUN_FINISHED, run_id.to_string())),
        };
        let input_asked = matches!(pending, Pending::Input { .. });
        if source != AnswerSource::User && !(input_asked && matches!(answer, Answer::Input { .. }))
        {
            return Err(RunError::new(
                code::ANSWER_NOT_BY_USER,
                "a review or retry decision is answered by the user in AppHost, not by the app",
            ));
        }
        if let (Pending::Input { schema, .. }, Answer::Input { data }) = (&pending, &answer) {
            check_input(schema.as_ref(), data)?;
        }
        let key = pending.key().to_string();
        let (what, fact) = match (&pending, answer) {
            (Pending::Review { .. }, Answer::Review { approved, data }) => (
                PersonWait::Review,
                Fact::Reviewed {
                    key,
                    approved,
                    data,
                },
            ),
            (Pending::Input { .. }, Answer::Input { data }) => {
                (PersonWait::Input, Fact::InputGiven { key, data })
            }
            (Pending::Decision { .. }, Answer::Decision { retry }) => {
                (PersonWait::Decision, Fact::Decided { key, retry })
            }
            _ => {
                return Err(RunError::new(
                    code::NOT_WAITING,
                    "the run does not wait for this kind of answer",
                ))
            }
        };
        // Check the fact against a copy first: a refused answer records nothing.
        let mut probe = e.machine.clone();
        probe
            .apply(fact.clone())
            .map_err(|err| RunError::new(code::NOT_WAITING, err.to_string()))?;
        self.append(
            &e.session,
            facts::workflow_person_answered(&e.run_id, what, &fact, source != AnswerSource::User),
        )?;
        e.machine = probe;
        Ok(e.view())
    }

    /// Moves the run through everything that is not a capability call (timers that are due,
    /// deadlines, its end); `Some(call)` when a step's call is next, `None` when the run waits
    /// for a person or a timer, or has ended.
    fn advance(&self, e: &mut Entry) -> Result<Option<Call>, RunError> {
        loop {
            let pending = match e.machine.next_effect() {
                Effect::Done(status) => {
                    if !e.closed {
                        if !matches!(status, RunStatus::Cancelled { .. }) {
                            self.append(&e.session, facts::workflow_ended(&e.run_id, &status))?;
                        }
                        e.closed = true;
                    }
                    return Ok(None);
                }
                Effect::Wait(p) => p,
            };
            let fact = match &pending {
                Pending::Call(call) => return Ok(Some(call.clone())),
                Pending::Timer { key, wake, .. } | Pending::Backoff { key, wake, .. } => {
                    let retry = matches!(pending, Pending::Backoff { .. });
                    let due = self.arm_timer(e, key, wake, retry)?;
                    if due > self.log.clock().now() {
                        return Ok(None);
                    }
                    let f = Fact::TimerFired { key: key.clone() };
                    self.append(&e.session, facts::workflow_timer_fired(&e.run_id, &f))?;
                    e.since_checkpoint += 2;
                    f
                }
                Pending::Review {
                    key, timeout_ms, ..
                }
                | Pending::Input {
                    key, timeout_ms, ..
                } => {
                    let what = match pending {
                        Pending::Review { .. } => PersonWait::Review,
                        _ => PersonWait::Input,
                    };
                    match self.ask_person(e, key, what, *timeout_ms)? {
                        Some(f) => f,
                        None => return Ok(None),
                    }
                }
                Pending::Decision { key, .. } => {
                    self.ask_person(e, key, PersonWait::Decision, None)?;
                    return Ok(None);
                }
            };
            if let Err(err) = e.machine.apply(fact) {
                return Err(RunError::new(code::REPLAY_FAILED, err.to_string()));
            }
        }
    }

    /// The step's `step_started`, once (a call re-issued after a crash keeps its first record
    /// and its key). A step whose call ends quickly gets it back as a draft, appended with its
    /// result in one commit ([`WorkflowRuns::record_result`]): a crash before that commit
    /// leaves no trace of the call, and the next drive re-issues it with the same key, which
    /// the capability layer deduplicates; the start needs no fsync of its own. An agent step
    /// (minutes) records it now, so its run shows the step in flight.
    fn mark_started(
        &self,
        e: &mut Entry,
        call: &Call,
    ) -> Result<Option<crate::event::EventDraft>, RunError> {
        let key = &call.idempotency_key;
        if e.marks.contains_key(key) {
            return Ok(None);
        }
        if call.capability == "lime.agent" {
            let d = facts::workflow_step_started(
                &e.run_id,
                key,
                &call.state,
                &call.capability,
                &call.method,
            );
            self.append(&e.session, d)?;
            e.marks.insert(key.clone(), Mark::default());
            return Ok(None);
        }
        Ok(Some(facts::workflow_step_started_at(
            &e.run_id,
            key,
            &call.state,
            &call.capability,
            &call.method,
            &crate::event::format_timestamp(self.log.clock().now()),
        )))
    }

    /// Records a call's result as the step's fact (with its deferred `step_started`, and a
    /// checkpoint when one is due, in one commit; fsynced when `synced`: see
    /// [`StepExecutor::reissue_is_safe`]) and applies it.
    fn record_result(
        &self,
        e: &mut Entry,
        call: &Call,
        started: Option<crate::event::EventDraft>,
        result: Result<Value, StepError>,
        synced: bool,
    ) -> Result<(), RunError> {
        let key = call.idempotency_key.clone();
        let fact = match result {
            // An output past the bound is not recorded: the step fails instead.
            Ok(output) if too_large(&output) => Fact::Failed {
                key,
                code: crate::workflow::machine::run_code::OUTPUT_TOO_LARGE.into(),
                message: format!(
                    "the step's output is over {} bytes",
                    crate::workflow::limits::MAX_STEP_OUTPUT_BYTES
                ),
                retryable: false,
            },
            Ok(output) => Fact::Succeeded { key, output },
            Err(se) if se.timed_out => Fact::TimedOut { key },
            Err(se) => Fact::Failed {
                key,
                code: se.code,
                message: se.message,
                retryable: se.retryable,
            },
        };
        let mut batch: Vec<crate::event::EventDraft> = started.into_iter().collect();
        let facts_now = e.since_checkpoint + batch.len() as u32 + 1;
        // The checkpoint is the state the result applies to (the call pending, its start
        // recorded by this batch or before): replay resumes from it and applies the result.
        let checkpoint = if facts_now >= self.checkpoint_every {
            super::checkpoint::draft(&e.run_id, &e.machine, Some(&call.idempotency_key), &e.marks)
        } else {
            None
        };
        let checkpointed = checkpoint.is_some();
        batch.extend(checkpoint);
        batch.push(facts::workflow_step_result(&e.run_id, &fact));
        self.append_batch(&e.session, batch, synced)?;
        e.marks.entry(call.idempotency_key.clone()).or_default();
        e.since_checkpoint = if checkpointed { 1 } else { facts_now };
        if let Err(err) = e.machine.apply(fact) {
            return Err(RunError::new(code::REPLAY_FAILED, err.to_string()));
        }
        Ok(())
    }

    /// The timer's due time: recorded once (`wait_scheduled` / `retry_scheduled`), then read.
    fn arm_timer(
        &self,
        e: &mut Entry,
        key: &str,
        wake: &Wake,
        retry: bool,
    ) -> Result<Timestamp, RunError> {
        if let Some(d) = e.marks.get(key).and_then(|m| m.due_at) {
            return Ok(d);
        }
        let now = self.log.clock().now();
        let due = match wake {
            Wake::AfterMs(ms) => add_ms(now, *ms),
            Wake::At(s) => s.parse::<Timestamp>().unwrap_or(now),
        };
        let at = crate::event::format_timestamp(due);
        self.append(
            &e.session,
            facts::workflow_timer_scheduled(&e.run_id, key, retry, &at),
        )?;
        e.marks.insert(key.to_string(), Mark { due_at: Some(due) });
        Ok(due)
    }

    /// Records that the run waits for a person (once, with its deadline); `Some(TimedOut)`
    /// when the deadline has passed.
    fn ask_person(
        &self,
        e: &mut Entry,
        key: &str,
        what: PersonWait,
        timeout_ms: Option<u64>,
    ) -> Result<Option<Fact>, RunError> {
        let now = self.log.clock().now();
        if !e.marks.contains_key(key) {
            let due = timeout_ms.map(|ms| add_ms(now, ms));
            let at = due.map(crate::event::format_timestamp);
            self.append(
                &e.session,
                facts::workflow_person_requested(&e.run_id, what, key, at.as_deref()),
            )?;
            e.marks.insert(key.to_string(), Mark { due_at: due });
        }
        let due = e.marks.get(key).and_then(|m| m.due_at);
        if due.is_some_and(|d| d <= now) {
            let f = Fact::TimedOut {
                key: key.to_string(),
            };
            self.append(&e.session, facts::workflow_step_result(&e.run_id, &f))?;
            return Ok(Some(f));
        }
        Ok(None)
    }
}

fn too_large(v: &serde_json::Value) -> bool {
    serde_json::to_vec(v).map_or(true, |b| {
        b.len() > crate::workflow::limits::MAX_STEP_OUTPUT_BYTES
    })
}

fn add_ms(t: Timestamp, ms: u64) -> Timestamp {
    let ms = i64::try_from(ms).unwrap_or(i64::MAX);
    t.checked_add(SignedDuration::from_millis(ms))
        .unwrap_or(Timestamp::MAX)
}

/// Clears a run's `driving` mark when its call returns (or unwinds).
struct Driving<'a> {
    runs: &'a Mutex<BTreeMap<RunId, Entry>>,
    id: &'a RunId,
}

impl Drop for Driving<'_> {
    fn drop(&mut self) {
        if let Some(e) = lock(self.runs).get_mut(self.id) {
            e.driving = false;
        }
    }
}
