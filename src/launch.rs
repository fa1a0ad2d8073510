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

use host_core::error::{ErrorCode, HostError};

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

/// Opens the window, never returning on success (Unix). `data_dir` (from `--data-dir`) is
/// passed on as `APPHOST_DATA_DIR`. Returns the error when the binary cannot be started.
pub fn open_window(data_dir: Option<&Path>) -> Result<i32, HostError> {
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
    run(command, &path)
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

    #[test]
    fn desktop_binary_is_looked_up_beside_apphost() {
        let exe = Path::new("/opt/apphost/bin/apphost");
        assert_eq!(
            desktop_binary_beside(exe),
            Path::new("/opt/apphost/bin").join(DESKTOP_BIN)
        );
    }
}
