//! One declared service of one app version: its supervisor and what the host UI shows of it
//! (state, restarts, last exit), fed by the supervisor's audit sink, which also writes every
//! start, stop, crash, limit hit and refusal to the audit log. A `remote-allowed` service gets
//! the egress proxy under its declared domains and the grant read from host.db by the caller;
//! each of its connections is audited `service.egress`, and asks the admin's policy
//! (`network.denyDomains`, re-read as it changes) before any lookup.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use service_sandbox::egress::{AuditSink, EgressAudit};
use service_sandbox::{AuditEvent, EgressPolicy, Limits, Plane, Policy, ServiceSpec, Supervisor};

use super::id::{BackCalls, ServiceId};
use crate::foundation::paths::DataDir;
use crate::install::service_launch::LaunchPlan;
use crate::install::store::Store;

/// What the sink saw, for the host UI.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    pub starts: u32,
    pub last_exit: Option<String>,
    pub last_stop: Option<String>,
    pub pid: Option<u32>,
}

pub struct Slot {
    pub sup: Supervisor,
    pub stats: Arc<Mutex<Stats>>,
    /// The app version it runs (its durable crash record is per version).
    pub version: String,
}

pub struct SlotInput<'a> {
    pub data: &'a DataDir,
    pub id: &'a ServiceId,
    pub version: &'a str,
    pub plan: &'a LaunchPlan,
    pub package_dir: std::path::PathBuf,
    pub service_dir: std::path::PathBuf,
    pub log_file: std::path::PathBuf,
    pub shim: std::path::PathBuf,
    pub idle: Duration,
    pub back: BackCalls,
    /// The user's network grant, read from host.db for this launch (`remote-allowed` only).
    pub network_granted: bool,
}

impl Slot {
    /// The slot of `i.plan`; `service.runtime_unavailable` when its protocol has no plane here.
    pub fn new(i: SlotInput<'_>) -> Result<Slot, service_sandbox::SandboxError> {
        // The plane from the manifest (`plan` already refused what the host does not run), its
        // Wasm linear memory capped at `resourceLimits.memoryMb`.
        let plane =
            Plane::for_manifest("client-local", &i.plan.protocol)?.with_memory_mb(i.plan.memory_mb);
        let spec = ServiceSpec {
            package_dir: i.package_dir,
            service_dir: i.service_dir,
            program: i.plan.program.clone(),
            network: i.plan.network,
            limits: Limits {
                address_space: i.plan.memory_mb.saturating_mul(1 << 20).max(256 << 20),
                ..Limits::default()
            },
            shim: i.shim,
            bwrap: std::path::PathBuf::new(),
        };
        let mut policy = Policy {
            idle_after: i.idle,
            call_timeout: Duration::from_millis(i.plan.timeout_ms),
            ..Policy::default()
        };
        // The first restart's delay (doubling up to 60 s); tests shorten it.
        if let Some(ms) = std::env::var("APPHOST_SERVICE_BACKOFF_MS")
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
        {
            policy.backoff_base = Duration::from_millis(ms);
        }
        let stats = Arc::new(Mutex::new(Stats::default()));
        let back = i.back.clone();
        let (data, id) = (i.data.clone(), i.id.clone());
        let handler_id = id.clone();
        let handler = Box::new(move || back(&data, &handler_id));
        let sink = audit_sink(
            i.data.clone(),
            id.clone(),
            i.version.to_owned(),
            stats.clone(),
        );
        let mut sup = Supervisor::new(spec, policy, i.log_file, handler, sink)
            .with_plane(plane)
            // the service dir's total size (process planes; docs/services.md "Disk quota")
            .with_disk_quota(crate::install::service_disk::disk_quota());
        if i.plan.network {
            let policy = service_sandbox::egress::policy_from_env(
                EgressPolicy::new(&i.plan.domains, i.network_granted)
                    .with_deny(admin_deny(i.data.clone(), id.clone())),
            );
            sup = sup.with_egress(
                policy,
                egress_sink(i.data.clone(), id, i.version.to_owned()),
            );
        }
        Ok(Slot {
            sup,
            stats,
            version: i.version.to_owned(),
        })
    }
}

/// The supervisor's audit sink: one `service.*` audit record per event, on its own connection.
fn audit_sink(
    data: DataDir,
    id: ServiceId,
    version: String,
    stats: Arc<Mutex<Stats>>,
) -> Box<dyn FnMut(AuditEvent) + Send> {
    let mut store: Option<Store> = None;
    Box::new(move |event| {
        let (action, details) = {
            let mut s = stats.lock().unwrap_or_else(|p| p.into_inner());
            match &event {
                AuditEvent::Started { pid } => {
                    s.starts += 1;
                    s.pid = Some(*pid);
                    ("service.start", json!({"pid": pid}))
                }
                AuditEvent::Stopped { reason } => {
                    s.pid = None;
                    s.last_stop = Some(reason.clone());
                    ("service.stop", json!({"reason": reason}))
                }
                AuditEvent::Crashed { status } => {
                    s.pid = None;
                    s.last_exit = Some(status.chars().take(300).collect());
                    ("service.crash", json!({"status": status}))
                }
                AuditEvent::LimitHit { what } => ("service.limit", json!({"limit": what})),
                AuditEvent::Refused { code } => ("service.refused", json!({"code": code})),
                AuditEvent::LimeFlood { refused, served } => (
                    "service.lime_flood",
                    json!({"refused": refused, "served": served,
                           "limit": service_sandbox::http_plane::host_requests::MAX_REQUESTS_PER_CALL}),
                ),
            }
        };
        if store.is_none() {
            store = Store::open_for_calls(&data).ok();
        }
        let mut details = details;
        details["service"] = json!(id.key);
        if let Some(st) = &store {
            if let Err(e) = st.record_audit(action, Some(&id.app), Some(&version), &details) {
                tracing::warn!(error = %e.message, "cannot audit a service event");
            }
            super::health::on_event(st, &id, &version, &event);
        }
    })
}

/// The egress proxy's deny probe: the admin's policy as it is at each connection (the file is
/// re-read when its `stat` moves), so an added `denyDomains` entry refuses the next CONNECT of a
/// service already running.
fn admin_deny(data: DataDir, id: ServiceId) -> service_sandbox::egress::policy::DomainDeny {
    Arc::new(move |host: &str| {
        crate::install::services_policy::load(&data)
            .domain_denied(&id.app, &id.key, host)
            .is_some()
    })
}

/// The egress proxy's audit sink: one `service.egress` record per connection attempt
/// (`target`, `allowed`, the refusal `code`), on its own connection.
fn egress_sink(data: DataDir, id: ServiceId, version: String) -> AuditSink {
    let store: Mutex<Option<Store>> = Mutex::new(None);
    Arc::new(move |e: EgressAudit| {
        let mut st = store.lock().unwrap_or_else(|p| p.into_inner());
        if st.is_none() {
            *st = Store::open_for_calls(&data).ok();
        }
        let details = json!({
            "service": id.key,
            "target": e.target.chars().take(300).collect::<String>(),
            "allowed": e.refused.is_none(),
            "code": e.refused,
        });
        if let Some(s) = st.as_ref() {
            if let Err(err) =
                s.record_audit("service.egress", Some(&id.app), Some(&version), &details)
            {
                tracing::warn!(error = %err.message, "cannot audit a service connection");
            }
        }
    })
}
