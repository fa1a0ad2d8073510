//! Set-ups shared by the agent tests: an app requiring `lime.agent`, a host UI session, a
//! placeholder model and a scripted backend on the session's bridge, polling a task's status.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use host_core::api::{self, LinkOpener, Session, SessionConfig};
use host_core::foundation::paths::DataDir;
use host_core::hosting::model_settings::{self, KeyChange};
use host_core::hosting::surface::origin::OriginStyle;
use host_core::hosting::surface::serve::ServeContext;
use host_core::install::store::Store;
use runtime_core::backend::{ExecutionBackend, ScriptedBackend};
use serde_json::{json, Value};

use super::hello_app_as;

/// hello-app renamed `name`, requiring lime.agent on its `notes` entry.
pub fn agent_app(tmp: &Path, name: &str) -> PathBuf {
    hello_app_as(
        tmp,
        name,
        &[
            (
                "    lime.storage: \"^0.10.0\"\n",
                "    lime.storage: \"^0.10.0\"\n    lime.agent: \"^0.10.0\"\n",
            ),
            (
                "requiredCapabilities: [lime.ui, lime.storage]",
                "requiredCapabilities: [lime.ui, lime.storage, lime.agent]",
            ),
        ],
    )
}

/// The host UI's session config as the desktop shell makes it (scheme origins, framed by
/// `tauri://localhost`, links in a page, no launch request).
pub fn session_config() -> SessionConfig {
    SessionConfig {
        serve: ServeContext {
            style: OriginStyle::Scheme,
            frame_ancestors: vec!["tauri://localhost".into()],
        },
        links: LinkOpener::Page,
        launch: None,
    }
}

/// A host UI session over `dir` with [`session_config`].
pub fn session(dir: &DataDir) -> Session {
    Session::new(dir.clone(), session_config())
}

/// A host API command that must succeed.
pub fn call(s: &Session, command: &str, args: Value) -> Value {
    api::call(s, command, args).unwrap_or_else(|e| panic!("{command}: {e:?}"))
}

/// Sets a model (a closed local port: nothing is ever sent) so `lime.agent` is not
/// `model.not_configured`.
pub fn set_placeholder_model(dir: &DataDir) {
    let (locked, _) = Store::open_locked(dir).unwrap();
    model_settings::set(&locked, "http://127.0.0.1:9/v1", "m", KeyChange::Keep).unwrap();
}

/// A scripted model backend, set as the agent backend of `s`'s bridge.
pub fn scripted_backend(s: &Session) -> ScriptedBackend {
    let backend = ScriptedBackend::new();
    s.with_bridge(|h, _| {
        h.set_agent_backend(Arc::new(backend.clone()) as Arc<dyn ExecutionBackend>)
    })
    .unwrap();
    backend
}

/// Polls `task_detail` until `app`'s task `task` is `status` (20 s at most).
pub fn wait_status(s: &Session, app: &str, task: &str, status: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let d = call(s, "task_detail", json!({"appId": app, "taskId": task}));
        if d["task"]["status"] == status {
            return d;
        }
        assert!(Instant::now() < deadline, "never {status}: {d}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
