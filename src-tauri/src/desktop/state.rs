//! The window's managed state: the bridge host (one per window process), the recent refusals of
//! the `agentapp:` file server, and the entry the window was asked to open at start.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};

use host_core::bridge::host::BridgeHost;
use host_core::capability::services::Services;
use host_core::error::{ErrorCode, HostError, HostResult};
use host_core::paths::DataDir;
use host_core::profile::HostProfile;
use host_core::surface::origin::OriginStyle;
use host_core::surface::serve::ServeRefusal;
use serde::Serialize;

use super::watch::StoreStamp;

/// How many refused `agentapp:` requests are kept for diagnostics.
pub const SERVE_REFUSAL_LOG: usize = 200;

/// Environment variables `apphost open <app> [--entry <key>]` sets for the window.
pub const OPEN_APP_ENV: &str = "APPHOST_OPEN_APP";
pub const OPEN_ENTRY_ENV: &str = "APPHOST_OPEN_ENTRY";

/// What the window was started to open (`apphost open <app> [--entry <key>]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchRequest {
    pub app_id: String,
    pub entry_key: Option<String>,
}

impl LaunchRequest {
    /// Reads [`OPEN_APP_ENV`] / [`OPEN_ENTRY_ENV`]; empty values count as unset.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let get = |k: &str| var(k).filter(|v| !v.is_empty());
        Some(LaunchRequest {
            app_id: get(OPEN_APP_ENV)?,
            entry_key: get(OPEN_ENTRY_ENV),
        })
    }
}

/// The entry the host UI mounts at start.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LaunchTarget {
    pub app_id: String,
    pub entry_key: String,
}

pub struct Desktop {
    pub data: DataDir,
    bridge: Mutex<BridgeHost>,
    serve_refusals: Mutex<VecDeque<ServeRefusal>>,
    pub launch: Option<LaunchRequest>,
    /// The store as [`super::commands::sync_mounts`] last checked it.
    seen_store: Mutex<Option<StoreStamp>>,
}

impl Desktop {
    pub fn new(data: DataDir, launch: Option<LaunchRequest>) -> Self {
        let bridge = BridgeHost::new(
            Services::new(data.apps_data()),
            HostProfile::current(),
            OriginStyle::Scheme,
        );
        Desktop {
            data,
            bridge: Mutex::new(bridge),
            serve_refusals: Mutex::new(VecDeque::new()),
            launch,
            seen_store: Mutex::new(None),
        }
    }

    pub fn bridge(&self) -> HostResult<MutexGuard<'_, BridgeHost>> {
        self.bridge.lock().map_err(|_| {
            HostError::new(
                ErrorCode::Internal,
                "the bridge state is unusable after a crash in a previous call",
            )
        })
    }

    /// Whether the store changed since the last call (the first call says yes).
    pub fn store_changed(&self) -> bool {
        let now = StoreStamp::of(&self.data);
        match self.seen_store.lock() {
            Ok(mut seen) => seen.replace(now.clone()) != Some(now),
            Err(_) => true,
        }
    }

    /// Keeps a refused request for diagnostics (bounded).
    pub fn record_serve_refusal(&self, refusal: ServeRefusal) {
        if let Ok(mut log) = self.serve_refusals.lock() {
            if log.len() == SERVE_REFUSAL_LOG {
                log.pop_front();
            }
            log.push_back(refusal);
        }
    }

    pub fn serve_refusals(&self) -> Vec<ServeRefusal> {
        self.serve_refusals
            .lock()
            .map(|log| log.iter().cloned().collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn launch_request_comes_from_the_environment() {
        assert_eq!(LaunchRequest::from_env(env(&[])), None);
        assert_eq!(LaunchRequest::from_env(env(&[(OPEN_APP_ENV, "")])), None);
        assert_eq!(
            LaunchRequest::from_env(env(&[(OPEN_APP_ENV, "hello-app"), (OPEN_ENTRY_ENV, "")])),
            Some(LaunchRequest {
                app_id: "hello-app".into(),
                entry_key: None
            })
        );
        assert_eq!(
            LaunchRequest::from_env(env(&[(OPEN_APP_ENV, "a"), (OPEN_ENTRY_ENV, "notes")])),
            Some(LaunchRequest {
                app_id: "a".into(),
                entry_key: Some("notes".into())
            })
        );
        // An entry without an app opens nothing.
        assert_eq!(
            LaunchRequest::from_env(env(&[(OPEN_ENTRY_ENV, "notes")])),
            None
        );
    }
}
