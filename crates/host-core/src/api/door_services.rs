//! `apphost/services.*`: `apphost services list|start|stop|call|logs` handed to the running host
//! over its App Server door (host extension methods, like `door_workflow.rs`), so the CLI
//! reaches the services the window or `apphost serve` runs (a start made here outlives the
//! command). Each method is the host UI's command of `api/services.rs` with the same
//! arguments; a call is audited `service.call` with `by: door`, and ends (`service.cancelled`)
//! when the client hangs up: `apphost services call` stopped with Ctrl-C cancels what it handed
//! over.

use std::sync::{Arc, Weak};

use runtime_core::app_server::host_methods::{HostHandler, HostMethods};
use runtime_core::app_server::protocol::codes;
use runtime_core::app_server::RpcError;
use serde_json::json;
use service_sandbox::CancelToken;

use super::Session;
use crate::foundation::error::{ErrorCode, HostError};

/// The namespace of these methods.
pub const NAMESPACE: &str = "apphost/services";

/// `(method, host API command)`.
const METHODS: &[(&str, &str)] = &[
    ("list", "app_services"),
    ("start", "service_start"),
    ("stop", "service_stop"),
    ("call", "door_service_call"),
    ("logs", "service_logs"),
];

/// Adds the methods to `table`, each holding the session weakly.
pub fn add_to(table: &mut HostMethods, session: &Arc<Session>) {
    for (name, command) in METHODS {
        let weak: Weak<Session> = Arc::downgrade(session);
        let command = *command;
        let handler: HostHandler = Arc::new(move |p, caller| {
            let session = weak.upgrade().ok_or_else(|| {
                rpc_error(HostError::new(
                    ErrorCode::RuntimeBusy,
                    "the host session has closed",
                ))
            })?;
            let args = p.unwrap_or_else(|| json!({}));
            let out = if command == "door_service_call" {
                let caller = caller.clone();
                let hung_up = CancelToken::from_probe(Arc::new(move || caller.hung_up()));
                super::services::call_by(&session, args, "door", &hung_up)
            } else {
                super::call(&session, command, args)
            };
            out.map_err(rpc_error)
        });
        table
            .add(&format!("{NAMESPACE}.{name}"), handler)
            .expect("the services methods are namespaced");
    }
}

fn rpc_error(e: HostError) -> RpcError {
    RpcError::new(codes::RUNTIME_ERROR, e.message.clone())
        .with_data(json!({"code": e.code.as_str(), "details": e.details}))
}
