//! `services[]`: whether each declared backend service can run here. The plan comes from the
//! manifest alone (`install::service_launch::plan`); then the host facts
//! ([`ServiceFacts`](super::ServiceFacts)): every sandbox layer present (else `blocked` with a
//! setup action naming the missing one), the interpreter present, and the supervisor's health
//! (a crash loop blocks a required service and degrades an optional one; a recent crash
//! degrades). A `remote-allowed` service the user has not granted network (host.db, re-read
//! per evaluation) is `needs-setup` with an action naming `apphost services grant-network`
//! (`degraded` when optional); one the admin's `<data>/policy/services.json` denies network is
//! `blocked` (optional: `degraded`) with `service.policy_denied`, granted or not, and no action.
//! A service stopped or refused for its disk quota and still over it
//! is `blocked` (optional: `degraded`) with `service.disk_quota_exceeded` and an action naming
//! `apphost services reset <app> <service> --delete-data`. Crash health and the disk-quota
//! record are durable (host.db), so every process sees them. An entry bound to a service (`service:`) shares its outcome.

use super::{Ctx, Outcome};
use crate::install::service_launch::{plan, Refusal};

/// Why the admin's policy file denies network to `key` of this app (deny wins over a grant).
fn network_denied(cx: &Ctx, key: &str) -> Option<String> {
    let p = cx.state.services.policy.as_ref()?;
    p.network_denied(cx.m.view().name(), key)
}

fn failing(required: bool) -> Outcome {
    if required {
        Outcome::Blocked
    } else {
        Outcome::Degraded
    }
}

pub(super) fn services(cx: &mut Ctx) {
    let v = cx.m.view();
    let server_assisted = v
        .list(crate::install::manifest::Key::RuntimeTargets)
        .iter()
        .any(|t| t.as_str() == Some("server-assisted"));
    let mut outcomes = Vec::new();
    for s in v.services() {
        let key = s.key().unwrap_or("service").to_owned();
        let req = s.required();
        let has_path = |p: &str| cx.has_path(p);
        let planned = plan(s, &has_path, server_assisted);
        let facts = &cx.state.services;
        let (outcome, code, message, action) = match planned {
            Err(Refusal { code, why }) => (
                failing(req),
                Some(code),
                format!("service {key} cannot run: {why}"),
                None,
            ),
            Ok(p) if p.remote.is_some() => {
                let spec = p.remote.as_ref().expect("checked");
                super::remote_services::remote(cx, &key, req, spec)
            }
            Ok(p)
                if facts.sandbox_missing.is_some()
                    && !crate::install::service_launch::runs_in_process(&p.protocol) =>
            {
                let what = facts.sandbox_missing.clone().unwrap_or_default();
                (
                    failing(req),
                    Some("service.sandbox_unavailable"),
                    format!("service {key} cannot start: the sandbox needs {what}"),
                    Some(("Set up the service sandbox".to_owned(), what)),
                )
            }
            Ok(p)
                if p.runtime
                    .as_ref()
                    .is_some_and(|r| !facts.runtimes.contains(r)) =>
            {
                let r = p.runtime.unwrap_or_default();
                (
                    failing(req),
                    Some("service.runtime_unavailable"),
                    format!("service {key} needs {r}, which is not installed"),
                    Some((format!("Install {r}"), r)),
                )
            }
            Ok(p) if p.network && network_denied(cx, &key).is_some() => (
                failing(req),
                Some(crate::install::services_policy::CODE),
                format!(
                    "service {key} cannot reach the network: {}",
                    network_denied(cx, &key).unwrap_or_default()
                ),
                None,
            ),
            Ok(p) if p.network && !facts.network_granted.contains(&key) => (
                if req {
                    Outcome::NeedsSetup
                } else {
                    Outcome::Degraded
                },
                Some("service.network_not_granted"),
                format!(
                    "service {key} reaches {} only once you grant it network",
                    p.domains.join(", ")
                ),
                Some((
                    format!("Grant network to service {key}"),
                    format!(
                        "apphost services grant-network {} {key}",
                        cx.m.view().name()
                    ),
                )),
            ),
            Ok(_) if facts.disk_over.contains_key(&key) => (
                failing(req),
                Some("service.disk_quota_exceeded"),
                format!(
                    "service {key} is stopped: its data is over its disk quota ({})",
                    facts.disk_over.get(&key).cloned().unwrap_or_default()
                ),
                Some((
                    format!("Free space: delete the data of service {key}"),
                    format!(
                        "apphost services reset {} {key} --delete-data",
                        cx.m.view().name()
                    ),
                )),
            ),
            Ok(_) => match facts.health.get(&key) {
                Some((true, why)) => (
                    failing(req),
                    Some("service.crash_loop"),
                    format!("service {key} is stopped after a crash loop: {why}"),
                    None,
                ),
                Some((false, why)) => (
                    Outcome::Degraded,
                    Some("service.exited"),
                    format!("service {key} crashed recently: {why}"),
                    None,
                ),
                None => (Outcome::Pass, None, format!("service {key} is ready"), None),
            },
        };
        let c = cx.push("service", key.clone(), req, outcome, message);
        c.code = code;
        if let Some((title, target)) = action {
            c.setup_action = super::action(&key, title, "service-setup", Some(target.clone()));
            if let Some(a) = c.setup_action.as_mut() {
                a.description = Some(
                    if matches!(
                        code,
                        Some(
                            "service.network_not_granted"
                                | "service.remote_not_allowed"
                                | "service.disk_quota_exceeded"
                        )
                    ) {
                        format!("run: {target}")
                    } else {
                        format!("missing on this host: {target}")
                    },
                );
            }
        }
        if outcome != Outcome::Pass {
            c.remediation = Some(if req {
                "fix what the check names, then reopen the app".into()
            } else {
                "the app runs without it, with reduced features".into()
            });
        }
        outcomes.push((key, outcome, code));
    }
    for e in v.entries() {
        let Some(service) = e.service() else { continue };
        let entry = e.label("entry").to_owned();
        let (outcome, code) = outcomes.iter().find(|(k, _, _)| k == service).map_or(
            (Outcome::Blocked, Some("service.not_declared")),
            |(_, o, c)| (*o, *c),
        );
        // The entry's work has nothing to run on unless the service can start (a recent crash
        // only degrades it: the supervisor restarts the service).
        let outcome = match (outcome, code) {
            (Outcome::Pass, _) | (_, Some("service.exited")) => outcome,
            (_, Some("service.network_not_granted")) => Outcome::NeedsSetup,
            _ => Outcome::Blocked,
        };
        let message = if outcome == Outcome::Pass {
            format!("entry {entry} runs on service {service}, which is ready")
        } else {
            format!("entry {entry} runs on service {service}, which cannot run")
        };
        let c = cx.push("service", service, true, outcome, message);
        c.code = code;
        c.entry = Some(entry);
    }
}
