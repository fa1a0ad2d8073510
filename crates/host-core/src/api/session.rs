//! The state one host UI shares across its commands: the bridge host with the store connection
//! it keeps, a small pool of app file servers with their recent refusals, the entry to open at
//! start, the store stamp the mount watcher last saw, the event outbox and pending uploads.
//!
//! One [`Session`] per desktop window process, one per `apphost serve` process. It is
//! transport-neutral: what differs between the transports is in [`SessionConfig`].

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::Serialize;

use super::outbox::{Outbox, OUTGOING};
use super::store_stamp::{StoreLook, StoreStamp};
use crate::center::Center;
use crate::foundation::error::{ErrorCode, HostError, HostResult};
use crate::foundation::paths::DataDir;
use crate::foundation::profile::HostProfile;
use crate::hosting::bridge::host::{BridgeHost, Outgoing};
use crate::hosting::capability::services::Services;
use crate::hosting::surface::serve::{AppResponse, CachedServer, ServeContext, ServeRefusal};
use crate::install::store::Store;

/// How many refused app-file requests are kept for diagnostics.
pub const SERVE_REFUSAL_LOG: usize = 200;
/// Most idle file servers (open store connections) kept; requests beyond it in parallel open a
/// store of their own, dropped after the request.
pub const SERVE_POOL: usize = 4;

/// Environment variables `apphost open <app> [--entry <key>]` sets for the window.
pub const OPEN_APP_ENV: &str = "APPHOST_OPEN_APP";
pub const OPEN_ENTRY_ENV: &str = "APPHOST_OPEN_ENTRY";

/// What the host UI was started to open (`apphost open <app> [--entry <key>]`, or
/// `apphost serve`'s `/apps/<app>/<entry>`).
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
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LaunchTarget {
    pub app_id: String,
    pub entry_key: String,
}

/// Opens a checked URL with a program (the desktop shell's `xdg-open`).
pub type OpenLink = Box<dyn Fn(&str) -> HostResult<()> + Send + Sync>;

/// What `open_external` does once Rust checked the URL.
pub enum LinkOpener {
    /// Desktop: hand the URL to a program.
    Program(OpenLink),
    /// Browser: answer `{url}`; the page opens it itself.
    Page,
}

/// How often the mount watcher looks at every mounted app even though the store files' stamp
/// did not move: the stamp is size and modification time, and a file system's coarse clock can
/// give two commits one stamp.
pub const FULL_LOOK_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// What the watcher last saw of the store.
struct SeenStore {
    stamp: StoreStamp,
    /// Look once more on the next call (the last change was seen a moment ago).
    recheck: bool,
    /// When the mounted apps were last looked up.
    looked: std::time::Instant,
}

/// What differs between the transports.
pub struct SessionConfig {
    /// How app origins look and which origin may frame them.
    pub serve: ServeContext,
    pub links: LinkOpener,
    pub launch: Option<LaunchRequest>,
}

/// The bridge host and the store connection it is fed from: one connection for the life of the
/// session, so the host's cached call facts stay valid until the store changes.
pub struct Bridge {
    pub host: BridgeHost,
    store: Option<Store>,
}

pub struct Session {
    pub data: DataDir,
    pub config: SessionConfig,
    bridge: Mutex<Bridge>,
    servers: Mutex<Vec<CachedServer>>,
    serve_refusals: Mutex<VecDeque<ServeRefusal>>,
    /// The store as the mount watcher last checked it.
    seen_store: Mutex<Option<SeenStore>>,
    /// The bridge connection's `data_version` at the watcher's last look: it moves only when
    /// a connection other than the bridge's committed (the CLI, an app-center operation).
    foreign_seen: Mutex<Option<i64>>,
    pub outbox: Arc<Outbox>,
    /// The app center: uploads and install reviews awaiting consent (`api/center.rs`).
    pub center: Center,
    /// The dev console's per-mount report rate (`api/dev_console.rs`).
    pub(crate) dev_console: Mutex<super::dev_console::DevConsole>,
    /// The package file the window was started to review (`api/launch_package.rs`), answered once.
    launch_package: Mutex<Option<std::path::PathBuf>>,
    /// The data directory's workflow runs, opened on first use (`api/workflow_host.rs`).
    pub(crate) workflows: super::workflow_host::WorkflowHost,
    /// Re-indexes bound knowledge folders when they change; started by the host UI's first
    /// `next_events` (a running window or `apphost serve`), not by every session.
    knowledge_watch: Mutex<Option<crate::hosting::knowledge_watch::KnowledgeWatcher>>,
}

impl Session {
    /// Starts the knowledge watcher once (`hosting::knowledge_watch`).
    pub fn ensure_knowledge_watch(&self) {
        let mut w = self
            .knowledge_watch
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if w.is_none() {
            *w = Some(crate::hosting::knowledge_watch::KnowledgeWatcher::start(
                self.data.clone(),
            ));
        }
    }

