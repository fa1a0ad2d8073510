//! Opening an external link after the user confirmed it in the host UI.
//!
//! Only absolute `http`/`https` URLs with a host are opened (checked again here, whatever the
//! host UI sent). The link is handed to `xdg-open` found on `PATH`; without it the command fails
//! with `external.unavailable` instead of pretending it opened anything.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use host_core::error::{ErrorCode, HostError};
use tauri::Url;

const OPENER: &str = "xdg-open";

/// Checks `raw` and returns it as a URL that may be opened.
pub fn validate(raw: &str) -> Result<Url, HostError> {
    let invalid = |why: &str| {
        HostError::new(
            ErrorCode::ExternalInvalidUrl,
            format!("cannot open this link: {why}"),
        )
        .with("url", raw.chars().take(512).collect::<String>())
    };
    if raw.len() > 8192 || raw.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(invalid(
            "it is too long or contains spaces or control characters",
        ));
    }
    let url = Url::parse(raw).map_err(|e| invalid(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("only http and https links can be opened"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(invalid("the link has no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid("links with credentials are not opened"));
    }
    Ok(url)
}

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

/// Validates and opens `raw`.
pub fn open(raw: &str) -> Result<(), HostError> {
    let url = validate(raw)?;
    let Some(opener) = find_opener(std::env::var_os("PATH").as_deref()) else {
        return Err(HostError::new(
            ErrorCode::ExternalUnavailable,
            "no program to open links with was found (install xdg-utils)",
        )
        .with("program", OPENER));
    };
    let mut child = Command::new(&opener)
        .arg(url.as_str())
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
    fn only_http_and_https_links_with_a_host_are_opened() {
        for ok in [
            "https://notes.example.com/a?b=c#d",
            "http://example.com",
            "HTTPS://Example.com/",
        ] {
            assert!(validate(ok).is_ok(), "{ok}");
        }
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "data:text/html,hi",
            "agentapp://other-app/",
            "tauri://localhost/",
            "ftp://example.com/",
            "https://",
            "https://user:pw@example.com/",
            "https://exa mple.com/",
            "https://example.com/\n",
            "/relative",
            "",
        ] {
            let e = validate(bad).expect_err(bad);
            assert_eq!(e.code.as_str(), "external.invalid_url", "{bad}");
        }
    }

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
