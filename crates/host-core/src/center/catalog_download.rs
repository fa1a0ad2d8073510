//! A release downloaded from a remote catalog, kept with its install review (`review.rs`'s
//! `KeptSource::Catalog`, made by `catalog.rs`): the file goes away with the review, and the
//! consented install makes the app follow the catalog and channel.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::foundation::error::HostResult;
use crate::foundation::paths::DataDir;
use crate::install::remote::catalogs::Fetched;
use crate::install::remote::state::{self, Followed};

/// A catalog download kept with its review: the file goes away with the review, and a
/// consented install makes the app follow the catalog and channel.
pub(crate) struct KeptDownload {
    pub(crate) fetched: Fetched,
    pub(crate) channel: Option<String>,
}

impl KeptDownload {
    /// Records the catalog and channel the installed app follows (after the install).
    pub(crate) fn follow(&self, dir: &DataDir) -> HostResult<()> {
        state::set_followed(
            dir,
            &self.fetched.release.app_id,
            Followed {
                catalog: self.fetched.catalog.clone(),
                channel: self
                    .channel
                    .clone()
                    .unwrap_or_else(|| self.fetched.release.channel.clone()),
            },
        )
    }
}

/// Most catalog downloads one session tracks for cancelling at once (more are not cancellable).
const MAX_TRACKED: usize = 64;

/// Catalog downloads in flight, by the `progressId` the host UI gave their review: the review
/// sheet's Cancel (`cancel_review {reviewId: <progressId>}`) stops the transfer.
#[derive(Default)]
pub(crate) struct DownloadCancels {
    flags: Mutex<BTreeMap<String, Arc<AtomicBool>>>,
}

/// A tracked download: answers whether to go on; untracked when dropped.
pub(crate) struct Tracked<'a> {
    owner: &'a DownloadCancels,
    id: Option<String>,
    flag: Arc<AtomicBool>,
}

impl DownloadCancels {
    /// Tracks the download of the review `id` (none: not cancellable). An id already in flight
    /// is not tracked twice (the first keeps it).
    pub(crate) fn track(&self, id: Option<&str>) -> Tracked<'_> {
        let flag = Arc::new(AtomicBool::new(false));
        let mut tracked = None;
        if let (Some(id), Ok(mut flags)) = (id, self.flags.lock()) {
            if flags.len() < MAX_TRACKED && !flags.contains_key(id) {
                flags.insert(id.to_owned(), flag.clone());
                tracked = Some(id.to_owned());
            }
        }
        Tracked {
            owner: self,
            id: tracked,
            flag,
        }
    }

    /// Asks the download of review `id` to stop; whether one was in flight.
    pub(crate) fn cancel(&self, id: &str) -> bool {
        self.flags
            .lock()
            .ok()
            .and_then(|flags| flags.get(id).map(|f| f.store(true, Ordering::SeqCst)))
            .is_some()
    }
}

impl Tracked<'_> {
    pub(crate) fn go_on(&self) -> bool {
        !self.flag.load(Ordering::SeqCst)
    }
}

impl Drop for Tracked<'_> {
    fn drop(&mut self) {
        if let (Some(id), Ok(mut flags)) = (&self.id, self.owner.flags.lock()) {
            flags.remove(id);
        }
    }
}
