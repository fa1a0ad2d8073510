//! RuntimeCore: the owner of runtime facts.
//!
//! This crate knows nothing about packages, manifests, iframes or the Host Bridge: an app is an
//! opaque [`AppId`] scope. Today it owns the per-app data area (the app's storage namespace on
//! disk); sessions, turns, the event log and read models arrive with the RuntimeCore issue.
//!
//! Architecture invariant: no dependency on `tauri` or on `host-core`.

pub mod app_data;
pub mod ids;
pub mod provider;

pub use app_data::{partial_export_path, AppDataError, AppDataStore, DataFile};
pub use ids::{AppId, InvalidAppId};
