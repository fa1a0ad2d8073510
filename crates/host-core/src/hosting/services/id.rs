//! Which service, and who answers its own requests (shared by `host.rs` and `slot.rs`).

use std::sync::Arc;

use service_sandbox::channel::HostHandler;

use crate::foundation::paths::DataDir;

/// Which service: the app and the service's key (never from a message: from the store).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ServiceId {
    pub app: String,
    pub key: String,
}

/// Makes the handler that answers one service's own `lime.*` requests (a new one per start).
pub type BackCalls = Arc<dyn Fn(&DataDir, &ServiceId) -> HostHandler + Send + Sync>;
