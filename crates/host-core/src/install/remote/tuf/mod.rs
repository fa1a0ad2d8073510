//! The Update Framework's metadata, the strict subset the remote catalog uses: four roles
//! (root, timestamp, snapshot, targets; no delegations), Ed25519 keys, SHA-256 hashes, no
//! consistent snapshots. See `docs/catalog.md` for the repository layout and the client's
//! update workflow (`super::update`).

pub mod canonical;
pub mod metadata;
pub mod sign;
pub mod verify;
