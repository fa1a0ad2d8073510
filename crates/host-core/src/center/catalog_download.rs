//! A release downloaded from a remote catalog, kept with its install review (`review.rs`'s
//! `KeptSource::Catalog`, made by `catalog.rs`): the file goes away with the review, and the
//! consented install makes the app follow the catalog and channel.

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
