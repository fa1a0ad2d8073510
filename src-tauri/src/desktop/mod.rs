//! The desktop window: the only module that names `tauri`.
//!
//! [`run`] opens one window, `main`, that loads the host UI (`ui-host/dist`, embedded at build
//! time), serves app files on the `agentapp:` scheme ([`scheme`]) and hands every command to the
//! Tauri-free command layer `host_core::api` ([`host_call`]), with one `Session` for the window.
//! Every command goes through [`guard::host_ui_only`], which refuses calls from any page that is
//! not the host UI itself.

mod appimage_update;
mod bench;
mod door;
mod external;
mod guard;
mod host_call;
mod scheme;
mod start_trace;

use std::any::Any;
use std::ffi::OsString;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use host_core::api::{LaunchRequest, LinkOpener, Session, SessionConfig};

/// Opens the AppHost window and blocks until it closes. Returns the process exit code.
///
/// Without a display it does not try to open a window: it prints how to use the CLI instead and
/// returns 1.
pub fn run() -> i32 {
    if !display_available(|key| std::env::var_os(key)) {
        eprint!("{NO_DISPLAY_HELP}{CLI_HINT}");
        return 1;
    }
    start_trace::begin();
    init_logging();
    let data = match host_core::foundation::paths::DataDir::from_env() {
        Ok(data) => data,
        Err(error) => {
            eprintln!("apphost: {}: {}", error.code.as_str(), error.message);
            return 1;
        }
    };
    // A package file to review: the desktop entry's `Exec=apphost-desktop %f`, or
    // `apphost open <file>` (docs/shipping.md).
    let package = host_core::api::launch_package::from_launch(std::env::args_os().nth(1), |key| {
        std::env::var(key).ok()
    });
    // The workflow runs are resumed (replayed) beside the window, with the door (door.rs).
    let session = Arc::new(
        Session::new_without_resuming(
            data,
            SessionConfig {
                serve: scheme::context(),
                links: LinkOpener::Program(Box::new(external::open)),
                launch: LaunchRequest::from_env(|key| std::env::var(key).ok()),
            },
        )
        .with_launch_package(package),
    );
    start_trace::mark("session");
    // Scheduled starts fire while the window runs, whichever page it shows.
    let _schedules = host_core::api::workflow_host::tick_in_background(&session);
    // The App Server door on the window's runtime (docs/app-server.md), open while it runs:
    // opened beside the window's start (it opens the agent runtime), not before it, after the
    // data directory's workflow runs are resumed.
    let door = door::DoorSlot::open_beside(&session);

    let mut builder = tauri::Builder::default();
    if bench::enabled() {
        builder = builder.plugin(bench::plugin());
    }
    // Self-update only when running from an AppImage (docs/shipping.md).
    if appimage_update::active() {
        builder = builder.plugin(appimage_update::plugin());
    }
    let builder = builder
        .manage(Arc::clone(&session))
        .register_asynchronous_uri_scheme_protocol(scheme::SCHEME, scheme::handle)
        .on_page_load(|_webview, payload| start_trace::page_load(payload.event()))
        .invoke_handler(guard::host_ui_only(host_call::handler(session)));
    let code = match build_quietly(builder, tauri::generate_context!()) {
        Ok(app) => {
            start_trace::mark("window built");
            app.run_return(|_app, event| {
                if let tauri::RunEvent::Ready = event {
                    start_trace::mark("event loop ready");
                }
            })
        }
        Err(error) => {
            eprintln!("apphost: could not open the desktop window: {error}");
            eprint!("{CLI_HINT}");
            1
        }
    };
    door.close();
    code
}

/// Builds the app, turning a failure to reach the display into an error instead of a panic.
///
/// tao panics ("Failed to initialize gtk backend!") when `DISPLAY` is set but the X server cannot
/// be reached (a stale `DISPLAY` over ssh, a stopped Xvfb). The default panic hook is silenced
/// for the duration so the user sees one line instead of a backtrace.
fn build_quietly(
    builder: tauri::Builder<tauri::Wry>,
    context: tauri::Context<tauri::Wry>,
) -> Result<tauri::App<tauri::Wry>, String> {
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(AssertUnwindSafe(move || builder.build(context)));
    std::panic::set_hook(previous_hook);
    match result {
        Ok(Ok(app)) => Ok(app),
        Ok(Err(error)) => Err(error.to_string()),
        Err(payload) => Err(format!(
            "cannot use the display {} ({})",
            display_name(),
            panic_text(payload.as_ref())
        )),
    }
}

/// `DISPLAY` (or `WAYLAND_DISPLAY`) as the user set it, for messages.
fn display_name() -> String {
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .find_map(|key| std::env::var(key).ok().filter(|value| !value.is_empty()))
        .map_or_else(|| "(none)".to_owned(), |value| format!("{value:?}"))
}

fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "the window system could not be initialised".to_owned()
    }
}

const NO_DISPLAY_HELP: &str = "\
apphost: no display found (neither DISPLAY nor WAYLAND_DISPLAY is set), so the desktop window \
cannot open.
";

const CLI_HINT: &str = "\
The host UI also runs in a browser, without a display here:
  apphost serve               the host UI over loopback HTTP (open the printed URL)
  apphost dev <folder> --serve  develop an app in the browser; every save reloads it
Or use the command line:
  apphost --help              list every command
  apphost list                show the installed apps
  apphost inspect <package>   check a package before installing it
";

/// Whether a graphical session is reachable, judged from the environment only.
///
/// On Linux and the BSDs GTK needs `DISPLAY` (X11) or `WAYLAND_DISPLAY`; elsewhere the OS always
/// has a desktop.
fn display_available(var: impl Fn(&str) -> Option<OsString>) -> bool {
    if cfg!(any(
        target_os = "linux",
        target_os = "freebsd",
        target_os = "dragonfly",
        target_os = "openbsd",
        target_os = "netbsd"
    )) {
        ["DISPLAY", "WAYLAND_DISPLAY"]
            .iter()
            .any(|key| var(key).is_some_and(|value| !value.is_empty()))
    } else {
        true
    }
}

/// Logs go to stderr, `warn` and above unless `RUST_LOG` says otherwise. Harmless if the
/// process already installed a subscriber.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let pairs: Vec<(String, OsString)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
            .collect();
        move |key| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn display_needs_x11_or_wayland() {
        assert!(!display_available(env(&[])));
        assert!(!display_available(env(&[("DISPLAY", "")])));
        assert!(!display_available(env(&[("WAYLAND_DISPLAY", "")])));
        assert!(display_available(env(&[("DISPLAY", ":0")])));
        assert!(display_available(env(&[("WAYLAND_DISPLAY", "wayland-0")])));
    }

    #[test]
    fn no_display_message_points_to_the_cli() {
        let text = format!("{NO_DISPLAY_HELP}{CLI_HINT}");
        for needle in [
            "no display",
            "apphost --help",
            "apphost list",
            "apphost inspect <package>",
            "apphost serve",
            "apphost dev <folder> --serve",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in {text}");
        }
    }
}
