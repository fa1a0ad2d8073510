//! The origin guard: Tauri commands answer only the host UI's own page.
//!
//! Tauri treats every page served by a registered custom scheme as "local", so an app frame that
//! escaped to the top level would otherwise be allowed to call every command (see
//! `shared/docs/tauri-testing.md` §5). The guard wraps the whole invoke handler, so a command
//! cannot be added without it. It does not cover core plugin commands, which is why the
//! capability file grants none.

use host_core::foundation::error::{ErrorCode, HostError};
use tauri::ipc::Invoke;
use tauri::{Runtime, Url};

/// The scheme and host of the host UI's origin on this platform: Tauri serves the embedded UI
/// from `tauri://localhost` on Linux and macOS and from `http://tauri.localhost` on Windows and
/// Android.
#[cfg(not(any(windows, target_os = "android")))]
const HOST_UI_ORIGINS: &[(&str, &str)] = &[("tauri", "localhost")];
#[cfg(any(windows, target_os = "android"))]
const HOST_UI_ORIGINS: &[(&str, &str)] =
    &[("http", "tauri.localhost"), ("https", "tauri.localhost")];

/// Whether `url` belongs to the host UI's origin (any path, query or fragment).
pub fn is_host_ui_url(url: &Url) -> bool {
    url.username().is_empty()
        && url.password().is_none()
        && url.port().is_none()
        && HOST_UI_ORIGINS
            .iter()
            .any(|(scheme, host)| url.scheme() == *scheme && url.host_str() == Some(*host))
}

/// Wraps an invoke handler (from `tauri::generate_handler!`) so that every command is refused
/// unless the calling webview currently shows the host UI.
pub fn host_ui_only<R, F>(handler: F) -> impl Fn(Invoke<R>) -> bool + Send + Sync + 'static
where
    R: Runtime,
    F: Fn(Invoke<R>) -> bool + Send + Sync + 'static,
{
    move |invoke: Invoke<R>| {
        let url = invoke.message.webview_ref().url();
        if matches!(&url, Ok(url) if is_host_ui_url(url)) {
            return handler(invoke);
        }
        let caller = match &url {
            Ok(url) => url.origin().ascii_serialization(),
            Err(_) => "unknown".to_owned(),
        };
        let command = invoke.message.command().to_owned();
        tracing::warn!(%command, %caller, "refused a command from a page that is not the host UI");
        invoke.resolver.reject(refused(&command, &caller));
        true
    }
}

/// The error a refused caller receives.
fn refused(command: &str, caller: &str) -> HostError {
    HostError::new(
        ErrorCode::IpcForbiddenOrigin,
        "this command is only available to the AppHost window itself",
    )
    .with("command", command)
    .with("callerOrigin", caller)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(url: &str) -> bool {
        is_host_ui_url(&Url::parse(url).unwrap_or_else(|e| panic!("{url}: {e}")))
    }

    #[test]
    #[cfg(not(any(windows, target_os = "android")))]
    fn accepts_the_host_ui_origin() {
        for url in [
            "tauri://localhost",
            "tauri://localhost/",
            "tauri://localhost/index.html",
            "tauri://localhost/apps/hello-app?entry=notes#top",
            "TAURI://localhost/",
        ] {
            assert!(allowed(url), "{url} should be allowed");
        }
    }

    #[test]
    fn refuses_every_other_origin() {
        for url in [
            // app frames, host-based and path-based
            "agentapp://hello-app/index.html",
            "agentapp://localhost/hello-app/index.html",
            "agentapp://tauri.localhost/",
            // look-alikes of the host origin
            "tauri://localhost.evil/",
            "tauri://evil.localhost/",
            "tauri://localhost:8080/",
            "tauri://user@localhost/",
            "tauri://user:pw@localhost/",
            "tauri://127.0.0.1/",
            // a custom scheme's host is opaque, compared as written (webviews report lowercase)
            "tauri://LOCALHOST/",
            "tauri:localhost",
            "tauri:///localhost",
            // the web and local files
            "http://localhost/",
            "https://localhost/",
            "http://127.0.0.1:1420/",
            "https://example.com/",
            "file:///index.html",
            "about:blank",
            "data:text/html,<p>hi</p>",
            "blob:tauri://localhost/1234",
        ] {
            assert!(!allowed(url), "{url} should be refused");
        }
    }

    #[test]
    #[cfg(not(any(windows, target_os = "android")))]
    fn refuses_the_windows_origin_on_this_platform() {
        assert!(!allowed("http://tauri.localhost/"));
        assert!(!allowed("https://tauri.localhost/"));
    }

    #[test]
    fn refusal_is_a_host_error_with_details() {
        let value = serde_json::to_value(refused("list_apps", "agentapp://evil")).unwrap();
        assert_eq!(value["code"], "ipc.forbidden_origin");
        assert_eq!(value["details"]["command"], "list_apps");
        assert_eq!(value["details"]["callerOrigin"], "agentapp://evil");
        assert!(value["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
}
