//! The one invoke handler: every Tauri command of the host UI goes to the Tauri-free command
//! layer (`host_core::api`), off the UI thread.
//!
//! - `host_call {command, args}` runs any command of the layer;
//! - `upload_package` takes a raw body (the package bytes);
//! - every other name is the legacy per-command form (`invoke('list_apps')`,
//!   `invoke('bridge_message', {mountId, origin, data})`): the name is the command, the payload
//!   its arguments.
//!
//! It sits behind `guard::host_ui_only`, so only the host UI's own page reaches it. Answers are
//! the command's JSON; failures are `HostError` (`{code, message, details}`).

use std::sync::Arc;

use host_core::api::{self, Session};
use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use serde::Deserialize;
use serde_json::Value;
use tauri::ipc::{Invoke, InvokeBody, InvokeError};
use tauri::{Manager, Runtime};

/// The command that carries `{command, args}`.
pub const HOST_CALL: &str = "host_call";
/// The raw-body command that keeps a package for review.
pub const UPLOAD_PACKAGE: &str = "upload_package";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HostCall {
    command: String,
    #[serde(default)]
    args: Value,
}

/// Routes one invoke (already past the origin guard) to the command layer.
pub fn dispatch(session: &Session, command: &str, payload: InvokeBody) -> HostResult<Value> {
    match (command, payload) {
        (UPLOAD_PACKAGE, InvokeBody::Raw(bytes)) => api::upload_package(session, &bytes),
        (UPLOAD_PACKAGE, InvokeBody::Json(_)) => Err(HostError::new(
            ErrorCode::ApiBadArguments,
            "upload_package takes the package bytes as a raw body",
        )
        .with("command", UPLOAD_PACKAGE)),
        (HOST_CALL, InvokeBody::Json(value)) => {
            let call: HostCall = api::args(HOST_CALL, value)?;
            api::call(session, &call.command, call.args)
        }
        (name, InvokeBody::Json(value)) => api::call(session, name, value),
        (name, InvokeBody::Raw(_)) => Err(HostError::new(
            ErrorCode::ApiBadArguments,
            "only upload_package takes a raw body",
        )
        .with("command", name.chars().take(64).collect::<String>())),
    }
}

/// The invoke handler for the window: answers on Tauri's blocking pool (`next_events` may wait
/// up to 25 s, a bridge call may wait on SQLite) so neither the UI thread nor the async workers
/// block.
pub fn handler<R: Runtime>(
    session: Arc<Session>,
) -> impl Fn(Invoke<R>) -> bool + Send + Sync + 'static {
    move |invoke: Invoke<R>| {
        let command = invoke.message.command().to_owned();
        let payload = invoke.message.payload().clone();
        let traced = super::start_trace::enabled()
            .then(|| super::start_trace::command_name(&command, &payload));
        if let Some(name) = &traced {
            super::start_trace::first(&format!("call {name}"));
        }
        if command == super::bench::COMMAND && super::bench::enabled() {
            if let InvokeBody::Json(args) = &payload {
                if let Some(what) = args.get("what").and_then(Value::as_str) {
                    super::start_trace::first(&format!("painted {what}"));
                }
                super::start_trace::page_marks(args);
                super::bench::painted(args);
            }
            invoke.resolver.resolve(());
            return true;
        }
        if let Some((name, args)) = appimage_update_call(&command, &payload) {
            let app = invoke.message.webview().app_handle().clone();
            invoke.resolver.respond_async(async move {
                super::appimage_update::handle(&app, &name, &args)
                    .await
                    .map_err(|error| {
                        InvokeError(serde_json::to_value(&error).unwrap_or(Value::Null))
                    })
            });
            return true;
        }
        let session = Arc::clone(&session);
        invoke.resolver.respond_async(async move {
            let joined =
                tauri::async_runtime::spawn_blocking(move || dispatch(&session, &command, payload))
                    .await;
            if let Some(name) = traced {
                super::start_trace::first(&format!("answer {name}"));
            }
            let result = joined.unwrap_or_else(|e| {
                Err(
                    HostError::new(ErrorCode::Internal, "a host command crashed")
                        .with("reason", e.to_string()),
                )
            });
            result.map_err(|error| InvokeError(serde_json::to_value(&error).unwrap_or(Value::Null)))
        });
        true
    }
}

