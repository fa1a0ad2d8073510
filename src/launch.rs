//! Starting the desktop window: `apphost` (no arguments) and `apphost open` run the
//! `apphost-desktop` binary installed in the same folder as `apphost`.
//!
//! On Unix the launcher *replaces* this process (`execv`): same PID, same environment, same
//! standard streams, so whoever started `apphost` (a terminal, a desktop file, tauri-driver and
//! WebKitWebDriver in the e2e tests) is talking to the window process itself. Elsewhere it runs
//! the window as a child and returns its exit code.
//!
//! A missing or unstartable desktop binary is `desktop.unavailable` (exit 10), with the path
//! that was tried in `details.path`.

use std::path::{Path, PathBuf};
use std::process::Command;

use host_core::foundation::error::{ErrorCode, HostError};

/// File name of the desktop binary, looked up beside the running `apphost`.
pub const DESKTOP_BIN: &str = if cfg!(windows) {
    "apphost-desktop.exe"
} else {
    "apphost-desktop"
};

/// Where the desktop binary is expected: the folder of `current_exe()`.
pub fn desktop_binary() -> Result<PathBuf, HostError> {
    let exe = std::env::current_exe().map_err(|e| {
        HostError::new(
            ErrorCode::DesktopUnavailable,
            format!("cannot find where apphost itself is installed: {e}"),
        )
    })?;
    Ok(desktop_binary_beside(&exe))
}

fn desktop_binary_beside(exe: &Path) -> PathBuf {
    exe.parent().unwrap_or(Path::new(".")).join(DESKTOP_BIN)
}

/// Environment variables that ask the window to open an app's entry at start
/// (`apphost open <app> [--entry <key>]`); read by `apphost-desktop`.
pub const OPEN_APP_ENV: &str = "APPHOST_OPEN_APP";
pub const OPEN_ENTRY_ENV: &str = "APPHOST_OPEN_ENTRY";

/// Opens the window, never returning on success (Unix). `data_dir` (from `--data-dir`) is
/// passed on as `APPHOST_DATA_DIR`, `app`/`entry` as [`OPEN_APP_ENV`]/[`OPEN_ENTRY_ENV`] (unset
/// when not given, so an inherited value does not leak into a plain `apphost open`). Returns
/// the error when the binary cannot be started.
pub fn open_window(
    data_dir: Option<&Path>,
    app: Option<&str>,
    entry: Option<&str>,
) -> Result<i32, HostError> {
    let path = desktop_binary()?;
    if !path.is_file() {
        return Err(unavailable(
            &path,
            format!(
                "the desktop window is not installed: {} does not exist",
                path.display()
            ),
        ));
    }
    let mut command = Command::new(&path);
    if let Some(dir) = data_dir {
        command.env("APPHOST_DATA_DIR", dir);
    }
    set_open_target(&mut command, app, entry);
    run(command, &path)
}

/// Starts the window as a child process (`apphost dev` keeps watching while it runs), with the
/// same environment as [`open_window`].
pub fn spawn_window(
    data_dir: Option<&Path>,
    app: Option<&str>,
    entry: Option<&str>,
) -> Result<std::process::Child, HostError> {
    let path = desktop_binary()?;
    let mut command = Command::new(&path);
    if let Some(dir) = data_dir {
        command.env("APPHOST_DATA_DIR", dir);
    }
    set_open_target(&mut command, app, entry);
    command.spawn().map_err(|error| {
        unavailable(
            &path,
            format!(
                "cannot start the desktop window {}: {error}",
                path.display()
            ),
        )
    })
}

