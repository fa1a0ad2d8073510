//! `lime.ui` routes, commands and artifact viewers on the host side.
//!
//! - `lime.ui.registerRoute({path, title})`: an app names one of its in-app routes so the host
//!   can list it (command palette) and deep-link to it. Routes are kept per app, in memory for
//!   this host session (apps register them as they start, as an in-app router does), bounded
//!   ([`MAX_ROUTES_PER_APP`], [`MAX_ROUTE_BYTES`], [`MAX_TITLE_CHARS`]), validated
//!   ([`check_route_path`]) and dropped when the app is disabled, uninstalled, updated or rolled
//!   back (`BridgeHost::unmount_app`). A route is only ever delivered to a frame of the app that
//!   registered (or declared) it: registration never navigates the host or another app.
//! - [`BridgeHost::launch`]: the host UI opened a frame for a route, a `command` entry or an
//!   artifact; Rust checks it against the mount's own app (declared or registered route, a ready
//!   `command` entry of the same app, a type the mounted entry declares in `artifactTypes[]`)
//!   and posts `ui:launch` once the frame is ready (queued until `app:ready`, bounded). An
//!   artifact launch carries the ref only: the viewer reads it through `lime.artifacts.read`, so
//!   the choke point decides what it may read.

use super::*;
use crate::foundation::error::{ErrorCode as HostCode, HostError};
use crate::hosting::bridge::wire::UiLaunchPayload;
use crate::install::manifest::EntryKind;
use crate::install::readiness::Status;

/// Most routes one app may register.
pub const MAX_ROUTES_PER_APP: usize = 64;
/// Longest route path, in bytes.
pub const MAX_ROUTE_BYTES: usize = 256;
/// Longest route title, in characters.
pub const MAX_TITLE_CHARS: usize = 120;
/// Most launches waiting for one frame's `app:ready`.
pub const MAX_PENDING_LAUNCHES: usize = 8;
/// Longest artifact id or type a launch may carry.
const MAX_REF_CHARS: usize = 128;

/// One registered route.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RegisteredRoute {
    pub app_id: String,
    /// The entry whose frame registered it (the one a deep link opens).
    pub entry_key: String,
    pub path: String,
    pub title: String,
    /// The package the registering frame ran: a route is only used while that package is the
    /// app's active, enabled version (an update, rollback, disable or reinstall made without a
    /// live mount in this session still retires it).
    #[serde(skip)]
    #[schemars(skip)]
    package_hash: String,
}

/// Routes per app and launches waiting for a frame's handshake.
#[derive(Debug, Default)]
pub struct UiState {
    routes: BTreeMap<String, Vec<RegisteredRoute>>,
    pending: HashMap<String, Vec<Value>>,
}

impl UiState {
    pub(super) fn forget_app(&mut self, app_id: &str) {
        self.routes.remove(app_id);
    }
    pub(super) fn forget_mount(&mut self, mount_id: &str) {
        self.pending.remove(mount_id);
    }
}

/// Why a route path is refused (`None`: it is fine). A path: starts with `/`, not `//`, at most
/// [`MAX_ROUTE_BYTES`], only RFC 3986 path characters (no `?`, `#`, `\`, spaces or controls),
/// no `.` or `..` segment; `:name` segments are parameters.
pub fn check_route_path(path: &str) -> Option<&'static str> {
    if path.is_empty() || !path.starts_with('/') || path.starts_with("//") {
        return Some("a route starts with one `/`");
    }
    if path.len() > MAX_ROUTE_BYTES {
        return Some("a route is at most 256 bytes");
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-._~/:@!$&'()*+,;=%".contains(c);
    if !path.chars().all(allowed) {
        return Some("a route has only path characters (no `?`, `#`, `\\`, spaces or controls)");
    }
    if path.split('/').any(|s| s == "." || s == "..") {
        return Some("a route has no `.` or `..` segment");
    }
    None
}

