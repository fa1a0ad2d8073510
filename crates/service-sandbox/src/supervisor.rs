//! Supervision of one service: start on demand (and `initialize`), stop when idle or on the app's
//! close/disable/uninstall, restart with exponential backoff, crash loop -> degraded then blocked,
//! per-call timeout, logs flushed to a size-capped rotated file, every start/stop/kill/crash/limit
//! hit reported to the audit sink.

use std::collections::VecDeque;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::cancel::CancelToken;
use crate::channel::HostHandler;
use crate::error::SandboxError;
use crate::plane::{Plane, Running};
use crate::spec::ServiceSpec;

#[derive(Debug, Clone)]
pub struct Policy {
    pub idle_after: Duration,
    pub call_timeout: Duration,
    pub start_timeout: Duration,
    pub backoff_base: Duration,
    pub backoff_max: Duration,
    /// This many crashes inside `crash_window` = crash loop (blocked).
    pub crash_limit: usize,
    pub crash_window: Duration,
    /// Log file size before it is rotated to `<name>.1`.
    pub log_max: u64,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            idle_after: Duration::from_secs(300),
            call_timeout: Duration::from_secs(30),
            start_timeout: Duration::from_secs(10),
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(60),
            crash_limit: 5,
            crash_window: Duration::from_secs(300),
            log_max: 1 << 20,
        }
    }
}

