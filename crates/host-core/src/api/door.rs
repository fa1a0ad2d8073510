//! The App Server door of a host session (the desktop window, `apphost serve`): the bridge's
//! own agent runtime (the one `lime.agent` and the Tasks page use) served as App Server JSON-RPC
//! on `<data>/runtime/app-server.sock` (RuntimeCore `app_server::door`), so
//! `apphost app-server --stdio` and other local clients share its sessions instead of meeting
//! `runtime.busy`. Keep the returned [`Door`] for as long as the session serves; dropping it
//! removes the socket and token files.

pub use runtime_core::app_server::door::Door;
use runtime_core::app_server::door::{self, DoorLimits};

use std::sync::Arc;

use runtime_core::app_server::host_methods::HostMethods;

use runtime_core::runtime::Runtime;

use super::session::Session;
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::hosting::model_settings;
use crate::install::store::Store;

/// Opens the runtime (as an app's first `lime.agent` call would) and its door.
pub fn open(session: &Session) -> HostResult<Door> {
    open_with(session, DoorLimits::default())
}

/// [`open`] whose connections also answer the host methods (`apphost/workflow.*`:
/// `api/door_workflow.rs`), so `apphost workflow ...` hands its runs to this session. The
/// window and `apphost serve` open this one.
pub fn open_serving(session: &Arc<Session>) -> HostResult<Door> {
    let mut methods = super::door_workflow::methods(session);
    super::door_services::add_to(&mut methods, session);
    let methods = Arc::new(methods);
    open_inner(session, DoorLimits::default(), Some(methods))
}

/// [`open`] with other bounds (tests).
pub fn open_with(session: &Session, limits: DoorLimits) -> HostResult<Door> {
    open_inner(session, limits, None)
}

fn open_inner(
    session: &Session,
    limits: DoorLimits,
    methods: Option<Arc<HostMethods>>,
) -> HostResult<Door> {
    let (runtime, handle) = session
        .with_bridge(|host, store| host.agent_runtime(store))?
        .map_err(|m| HostError::new(ErrorCode::TaskRuntimeFailed, m))?;
    let data = session.data.clone();
    let on_connect: door::OnConnect = Arc::new(move |rt: &Runtime| {
        if rt.status() == "ready" {
            return;
        }
        // A model configured since the runtime opened: door clients get it too.
        let backend = Store::open(&data).and_then(|s| model_settings::backend(&s));
        if let Ok(Some(b)) = backend {
            rt.set_backend(b);
        }
    });
    door::open_with_host_methods(runtime, &handle, limits, Some(on_connect), methods).map_err(|e| {
        HostError::new(
            ErrorCode::TaskRuntimeFailed,
            format!("cannot open the App Server door: {e}"),
        )
    })
}
