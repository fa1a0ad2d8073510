//! `apphost dev <folder>`: install a folder as a dev app, open it, and update it on every save.
//! The work is `host_core::center::dev`; this module watches the folder (notify, debounced),
//! starts the window and prints one line per pass.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use clap::Args;
use serde_json::json;

use super::output;
use super::prompt;
use host_core::center::dev::{DevOutcome, DevSession};
use host_core::foundation::error::{ErrorCode, HostError, HostResult};
use host_core::foundation::paths::DataDir;
use host_core::install::store::PermissionChange;

/// Quiet time after the last change before the folder is read again: long enough for an
/// editor's write-rename-chmod burst to settle, short against the 500 ms save-to-reload goal.
pub const DEBOUNCE: Duration = Duration::from_millis(75);

#[derive(Debug, Args, Clone)]
pub struct DevArgs {
    /// The app's folder (with APP.md).
    pub folder: PathBuf,
    /// Serve the host UI over loopback HTTP (`apphost serve`, same first line) instead of
    /// opening the window; the dev events then go to stderr.
    #[arg(long)]
    pub serve: bool,
    /// With --serve: the port (default: any free port).
    #[arg(long, requires = "serve")]
    pub port: Option<u16>,
    /// Delete the app's lime.storage database first (its migrations run again).
    #[arg(long)]
    pub reset_storage: bool,
    /// Open no window: only install and watch. With --serve, the host UI is served and its
    /// link printed, but no browser is started (the same as --serve alone: apphost never
    /// starts a browser).
    #[arg(long)]
    pub no_open: bool,
}

fn ask_widening(perms: &[PermissionChange]) -> bool {
    if !prompt::interactive() {
        return false;
    }
    let keys: Vec<String> = perms
        .iter()
        .map(|p| format!("{} ({})", p.key, p.change))
        .collect();
    prompt::confirm(&format!(
        "This change widens permissions: {}. Update the dev app?",
        keys.join(", ")
    ))
    .unwrap_or(false)
}

fn report_to(json: bool, app: &str, outcome: &DevOutcome, stderr: bool) {
    let (value, text) = match outcome {
        DevOutcome::Committed {
            version,
            first,
            millis,
        } => (
            json!({"event": if *first { "installed" } else { "updated" }, "app": app, "version": version, "ms": millis}),
            format!(
                "dev: {app} {} {version} ({millis:.0} ms)",
                if *first { "installed as" } else { "updated to" }
            ),
        ),
        DevOutcome::Recovered => (
            json!({"event": "recovered", "app": app}),
            format!("dev: {app} is valid again (the same as the version running)"),
        ),
        DevOutcome::Unchanged => (
            json!({"event": "unchanged", "app": app}),
            format!("dev: {app} unchanged"),
        ),
        DevOutcome::Invalid(findings) => {
            let mut t = format!("dev: {app} NOT updated (the last good version, if any, keeps running):");
            for f in findings {
                t.push_str(&format!("\n  {} {} {}: {}", f.severity, f.code, f.path, f.message));
            }
            (
                json!({"event": "invalid", "app": app, "findings": findings}),
                t,
            )
        }
        DevOutcome::AwaitingConsent(perms) => (
            json!({"event": "awaiting-consent", "app": app, "permissions": perms}),
            format!(
                "dev: {app} waits for consent: the change widens permissions ({}); save again to be asked again",
                perms.iter().map(|p| p.key.as_str()).collect::<Vec<_>>().join(", ")
            ),
        ),
    };
    match (json, stderr) {
        (true, false) => output::print_json_line(&value),
        (true, true) => err_line!("{value}"),
        (false, false) => out_line!("{text}"),
        (false, true) => err_line!("{text}"),
    }
}

/// Where a pass is reported: stdout, or stderr when `--serve` owns stdout (its first line is
/// the URL, as for `apphost serve`).
#[derive(Clone, Copy)]
struct Sink {
    json: bool,
    to_stderr: bool,
}

impl Sink {
    /// The pass's outcome, after any note the session gathered (each given once).
    fn outcome(self, session: &mut DevSession, o: &DevOutcome) {
        let app = session.label();
        for note in session.take_notes() {
            if self.json {
                let v = json!({"event": "note", "app": app, "message": note});
                if self.to_stderr {
                    err_line!("{v}");
                } else {
                    output::print_json_line(&v);
                }
            } else {
                err_line!("dev: {app}: note: {note}");
            }
        }
        report_to(self.json, &app, o, self.to_stderr);
    }
}

