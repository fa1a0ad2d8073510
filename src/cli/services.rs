//! `apphost services list|start|stop|call|logs|reset|grant-network|revoke-network|allow-remote|revoke-remote`: an app's backend services (issue 24,
//! docs/services.md). While the window or `apphost serve` runs, the command is handed to it over
//! its App Server door (`apphost/services.*`), so it sees and drives the services that host
//! runs; otherwise it runs in this process: `call` starts the service, calls it and stops it
//! when the command ends (audited `service.call`, `by: cli`), `start` checks that it starts.

use std::time::Duration;

use clap::Subcommand;
use serde_json::{json, Value};

use super::output;
use super::store_open::open_locked;
use super::workflow_door::{self as door, Handoff};
use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use host_core::foundation::paths::DataDir;
use host_core::hosting::capability::services::Services;
use host_core::hosting::services::remote::policy as remote_policy;
use host_core::hosting::services::{network_grant, read_log_file, ServiceId};
use host_core::install::store::Store;

#[derive(Debug, Subcommand)]
pub enum ServicesCommand {
    /// The app's declared services: state, restarts, last exit, why one cannot run.
    List { app: String },
    /// Start a service now (and clear a crash loop).
    Start { app: String, service: String },
    /// Stop a running service.
    Stop { app: String, service: String },
    /// Call a method of the service, as the host's user; params as JSON (default `{}`).
    Call {
        app: String,
        service: String,
        method: String,
        params: Option<String>,
    },
    /// Let a `remote-allowed` service reach its declared `allowedDomains` (through the host's
    /// egress proxy only).
    GrantNetwork { app: String, service: String },
    /// Take the network grant back (a running service is stopped; its next launch is refused).
    RevokeNetwork { app: String, service: String },
    /// Allow a `server-assisted` remote service (`cloud-remote`/`remote-http`): the host may
    /// send its calls, with its declared auth, to the endpoint's origin (printed with the data
    /// boundary). Bound to that origin: an update that moves the endpoint asks again.
    AllowRemote { app: String, service: String },
    /// Take the allowance back: the next call is refused.
    RevokeRemote { app: String, service: String },
    /// Clear the service's crash-loop and disk-quota record (every process sees it);
    /// --delete-data first empties its data directory (the service is stopped).
    Reset {
        app: String,
        service: String,
        #[arg(long)]
        delete_data: bool,
    },
    /// Print the service's log (its stderr); --follow keeps printing what is added.
    Logs {
        app: String,
        service: String,
        #[arg(long)]
        follow: bool,
    },
}

fn door_call(dir: &DataDir, method: &str, params: Value) -> HostResult<Option<Value>> {
    match door::call_method(dir, &format!("apphost/services.{method}"), params)? {
        Handoff::Done(v) => Ok(Some(v)),
        Handoff::NoHost => Ok(None),
        Handoff::Failed(why) => Err(HostError::new(
            ErrorCode::RuntimeBusy,
            format!("the running host did not take the command: {why}"),
        )),
    }
}

