//! What [`ServiceHost`] tells about an app's services: their states for `services list` and
//! readiness (this process's supervisors, the store's durable health and the admin policy), and
//! their logs.

use service_sandbox::Health;

use super::{lock, ServiceHost, ServiceId};
use crate::hosting::services::failure::ServiceFailure;
use crate::hosting::services::log_file::{read_log_file, tail};
use crate::hosting::services::status::ServiceStatus;
use crate::install::store::Store;

impl ServiceHost {
    /// Every declared service of `app` with its state.
    pub fn list(&self, store: &Store, app: &str) -> Result<Vec<ServiceStatus>, ServiceFailure> {
        let active = store
            .active_app(app)
            .map_err(|e| ServiceFailure::new("service.not_found", e.message))?;
        // None: host.db unreadable, the supervisors' own view stands.
        let durable = store.service_health(app).ok();
        let mut out = Vec::new();
        for s in active.manifest.view().services() {
            let key = s.key().unwrap_or("service").to_owned();
            let id = ServiceId {
                app: app.to_owned(),
                key: key.clone(),
            };
            let mut st = ServiceStatus {
                key: key.clone(),
                required: s.required(),
                state: "stopped".into(),
                code: None,
                reason: None,
                pid: None,
                restarts: 0,
                last_exit: None,
                last_stop: None,
                protocol: s.protocol().unwrap_or("stdio-jsonrpc").to_owned(),
                remote: None,
                last_crash_at: None,
                crashes_in_window: None,
                last_error: None,
            };
            let plan = self.plan(store, &active, &key);
            if let Err(f) = &plan {
                st.state = "blocked".into();
                st.code = Some(f.code.into());
                st.reason = Some(f.message.clone());
            }
            crate::hosting::services::remote::annotate(store, app, active.manifest.view(), &mut st);
            // A `remote-allowed` service the admin's policy denies network: blocked, granted or
            // not (a running one is taken away by the next tick or call).
            if let Err(f) = plan
                .as_ref()
                .ok()
                .filter(|p| p.network)
                .map_or(Ok(()), |_| {
                    crate::hosting::services::admin_policy::check_network(&self.data, &id)
                })
            {
                crate::hosting::services::admin_policy::annotate(&mut st, f);
                out.push(st);
                continue;
            }
            let held = lock(&self.slots).get(&id).cloned();
            if let Some(held) = held {
                let stats = lock(&held.stats).clone();
                st.restarts = stats.starts.saturating_sub(1);
                st.last_exit = stats.last_exit;
                st.last_stop = stats.last_stop;
                let Ok(s) = held.slot.try_lock() else {
                    // inside a call
                    st.state = "running".into();
                    st.pid = stats.pid;
                    self.apply_durable(&mut st, durable.as_deref(), &active.version, app);
                    out.push(st);
                    continue;
                };
                match s.sup.health() {
                    Health::Blocked(why) => {
                        st.state = "blocked".into();
                        st.code = Some("service.crash_loop".into());
                        st.reason = Some(why);
                    }
                    Health::Degraded(why) if !s.sup.is_running() => {
                        st.state = "degraded".into();
                        st.reason = Some(why);
                    }
                    _ if s.sup.is_running() => {
                        st.state = "running".into();
                        st.pid = stats.pid;
                    }
                    _ => {}
                }
            }
            self.apply_durable(&mut st, durable.as_deref(), &active.version, app);
            out.push(st);
        }
        Ok(out)
    }

    fn apply_durable(
        &self,
        st: &mut ServiceStatus,
        durable: Option<&[(String, crate::install::store::ServiceHealthRow)]>,
        version: &str,
        app: &str,
    ) {
        let Some(rows) = durable else { return };
        let row = rows.iter().find(|(k, _)| *k == st.key).map(|(_, r)| r);
        let disk = row
            .filter(|r| r.disk_quota.is_some())
            .and_then(|_| crate::install::service_disk::still_over(&self.data, app, &st.key));
        crate::hosting::services::health::apply(st, row, version, disk);
    }

    /// The service's log: the persisted file and the running process's stderr ring, at most the
    /// last `max_bytes`.
    pub fn logs(&self, id: &ServiceId, max_bytes: usize) -> String {
        let held = lock(&self.slots).get(id).cloned();
        let text = match held.map(|h| h.slot) {
            Some(slot) => match slot.try_lock() {
                Ok(s) => s.sup.logs(),
                Err(_) => read_log_file(&self.data, id),
            },
            None => read_log_file(&self.data, id),
        };
        tail(&text, max_bytes)
    }
}