    pub fn new(data: DataDir, config: SessionConfig) -> Self {
        let session = Self::new_without_resuming(data, config);
        session.resume_workflow_runs();
        session
    }

    /// The host session drives the data directory's workflow runs (when it has any): opens and
    /// replays them now, unless done already. [`Session::new`] does it at once; the desktop
    /// window makes its session with [`Session::new_without_resuming`] and calls this on a
    /// thread beside the window (the replay is not on the first paint's path).
    pub fn resume_workflow_runs(&self) {
        let resumed = self
            .bridge()
            .map_err(|e| e.message)
            .and_then(|mut b| b.host.resume_workflow_runs(&self.data));
        if let Err(m) = resumed {
            tracing::warn!("workflow runs not resumed: {m}");
        }
    }

    /// [`Session::new`] without resuming the workflow runs (see [`Session::resume_workflow_runs`]).
    pub fn new_without_resuming(data: DataDir, config: SessionConfig) -> Self {
        let mut bridge = BridgeHost::new(
            Services::new(data.apps_data()),
            HostProfile::current(),
            config.serve.style.clone(),
        );
        // A frame's service call waits outside the bridge lock (`with_bridge_calls`).
        bridge.defer_service_calls();
        // Asynchronous bridge actions (lime.agent task events, produced on the agent runtime's
        // threads) go straight to the outbox as `outgoing` events, one per action.
        let outbox = Arc::new(Outbox::new());
        let sink = Arc::clone(&outbox);
        bridge
            .async_outbox()
            .forward_to(Arc::new(move |o: Outgoing| {
                let changed = super::tasks::changed_by(&o);
                match serde_json::to_value([o]) {
                    Ok(payload) => {
                        sink.push(OUTGOING, payload);
                        if let Some(c) = changed {
                            sink.push(super::tasks::TASKS_CHANGED, c);
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "could not encode an asynchronous bridge action")
                    }
                }
            }));
        let center = Center::new(data.clone());
        Session {
            data,
            config,
            bridge: Mutex::new(Bridge {
                host: bridge,
                store: None,
            }),
            servers: Mutex::new(Vec::new()),
            serve_refusals: Mutex::new(VecDeque::new()),
            seen_store: Mutex::new(None),
            foreign_seen: Mutex::new(None),
            outbox,
            center,
            dev_console: Mutex::default(),
            launch_package: Mutex::default(),
            workflows: Default::default(),
            knowledge_watch: Mutex::new(None),
        }
    }

    /// The package file the host UI opens the review sheet for at start (checked by
    /// `launch_package::package_path` before it gets here).
    pub fn with_launch_package(self, path: Option<std::path::PathBuf>) -> Self {
        if let Ok(mut slot) = self.launch_package.lock() {
            *slot = path;
        }
        self
    }

    pub(crate) fn take_launch_package(&self) -> Option<std::path::PathBuf> {
        self.launch_package.lock().ok()?.take()
    }

