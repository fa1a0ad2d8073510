//! How the session notices that another process changed the store: a [`StoreStamp`] of
//! `host.db` and its WAL, and what one look at it saw ([`StoreLook`]). Below both the session,
//! which keeps the last stamp, and the mount watcher (`watch.rs`), which acts on a change.

use std::path::Path;
use std::time::SystemTime;

use crate::foundation::paths::DataDir;

/// What `Session::store_changed` saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreLook {
    Unchanged,
    Changed,
    /// No new change, but the last one was seen a moment ago: look again, quietly.
    Recheck,
}

/// What the store files looked like at one moment; equal stamps mean no commit in between.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StoreStamp(Vec<Option<(u64, SystemTime)>>);

impl StoreStamp {
    pub fn of(data: &DataDir) -> StoreStamp {
        let db = data.db_path();
        let mut wal = db.clone().into_os_string();
        wal.push("-wal");
        // An empty WAL holds no commit: SQLite creates one when a connection opens the store
        // and none was open, and deletes it when the last one closes; either way nothing was
        // committed, so it stamps like no WAL.
        let wal = file_stamp(Path::new(&wal)).filter(|(len, _)| *len > 0);
        StoreStamp(vec![file_stamp(&db), wal])
    }
}

fn file_stamp(path: &Path) -> Option<(u64, SystemTime)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stamp_changes_with_a_commit() {
        let root = std::env::temp_dir().join(format!("apphost-watch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let data = DataDir::at(&root);
        let empty = StoreStamp::of(&data);
        assert_eq!(empty, StoreStamp::of(&data));
        let store = crate::install::store::Store::open(&data).unwrap();
        let opened = StoreStamp::of(&data);
        assert_ne!(empty, opened);
        assert_eq!(opened, StoreStamp::of(&data), "no commit, same stamp");
        drop(store);
        std::fs::write(data.db_path(), b"changed").unwrap();
        assert_ne!(opened, StoreStamp::of(&data));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