/// Whether a window could open here: on Linux and the BSDs GTK needs `DISPLAY` or
/// `WAYLAND_DISPLAY` (the same test as the window's own, `src-tauri/src/desktop`).
fn display_available() -> bool {
    if cfg!(any(
        target_os = "linux",
        target_os = "freebsd",
        target_os = "dragonfly",
        target_os = "openbsd",
        target_os = "netbsd"
    )) {
        ["DISPLAY", "WAYLAND_DISPLAY"]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|v| !v.is_empty()))
    } else {
        true
    }
}

fn no_display(folder: &std::path::Path) -> HostError {
    let folder = folder.display();
    HostError::new(
        ErrorCode::DesktopUnavailable,
        "no display found (neither DISPLAY nor WAYLAND_DISPLAY is set), so apphost dev cannot open the window; nothing was installed",
    )
    .with(
        "remediation",
        format!(
            "use the browser host instead: apphost dev {folder} --serve (then open the printed link), or only install and watch: apphost dev {folder} --no-open"
        ),
    )
}

pub fn run(
    dir: &DataDir,
    data_dir_flag: Option<&std::path::Path>,
    a: DevArgs,
    json: bool,
) -> HostResult<i32> {
    if !a.serve && !a.no_open && !display_available() {
        return Err(no_display(&a.folder));
    }
    let mut session = DevSession::new(dir.clone(), &a.folder)?;
    // Watch before the first pass: a save during it is not missed.
    let (tx, rx) = mpsc::channel();
    let mut debouncer = notify_debouncer_mini::new_debouncer(DEBOUNCE, tx).map_err(watch_error)?;
    debouncer
        .watcher()
        .watch(session.folder(), notify::RecursiveMode::Recursive)
        .map_err(watch_error)?;
    let sink = Sink {
        json,
        to_stderr: a.serve,
    };
    // The first pass races whatever else is opening this data directory right now (the window
    // or `apphost serve` started together with `dev` on a new directory): a busy store is tried
    // again for a while before it is an error.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let first = loop {
        match session.apply(&mut ask_widening) {
            Err(e)
                if host_core::install::store::is_busy(&e)
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(100))
            }
            other => break other?,
        }
    };
    sink.outcome(&mut session, &first);
    if a.reset_storage && session.reset_storage()? {
        output::note(json, "dev: the app's storage was reset");
    }
    if a.serve {
        // The server owns the main thread (and Ctrl-C); the folder is watched beside it.
        std::thread::spawn(move || {
            let _keep = debouncer;
            watch_loop(&mut session, &rx, None, sink)
        });
        return crate::serve::run(
            dir.clone(),
            crate::serve::ServeOptions {
                port: a.port.unwrap_or(0),
                json,
                listen: None,
            },
        );
    }
    let child = if a.no_open {
        None
    } else {
        let app = session.app().map(str::to_owned);
        Some(crate::launch::spawn_window(
            data_dir_flag,
            app.as_deref(),
            None,
        )?)
    };
    watch_loop(&mut session, &rx, child, sink)
}

type Events = notify_debouncer_mini::DebounceEventResult;

/// One pass per batch of changes, until the window (if any) exits.
fn watch_loop(
    session: &mut DevSession,
    rx: &mpsc::Receiver<Events>,
    mut child: Option<std::process::Child>,
    sink: Sink,
) -> HostResult<i32> {
    loop {
        if let Some(c) = child.as_mut() {
            if let Ok(Some(status)) = c.try_wait() {
                return Ok(status.code().unwrap_or(0));
            }
        }
        match rx.recv_timeout(Duration::from_millis(250)) {
            Ok(Ok(_events)) => {
                // Drain what queued meanwhile: one pass covers them all.
                while rx.try_recv().is_ok() {}
                match session.apply(&mut ask_widening) {
                    Ok(DevOutcome::Unchanged) => {}
                    Ok(o) => sink.outcome(session, &o),
                    Err(e) if e.code == ErrorCode::DevNotADevInstall => return Err(e),
                    Err(e) => err_line!(
                        "dev: {}: {} ({})",
                        session.label(),
                        e.message,
                        e.code.as_str()
                    ),
                }
            }
            Ok(Err(e)) => err_line!("dev: watching failed: {e}"),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(0),
        }
    }
}

fn watch_error(e: notify::Error) -> HostError {
    HostError::new(
        ErrorCode::SourceIo,
        format!("cannot watch the folder for changes: {e}"),
    )
}
