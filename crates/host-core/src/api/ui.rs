//! `lime.ui` on the host UI's side: the command palette's entries (host-registered routes and
//! the apps' `command` entries), the artifact viewers of a type, and launching a mounted frame
//! for a route, a command or an artifact (`hosting/bridge/host/ui_launch.rs` decides).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{answer, args, Command, NoArgs, Session};
use crate::foundation::error::HostResult;
use crate::hosting::bridge::host::ui_launch::{catalog, RegisteredRoute};
use crate::hosting::bridge::wire::UiLaunchPayload;

pub const COMMANDS: &[Command] = &[
    Command {
        name: "ui_palette",
        run: ui_palette,
    },
    Command {
        name: "artifact_viewers",
        run: artifact_viewers,
    },
    Command {
        name: "ui_launch",
        run: ui_launch,
    },
];

/// What the command palette lists besides the host's own actions.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Palette {
    pub commands: Vec<catalog::PaletteCommand>,
    pub routes: Vec<RegisteredRoute>,
}

fn ui_palette(session: &Session, raw: Value) -> HostResult<Value> {
    let NoArgs {} = args("ui_palette", raw)?;
    let (routes, commands) = session.with_bridge(|bridge, store| {
        (
            bridge.registered_routes(store),
            bridge.palette_commands(store),
        )
    })?;
    answer(Palette {
        commands: commands?,
        routes,
    })
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "ArtifactViewersArgs")]
pub(crate) struct ViewersArgs {
    artifact_type: String,
}

fn artifact_viewers(session: &Session, raw: Value) -> HostResult<Value> {
    let a: ViewersArgs = args("artifact_viewers", raw)?;
    answer(session.with_bridge(|_, store| catalog::viewers(store, &a.artifact_type))??)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "UiLaunchArgs")]
pub(crate) struct LaunchArgs {
    mount_id: String,
    launch: UiLaunchPayload,
}

fn ui_launch(session: &Session, raw: Value) -> HostResult<Value> {
    let a: LaunchArgs = args("ui_launch", raw)?;
    answer(session.with_bridge(|bridge, store| bridge.launch(store, &a.mount_id, a.launch))??)
}
