//! A run's recorded facts, for the host's step timeline and its evidence correlation: the
//! log session of the run and its events, oldest first, at most a bounded number.

use super::*;
use crate::event::Event;

/// Most facts [`WorkflowRuns::history`] returns for one run.
pub const MAX_HISTORY: usize = 4096;

impl WorkflowRuns {
    /// The log session holding `run_id`'s facts.
    pub fn session_of(&self, run_id: &str) -> Result<String, RunError> {
        let runs = lock(&self.runs);
        find(&runs, run_id).map(|e| e.session.to_string())
    }

    /// The run's facts, oldest first, at most `limit` (capped at [`MAX_HISTORY`]).
    pub fn history(&self, run_id: &str, limit: usize) -> Result<Vec<Event>, RunError> {
        let session = {
            let runs = lock(&self.runs);
            find(&runs, run_id)?.session.clone()
        };
        Ok(self.log.read(&session, 1, limit.clamp(1, MAX_HISTORY))?)
    }
}
