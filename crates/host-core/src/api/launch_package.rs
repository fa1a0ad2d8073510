//! A package the window was started to review: `apphost open <file>` and the desktop entry's
//! `Exec=apphost-desktop %f` (a file manager opening an `.agentapp`). The host UI asks once at
//! start (`launch_package`) and opens the review sheet for it; nothing is installed without the
//! sheet's consent, and the review reads the file through the install pipeline like any other.
//!
//! The path is checked where it enters ([`package_path`]): it must name an existing regular
//! file (after following links) that ends in `.agentapp` or `.zip` (`source.not_found`,
//! `source.unsupported`). It is answered once: a reloaded page does not open the sheet again.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::{answer, args, Command, NoArgs, Session};
use crate::foundation::error::{ErrorCode, HostError, HostResult};

/// Set by `apphost open <file>` for the window (an absolute path).
pub const OPEN_PACKAGE_ENV: &str = "APPHOST_OPEN_PACKAGE";

/// File name endings the window opens for review (the MIME type `application/vnd.agentapp+zip`
/// is `*.agentapp`; a plain `.zip` package is accepted too).
pub const PACKAGE_EXTENSIONS: &[&str] = &["agentapp", "zip"];

pub const COMMANDS: &[Command] = &[Command {
    name: "launch_package",
    run: launch_package,
}];

/// The answer of `launch_package`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LaunchPackage {
    /// Absolute path of the package file.
    pub path: String,
}

/// Checks a package path given on a command line: an existing regular file named `*.agentapp`
/// or `*.zip`; answers its canonical absolute path.
pub fn package_path(arg: &Path) -> HostResult<PathBuf> {
    let meta = std::fs::metadata(arg).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            HostError::new(
                ErrorCode::SourceNotFound,
                format!("{} does not exist", arg.display()),
            )
            .with("path", arg.display().to_string())
        } else {
            HostError::io(ErrorCode::SourceIo, "cannot read", arg, e)
        }
    })?;
    let named_as_package = arg.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        PACKAGE_EXTENSIONS
            .iter()
            .any(|known| e.eq_ignore_ascii_case(known))
    });
    if !meta.is_file() || !named_as_package {
        return Err(HostError::new(
            ErrorCode::SourceUnsupported,
            format!(
                "{} is not an Agent App package file (.agentapp or .zip)",
                arg.display()
            ),
        )
        .with("path", arg.display().to_string()));
    }
    std::fs::canonicalize(arg)
        .map_err(|e| HostError::io(ErrorCode::SourceIo, "cannot resolve", arg, e))
}

/// The package the window was started with: the first command-line argument (the desktop
/// entry's `%f`), else [`OPEN_PACKAGE_ENV`]. A path that fails [`package_path`] is dropped with
/// a warning: the window opens as usual.
pub fn from_launch(
    first_arg: Option<std::ffi::OsString>,
    var: impl Fn(&str) -> Option<String>,
) -> Option<PathBuf> {
    let raw = first_arg
        .filter(|a| !a.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            var(OPEN_PACKAGE_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        })?;
    match package_path(&raw) {
        Ok(path) => Some(path),
        Err(error) => {
            tracing::warn!(code = error.code.as_str(), "{}", error.message);
            None
        }
    }
}

/// `launch_package` → `{path}` once, then null.
fn launch_package(session: &Session, raw: Value) -> HostResult<Value> {
    let NoArgs {} = args("launch_package", raw)?;
    match session.take_launch_package() {
        Some(path) => answer(LaunchPackage {
            path: path.display().to_string(),
        }),
        None => answer(Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn a_package_file_is_accepted_by_its_ending_in_any_case() {
        let dir = temp();
        for name in ["a.agentapp", "b.ZIP", "c.AgentApp"] {
            let p = dir.path().join(name);
            std::fs::write(&p, b"PK\x03\x04").unwrap();
            assert_eq!(
                package_path(&p).unwrap(),
                std::fs::canonicalize(&p).unwrap()
            );
        }
    }

    #[test]
    fn other_files_folders_and_missing_paths_are_refused_with_stable_codes() {
        let dir = temp();
        let txt = dir.path().join("notes.txt");
        std::fs::write(&txt, b"PK\x03\x04").unwrap();
        let folder = dir.path().join("pkg.agentapp");
        std::fs::create_dir(&folder).unwrap();
        assert_eq!(
            package_path(&txt).unwrap_err().code,
            ErrorCode::SourceUnsupported
        );
        assert_eq!(
            package_path(&folder).unwrap_err().code,
            ErrorCode::SourceUnsupported
        );
        assert_eq!(
            package_path(&dir.path().join("gone.agentapp"))
                .unwrap_err()
                .code,
            ErrorCode::SourceNotFound
        );
    }

    #[test]
    fn the_argument_wins_over_the_environment_and_bad_paths_are_dropped() {
        let dir = temp();
        let a = dir.path().join("a.agentapp");
        let b = dir.path().join("b.agentapp");
        std::fs::write(&a, b"x").unwrap();
        std::fs::write(&b, b"x").unwrap();
        let env_b = |k: &str| (k == OPEN_PACKAGE_ENV).then(|| b.display().to_string());
        assert_eq!(
            from_launch(Some(a.clone().into_os_string()), env_b),
            Some(std::fs::canonicalize(&a).unwrap())
        );
        assert_eq!(
            from_launch(None, env_b),
            Some(std::fs::canonicalize(&b).unwrap())
        );
        assert_eq!(
            from_launch(Some("/nonexistent/x.agentapp".into()), env_b),
            None
        );
        assert_eq!(from_launch(None, |_| None), None);
        assert_eq!(from_launch(Some("".into()), |_| Some(String::new())), None);
    }
}