/// The service's readiness as the supervisor sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    Ready,
    /// Crashed recently; restarts continue with backoff.
    Degraded(String),
    /// Crash loop: no more automatic starts until `reset` (user action / update).
    Blocked(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditEvent {
    Started {
        pid: u32,
    },
    Stopped {
        reason: String,
    },
    Crashed {
        status: String,
    },
    LimitHit {
        what: String,
    },
    Refused {
        code: String,
    },
    /// A local-http service's `lime.*` requests over the per-call cap were refused: one event
    /// per host call with the count, however many were refused.
    LimeFlood {
        refused: u32,
        served: u32,
    },
}

pub type HandlerFactory = Box<dyn Fn() -> HostHandler + Send>;
pub type AuditSink = Box<dyn FnMut(AuditEvent) + Send>;

pub struct Supervisor {
    spec: ServiceSpec,
    policy: Policy,
    handler: HandlerFactory,
    audit: AuditSink,
    log_file: PathBuf,
    plane: Plane,
    running: Option<Running>,
    /// `remote-allowed`: the egress policy and its audit sink; a fresh proxy per launch.
    egress: Option<(crate::egress::EgressPolicy, crate::egress::AuditSink)>,
    proxy: Option<crate::egress::EgressProxy>,
    /// The service dir's total-size quota, and the running launch's watcher.
    disk: Option<crate::disk_quota::DiskQuota>,
    watch: Option<crate::disk_quota::QuotaWatch>,
    crashes: VecDeque<Instant>,
    not_before: Option<Instant>,
    last_used: Instant,
}

impl Supervisor {
    /// `log_file` lives in the service dir's sibling logs area (`apps/<app>/services/.logs/<key>.log`).
    pub fn new(
        spec: ServiceSpec,
        policy: Policy,
        log_file: PathBuf,
        handler: HandlerFactory,
        audit: AuditSink,
    ) -> Self {
        Self {
            spec,
            policy,
            handler,
            audit,
            log_file,
            plane: Plane::Stdio,
            running: None,
            egress: None,
            proxy: None,
            disk: None,
            watch: None,
            crashes: VecDeque::new(),
            not_before: None,
            last_used: Instant::now(),
        }
    }

    /// Run the service on `plane` (default: stdio); see [`Plane::for_manifest`].
    pub fn with_plane(mut self, plane: Plane) -> Self {
        self.plane = plane;
        self
    }

    /// A `remote-allowed` stdio service: its only way out is a host egress proxy under `policy`
    /// (started per launch; every allowed or refused connection goes to `audit`). Other planes
    /// get no egress.
    pub fn with_egress(
        mut self,
        policy: crate::egress::EgressPolicy,
        audit: crate::egress::AuditSink,
    ) -> Self {
        self.egress = Some((policy, audit));
        self
    }

    /// Hold the service dir to `quota` (process planes; see [`crate::disk_quota`]): checked
    /// before every launch, `RLIMIT_FSIZE` capped at what is left, watched while it runs.
    pub fn with_disk_quota(mut self, quota: crate::disk_quota::DiskQuota) -> Self {
        self.disk = Some(quota);
        self
    }

    /// Replaces the crash history with crashes `ages` ago (the host's durable record, which
    /// another process may have added to or cleared); an empty history also ends the backoff.
    pub fn set_crash_history(&mut self, ages: &[Duration]) {
        let now = Instant::now();
        let mut at: Vec<Instant> = ages.iter().filter_map(|a| now.checked_sub(*a)).collect();
        at.sort();
        let keep = self.policy.crash_limit.max(1) * 2;
        self.crashes = at.split_off(at.len().saturating_sub(keep)).into();
        if self.crashes.is_empty() {
            self.not_before = None;
        }
    }

    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }

    pub fn health(&self) -> Health {
        let recent = self.recent_crashes();
        if recent >= self.policy.crash_limit {
            Health::Blocked(format!(
                "crash loop: {recent} crashes within {:?}",
                self.policy.crash_window
            ))
        } else if recent > 0 {
            Health::Degraded(format!("{recent} recent crash(es)"))
        } else {
            Health::Ready
        }
    }

    fn recent_crashes(&self) -> usize {
        let now = Instant::now();
        self.crashes
            .iter()
            .filter(|t| now.duration_since(**t) < self.policy.crash_window)
            .count()
    }

    fn refuse(&mut self, err: SandboxError) -> SandboxError {
        (self.audit)(AuditEvent::Refused {
            code: err.code().into(),
        });
        err
    }

    /// Start now (on demand), unless blocked or inside the restart backoff.
    pub fn start(&mut self) -> Result<(), SandboxError> {
        self.stop_if_over_quota();
        if self.running.is_some() {
            return Ok(());
        }
        if let Health::Blocked(why) = self.health() {
            return Err(self.refuse(SandboxError::CrashLoop(why)));
        }
        if self.not_before.is_some_and(|t| Instant::now() < t) {
            return Err(self.refuse(SandboxError::Backoff));
        }
        let spec = self.launch_spec().map_err(|e| self.refuse(e))?;
        let mut svc = self.launch(&spec).map_err(|e| self.refuse(e))?;
        if let Err(e) = self.watch_disk(&svc) {
            svc.kill();
            self.proxy = None;
            return Err(self.refuse(e));
        }
        (self.audit)(AuditEvent::Started { pid: svc.pid() });
        if let Err(e) = svc.call(
            "initialize",
            json!({"host": "apphost"}),
            self.policy.start_timeout,
        ) {
            self.running = Some(svc);
            self.crashed(format!("initialize: {}", e.code()));
            return Err(e);
        }
        self.running = Some(svc);
        self.last_used = Instant::now();
        Ok(())
    }

    fn in_process(&self) -> bool {
        matches!(self.plane, Plane::Wasm(_))
    }

    /// The spec of the next launch: with a disk quota, refused at or over it, and the largest
    /// file capped at what is left.
    fn launch_spec(&self) -> Result<ServiceSpec, SandboxError> {
        let mut spec = self.spec.clone();
        if let Some(q) = self.disk.filter(|_| !self.in_process()) {
            let left = q.check(&spec.service_dir)?;
            spec.limits.file_size = spec.limits.file_size.min(left);
        }
        Ok(spec)
    }

    fn watch_disk(&mut self, svc: &Running) -> Result<(), SandboxError> {
        self.watch = None;
        if let Some(q) = self.disk.filter(|_| svc.pid() != 0) {
            let w = crate::disk_quota::QuotaWatch::start(&self.spec.service_dir, q, svc.pid())?;
            self.watch = Some(w);
        }
        Ok(())
    }

    /// The watcher killed the service for its disk use: audit the limit hit and the stop.
    fn quota_tripped(&mut self) -> Option<SandboxError> {
        let why = self.watch.as_ref().and_then(|w| w.tripped())?;
        (self.audit)(AuditEvent::LimitHit {
            what: format!("disk quota: {why}"),
        });
        if self.running.is_some() {
            self.shutdown();
            (self.audit)(AuditEvent::Stopped {
                reason: "disk-quota".into(),
            });
        }
        self.watch = None;
        Some(SandboxError::DiskQuotaExceeded(why))
    }

    fn stop_if_over_quota(&mut self) {
        let _ = self.quota_tripped();
    }

    fn launch(&mut self, spec: &ServiceSpec) -> Result<Running, SandboxError> {
        self.proxy = None;
        match (&self.plane, &self.egress) {
            (Plane::Stdio, Some((policy, audit))) => {
                let mut proxy = crate::egress::EgressProxy::start(policy.clone(), audit.clone())?;
                let svc = crate::channel::ServiceProcess::start_with_egress(
                    spec,
                    (self.handler)(),
                    Some(&mut proxy),
                )?;
                self.proxy = Some(proxy);
                Ok(Running::Stdio(svc))
            }
            _ => Running::start(&self.plane, spec, (self.handler)()),
        }
    }

    /// Call a method, starting the service on demand.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, SandboxError> {
        self.call_cancellable(method, params, &CancelToken::default())
    }

    /// [`Self::call`] that `cancel` ends (`service.cancelled`; the process got
    /// `$/cancelRequest` and keeps running: a cancel is not a crash). Cancelled before it
    /// starts, nothing is sent and no service is started.
    pub fn call_cancellable(
        &mut self,
        method: &str,
        params: Value,
        cancel: &CancelToken,
    ) -> Result<Value, SandboxError> {
        if cancel.is_cancelled() {
            return Err(SandboxError::Cancelled);
        }
        self.start()?;
        self.last_used = Instant::now();
        let svc = self
            .running
            .as_mut()
            .ok_or_else(|| SandboxError::Exited("not running".into()))?;
        let out = svc.call_cancellable(method, params, self.policy.call_timeout, cancel);
        if let Some(f) = svc.take_flood() {
            (self.audit)(AuditEvent::LimeFlood {
                refused: f.refused,
                served: f.served,
            });
        }
        match out {
            Err(SandboxError::Timeout) => {
                (self.audit)(AuditEvent::LimitHit {
                    what: format!("call timeout {:?} ({method})", self.policy.call_timeout),
                });
                Err(SandboxError::Timeout)
            }
            Err(e @ (SandboxError::Exited(_) | SandboxError::Protocol(_))) => {
                if let Some(quota) = self.quota_tripped() {
                    return Err(quota);
                }
                self.crashed(e.code().to_string());
                Err(e)
            }
            Err(
                e @ (SandboxError::WasmFuelExhausted(_)
                | SandboxError::WasmMemoryLimit(_)
                | SandboxError::WasmTrap(_)
                | SandboxError::WasmAbi(_)),
            ) => {
                if matches!(
                    e,
                    SandboxError::WasmFuelExhausted(_) | SandboxError::WasmMemoryLimit(_)
                ) {
                    (self.audit)(AuditEvent::LimitHit {
                        what: format!("{} ({method})", e.code()),
                    });
                }
                self.crashed(e.code().to_string());
                Err(e)
            }
            other => other,
        }
    }

    fn crashed(&mut self, why: String) {
        let status = match self.running.as_mut().and_then(Running::exit_status) {
            Some(s) => format!("{why}; {s}"),
            None => why,
        };
        if status.contains("signal: 24") || status.contains("exit status: 152") {
            (self.audit)(AuditEvent::LimitHit {
                what: "cpu time (RLIMIT_CPU)".into(),
            });
        }
        self.shutdown();
        (self.audit)(AuditEvent::Crashed { status });
        self.crashes.push_back(Instant::now());
        while self.crashes.len() > self.policy.crash_limit.max(1) * 2 {
            self.crashes.pop_front();
        }
        let n = self.recent_crashes().saturating_sub(1).min(16) as u32;
        let backoff = self
            .policy
            .backoff_base
            .saturating_mul(1 << n)
            .min(self.policy.backoff_max);
        self.not_before = Some(Instant::now() + backoff);
    }

    /// Stop when idle longer than the policy allows; call periodically.
    pub fn tick(&mut self) {
        self.stop_if_over_quota();
        if self.running.is_some() && self.last_used.elapsed() >= self.policy.idle_after {
            self.stop("idle");
        }
    }

    /// Stop for `reason` (`idle`, `app-closed`, `disabled`, `uninstalled`, `user`).
    pub fn stop(&mut self, reason: &str) {
        if self.running.is_some() {
            self.shutdown();
            (self.audit)(AuditEvent::Stopped {
                reason: reason.into(),
            });
        }
    }

    /// A user action clears the crash history (readiness back to ready).
    pub fn reset(&mut self) {
        self.crashes.clear();
        self.not_before = None;
    }

    fn shutdown(&mut self) {
        // the watcher goes first: it holds a pidfd, never a pid that could be reused
        self.watch = None;
        if let Some(mut svc) = self.running.take() {
            svc.kill();
            self.proxy = None;
            self.append_log(&svc.logs());
        }
    }

    fn append_log(&self, text: &str) {
        if text.is_empty() {
            return;
        }
        if let Some(dir) = self.log_file.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if std::fs::metadata(&self.log_file)
            .is_ok_and(|m| m.len() + text.len() as u64 > self.policy.log_max)
        {
            let mut rotated = self.log_file.clone().into_os_string();
            rotated.push(".1");
            let _ = std::fs::rename(&self.log_file, rotated);
        }
        let tail = &text.as_bytes()[text.len().saturating_sub(self.policy.log_max as usize)..];
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log_file)
        {
            let _ = f.write_all(tail);
        }
    }

    /// The persisted log plus the live ring of the running process.
    pub fn logs(&self) -> String {
        let mut out = std::fs::read_to_string(&self.log_file).unwrap_or_default();
        if let Some(svc) = &self.running {
            out.push_str(&svc.logs());
        }
        out
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.stop("host-exit");
    }
}
