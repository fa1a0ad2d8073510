//! The App Server door of the window's session (docs/app-server.md), opened on its own thread
//! beside the window's start: opening it opens the agent runtime (its event log, recovery), which
//! the first paint does not need. The same thread first resumes the data directory's workflow
//! runs (`Session::resume_workflow_runs`: their replay), which the first paint does not need
//! either. The host UI's first calls do not wait for it (`list_apps`
//! opens its own store connection); a call that needs the runtime waits on the session's bridge
//! lock, which the opening holds, as it would have waited before.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use host_core::api::door::Door;
use host_core::api::Session;

use super::start_trace;

/// The door, once open; closed (its socket removed) by [`DoorSlot::close`].
pub struct DoorSlot {
    door: Arc<Mutex<Option<Door>>>,
    opening: Option<JoinHandle<()>>,
}

impl DoorSlot {
    /// Starts opening the door on a thread of its own.
    pub fn open_beside(session: &Arc<Session>) -> DoorSlot {
        let door = Arc::new(Mutex::new(None));
        let (slot, session) = (Arc::clone(&door), Arc::clone(session));
        let opening = std::thread::Builder::new()
            .name("apphost-door".into())
            .spawn(move || {
                session.resume_workflow_runs();
                start_trace::mark("workflow runs resumed");
                let opened = host_core::api::door::open_serving(&session)
                    .map_err(|e| eprintln!("apphost: no App Server door: {}", e.message))
                    .ok();
                start_trace::mark("door open");
                if let Ok(mut s) = slot.lock() {
                    *s = opened;
                }
            })
            .map_err(|e| eprintln!("apphost: no App Server door: {e}"))
            .ok();
        DoorSlot { door, opening }
    }

    /// Waits for the opening to finish, then closes the door.
    pub fn close(mut self) {
        if let Some(opening) = self.opening.take() {
            let _ = opening.join();
        }
        let taken = self.door.lock().ok().and_then(|mut s| s.take());
        drop(taken);
    }
}