/// A call of the AppImage self-update commands (`appimage_update.rs`, which need the app
/// handle), directly or through `host_call {command, args}`: its name and arguments.
fn appimage_update_call(command: &str, payload: &InvokeBody) -> Option<(String, Value)> {
    let InvokeBody::Json(value) = payload else {
        return None;
    };
    let (name, args) = if command == HOST_CALL {
        (value.get("command")?.as_str()?, value.get("args").cloned())
    } else {
        (command, Some(value.clone()))
    };
    super::appimage_update::COMMANDS
        .contains(&name)
        .then(|| (name.to_owned(), args.unwrap_or(Value::Null)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use host_core::api::{LinkOpener, SessionConfig};
    use host_core::foundation::paths::DataDir;

    fn session(root: &std::path::Path) -> Session {
        Session::new(
            DataDir::at(root),
            SessionConfig {
                serve: super::super::scheme::context(),
                links: LinkOpener::Page,
                launch: None,
            },
        )
    }

    #[test]
    fn appimage_update_commands_are_taken_out_directly_or_through_host_call() {
        let through = InvokeBody::Json(serde_json::json!({
            "command": "appimage_update_install",
            "args": {"version": "0.2.0"}
        }));
        assert_eq!(
            appimage_update_call(HOST_CALL, &through),
            Some((
                "appimage_update_install".to_owned(),
                serde_json::json!({"version": "0.2.0"})
            ))
        );
        let direct = InvokeBody::Json(serde_json::json!({}));
        assert_eq!(
            appimage_update_call("appimage_update_supported", &direct),
            Some((
                "appimage_update_supported".to_owned(),
                serde_json::json!({})
            ))
        );
        let other = InvokeBody::Json(serde_json::json!({"command": "list_apps"}));
        assert_eq!(appimage_update_call(HOST_CALL, &other), None);
        assert_eq!(appimage_update_call("list_apps", &direct), None);
        assert_eq!(
            appimage_update_call("appimage_update_install", &InvokeBody::Raw(vec![])),
            None
        );
    }

    #[test]
    fn host_call_legacy_names_and_raw_uploads_reach_the_layer() {
        let root = std::env::temp_dir().join(format!("apphost-host-call-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let s = session(&root);
        let via_call = dispatch(
            &s,
            HOST_CALL,
            InvokeBody::Json(serde_json::json!({"command": "list_apps", "args": {}})),
        )
        .unwrap();
        assert_eq!(via_call, serde_json::json!([]));
        let legacy = dispatch(&s, "list_apps", InvokeBody::Json(serde_json::json!({}))).unwrap();
        assert_eq!(legacy, via_call);
        let unknown = dispatch(&s, "rm_rf", InvokeBody::Json(Value::Null)).unwrap_err();
        assert_eq!(unknown.code, ErrorCode::ApiUnknownCommand);
        let nested = dispatch(
            &s,
            HOST_CALL,
            InvokeBody::Json(serde_json::json!({"command": "nope"})),
        )
        .unwrap_err();
        assert_eq!(nested.code, ErrorCode::ApiUnknownCommand);
        let up = dispatch(&s, UPLOAD_PACKAGE, InvokeBody::Raw(b"PK".to_vec())).unwrap();
        assert_eq!(up["bytes"], 2);
        let json_upload = dispatch(&s, UPLOAD_PACKAGE, InvokeBody::Json(Value::Null)).unwrap_err();
        assert_eq!(json_upload.code, ErrorCode::ApiBadArguments);
        let raw_other = dispatch(&s, "list_apps", InvokeBody::Raw(vec![1])).unwrap_err();
        assert_eq!(raw_other.code, ErrorCode::ApiBadArguments);
        drop(s);
        let _ = std::fs::remove_dir_all(&root);
    }
}