pub fn run(dir: &DataDir, cmd: ServicesCommand, json: bool) -> HostResult<i32> {
    match cmd {
        ServicesCommand::List { app } => {
            let v = match door_call(dir, "list", json!({"appId": app}))? {
                Some(v) => v,
                None => {
                    let store = Store::open(dir)?;
                    let mut services = Services::new(dir.apps_data());
                    let list = services
                        .service_host(&store)
                        .list(&store, &app)
                        .map_err(|f| f.host_error())?;
                    serde_json::to_value(list).unwrap_or(Value::Null)
                }
            };
            print_list(&v, json);
        }
        ServicesCommand::Start { app, service } => {
            let args = json!({"appId": app, "service": service});
            if door_call(dir, "start", args)?.is_none() {
                let store = Store::open_for_calls(dir)?;
                let mut services = Services::new(dir.apps_data());
                let host = services.service_host(&store);
                host.start(&store, &id(&app, &service))
                    .map_err(|f| f.host_error())?;
                output::note(
                    json,
                    "no host is running: the service started and stops when this command ends",
                );
            }
            output::done(
                json,
                &format!("started {service} of {app}"),
                &json!({"app": app, "service": service, "started": true}),
            );
        }
        ServicesCommand::Stop { app, service } => {
            let args = json!({"appId": app, "service": service});
            let was = door_call(dir, "stop", args)?.and_then(|v| v.as_bool());
            let was = was.unwrap_or(false);
            output::done(
                json,
                &if was {
                    format!("stopped {service} of {app}")
                } else {
                    format!("{service} of {app} was not running")
                },
                &json!({"app": app, "service": service, "wasRunning": was}),
            );
        }
        ServicesCommand::Call {
            app,
            service,
            method,
            params,
        } => {
            let params: Value = match params.as_deref() {
                None => json!({}),
                Some(text) => serde_json::from_str(text).map_err(|e| {
                    HostError::new(
                        ErrorCode::ServiceCallFailed,
                        format!("params are not JSON: {e}"),
                    )
                    .with("cause", "service.invalid_params")
                })?,
            };
            let args =
                json!({"appId": app, "service": service, "method": method, "params": params});
            let v = match door_call(dir, "call", args)? {
                Some(v) => v,
                None => {
                    let store = Store::open_for_calls(dir)?;
                    let mut services = Services::new(dir.apps_data());
                    services
                        .service_host(&store)
                        .call_as(
                            &store,
                            &id(&app, &service),
                            &method,
                            params,
                            "cli",
                            &Default::default(),
                        )
                        .map_err(|f| f.host_error())?
                }
            };
            output::print_json(&v);
        }
        ServicesCommand::GrantNetwork { app, service } => {
            let store = open_locked(dir, json)?;
            let new = network_grant::grant(&store, &app, &service)?;
            output::done(
                json,
                &if new {
                    format!("granted network to {service} of {app}")
                } else {
                    format!("{service} of {app} already had network")
                },
                &json!({"app": app, "service": service, "granted": true, "changed": new}),
            );
        }
        ServicesCommand::RevokeNetwork { app, service } => {
            let store = open_locked(dir, json)?;
            let was = network_grant::revoke(&store, &app, &service)?;
            // A running host stops the service now; its next launch re-reads the grant.
            let _ = door_call(dir, "stop", json!({"appId": app, "service": service}));
            output::done(
                json,
                &if was {
                    format!("revoked the network grant of {service} of {app}")
                } else {
                    format!("{service} of {app} had no network grant")
                },
                &json!({"app": app, "service": service, "granted": false, "changed": was}),
            );
        }
        ServicesCommand::AllowRemote { app, service } => {
            let store = open_locked(dir, json)?;
            let (origin, new) = remote_policy::allow(&store, &app, &service)?;
            output::done(
                json,
                &if new {
                    format!("allowed {service} of {app} to be called at {origin}")
                } else {
                    format!("{service} of {app} was already allowed at {origin}")
                },
                &json!({"app": app, "service": service, "origin": origin, "allowed": true, "changed": new}),
            );
        }
        ServicesCommand::RevokeRemote { app, service } => {
            let store = open_locked(dir, json)?;
            let was = remote_policy::revoke(&store, &app, &service)?;
            output::done(
                json,
                &if was {
                    format!("revoked the remote allowance of {service} of {app}")
                } else {
                    format!("{service} of {app} was not allowed")
                },
                &json!({"app": app, "service": service, "allowed": false, "changed": was}),
            );
        }
        ServicesCommand::Reset {
            app,
            service,
            delete_data,
        } => {
            // A running host stops its process first (nothing writes while the data goes).
            if delete_data {
                let _ = door_call(dir, "stop", json!({"appId": app, "service": service}));
            }
            let store = Store::open_for_calls(dir)?;
            let out = host_core::hosting::services::reset::reset(
                &store,
                dir,
                &app,
                &service,
                delete_data,
            )?;
            let mut text = if out.cleared {
                format!("reset {service} of {app}: its crash and disk-quota record is cleared")
            } else {
                format!("{service} of {app} had no crash or disk-quota record")
            };
            if let Some(n) = out.freed_bytes {
                text.push_str(&format!("; its data was deleted ({n} bytes freed)"));
            }
            output::done(
                json,
                &text,
                &json!({"app": app, "service": service, "cleared": out.cleared,
                        "freedBytes": out.freed_bytes}),
            );
        }
        ServicesCommand::Logs {
            app,
            service,
            follow,
        } => logs(dir, &app, &service, follow, json)?,
    }
    Ok(0)
}

fn id(app: &str, service: &str) -> ServiceId {
    ServiceId {
        app: app.to_owned(),
        key: service.to_owned(),
    }
}

fn logs(dir: &DataDir, app: &str, service: &str, follow: bool, json: bool) -> HostResult<()> {
    let args = json!({"appId": app, "service": service});
    let text = match door_call(dir, "logs", args.clone())? {
        Some(v) => v["text"].as_str().unwrap_or_default().to_owned(),
        None => read_log_file(dir, &id(app, service)),
    };
    if json && !follow {
        output::print_json(&json!({"app": app, "service": service, "text": text}));
        return Ok(());
    }
    print!("{text}");
    if !follow {
        return Ok(());
    }
    // Follow: print what the log gains (from the host's view while one runs, else the file).
    let mut seen = text;
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let now = match door_call(dir, "logs", args.clone())? {
            Some(v) => v["text"].as_str().unwrap_or_default().to_owned(),
            None => read_log_file(dir, &id(app, service)),
        };
        if let Some(new) = now.strip_prefix(seen.as_str()) {
            print!("{new}");
        } else if now != seen {
            print!("{now}");
        }
        seen = now;
    }
}

fn print_list(v: &Value, json: bool) {
    if json {
        output::print_json(v);
        return;
    }
    let Some(items) = v.as_array() else { return };
    if items.is_empty() {
        out_line!("no services declared");
    }
    for s in items {
        let mut line = format!(
            "{:<20} {:<9} {}{}",
            s["key"].as_str().unwrap_or("?"),
            s["state"].as_str().unwrap_or("?"),
            s["protocol"].as_str().unwrap_or(""),
            if s["required"] == true {
                ", required"
            } else {
                ""
            }
        );
        if let Some(pid) = s["pid"].as_u64() {
            line.push_str(&format!(", pid {pid}"));
        }
        if let Some(n) = s["restarts"].as_u64().filter(|n| *n > 0) {
            line.push_str(&format!(", {n} restart(s)"));
        }
        if let Some(c) = s["code"].as_str() {
            line.push_str(&format!(
                "\n    {c}: {}",
                s["reason"].as_str().unwrap_or("")
            ));
        }
        if let Some(e) = s["lastExit"].as_str() {
            line.push_str(&format!("\n    last exit: {e}"));
        }
        out_line!("{line}");
    }
}