    pub fn bridge(&self) -> HostResult<MutexGuard<'_, Bridge>> {
        self.bridge.lock().map_err(|_| {
            HostError::new(
                ErrorCode::Internal,
                "the bridge state is unusable after a crash in a previous call",
            )
        })
    }

    /// Whether the store changed since the last call (the first call says yes), or changed just
    /// before it ([`StoreLook::Recheck`]): the files' stamp can move before the commit that
    /// moved it is visible to readers (the WAL frames are written, the WAL index not yet), so
    /// the call after a change looks once more. An unchanged stamp is also rechecked every
    /// [`FULL_LOOK_EVERY`]: two commits within one tick of the file system's clock that leave the
    /// files' sizes alone give one stamp.
    pub fn store_changed(&self) -> StoreLook {
        let now = StoreStamp::of(&self.data);
        let at = std::time::Instant::now();
        match self.seen_store.lock() {
            Ok(mut seen) => match seen.as_mut() {
                Some(s) if s.stamp == now => {
                    if std::mem::take(&mut s.recheck)
                        || at.duration_since(s.looked) >= FULL_LOOK_EVERY
                    {
                        s.looked = at;
                        StoreLook::Recheck
                    } else {
                        StoreLook::Unchanged
                    }
                }
                _ => {
                    *seen = Some(SeenStore {
                        stamp: now,
                        recheck: true,
                        looked: at,
                    });
                    StoreLook::Changed
                }
            },
            Err(_) => StoreLook::Changed,
        }
    }

    /// Whether a connection other than the bridge's committed since the last call; `None`
    /// while the bridge has no connection (or it cannot tell). The bridge's own commits are this
    /// window's audit records (one per capability call) and grants from its prompts, which
    /// `answer_prompt` announces itself: the watcher must not wake the host UI for each call.
    pub fn foreign_commit_seen(&self) -> Option<bool> {
        let version = match self.bridge() {
            Ok(guard) => match guard.store.as_ref().map(Store::data_version) {
                Some(Ok(v)) => v,
                _ => return None,
            },
            Err(_) => return None,
        };
        match self.foreign_seen.lock() {
            Ok(mut seen) => Some(seen.replace(version) != Some(version)),
            Err(_) => None,
        }
    }

    /// The watcher could not finish a look (the store was not readable, or an app's state
    /// unknown): the next call says [`StoreLook::Changed`] again, so the change is not lost.
    pub fn store_look_failed(&self) {
        if let Ok(mut seen) = self.seen_store.lock() {
            *seen = None;
        }
    }

    /// Runs `f` with the bridge host and its store (opened on first use, then kept; commits
    /// survive a crash of the process, see `host_core::install::store::durability`).
    /// A frame's `lime.services.call` that `f` allowed is answered as an `outgoing` event
    /// ([`Session::with_bridge_calls`]).
    pub fn with_bridge<T>(&self, f: impl FnOnce(&mut BridgeHost, &Store) -> T) -> HostResult<T> {
        let (value, answers) = self.with_bridge_calls(f)?;
        self.push_outgoing(answers);
        Ok(value)
    }

    /// [`Session::with_bridge`], then the frames' `lime.services.call`s that `f` allowed run
    /// with the bridge lock released (a slow service delays no other frame), and the lock is
    /// taken again only to record each answer, returned here.
    pub fn with_bridge_calls<T>(
        &self,
        f: impl FnOnce(&mut BridgeHost, &Store) -> T,
    ) -> HostResult<(T, Vec<Outgoing>)> {
        let (value, calls) = {
            let mut guard = self.bridge()?;
            let bridge = &mut *guard;
            let store: &Store = match &mut bridge.store {
                Some(store) => store,
                slot @ None => slot.insert(self.open_bridge_store()?),
            };
            let value = f(&mut bridge.host, store);
            (value, bridge.host.take_service_calls())
        };
        let mut answers = Vec::new();
        for call in calls {
            let done = call.run();
            answers.extend(self.bridge()?.host.finish_service_call(done));
        }
        Ok((value, answers))
    }

    /// Opens the bridge's store connection without the watcher taking the open for another
    /// process's commit: opening moves the store files' stamp (SQLite creates the WAL and its
    /// index when no other connection has them open) but commits nothing, so when the watcher
    /// had seen every change before the open, the stamp after it is taken as seen and the
    /// connection's `data_version` becomes the baseline of [`Session::foreign_commit_seen`].
    /// A change the watcher had not seen yet is left for it to announce.
    fn open_bridge_store(&self) -> HostResult<Store> {
        let before = StoreStamp::of(&self.data);
        let store = Store::open_for_calls(&self.data)?;
        let after = StoreStamp::of(&self.data);
        if let Ok(mut seen) = self.seen_store.lock() {
            if let Some(s) = seen.as_mut().filter(|s| s.stamp == before) {
                if let Ok(version) = store.data_version() {
                    s.stamp = after;
                    if let Ok(mut f) = self.foreign_seen.lock() {
                        *f = Some(version);
                    }
                }
            }
        }
        Ok(store)
    }

    /// Queues bridge actions produced off the request path (an agent task's events for a
    /// frame) as one `outgoing` event; the host UI executes them like a `bridge_message` answer.
    pub fn push_outgoing(&self, outgoing: Vec<Outgoing>) {
        if outgoing.is_empty() {
            return;
        }
        match serde_json::to_value(&outgoing) {
            Ok(payload) => {
                self.outbox.push(OUTGOING, payload);
            }
            Err(e) => tracing::warn!(error = %e, "could not encode asynchronous bridge actions"),
        }
    }

    /// Serves one app-file request (`label` is the app's host label, `path` the raw URL path)
    /// with an idle file server from the pool (or a new one). Refusals are kept for diagnostics.
    pub fn serve(&self, label: &str, path: &str) -> HostResult<AppResponse> {
        let idle = self.servers.lock().ok().and_then(|mut pool| pool.pop());
        let mut server = match idle {
            Some(server) => server,
            None => CachedServer::new(Store::open(&self.data)?, self.config.serve.clone()),
        };
        let answer = server.serve(label, path);
        if let Ok(mut pool) = self.servers.lock() {
            if pool.len() < SERVE_POOL {
                pool.push(server);
            }
        }
        if let Some(refusal) = &answer.refusal {
            if refusal.reason == "serve.tampered" {
                tracing::warn!(
                    app = refusal.app.as_deref().unwrap_or("?"),
                    path = %refusal.path,
                    "refused an app file whose bytes no longer match the installed hash"
                );
            }
            self.record_serve_refusal(refusal.clone());
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