/// `route` is `pattern` or below it, a `:name` segment of the pattern matching any one segment.
pub fn route_fits(pattern: &str, route: &str) -> bool {
    let p: Vec<&str> = pattern.trim_end_matches('/').split('/').collect();
    let r: Vec<&str> = route.trim_end_matches('/').split('/').collect();
    r.len() >= p.len()
        && p.iter()
            .zip(&r)
            .all(|(p, r)| p == r || (p.starts_with(':') && p.len() > 1 && !r.is_empty()))
}

impl BridgeHost {
    /// `lime.ui.registerRoute({path, title?})` from `mount`: answers the registered route.
    pub(super) fn register_route(
        &mut self,
        mount: &Mount,
        call: &Call,
    ) -> Result<Value, CallError> {
        let invalid = |m: &str, cause: &'static str| {
            let mut e = error_for(call, ErrorCode::InvalidArgument, m);
            e.cause_code = Some(cause);
            e
        };
        /// `registerRoute`'s arguments (a closed object).
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Args {
            path: String,
            #[serde(default)]
            title: Option<String>,
        }
        let Ok(Args { path, title }) = serde_json::from_value::<Args>(call.args.clone()) else {
            return Err(invalid(
                "args must be {path: string, title?: string} and nothing else",
                "ui.route_invalid",
            ));
        };
        if let Some(why) = check_route_path(&path) {
            return Err(invalid(why, "ui.route_invalid"));
        }
        let title = match title {
            None => path.clone(),
            Some(t)
                if !t.trim().is_empty()
                    && t.chars().count() <= MAX_TITLE_CHARS
                    && !t.chars().any(char::is_control) =>
            {
                t.trim().to_owned()
            }
            Some(_) => {
                return Err(invalid(
                    "args.title must be 1..=120 characters without control characters",
                    "ui.route_invalid",
                ))
            }
        };
        let routes = self.ui.routes.entry(mount.app_id.clone()).or_default();
        let route = RegisteredRoute {
            app_id: mount.app_id.clone(),
            entry_key: mount.entry_key.clone(),
            path,
            title,
            package_hash: mount.package_hash.clone(),
        };
        let count = routes.len();
        match routes.iter_mut().find(|r| r.path == route.path) {
            Some(existing) => *existing = route.clone(),
            None if count >= MAX_ROUTES_PER_APP => {
                return Err(invalid(
                    "this app registered the most routes it may (64)",
                    "ui.route_limit",
                ))
            }
            None => routes.push(route.clone()),
        }
        Ok(serde_json::to_value(route).unwrap_or(Value::Null))
    }

    /// `lime.ui.listRoutes`: the routes the calling app registered (never another app's).
    pub(super) fn own_routes(&self, mount: &Mount) -> Value {
        json!({ "routes": self.routes_of(&mount.app_id, &mount.package_hash).cloned().collect::<Vec<_>>() })
    }

    /// `app_id`'s routes registered by frames of the package `package_hash`.
    fn routes_of<'s>(
        &'s self,
        app_id: &str,
        package_hash: &'s str,
    ) -> impl Iterator<Item = &'s RegisteredRoute> + 's {
        self.ui
            .routes
            .get(app_id)
            .into_iter()
            .flatten()
            .filter(move |r| r.package_hash == package_hash)
    }

    /// Drops the routes of packages that are no longer their app's active one (uninstalled,
    /// updated, rolled back); called by the mount watcher whenever `host.db` changed, so an
    /// identical package installed again starts without the old registrations. An app whose
    /// state cannot be read now keeps its routes until the next look.
    pub fn retire_routes(&mut self, store: &Store) {
        let apps: Vec<String> = self.ui.routes.keys().cloned().collect();
        for app_id in apps {
            match self.facts.active_app(store, &app_id) {
                Ok(app) => {
                    if let Some(routes) = self.ui.routes.get_mut(&app_id) {
                        routes.retain(|r| r.package_hash == app.package_hash);
                    }
                }
                Err(e) if e.code == HostCode::AppNotInstalled => {
                    self.ui.routes.remove(&app_id);
                }
                Err(_) => {}
            }
        }
        self.ui.routes.retain(|_, routes| !routes.is_empty());
    }

    /// Every enabled app's `command` entries with their readiness under this host's profile.
    pub fn palette_commands(&self, store: &Store) -> HostResult<Vec<catalog::PaletteCommand>> {
        catalog::commands(store, &self.profile)
    }

    /// Every app's registered routes (the host UI's palette), by app then registration order:
    /// only those of an enabled app's active package.
    pub fn registered_routes(&self, store: &Store) -> Vec<RegisteredRoute> {
        let mut out = Vec::new();
        for app_id in self.ui.routes.keys() {
            match self.facts.active_app(store, app_id) {
                Ok(app) if app.enabled => {
                    out.extend(self.routes_of(app_id, &app.package_hash).cloned())
                }
                _ => {}
            }
        }
        out
    }

    /// The host UI opened `mount_id` for `launch`: checked against the mount's own app, then
    /// posted as `ui:launch` (or queued until the frame's `app:ready`). Refusals are
    /// `ui.launch_refused` with a `reason`, and change nothing.
    pub fn launch(
        &mut self,
        store: &Store,
        mount_id: &str,
        launch: UiLaunchPayload,
    ) -> HostResult<Vec<Outgoing>> {
        let refuse = |reason: &'static str, msg: &str| {
            Err(HostError::new(HostCode::UiLaunchRefused, msg.to_owned()).with("reason", reason))
        };
        let Some(mount) = self.table.get(mount_id).cloned() else {
            return refuse("mount_unknown", "no frame with this mount id");
        };
        let app = self.active_app(store, &mount);
        let Some(app) = app.as_deref() else {
            return refuse("app_unavailable", "the app is no longer installed");
        };
        match &launch {
            UiLaunchPayload::Route { route } => {
                if let Some(why) = check_route_path(route) {
                    return refuse("route_invalid", why);
                }
                let declared = app_routes(Some(app), &mount)
                    .into_iter()
                    .any(|d| route_matches(&d, route));
                let registered = self
                    .routes_of(&mount.app_id, &mount.package_hash)
                    .any(|r| route_fits(&r.path, route));
                if !declared && !registered {
                    return refuse(
                        "route_unknown",
                        "not a route this app declares or registered",
                    );
                }
            }
            UiLaunchPayload::Command { entry_key, command } => {
                let view = app.manifest.view();
                let Some(entry) = view.entry(entry_key) else {
                    return refuse("command_unknown", "the app has no such entry");
                };
                if entry.kind() != Some(EntryKind::Command) || entry.command() != command.as_deref()
                {
                    return refuse("command_unknown", "not a command entry of this app");
                }
                let report = store.readiness(&mount.app_id, &self.profile)?;
                let status = report
                    .entries
                    .iter()
                    .find(|e| &e.entry_key == entry_key)
                    .map_or(report.status, |e| e.status);
                if !matches!(status, Status::Ready | Status::ReadyDegraded) {
                    return refuse("command_not_ready", "the command entry is not ready");
                }
            }
            UiLaunchPayload::Artifact {
                artifact_id,
                artifact_type,
                owner_app_id,
            } => {
                let ok = |s: &str| {
                    !s.is_empty()
                        && s.len() <= MAX_REF_CHARS
                        && s.chars()
                            .all(|c| c.is_ascii_alphanumeric() || "._:-".contains(c))
                };
                if !ok(artifact_id) || !ok(artifact_type) || !ok(owner_app_id) {
                    return refuse("artifact_invalid", "not an artifact ref");
                }
                let declares = app
                    .manifest
                    .view()
                    .entry(&mount.entry_key)
                    .is_some_and(|e| e.artifact_types().any(|t| t == artifact_type));
                if !declares {
                    return refuse(
                        "type_not_viewed",
                        "the mounted entry does not view this artifact type",
                    );
                }
            }
        }
        let payload = serde_json::to_value(&launch).unwrap_or(Value::Null);
        if self.table.is_ready(mount_id) {
            return Ok(vec![self.post(&mount, "ui:launch", None, payload)]);
        }
        let queue = self.ui.pending.entry(mount_id.to_owned()).or_default();
        if queue.len() >= MAX_PENDING_LAUNCHES {
            return refuse("too_many_pending", "too many launches wait for this frame");
        }
        queue.push(payload);
        Ok(Vec::new())
    }

    /// The launches queued for `mount` before its handshake, as posts (once).
    pub(super) fn take_launches(&mut self, mount: &Mount) -> Vec<Outgoing> {
        self.ui
            .pending
            .remove(&mount.mount_id)
            .unwrap_or_default()
            .into_iter()
            .map(|p| self.post(mount, "ui:launch", None, p))
            .collect()
    }
}

