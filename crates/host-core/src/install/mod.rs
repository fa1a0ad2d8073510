//! "Install without executing": everything before any app code runs, and `host.db`.
//! Depends only on [`crate::foundation`].

pub mod compat;
pub mod downloads;
pub mod inspect;
pub mod lockfile;
pub mod manifest;
pub mod package;
pub mod projection;
pub mod readiness;
pub mod remote;
pub mod remote_address;
pub mod remote_service;
pub mod schedules;
pub mod secrets;
pub mod service_disk;
pub mod service_launch;
pub mod services_policy;
pub mod signature;
pub mod store;
