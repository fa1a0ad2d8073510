//! Remote app catalogs (issue 22 §2): a URL serving TUF-signed metadata about releases, the
//! client that keeps a verified copy of it under the data directory, downloads packages for
//! the one install pipeline, and the publisher's `catalog build`. Layout, workflow and error
//! codes: `docs/catalog.md`.

pub mod catalogs;
pub mod fetch;
pub mod publish;
pub mod releases;
pub mod state;
pub mod trusted;
pub mod tuf;
pub mod update;