/// The `command` entries and artifact viewers of the installed, enabled apps, for the host UI.
pub mod catalog {
    use super::*;

    /// A `command` entry the palette lists, and the UI entry that runs it.
    #[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct PaletteCommand {
        pub app_id: String,
        pub app_title: String,
        pub entry_key: String,
        pub title: String,
        pub command: Option<String>,
        /// The app's first UI entry: it is mounted and receives `ui:launch {kind: "command"}`.
        pub surface_entry: String,
        /// The command entry's readiness (`ready`, `needs-setup`, ...).
        pub status: String,
    }

    /// An entry that views an artifact type.
    #[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct ArtifactViewer {
        pub app_id: String,
        pub app_title: String,
        pub entry_key: String,
        pub title: String,
    }

    /// Every enabled app's `command` entries (apps without a UI entry have none to offer).
    pub fn commands(store: &Store, profile: &HostProfile) -> HostResult<Vec<PaletteCommand>> {
        let mut out = Vec::new();
        for summary in store.list_apps()? {
            if !summary.enabled {
                continue;
            }
            let Ok(app) = store.active_app(&summary.name) else {
                continue;
            };
            let view = app.manifest.view();
            let Some(surface) = view
                .entries()
                .find(|e| e.kind().is_some_and(EntryKind::is_ui_surface))
                .and_then(Entry::key)
            else {
                continue;
            };
            let commands: Vec<_> = view
                .entries()
                .filter(|e| e.kind() == Some(EntryKind::Command))
                .collect();
            if commands.is_empty() {
                continue;
            }
            let report = store.readiness(&summary.name, profile)?;
            for e in commands {
                let Some(key) = e.key() else { continue };
                let status = report
                    .entries
                    .iter()
                    .find(|r| r.entry_key == key)
                    .map_or(report.status, |r| r.status);
                out.push(PaletteCommand {
                    app_id: summary.name.clone(),
                    app_title: summary
                        .display_name
                        .clone()
                        .unwrap_or_else(|| summary.name.clone()),
                    entry_key: key.to_owned(),
                    title: e.title().unwrap_or(key).to_owned(),
                    command: e.command().map(str::to_owned),
                    surface_entry: surface.to_owned(),
                    status: status.as_str().to_owned(),
                });
            }
        }
        Ok(out)
    }

    /// The UI entries of enabled apps that declare `artifact_type` in `artifactTypes[]`.
    pub fn viewers(store: &Store, artifact_type: &str) -> HostResult<Vec<ArtifactViewer>> {
        let mut out = Vec::new();
        for summary in store.list_apps()? {
            if !summary.enabled {
                continue;
            }
            let Ok(app) = store.active_app(&summary.name) else {
                continue;
            };
            for e in app.manifest.view().entries() {
                if !e.kind().is_some_and(EntryKind::is_ui_surface)
                    || !e.artifact_types().any(|t| t == artifact_type)
                {
                    continue;
                }
                let Some(key) = e.key() else { continue };
                out.push(ArtifactViewer {
                    app_id: summary.name.clone(),
                    app_title: summary
                        .display_name
                        .clone()
                        .unwrap_or_else(|| summary.name.clone()),
                    entry_key: key.to_owned(),
                    title: e.title().unwrap_or(key).to_owned(),
                });
            }
        }
        Ok(out)
    }
}
