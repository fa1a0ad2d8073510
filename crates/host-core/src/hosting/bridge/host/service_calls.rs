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

use serde_json::{json, Value};

use super::{BridgeHost, Outgoing};
use crate::hosting::bridge::message::Call;
use crate::hosting::bridge::mounts::Mount;
use crate::hosting::capability::dispatch::CallError;
use crate::hosting::capability::services::ServiceWork;

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
    /// when the frame was unmounted meanwhile).
    pub fn finish_service_call(&mut self, done: ServiceCallDone) -> Vec<Outgoing> {
        let ServiceCallDone {
            mount,
            call,
            trace_id,
            result,
        } = done;
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
