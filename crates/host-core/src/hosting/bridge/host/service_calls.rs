//! A frame's `lime.services.call` without the bridge lock held while the service works: the
//! session turns deferral on ([`BridgeHost::defer_service_calls`]); the allowed call then leaves
//! its work here ([`Effect::CallService`](crate::hosting::capability::services::Effect)), the
//! session takes it ([`BridgeHost::take_service_calls`]), releases the lock, runs it (up to the
//! service's `timeoutMs`) and re-locks only to answer the frame
//! ([`BridgeHost::finish_service_call`]). Every other frame's calls go on meanwhile.
//!
//! The call stays in flight for its frame (`MountTable::begin_call`) until answered, so the
//! per-frame in-flight cap still bounds how many wait at once. A frame unmounted while its
//! call ran gets no answer.
//!
//! While it runs, the frame's `capability:cancel {requestId}` cancels it
//! ([`BridgeHost::cancel_service_call`]): the frame is answered `HOST_E_CANCELLED` at once, the
//! call is cancelled on its plane (a stdio service gets `$/cancelRequest {id}`, a Wasm call stops
//! between fuel slices, a local-http or remote request's connection is dropped) and its late
//! answer is dropped. The running calls are
//! keyed by (mount, request id), so a frame can only cancel its own; an unknown, finished or
//! repeated cancel does nothing.

use serde_json::{json, Value};

use std::collections::BTreeMap;

use super::{BridgeHost, Outgoing};
use crate::hosting::bridge::message::Call;
use crate::hosting::bridge::mounts::Mount;
use crate::hosting::capability::dispatch::CallError;
use crate::hosting::capability::services::ServiceWork;

/// The running calls by (mount id, request id): the call (its cancel token; its identity, as
/// a cancelled id may be reused by a new call at once) and the error a cancel answers.
/// Bounded by the frames' in-flight caps.
pub(super) type Running = BTreeMap<(String, String), (ServiceWork, CallError)>;

/// One allowed `lime.services.call` waiting to run outside the bridge lock.
pub struct DeferredServiceCall {
    mount: Mount,
    call: Call,
    trace_id: String,
    work: ServiceWork,
}

/// The outcome of [`DeferredServiceCall::run`], for [`BridgeHost::finish_service_call`].
pub struct ServiceCallDone {
    mount: Mount,
    call: Call,
    trace_id: String,
    work: ServiceWork,
    result: Result<Value, CallError>,
}

impl DeferredServiceCall {
    /// Waits on the service (no bridge state is touched).
    pub fn run(self) -> ServiceCallDone {
        let result = self.work.run().unwrap_or_else(|| {
            Err(super::error_for(
                &self.call,
                crate::hosting::capability::code::ErrorCode::UnknownError,
                "the service call already ran",
            ))
        });
        ServiceCallDone {
            mount: self.mount,
            call: self.call,
            trace_id: self.trace_id,
            work: self.work,
            result,
        }
    }
}

impl BridgeHost {
    /// From now on a frame's `lime.services.call` is left for
    /// [`BridgeHost::take_service_calls`]: the caller MUST take and finish them after every
    /// call into this host (`api::Session` does).
    pub fn defer_service_calls(&mut self) {
        self.services.defer_service_calls();
    }

    pub(super) fn defer_service_call(
        &mut self,
        mount: &Mount,
        call: Call,
        trace_id: &str,
        work: ServiceWork,
    ) {
        let cancelled = super::error_for(
            &call,
            crate::hosting::capability::code::ErrorCode::Cancelled,
            "the app cancelled this call",
        );
        self.running_service_calls.insert(
            (mount.mount_id.clone(), call.request_id.clone()),
            (work.clone(), cancelled),
        );
        self.service_calls.push(DeferredServiceCall {
            mount: mount.clone(),
            call,
            trace_id: trace_id.to_owned(),
            work,
        });
    }

    /// The service calls left by the last calls into this host, to run without its lock.
    pub fn take_service_calls(&mut self) -> Vec<DeferredServiceCall> {
        std::mem::take(&mut self.service_calls)
    }

    /// Records a finished service call: ends it for its frame and answers the frame (nothing
    /// when it was cancelled, answered then, or its frame was unmounted meanwhile: its late
    /// answer reaches no frame, not even a new call that reuses its request id).
    pub fn finish_service_call(&mut self, done: ServiceCallDone) -> Vec<Outgoing> {
        let ServiceCallDone {
            mount,
            call,
            trace_id,
            work,
            result,
        } = done;
        let key = (mount.mount_id.clone(), call.request_id.clone());
        match self.running_service_calls.get(&key) {
            Some((running, _)) if *running == work => {
                self.running_service_calls.remove(&key);
            }
            _ => return Vec::new(),
        }
        if !self.table.end_call(&mount.mount_id, &call.request_id) {
            return Vec::new();
        }
        vec![match result {
            Ok(value) => self.post(
                &mount,
                "host:response",
                Some(&call.request_id),
                json!({ "value": value, "traceId": trace_id }),
            ),
            Err(e) => self.call_error(&mount, &call.request_id, &e),
        }]
    }
}

impl BridgeHost {
    /// `capability:cancel` of `mount`'s own running service call `request_id`: cancels it (on
    /// every plane: `$/cancelRequest`, Wasm fuel slices, a dropped connection) and answers the frame `HOST_E_CANCELLED` now. `None`
    /// when `mount` has no such running call (another frame's, unknown, finished, repeated).
    pub(super) fn cancel_service_call(
        &mut self,
        mount: &Mount,
        request_id: &str,
    ) -> Option<Vec<Outgoing>> {
        let key = (mount.mount_id.clone(), request_id.to_owned());
        let (work, cancelled) = self.running_service_calls.remove(&key)?;
        work.cancel_token().cancel();
        if !self.table.end_call(&mount.mount_id, request_id) {
            return Some(Vec::new());
        }
        Some(vec![self.call_error(mount, request_id, &cancelled)])
    }

    /// Cancels every running service call of `mount_id` (its frame is gone: nobody waits).
    pub(super) fn cancel_service_calls_of(&mut self, mount_id: &str) {
        let mine: Vec<_> = self
            .running_service_calls
            .range((mount_id.to_owned(), String::new())..)
            .take_while(|((m, _), _)| m == mount_id)
            .map(|(k, _)| k.clone())
            .collect();
        for key in mine {
            if let Some((work, _)) = self.running_service_calls.remove(&key) {
                work.cancel_token().cancel();
            }
        }
    }
}
