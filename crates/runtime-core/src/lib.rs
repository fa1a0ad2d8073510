//! RuntimeCore: the owner of runtime facts.
//!
//! This crate knows nothing about packages, manifests, iframes or the Host Bridge: an app is an
//! opaque [`AppId`] scope. It owns the per-app data area (the app's storage namespace on disk),
//! runtime ids, the Lime profile event envelope, the durable event log, the read models, the
//! sans-IO turn machine and its executor, and the App Server JSON-RPC handler.
//!
//! Architecture invariant: no dependency on `tauri` or on `host-core`.

pub mod agent_task;
pub mod app_area;
pub mod app_artifacts;
pub mod app_data;
pub mod app_evidence;
pub mod app_handles;
pub mod app_server;
pub mod app_storage;
pub mod backend;
pub mod clock;
pub mod durable;
pub mod event;
pub mod ids;
pub mod knowledge;
pub mod log;
pub mod private_fs;
pub mod provider;
pub mod read_model;
pub mod runtime;
pub mod session_cache;
pub mod sqlite;
pub mod tools;
pub mod turn;
pub mod workflow;

pub use app_data::{
    partial_export_path, AppDataError, AppDataStore, DataFile, DataListing, EntryKind,
    ExportReport, SkippedEntry,
};
pub use ids::{AppId, InvalidAppId};
