//! The `lime.*` services behind the choke point. Every entry point takes an [`Allowed`] proof,
//! which only [`dispatch`](super::dispatch::dispatch) can mint, so no transport can call a
//! service around the decision. App data lives in RuntimeCore's per-app area; the services here
//! only adapt arguments and errors to the Host Bridge contract.
//!
//! One module per capability (`storage.rs`, ...); [`Services::call`] routes by capability name.

mod storage;

use std::path::PathBuf;

use serde_json::Value;

use super::dispatch::{Allowed, CallError};
use crate::store::Store;

/// Long-lived service state for one host process (open per-app files, ...).
pub struct Services {
    apps_data: PathBuf,
    storage: storage::StorageService,
}

impl Services {
    /// `apps_data` is the root of the per-app data areas (`<data>/apps`).
    pub fn new(apps_data: PathBuf) -> Self {
        Services {
            storage: storage::StorageService::default(),
            apps_data,
        }
    }

    /// Closes everything open for an app (before uninstall deletes its data, on disable).
    pub fn close_app(&mut self, app: &str) {
        self.storage.close_app(app);
    }

    /// Runs an allowed call. `store` is read for what the app version was installed with (its
    /// reviewed storage migrations), and written only to record a failed migration.
    pub fn call(
        &mut self,
        store: &Store,
        allowed: &Allowed,
        args: &Value,
    ) -> Result<Value, CallError> {
        match allowed.capability() {
            "lime.storage" => self.storage.call(store, &self.apps_data, allowed, args),
            _ => Err(err(
                allowed,
                "APP_E001",
                "this capability has no service in this host",
                None,
            )),
        }
    }
}

/// A `host:error` for the call `a`.
pub(crate) fn err(
    a: &Allowed,
    code: &'static str,
    message: &str,
    cause: Option<&'static str>,
) -> CallError {
    CallError {
        code,
        message: message.to_owned(),
        cause_code: cause,
        capability: a.capability().to_owned(),
        method: a.method().to_owned(),
        retryable: false,
    }
}
