//! The window's managed state: the bridge host (one per window process) with the store
//! connection it keeps, the `agentapp:` file servers (a small pool of open stores, each caching
//! per-app serving facts until the store changes) and their recent refusals, and the entry the
//! window was asked to open at start.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};

use host_core::bridge::host::BridgeHost;
use host_core::capability::services::Services;
use host_core::error::{ErrorCode, HostError, HostResult};
use host_core::paths::DataDir;
use host_core::profile::HostProfile;
use host_core::store::Store;
use host_core::surface::origin::OriginStyle;
use host_core::surface::serve::{AppResponse, CachedServer, ServeContext, ServeRefusal};
use serde::Serialize;

use super::watch::StoreStamp;

/// How many refused `agentapp:` requests are kept for diagnostics.
pub const SERVE_REFUSAL_LOG: usize = 200;
/// Most idle file servers (open store connections) kept for `agentapp:` requests; requests
/// beyond it in parallel open a store of their own, dropped after the request.
pub const SERVE_POOL: usize = 4;

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

/// The bridge host and the store connection it is fed from: one connection for the life of the
/// window, so the host's cached call facts stay valid until the store changes.
pub struct Bridge {
    pub host: BridgeHost,
    store: Option<Store>,
}

pub struct Desktop {
    pub data: DataDir,
    bridge: Mutex<Bridge>,
    servers: Mutex<Vec<CachedServer>>,
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
            bridge: Mutex::new(Bridge {
                host: bridge,
                store: None,
            }),
            servers: Mutex::new(Vec::new()),
            serve_refusals: Mutex::new(VecDeque::new()),
            launch,
            seen_store: Mutex::new(None),
        }
    }

    pub fn bridge(&self) -> HostResult<MutexGuard<'_, Bridge>> {
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

    /// Runs `f` with the bridge host and its store (opened on first use, then kept; commits
    /// survive a crash of the process, see `host_core::store::durability`).
    pub fn with_bridge<T>(&self, f: impl FnOnce(&mut BridgeHost, &Store) -> T) -> HostResult<T> {
        let mut guard = self.bridge()?;
        let bridge = &mut *guard;
        let store: &Store = match &mut bridge.store {
            Some(store) => store,
            slot @ None => slot.insert(Store::open_for_calls(&self.data)?),
        };
        Ok(f(&mut bridge.host, store))
    }

    /// Serves one `agentapp:` request with an idle file server from the pool (or a new one).
    pub fn serve(&self, ctx: &ServeContext, label: &str, path: &str) -> HostResult<AppResponse> {
        let idle = self.servers.lock().ok().and_then(|mut pool| pool.pop());
        let mut server = match idle {
            Some(server) => server,
            None => CachedServer::new(Store::open(&self.data)?, ctx.clone()),
        };
        let answer = server.serve(label, path);
        if let Ok(mut pool) = self.servers.lock() {
            if pool.len() < SERVE_POOL {
                pool.push(server);
            }
        }
        Ok(answer)
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
