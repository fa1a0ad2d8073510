//! The host UI's command layer: one table of commands that both transports call (the desktop
//! shell's Tauri `host_call`, and `apphost serve`'s `POST /api/<command>`). Tauri-free.
//!
//! [`call`] routes a command name and its JSON arguments to a handler of one area module
//! (`apps`, `bridge`, `events`, `external`, `uploads`, ...), each of which lists its commands
//! in a `COMMANDS` table. A name no table knows is `api.unknown_command`; arguments that do not
//! decode into the command's argument type are `api.bad_arguments`. The per-window (or
//! per-server) state the commands share is a [`Session`]. The contract is `docs/host-api.md`.

pub mod agent;
pub mod app_material;
pub mod apps;
pub mod bridge;
pub mod catalog;
pub mod center;
pub mod dev_console;
pub mod door;
pub mod door_services;
pub mod door_workflow;
pub mod events;
pub mod external;
pub mod files;
pub mod host_update;
pub mod knowledge;
pub mod launch_package;
pub mod outbox;
pub mod schema;
pub mod services;
pub mod session;
pub mod store_stamp;
pub mod tasks;
pub mod ui;
pub mod uploads;
pub mod watch;
pub mod workflow;
pub mod workflow_host;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::foundation::error::{ErrorCode, HostError, HostResult};

pub use outbox::{Event, Outbox};
pub use session::{LaunchRequest, LaunchTarget, LinkOpener, Session, SessionConfig};

/// One command: its wire name and the function that answers it.
pub struct Command {
    pub name: &'static str,
    pub run: fn(&Session, Value) -> HostResult<Value>,
}

/// Every area's commands. A new area adds its table here (one line).
const AREAS: &[&[Command]] = &[
    agent::COMMANDS,
    apps::COMMANDS,
    app_material::COMMANDS,
    bridge::COMMANDS,
    catalog::COMMANDS,
    center::COMMANDS,
    dev_console::COMMANDS,
    events::COMMANDS,
    external::COMMANDS,
    files::COMMANDS,
    host_update::COMMANDS,
    launch_package::COMMANDS,
    knowledge::COMMANDS,
    services::COMMANDS,
    tasks::COMMANDS,
    ui::COMMANDS,
    workflow::COMMANDS,
];

/// Longest command name echoed back in an error.
const NAME_ECHO: usize = 64;

/// Looks a command up by name.
pub fn command(name: &str) -> Option<&'static Command> {
    AREAS
        .iter()
        .flat_map(|area| area.iter())
        .find(|c| c.name == name)
}

/// Every command name the layer knows, in table order.
pub fn command_names() -> impl Iterator<Item = &'static str> {
    AREAS.iter().flat_map(|area| area.iter()).map(|c| c.name)
}

/// Runs `command` with `args` (a JSON object; `null` counts as `{}`) for `session`.
pub fn call(session: &Session, command: &str, args: Value) -> HostResult<Value> {
    let Some(found) = self::command(command) else {
        return Err(
            HostError::new(ErrorCode::ApiUnknownCommand, "the host has no such command")
                .with("command", echo(command)),
        );
    };
    (found.run)(session, args)
}

/// `upload_package`: keeps raw package bytes (a `.zip`) for a later review; answers
/// `{uploadId, bytes}`. Reached through the transports' raw-body paths, not [`call`].
pub fn upload_package(session: &Session, bytes: &[u8]) -> HostResult<Value> {
    if bytes.len() > uploads::MAX_UPLOAD_BYTES {
        return Err(HostError::new(
            ErrorCode::UploadTooLarge,
            format!(
                "the package is larger than {} bytes",
                uploads::MAX_UPLOAD_BYTES
            ),
        )
        .with("limit", uploads::MAX_UPLOAD_BYTES));
    }
    answer(session.center.upload(bytes)?)
}

/// Decodes `args` into `T` (`null` counts as `{}`), or `api.bad_arguments`.
pub fn args<T: DeserializeOwned>(command: &str, args: Value) -> HostResult<T> {
    let args = match args {
        Value::Null => Value::Object(Default::default()),
        other => other,
    };
    if !args.is_object() {
        return Err(bad_arguments(
            command,
            "the arguments must be a JSON object",
        ));
    }
    serde_json::from_value(args).map_err(|e| bad_arguments(command, &e.to_string()))
}

/// Serializes an answer (our own types: cannot fail in practice; `internal` if it does).
pub fn answer<T: serde::Serialize>(value: T) -> HostResult<Value> {
    serde_json::to_value(value).map_err(|e| {
        HostError::new(ErrorCode::Internal, "could not encode the answer")
            .with("reason", e.to_string())
    })
}

pub(crate) fn bad_arguments(command: &str, reason: &str) -> HostError {
    HostError::new(
        ErrorCode::ApiBadArguments,
        format!(
            "the arguments of {} do not fit: {}",
            echo(command),
            echo_reason(reason)
        ),
    )
    .with("command", echo(command))
    .with("reason", echo_reason(reason))
}

fn echo(text: &str) -> String {
    text.chars().take(NAME_ECHO).collect()
}

fn echo_reason(text: &str) -> String {
    text.chars().take(300).collect()
}

/// Argument type of commands without arguments: refuses unknown keys like every other command.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn command_names_are_unique_snake_case() {
        let mut seen = HashSet::new();
        for name in command_names() {
            assert!(seen.insert(name), "{name} twice");
            assert!(
                name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{name}"
            );
        }
        assert!(seen.contains("list_apps") && seen.contains("next_events"));
    }

    #[test]
    fn arguments_must_be_an_object_of_the_right_shape() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields, rename_all = "camelCase")]
        struct A {
            #[allow(dead_code)]
            mount_id: String,
        }
        assert!(args::<A>("x", serde_json::json!({"mountId": "m"})).is_ok());
        for bad in [
            serde_json::json!([]),
            serde_json::json!("m"),
            serde_json::json!({}),
            serde_json::json!({"mountId": 1}),
            serde_json::json!({"mountId": "m", "extra": true}),
        ] {
            let e = args::<A>("x", bad.clone()).expect_err(&bad.to_string());
            assert_eq!(e.code, ErrorCode::ApiBadArguments, "{bad}");
            assert_eq!(e.details["command"], "x");
        }
        assert!(args::<NoArgs>("x", Value::Null).is_ok());
    }
}
