//! Freshness of `lime.knowledge` indexes while the host runs (the window, `apphost serve`): a
//! thread watches every bound folder (inotify through notify, debounced by
//! [`DEBOUNCE`]) and re-indexes a binding when files under its folder change. The thread keeps
//! one `host.db` connection and asks it every [`RESCAN`] whether anything was committed since
//! (its `ChangeStamp`: one `PRAGMA data_version`); only then are the bindings re-read, so a bind
//! or unbind from the CLI or another window is picked up without opening the store each time. Re-indexing is incremental (`KnowledgeIndex::reindex`); a failure is logged and
//! shows in `apphost knowledge status` after the next run. Dropping the [`KnowledgeWatcher`]
//! stops the thread.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::foundation::paths::DataDir;
use crate::hosting::app_knowledge;
use crate::install::store::Store;

/// Quiet time after a change before the folder is re-indexed.
pub const DEBOUNCE: Duration = Duration::from_millis(500);
/// How often the bindings are re-read.
pub const RESCAN: Duration = Duration::from_secs(2);

/// The running watcher; dropping it stops the thread.
pub struct KnowledgeWatcher {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl KnowledgeWatcher {
    /// Starts watching the bound folders of `data`.
    pub fn start(data: DataDir) -> KnowledgeWatcher {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::Builder::new()
            .name("knowledge-watch".into())
            .spawn(move || run(&data, &s))
            .ok();
        KnowledgeWatcher { stop, thread }
    }
}

impl Drop for KnowledgeWatcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

type Key = (String, String);

fn run(data: &DataDir, stop: &AtomicBool) {
    let (tx, rx) = mpsc::channel::<notify_debouncer_mini::DebounceEventResult>();
    let Ok(mut debouncer) = notify_debouncer_mini::new_debouncer(DEBOUNCE, tx) else {
        tracing::warn!("knowledge watcher: no file watcher available");
        return;
    };
    // Binding → its folder, as watched now.
    let mut watched: BTreeMap<Key, PathBuf> = BTreeMap::new();
    let mut last_scan: Option<Instant> = None;
    let mut store = Bindings::default();
    while !stop.load(Ordering::Relaxed) {
        if last_scan.is_none_or(|t| t.elapsed() >= RESCAN) {
            last_scan = Some(Instant::now());
            let Some(now) = store.changed(data) else {
                continue;
            };
            for (k, folder) in &watched {
                if now.get(k) != Some(folder) && !now.values().any(|f| f == folder) {
                    let _ = debouncer.watcher().unwatch(folder);
                }
            }
            for (k, folder) in &now {
                if watched.get(k) != Some(folder) {
                    if let Err(e) = debouncer
                        .watcher()
                        .watch(folder, notify::RecursiveMode::Recursive)
                    {
                        tracing::warn!(folder = %folder.display(), error = %e, "knowledge watcher: cannot watch");
                    }
                }
            }
            watched = now;
        }
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(Ok(events)) => {
                let changed: Vec<Key> = watched
                    .iter()
                    .filter(|(_, folder)| events.iter().any(|e| e.path.starts_with(folder)))
                    .map(|(k, _)| k.clone())
                    .collect();
                for (app, template) in changed {
                    reindex(data, store.store.as_ref(), &app, &template);
                }
            }
            Ok(Err(e)) => tracing::warn!(error = %e, "knowledge watcher"),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// The watcher's one connection and the stamp its bindings were read at.
#[derive(Default)]
struct Bindings {
    store: Option<Store>,
    stamp: Option<crate::install::store::ChangeStamp>,
}

impl Bindings {
    /// The bindings when the store changed since the last read (`None`: unchanged).
    fn changed(&mut self, data: &DataDir) -> Option<BTreeMap<Key, PathBuf>> {
        if self.store.is_none() {
            if !data.db_path().exists() {
                return None;
            }
            self.store = Store::open(data).ok();
        }
        let store = self.store.as_ref()?;
        let stamp = store.change_stamp().ok();
        if stamp.is_some() && stamp == self.stamp {
            return None;
        }
        self.stamp = stamp;
        let all = store.all_knowledge_bindings().ok()?;
        Some(
            all.into_iter()
                .map(|(app, b)| ((app, b.template), PathBuf::from(b.folder)))
                .collect(),
        )
    }
}

fn reindex(data: &DataDir, store: Option<&Store>, app: &str, template: &str) {
    let result = match store {
        Some(s) => app_knowledge::reindex(s, app, template),
        None => Store::open(data).and_then(|s| app_knowledge::reindex(&s, app, template)),
    };
    match result {
        Ok(r) => tracing::debug!(
            app,
            template,
            indexed = r.report.indexed,
            removed = r.report.removed,
            "knowledge re-indexed"
        ),
        Err(e) => {
            tracing::warn!(app, template, code = e.code.as_str(), error = %e.message, "knowledge re-index failed")
        }
    }
}
