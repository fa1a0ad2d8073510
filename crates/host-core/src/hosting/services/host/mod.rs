//! [`ServiceHost`]: the declared services of every app of one data directory, in this process.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use serde_json::Value;
use service_sandbox::CancelToken;

mod listing;

pub use super::failure::{reserved_method, ServiceFailure};
pub use super::id::{BackCalls, ServiceId};
use super::slot::{Slot, SlotInput};
use crate::foundation::paths::DataDir;
use crate::foundation::service_health;
use crate::install::service_launch::{self, LaunchPlan};
use crate::install::store::Store;

/// A slot, the package it runs, and its stats (read without waiting for an in-flight call).
#[derive(Clone)]
struct Held {
    package_hash: String,
    /// `Some(granted)`: a `remote-allowed` service and the grant its egress policy was made with.
    network: Option<bool>,
    slot: Arc<Mutex<Slot>>,
    stats: Arc<Mutex<super::slot::Stats>>,
    /// Set when the host takes the service away at once (its network grant revoked): a call in
    /// flight is cancelled, calls waiting for the slot are refused, the slot is dropped.
    revoked: CancelToken,
}

type Slots = BTreeMap<ServiceId, Held>;

/// The `service.stop` reason of a service whose network grant was revoked.
pub const NETWORK_REVOKED: &str = "network_revoked";

/// A call whose slot is chosen ([`ServiceHost::prepare`]), to run without the store.
pub struct PreparedCall {
    host: Arc<ServiceHost>,
    id: ServiceId,
    held: Held,
}

impl PreparedCall {
    /// Calls `method` (starting the service on demand), waiting up to its `timeoutMs`.
    pub fn run(self, method: &str, params: Value) -> Result<Value, ServiceFailure> {
        self.run_cancellable(method, params, &CancelToken::default())
    }

    /// [`PreparedCall::run`] that `cancel` ends on the service's plane (stdio:
    /// `$/cancelRequest`; Wasm: stopped between fuel slices; local-http and remote: the
    /// request's connection dropped) and the call fails with `service.cancelled`.
    pub fn run_cancellable(
        self,
        method: &str,
        params: Value,
        cancel: &CancelToken,
    ) -> Result<Value, ServiceFailure> {
        self.host
            .call_on(&self.id, &self.held, method, params, cancel)
    }
}

pub struct ServiceHost {
    data: DataDir,
    back: BackCalls,
    idle: Mutex<Duration>,
    slots: Mutex<Slots>,
    /// The ticker's connection for re-reading network grants (opened on first need).
    grants: Mutex<Option<Store>>,
}

