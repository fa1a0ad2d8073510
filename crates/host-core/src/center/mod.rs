//! The app center's operations: what the host UI does besides mounting apps (install review and
//! consent, app detail, grants, lifecycle, diagnostics, settings). Tauri-free and
//! transport-free: `api/` exposes them as commands to both transports, and each one calls the
//! same store functions the CLI calls (`stage`/`plan_with`/`commit`, `uninstall`, ...), so a
//! rule enforced for `apphost install` holds for the window too.
//!
//! The only state is [`Center`]'s two bounded, expiring tables: uploads awaiting review and
//! reviews awaiting consent, each keyed by a random 128-bit id and used once.

pub mod catalog;
mod catalog_download;
pub mod detail;
pub mod dev;
pub mod diagnostics;
pub mod grants;
pub mod host_update;
pub mod lifecycle;
pub mod review;
pub mod settings;
mod table;
mod uploads;

use std::sync::Mutex;
use std::time::Duration;

use crate::foundation::error::HostResult;
use crate::foundation::paths::DataDir;
use crate::install::store::Store;

pub use review::{InstallArgs, InstallReview, ReviewSource};
pub use uploads::UploadInfo;

/// Most reviews kept at once (the oldest is dropped, with its upload, beyond it).
pub const MAX_REVIEWS: usize = 16;
/// Most uploads kept at once.
pub const MAX_UPLOADS: usize = 8;
/// How long a review or an upload stays usable.
pub const REVIEW_TTL: Duration = Duration::from_secs(30 * 60);

/// The app center of one host process (window or `apphost serve`) over one data directory.
pub struct Center {
    dir: DataDir,
    reviews: Mutex<table::Table<review::Review>>,
    uploads: Mutex<table::Table<uploads::UploadFile>>,
    /// Catalog downloads in flight, by the review's `progressId` (`cancel_review` stops them).
    downloads: catalog_download::DownloadCancels,
}

impl Center {
    pub fn new(dir: DataDir) -> Center {
        uploads::sweep_stale(&dir, REVIEW_TTL);
        Center {
            dir,
            reviews: Mutex::new(table::Table::new("r-", MAX_REVIEWS, REVIEW_TTL)),
            uploads: Mutex::new(table::Table::new("u-", MAX_UPLOADS, REVIEW_TTL)),
            downloads: catalog_download::DownloadCancels::default(),
        }
    }

    pub fn data_dir(&self) -> &DataDir {
        &self.dir
    }
}

pub(crate) use crate::foundation::random::random_id;

/// Opens the store for a change (waiting for another AppHost process, recovering an
/// interrupted operation first).
pub(crate) fn open_locked(dir: &DataDir) -> HostResult<Store> {
    Ok(Store::open_locked(dir)?.0)
}