/// Opens the window on the review sheet for a package file (`apphost open <file>`), checked
/// with `launch_package::package_path` first; otherwise as [`open_window`].
pub fn open_window_for_package(data_dir: Option<&Path>, package: &Path) -> Result<i32, HostError> {
    let package = host_core::api::launch_package::package_path(package)?;
    let path = desktop_binary()?;
    if !path.is_file() {
        return Err(unavailable(
            &path,
            format!(
                "the desktop window is not installed: {} does not exist",
                path.display()
            ),
        ));
    }
    let mut command = Command::new(&path);
    if let Some(dir) = data_dir {
        command.env("APPHOST_DATA_DIR", dir);
    }
    set_open_target(&mut command, None, None);
    command.env(host_core::api::launch_package::OPEN_PACKAGE_ENV, package);
    run(command, &path)
}

/// Whether `apphost open ARG` names a package file rather than an installed app: a path (it
/// has a `/`) or a name ending in `.agentapp` / `.zip`.
pub fn names_a_package(arg: &str) -> bool {
    let ext = Path::new(arg).extension().and_then(|e| e.to_str());
    arg.contains(std::path::MAIN_SEPARATOR)
        || ext.is_some_and(|e| {
            host_core::api::launch_package::PACKAGE_EXTENSIONS
                .iter()
                .any(|k| e.eq_ignore_ascii_case(k))
        })
}

fn set_open_target(command: &mut Command, app: Option<&str>, entry: Option<&str>) {
    command.env_remove(host_core::api::launch_package::OPEN_PACKAGE_ENV);
    for (key, value) in [
        (OPEN_APP_ENV, app),
        (OPEN_ENTRY_ENV, entry.filter(|_| app.is_some())),
    ] {
        match value {
            Some(v) => command.env(key, v),
            None => command.env_remove(key),
        };
    }
}

#[cfg(unix)]
fn run(mut command: Command, path: &Path) -> Result<i32, HostError> {
    use std::os::unix::process::CommandExt as _;
    // `exec` only returns on failure.
    let error = command.exec();
    Err(unavailable(
        path,
        format!(
            "cannot start the desktop window {}: {error}",
            path.display()
        ),
    ))
}

#[cfg(not(unix))]
fn run(mut command: Command, path: &Path) -> Result<i32, HostError> {
    match command.status() {
        Ok(status) => Ok(status.code().unwrap_or(1)),
        Err(error) => Err(unavailable(
            path,
            format!(
                "cannot start the desktop window {}: {error}",
                path.display()
            ),
        )),
    }
}

fn unavailable(path: &Path, message: String) -> HostError {
    HostError::new(ErrorCode::DesktopUnavailable, message)
        .with("path", path.display().to_string())
        .with(
            "remediation",
            format!(
                "install {DESKTOP_BIN} in the same folder as apphost (cargo build builds both), \
                 or use the command line: apphost --help"
            ),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(command: &Command, key: &str) -> Option<Option<String>> {
        command
            .get_envs()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.map(|v| v.to_string_lossy().into_owned()))
    }

    #[test]
    fn the_app_and_entry_to_open_are_passed_in_the_environment() {
        let mut c = Command::new("x");
        set_open_target(&mut c, Some("hello-app"), Some("notes"));
        assert_eq!(env_of(&c, OPEN_APP_ENV), Some(Some("hello-app".into())));
        assert_eq!(env_of(&c, OPEN_ENTRY_ENV), Some(Some("notes".into())));
        // Nothing asked: both are removed, so inherited values cannot open anything.
        let mut c = Command::new("x");
        set_open_target(&mut c, None, None);
        assert_eq!(env_of(&c, OPEN_APP_ENV), Some(None));
        assert_eq!(env_of(&c, OPEN_ENTRY_ENV), Some(None));
        let mut c = Command::new("x");
        set_open_target(&mut c, Some("a"), None);
        assert_eq!(env_of(&c, OPEN_ENTRY_ENV), Some(None));
    }

    #[test]
    fn desktop_binary_is_looked_up_beside_apphost() {
        let exe = Path::new("/opt/apphost/bin/apphost");
        assert_eq!(
            desktop_binary_beside(exe),
            Path::new("/opt/apphost/bin").join(DESKTOP_BIN)
        );
    }
}