type Registry = Mutex<BTreeMap<PathBuf, Weak<ServiceHost>>>;

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(Default::default)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The idle time before a service is stopped: `APPHOST_SERVICE_IDLE_SECS`, else 5 minutes.
fn default_idle() -> Duration {
    std::env::var("APPHOST_SERVICE_IDLE_SECS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map_or(Duration::from_secs(300), Duration::from_secs)
}

impl ServiceHost {
    /// The process's service host of `data`, made on first use (with `back` answering the
    /// services' own calls); every session of the process shares it.
    pub fn for_data_dir(data: &DataDir, back: BackCalls) -> Arc<ServiceHost> {
        let mut reg = lock(registry());
        if let Some(h) = reg.get(data.root()).and_then(Weak::upgrade) {
            return h;
        }
        let host = Arc::new(ServiceHost {
            data: data.clone(),
            back,
            idle: Mutex::new(default_idle()),
            slots: Mutex::new(BTreeMap::new()),
            grants: Mutex::new(None),
        });
        reg.insert(data.root().to_owned(), Arc::downgrade(&host));
        service_health::on_app_leaving(|root, app, reason| {
            if let Some(h) = ServiceHost::existing(root) {
                h.stop_app(app, reason, reason == "uninstalled");
            }
        });
        reg.retain(|_, w| w.strong_count() > 0);
        spawn_idle_ticker(Arc::downgrade(&host));
        host
    }

    /// The process's service host of `data` if one is running.
    pub fn existing(data: &std::path::Path) -> Option<Arc<ServiceHost>> {
        lock(registry()).get(data).and_then(Weak::upgrade)
    }

    /// Stop services idle longer than `idle` (applies to services started from now on).
    pub fn set_idle(&self, idle: Duration) {
        *lock(&self.idle) = idle;
    }

    fn tick(&self) {
        self.recheck_network_grants();
        let slots: Vec<_> = lock(&self.slots).values().cloned().collect();
        for h in slots {
            if let Ok(mut s) = h.slot.try_lock() {
                s.sup.tick();
            }
        }
    }

    /// The slot of `app`'s `key` at its active version, made (or remade after an update).
    fn slot(&self, store: &Store, id: &ServiceId) -> Result<Held, ServiceFailure> {
        let active = store
            .active_app(&id.app)
            .map_err(|e| ServiceFailure::new("service.not_found", e.message))?;
        if !active.enabled {
            return Err(ServiceFailure::new(
                "service.app_disabled",
                format!("{} is disabled", id.app),
            ));
        }
        // A `remote-allowed` service's grant is re-read from host.db at every call and launch
        // (never taken from the service), and so is the admin's policy file (deny wins): a
        // slot made under another grant is dropped.
        let granted = |store: &Store| {
            store
                .network_granted(&id.app, &id.key)
                .map(|g| g && super::admin_policy::check_network(&self.data, id).is_ok())
                .map_err(|e| ServiceFailure::new("service.start_failed", e.message))
        };
        let cached = lock(&self.slots)
            .get(id)
            .filter(|h| h.package_hash == active.package_hash)
            .cloned();
        if let Some(held) = cached {
            match held.network {
                None => return Ok(held),
                Some(was) if was && granted(store)? => return Ok(held),
                Some(_) => {
                    // Revoked (here or by another process) or denied by the policy: the
                    // running service stops now.
                    self.take_away(id, self.stop_reason(id));
                }
            }
        }
        let plan = self.plan(store, &active, &id.key)?;
        if plan.remote.is_some() {
            return Err(super::remote::no_local_process(id));
        }
        let network = if plan.network {
            super::admin_policy::check_network(&self.data, id)?;
            let now = granted(store)?;
            if !now {
                return Err(ServiceFailure::new(
                    "service.network_not_granted",
                    format!(
                        "service {} reaches the network only once granted: apphost services grant-network {} {}",
                        id.key, id.app, id.key
                    ),
                ));
            }
            Some(now)
        } else {
            None
        };
        let facts = service_launch::probe_host();
        let in_process = service_launch::runs_in_process(&plan.protocol);
        if let Some(missing) = facts.sandbox_missing.filter(|_| !in_process) {
            return Err(ServiceFailure::new("service.sandbox_unavailable", missing));
        }
        if let Some(r) = plan
            .runtime
            .as_ref()
            .filter(|r| !facts.runtimes.contains(*r))
        {
            return Err(ServiceFailure::new(
                "service.runtime_unavailable",
                format!("{r} is not installed"),
            ));
        }
        // A Wasm module runs in-process: it has no shim.
        let shim = match service_launch::shim_path() {
            Some(shim) => shim,
            None if in_process => PathBuf::new(),
            None => {
                return Err(ServiceFailure::new(
                    "service.sandbox_unavailable",
                    "apphost-service-shim missing",
                ))
            }
        };
        let package_dir =
            super::package::layout(store, &id.app, &active.version, &active.package_hash)
                .map_err(|m| ServiceFailure::new("service.start_failed", m))?;
        let area = runtime_core::app_area::AppArea::open(&self.data.apps_data().join(&id.app))
            .map_err(|e| ServiceFailure::new("service.start_failed", e.to_string()))?;
        let paths = area
            .service_paths(&id.key)
            .map_err(|e| ServiceFailure::new("service.start_failed", e.to_string()))?;
        let made = Slot::new(SlotInput {
            data: &self.data,
            id,
            version: &active.version,
            plan: &plan,
            package_dir,
            service_dir: paths.service_dir,
            log_file: paths.log_file,
            shim,
            idle: *lock(&self.idle),
            back: self.back.clone(),
            network_granted: network.unwrap_or(false),
        })
        .map_err(ServiceFailure::from)?;
        let held = Held {
            package_hash: active.package_hash.clone(),
            network,
            stats: made.stats.clone(),
            slot: Arc::new(Mutex::new(made)),
            revoked: CancelToken::new(),
        };
        // An older version's slot (update, rollback) is dropped: its process is stopped.
        if let Some(old) = lock(&self.slots).insert(id.clone(), held.clone()) {
            lock(&old.slot).sup.stop("updated");
        }
        Ok(held)
    }

    fn plan(
        &self,
        store: &Store,
        active: &crate::install::store::ActiveApp,
        key: &str,
    ) -> Result<LaunchPlan, ServiceFailure> {
        let v = active.manifest.view();
        let Some(s) = v.services().find(|s| s.key() == Some(key)) else {
            return Err(ServiceFailure::new(
                "service.not_declared",
                format!("{} declares no service {key}", active.name),
            ));
        };
        let paths = store
            .package_paths(&active.name, &active.version)
            .map_err(|e| ServiceFailure::new("service.start_failed", e.message))?;
        let has_path = |p: &str| paths.binary_search_by(|x| x.as_str().cmp(p)).is_ok();
        let server_assisted = v
            .list(crate::install::manifest::Key::RuntimeTargets)
            .iter()
            .any(|t| t.as_str() == Some("server-assisted"));
        service_launch::plan(s, &has_path, server_assisted)
            .map_err(|r| ServiceFailure::new(r.code, r.why))
    }

    /// Calls `method` on `app`'s service `key`, starting it on demand.
    pub fn call(
        &self,
        store: &Store,
        id: &ServiceId,
        method: &str,
        params: Value,
    ) -> Result<Value, ServiceFailure> {
        self.call_cancellable(store, id, method, params, &CancelToken::default())
    }

    /// [`ServiceHost::call`] that `cancel` ends (`service.cancelled`): a stdio service gets
    /// `$/cancelRequest`, a Wasm call stops between fuel slices, a local-http or remote
    /// service's request is aborted.
    pub fn call_cancellable(
        &self,
        store: &Store,
        id: &ServiceId,
        method: &str,
        params: Value,
        cancel: &CancelToken,
    ) -> Result<Value, ServiceFailure> {
        if let Some(remote) = super::remote::prepare(store, id)? {
            return remote.run_cancellable(method, params, cancel);
        }
        let held = self.slot(store, id)?;
        self.call_on(id, &held, method, params, cancel)
    }

    fn call_on(
        &self,
        id: &ServiceId,
        held: &Held,
        method: &str,
        params: Value,
        cancel: &CancelToken,
    ) -> Result<Value, ServiceFailure> {
        let mut s = lock(&held.slot);
        let version = s.version.clone();
        super::health::sync_before_start(&self.data, id, &version, &mut s.sup);
        let out = s
            .sup
            .call_cancellable(method, params, &cancel.or(&held.revoked));
        drop(s);
        if held.revoked.is_cancelled() {
            super::admin_policy::check_network(&self.data, id)?;
            return Err(ServiceFailure::new(
                "service.network_not_granted",
                format!(
                    "the network grant of service {} was revoked: it was stopped",
                    id.key
                ),
            ));
        }
        out.map_err(ServiceFailure::from)
    }

    /// What a call on `app`'s service `key` needs from the store (the active version's slot),
    /// taken now; [`PreparedCall::run`] then waits on the service without the store, so a
    /// caller can release its own locks while the service works.
    pub fn prepare(
        self: &Arc<Self>,
        store: &Store,
        id: &ServiceId,
    ) -> Result<PreparedCall, ServiceFailure> {
        Ok(PreparedCall {
            held: self.slot(store, id)?,
            host: self.clone(),
            id: id.clone(),
        })
    }

    /// A call on the host's own behalf (the CLI, the host UI, a door client): audited
    /// `service.call` with who asked, then [`ServiceHost::call_cancellable`].
    pub fn call_as(
        &self,
        store: &Store,
        id: &ServiceId,
        method: &str,
        params: Value,
        by: &str,
        cancel: &CancelToken,
    ) -> Result<Value, ServiceFailure> {
        if reserved_method(method) || method.is_empty() || method.len() > 128 {
            return Err(ServiceFailure::new(
                "service.invalid_spec",
                format!("{method:?} is not a method callers may send"),
            ));
        }
        let details = serde_json::json!({"service": id.key, "method": method, "by": by});
        store
            .record_audit("service.call", Some(&id.app), None, &details)
            .map_err(|e| ServiceFailure::new("service.start_failed", e.message))?;
        self.call_cancellable(store, id, method, params, cancel)
    }

    /// Starts `app`'s service `key` now (the app opened, or the user asked).
    pub fn start(&self, store: &Store, id: &ServiceId) -> Result<(), ServiceFailure> {
        // A remote service has nothing to start: this checks it may be called.
        if super::remote::prepare(store, id)?.is_some() {
            return Ok(());
        }
        let held = self.slot(store, id)?;
        let mut s = lock(&held.slot);
        let version = s.version.clone();
        super::health::sync_before_start(&self.data, id, &version, &mut s.sup);
        s.sup.start().map_err(ServiceFailure::from)
    }

    /// Stops one service (`user`); a user stop also clears a crash loop (here and in host.db).
    /// A granted `remote-allowed` service whose grant host.db no longer holds (the CLI's
    /// `revoke-network` asks a running host to stop it) is taken away at once instead
    /// ([`ServiceHost::take_away`], `network_revoked`).
    pub fn stop(&self, id: &ServiceId, reason: &str) -> bool {
        if reason == "user" {
            super::health::reset(&self.data, id, "user-stop");
        }
        let held = lock(&self.slots).get(id).cloned();
        let Some(held) = held else { return false };
        if held.network == Some(true) && !self.revoked_in_store(vec![id.clone()]).is_empty() {
            return self.take_away(id, self.stop_reason(id));
        }
        let mut s = lock(&held.slot);
        let was = s.sup.is_running();
        s.sup.stop(reason);
        if reason == "user" {
            s.sup.reset();
        }
        was
    }

    /// Clears `id`'s durable crash and disk-quota record and its supervisor's crash history
    /// (`apphost services reset`); `true` if there was a record.
    pub fn reset(&self, id: &ServiceId, by: &str) -> bool {
        let was = super::health::reset(&self.data, id, by);
        let held = lock(&self.slots).get(id).cloned();
        if let Some(held) = held {
            lock(&held.slot).sup.reset();
        }
        was
    }

    /// Re-reads from host.db the grant of every `remote-allowed` service this process runs
    /// (each idle tick, 500 ms): one revoked by another process (`apphost services
    /// revoke-network`) is taken away ([`ServiceHost::take_away`], `network_revoked`).
    fn recheck_network_grants(&self) {
        let granted: Vec<ServiceId> = lock(&self.slots)
            .iter()
            .filter(|(_, h)| h.network == Some(true))
            .map(|(id, _)| id.clone())
            .collect();
        if granted.is_empty() {
            return;
        }
        for id in self.revoked_in_store(granted) {
            self.take_away(&id, self.stop_reason(&id));
        }
    }

    /// Why a granted service is taken away: the admin's policy denies it, or the grant went.
    fn stop_reason(&self, id: &ServiceId) -> &'static str {
        match super::admin_policy::check_network(&self.data, id) {
            Err(_) => super::admin_policy::POLICY_DENIED,
            Ok(()) => NETWORK_REVOKED,
        }
    }

    /// Those of `ids` whose network grant host.db no longer holds (read on the ticker's own
    /// connection; nothing when the store cannot be read) or the admin's policy now denies.
    fn revoked_in_store(&self, ids: Vec<ServiceId>) -> Vec<ServiceId> {
        let mut store = lock(&self.grants);
        if store.is_none() {
            *store = Store::open_for_calls(&self.data).ok();
        }
        let Some(store) = store.as_ref() else {
            return Vec::new();
        };
        ids.into_iter()
            .filter(|id| {
                matches!(store.network_granted(&id.app, &id.key), Ok(false))
                    || super::admin_policy::check_network(&self.data, id).is_err()
            })
            .collect()
    }

    /// Takes `id`'s service away at once (its network grant was revoked): a call in flight is
    /// cancelled (`$/cancelRequest`), the process stopped (audited `service.stop` with
    /// `reason`), the slot dropped so the next call re-reads the grant. `false` if it was not
    /// running.
    pub fn take_away(&self, id: &ServiceId, reason: &str) -> bool {
        let Some(held) = lock(&self.slots).remove(id) else {
            return false;
        };
        held.revoked.cancel();
        let mut s = lock(&held.slot);
        let was = s.sup.is_running();
        s.sup.stop(reason);
        was
    }

    /// Stops every service of `app` (`app-closed`, `disabled`); with `forget` (uninstall) its
    /// slots, health and package layout go too.
    pub fn stop_app(&self, app: &str, reason: &str, forget: bool) {
        let mine: Vec<(ServiceId, Held)> = {
            let mut slots = lock(&self.slots);
            let ids: Vec<ServiceId> = slots.keys().filter(|k| k.app == app).cloned().collect();
            ids.into_iter()
                .filter_map(|id| {
                    let s = if forget {
                        slots.remove(&id)
                    } else {
                        slots.get(&id).cloned()
                    };
                    s.map(|s| (id, s))
                })
                .collect()
        };
        for (_, held) in mine {
            lock(&held.slot).sup.stop(reason);
        }
        if forget {
            super::package::remove_app(&self.data, app);
        }
    }

    /// The app closed, or was disabled, updated or uninstalled (the session's mounts of it
    /// ended): its services stop; when it is no longer installed, its slots, health and
    /// package layout are forgotten too.
    pub fn close_app(&self, app: &str) {
        let gone = Store::open_for_calls(&self.data)
            .map(|s| s.active_app(app).is_err())
            .unwrap_or(false);
        let reason = if gone { "uninstalled" } else { "app-closed" };
        self.stop_app(app, reason, gone);
    }
}

fn spawn_idle_ticker(host: Weak<ServiceHost>) {
    let _ = std::thread::Builder::new()
        .name("apphost-service-idle".into())
        .spawn(move || loop {
            std::thread::sleep(Duration::from_millis(500));
            match host.upgrade() {
                Some(h) => h.tick(),
                None => return,
            }
        });
}

impl Drop for ServiceHost {
    fn drop(&mut self) {
        for held in lock(&self.slots).values() {
            lock(&held.slot).sup.stop("host-exit");
        }
    }
}
