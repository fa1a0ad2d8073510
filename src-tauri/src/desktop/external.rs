//! Opening an external link after the user confirmed it in the host UI: the desktop's
//! `LinkOpener` for `open_external` (`host_core::api::external` checked the URL first: only
//! absolute `http`/`https` URLs with a host). The link is handed to `xdg-open` found on `PATH`;
//! without it the command fails with `external.unavailable` instead of pretending it opened
//! anything.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use host_core::foundation::error::{ErrorCode, HostError};

const OPENER: &str = "xdg-open";

/// `xdg-open` on `path_var` (the value of `PATH`), if any.
pub fn find_opener(path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path_var?)
        .map(|dir| dir.join(OPENER))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// Opens `url` (already checked by `host_core::api::external::validate`).
pub fn open(url: &str) -> Result<(), HostError> {
    let Some(opener) = find_opener(std::env::var_os("PATH").as_deref()) else {
        return Err(HostError::new(
            ErrorCode::ExternalUnavailable,
            "no program to open links with was found (install xdg-utils)",
        )
        .with("program", OPENER));
    };
    let mut child = Command::new(&opener)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| {
            HostError::new(
                ErrorCode::ExternalUnavailable,
                format!("cannot start {}: {e}", opener.display()),
            )
            .with("program", opener.display().to_string())
        })?;
    // Reap it so no zombie is left behind; its exit status is the opener's business.
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_opener_is_looked_up_on_path_only() {
        assert_eq!(find_opener(None), None);
        let tmp = std::env::temp_dir().join(format!("apphost-opener-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        let empty = std::env::join_paths([&tmp]).unwrap();
        assert_eq!(find_opener(Some(&empty)), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let bin = tmp.join(OPENER);
            std::fs::write(&bin, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o644)).unwrap();
            assert_eq!(find_opener(Some(&empty)), None, "not executable");
            std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
            assert_eq!(find_opener(Some(&empty)), Some(bin));
        }
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
