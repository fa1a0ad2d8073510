//! Self-update of the AppImage through Tauri's updater (`tauri-plugin-updater`,
//! docs/shipping.md, "AppImage self-update").
//!
//! Active only when this window runs from an AppImage (`APPIMAGE` names an existing file, set by
//! its runtime) and the build has an update key; deb and rpm installs keep the notice only. The
//! plugin's key is the same compiled-in `APPHOST_UPDATE_PUBKEY` that checks the feed
//! (`host_update::compiled_key`), and its configuration (`tauri.conf.json`, `plugins.updater`)
//! sets `requireSignedVersion`: the AppImage's minisign signature must verify with that key and
//! name the version the feed announces. There is no setting that turns the signature off.
//!
//! The host UI (`update-notice.tsx`) shows the signed feed's notice; with
//! [`SUPPORTED`] true it offers "Install and restart", and only the user's click calls
//! [`INSTALL`] with the version the notice showed. The install refuses, leaving the AppImage
//! file unchanged, with a stable code: `update.wrong_key` (signed by another key),
//! `update.bad_signature` (changed bytes, not a signature, signed for another version),
//! `update.downgrade` (the feed offers nothing newer than this build, or another version than
//! the one the user confirmed), `update.bad_feed` (the download is not an AppImage, no
//! `linux-x86_64-appimage` entry), `update.unreachable` (network).

use std::path::PathBuf;

use host_core::center::host_update;
use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use serde_json::{json, Value};
use tauri::{AppHandle, Runtime};
use tauri_plugin_updater::UpdaterExt;

/// Whether this window can update itself (the UI asks once).
pub const SUPPORTED: &str = "appimage_update_supported";
/// `{version}`: downloads, verifies and installs that version over the AppImage file.
pub const INSTALL: &str = "appimage_update_install";
/// Starts the (updated) AppImage again and closes this window.
pub const RESTART: &str = "appimage_update_restart";

/// The command names [`handle`] answers.
pub const COMMANDS: &[&str] = &[SUPPORTED, INSTALL, RESTART];

/// The feed's platform entry for AppImages.
pub const TARGET: &str = "linux-x86_64-appimage";

/// The AppImage file this window runs from, if any.
pub fn appimage_path() -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os("APPIMAGE")?);
    path.is_file().then_some(path)
}

/// Self-update applies: an AppImage, a key and a feed URL.
pub fn active() -> bool {
    appimage_path().is_some()
        && host_update::compiled_key().is_some()
        && host_update::endpoint(|k| std::env::var(k).ok()).is_some()
}

/// The updater plugin with the compiled-in key (registered only when [`active`]).
pub fn plugin<R: Runtime>() -> tauri::plugin::TauriPlugin<R, tauri_plugin_updater::Config> {
    tauri_plugin_updater::Builder::new()
        .pubkey(host_update::compiled_key().unwrap_or_default())
        .target(TARGET)
        .build()
}

/// Answers one of [`COMMANDS`].
pub async fn handle<R: Runtime>(
    app: &AppHandle<R>,
    command: &str,
    args: &Value,
) -> HostResult<Value> {
    match command {
        SUPPORTED => Ok(json!(active())),
        INSTALL => install(app, args).await,
        RESTART => restart(app),
        _ => Err(HostError::new(
            ErrorCode::ApiUnknownCommand,
            "not an AppImage update command",
        )),
    }
}

async fn install<R: Runtime>(app: &AppHandle<R>, args: &Value) -> HostResult<Value> {
    let confirmed = args
        .get("version")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            HostError::new(
                ErrorCode::ApiBadArguments,
                "appimage_update_install needs {version}",
            )
        })?
        .to_owned();
    let result = install_confirmed(app, &confirmed).await;
    match &result {
        Ok(_) => eprintln!("apphost: AppImage updated to {confirmed}"),
        Err(e) => eprintln!(
            "apphost: AppImage update refused: {}: {}",
            e.code.as_str(),
            e.message
        ),
    }
    result
}

async fn install_confirmed<R: Runtime>(app: &AppHandle<R>, confirmed: &str) -> HostResult<Value> {
    if !active() {
        return Err(HostError::new(
            ErrorCode::ApiBadArguments,
            "this AppHost is not an AppImage with an update key: it does not update itself",
        ));
    }
    let feed = host_update::endpoint(|k| std::env::var(k).ok()).unwrap_or_default();
    let feed = tauri::Url::parse(&feed)
        .map_err(|e| HostError::new(ErrorCode::UpdateBadFeed, format!("the feed URL: {e}")))?;
    let updater = app
        .updater_builder()
        .endpoints(vec![feed])
        .and_then(|b| b.timeout(std::time::Duration::from_secs(600)).build())
        .map_err(classify)?;
    let update = updater.check().await.map_err(classify)?.ok_or_else(|| {
        HostError::new(
            ErrorCode::UpdateDowngrade,
            "the update feed offers no version newer than this AppHost",
        )
    })?;
    if update.version != confirmed {
        return Err(HostError::new(
            ErrorCode::UpdateDowngrade,
            format!(
                "the feed now offers {} instead of the confirmed {confirmed}",
                update.version
            ),
        ));
    }
    update
        .download_and_install(|_, _| {}, || {})
        .await
        .map_err(classify)?;
    Ok(json!({ "installed": update.version }))
}

/// The plugin's error as one of the `update.*` codes.
fn classify(error: tauri_plugin_updater::Error) -> HostError {
    use tauri_plugin_updater::Error as E;
    let code = match &error {
        E::Minisign(minisign_verify::Error::UnexpectedKeyId) => ErrorCode::UpdateWrongKey,
        E::Minisign(_)
        | E::Base64(_)
        | E::SignatureUtf8(_)
        | E::SignedVersionMismatch { .. }
        | E::MissingSignedVersion => ErrorCode::UpdateBadSignature,
        E::Reqwest(_) | E::Network(_) | E::ReleaseNotFound | E::InsecureTransportProtocol => {
            ErrorCode::UpdateUnreachable
        }
        E::Semver(_)
        | E::Serialization(_)
        | E::UrlParse(_)
        | E::TargetNotFound(_)
        | E::TargetsNotFound(_)
        | E::InvalidUpdaterFormat
        | E::BinaryNotFoundInArchive => ErrorCode::UpdateBadFeed,
        _ => ErrorCode::Internal,
    };
    HostError::new(code, format!("the AppImage update is refused: {error}"))
}

/// Starts the AppImage file again (the new version once installed) and exits this window.
fn restart<R: Runtime>(app: &AppHandle<R>) -> HostResult<Value> {
    let path = appimage_path()
        .ok_or_else(|| HostError::new(ErrorCode::ApiBadArguments, "not running as an AppImage"))?;
    std::process::Command::new(&path).spawn().map_err(|e| {
        HostError::new(
            ErrorCode::Internal,
            format!("cannot start {}: {e}", path.display()),
        )
    })?;
    app.exit(0);
    Ok(Value::Null)
}
